//! `${VAR}` interpolation in the string values of a configuration file.
//!
//! - `${NAME}` is replaced by the variable `NAME`; an unset variable is an error;
//! - `${NAME:-default}` gives `default` when `NAME` is unset or empty;
//! - `$$` is a literal `$` (so `$${HOME}` is the text `${HOME}`);
//! - any other `$` is kept as it is.
//!
//! Only string scalars of the file are interpolated: not keys, not numbers,
//! and not the values of `REDIO_*` variables (the shell has expanded those).
//! [`escape`] is the inverse used by `to_yaml`, so a resolved configuration
//! parses back to itself.

use std::borrow::Cow;

/// Why interpolation failed, and the text of the offending reference so the
/// caller can point at it in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct InterpolationError {
    /// The reference as written, e.g. `${SCRATCH}` or `${` when unclosed.
    pub token: String,
    pub message: String,
}

/// Expands the references in `text` with `lookup`.
pub(crate) fn interpolate(
    text: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<String, InterpolationError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(dollar) = rest.find('$') {
        out.push_str(&rest[..dollar]);
        let after = &rest[dollar + 1..];
        if let Some(tail) = after.strip_prefix('$') {
            out.push('$');
            rest = tail;
        } else if let Some(body_and_tail) = after.strip_prefix('{') {
            let close = body_and_tail.find('}').ok_or_else(|| InterpolationError {
                token: "${".to_string(),
                message: "unclosed \"${\" (write $$ for a literal $)".to_string(),
            })?;
            let body = &body_and_tail[..close];
            out.push_str(&expand(body, lookup)?);
            rest = &body_and_tail[close + 1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// Expands the inside of one `${…}`.
fn expand(
    body: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<String, InterpolationError> {
    let (name, default) = match body.split_once(":-") {
        Some((name, default)) => (name, Some(default)),
        None => (body, None),
    };
    let token = format!("${{{body}}}");
    if !is_variable_name(name) {
        return Err(InterpolationError {
            message: format!(
                "invalid variable name \"{name}\" in \"{token}\" \
                 (letters, digits and _, not starting with a digit)"
            ),
            token,
        });
    }
    match (lookup(name), default) {
        (Some(value), Some(default)) if value.is_empty() => Ok(default.to_string()),
        (Some(value), _) => Ok(value),
        (None, Some(default)) => Ok(default.to_string()),
        (None, None) => Err(InterpolationError {
            message: format!(
                "environment variable \"{name}\" is not set (used as \"{token}\"; \
                 give a default with ${{{name}:-value}})"
            ),
            token,
        }),
    }
}

fn is_variable_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Doubles every `$`, so that [`interpolate`] gives `text` back unchanged.
pub(crate) fn escape(text: &str) -> Cow<'_, str> {
    if text.contains('$') {
        Cow::Owned(text.replace('$', "$$"))
    } else {
        Cow::Borrowed(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "SCRATCH" => Some("/scratch/u1".to_string()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    #[test]
    fn expands_references_defaults_and_escapes() {
        let cases: &[(&str, &str)] = &[
            ("${SCRATCH}/out", "/scratch/u1/out"),
            ("a${SCRATCH}b${SCRATCH}", "a/scratch/u1b/scratch/u1"),
            ("${UNSET:-/tmp}", "/tmp"),
            ("${EMPTY:-/tmp}", "/tmp"),
            ("${SCRATCH:-/tmp}", "/scratch/u1"),
            ("${EMPTY}", ""),
            ("${UNSET:-}", ""),
            ("$${SCRATCH}", "${SCRATCH}"),
            ("$$", "$"),
            ("cost: 5$", "cost: 5$"),
            ("$HOME", "$HOME"),
            ("${UNSET:-a:-b}", "a:-b"),
            ("plain", "plain"),
            ("é${SCRATCH}é", "é/scratch/u1é"),
        ];
        for (text, expected) in cases {
            assert_eq!(interpolate(text, &env).as_deref(), Ok(*expected), "{text}");
        }
    }

    #[test]
    fn errors_name_the_reference() {
        let cases: &[(&str, &str, &str)] = &[
            ("${UNSET}/x", "${UNSET}", "\"UNSET\" is not set"),
            ("${SCRATCH", "${", "unclosed"),
            ("${}", "${}", "invalid variable name \"\""),
            ("${1X}", "${1X}", "invalid variable name \"1X\""),
            ("${A B}", "${A B}", "invalid variable name"),
        ];
        for (text, token, message) in cases {
            let err = interpolate(text, &env).unwrap_err();
            assert_eq!(err.token, *token, "{text}");
            assert!(err.message.contains(message), "{text}: {}", err.message);
        }
    }

    #[test]
    fn escape_is_the_inverse() {
        for text in ["plain", "$", "$$", "${SCRATCH}", "a$b$${c}", "$${X:-y}"] {
            assert_eq!(interpolate(&escape(text), &env).as_deref(), Ok(text));
        }
    }
}
