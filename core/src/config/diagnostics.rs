//! Problems found in a configuration, each with the place it comes from.
//!
//! A [`Diagnostic`] prints as `file:line:col: message`, the format editors
//! and CI logs recognise. A problem with a `REDIO_*` variable has no line:
//! its `file` is `NAME=value` and it prints as `NAME=value: message`.

use super::keys::owner_of;
use serde_saphyr::{DefaultMessageFormatter, Error as YamlError, MessageFormatter};
use std::fmt;

/// One problem, with where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// The file as named by the caller; for an environment variable, `NAME=value`.
    pub file: String,
    /// 1-based line; 0 when the problem has no position (environment, unreadable file).
    pub line: usize,
    /// 1-based column in characters; 0 when there is no position.
    pub col: usize,
    /// What is wrong: the key, what was found and what is allowed.
    pub message: String,
}

impl Diagnostic {
    /// A problem at `line:col` of `file`.
    pub fn new(file: &str, line: usize, col: usize, message: impl Into<String>) -> Self {
        Diagnostic {
            file: file.to_string(),
            line,
            col,
            message: message.into(),
        }
    }

    /// A problem with the environment variable `name`, set to `value`.
    pub fn env(name: &str, value: &str, message: impl Into<String>) -> Self {
        Diagnostic::new(&format!("{name}={value}"), 0, 0, message)
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(
                f,
                "{}:{}:{}: {}",
                self.file, self.line, self.col, self.message
            )
        }
    }
}

/// Why a configuration could not be loaded: every problem found, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// At least one diagnostic.
    pub diagnostics: Vec<Diagnostic>,
}

impl fmt::Display for ConfigError {
    /// One diagnostic per line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, diagnostic) in self.diagnostics.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{diagnostic}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigError {}

/// Turns a serde-saphyr error (syntax, unknown key, duplicate key) into a
/// diagnostic whose message names the problem in the schema's terms.
pub(crate) fn from_yaml_error(file: &str, error: &YamlError) -> Diagnostic {
    let (line, col) = error
        .location()
        .map_or((0, 0), |l| (to_usize(l.line()), to_usize(l.column())));
    Diagnostic::new(file, line, col, yaml_message(innermost(error)))
}

/// The error an alias or snippet wrapper carries.
fn innermost(error: &YamlError) -> &YamlError {
    match error.without_snippet() {
        YamlError::AliasError { error, .. } => innermost(error),
        other => other,
    }
}

fn yaml_message(error: &YamlError) -> String {
    match error {
        YamlError::SerdeUnknownField {
            field, expected, ..
        } => {
            let place = owner_of(expected).unwrap_or_default();
            let mut message = format!(
                "unknown field {field:?} {place} (expected: {})",
                expected.join(", ")
            );
            if let Some(close) = did_you_mean(field, expected) {
                message.push_str(&format!("; did you mean {close:?}?"));
            }
            message
        }
        YamlError::DuplicateMappingKey { key: Some(key), .. } => {
            format!("duplicate key {key:?} (a key may appear only once in a mapping)")
        }
        YamlError::MultipleDocuments { .. } => {
            "more than one YAML document (a configuration is a single document; remove the second \"---\")"
                .to_string()
        }
        other => {
            let text = DefaultMessageFormatter.format_message(other);
            if let Some(breach) = text.split("budget breached: ").nth(1) {
                return budget_message(breach);
            }
            match HINTS.iter().find(|(cause, _)| text.contains(cause)) {
                Some((_, hint)) => format!("invalid YAML: {text} ({hint})"),
                None => format!("invalid YAML: {text}"),
            }
        }
    }
}

/// A parser budget breach (`Nodes { nodes: 250001 }`) in words.
fn budget_message(breach: &str) -> String {
    let kind = breach.split_whitespace().next().unwrap_or_default();
    let count: String = breach.chars().filter(char::is_ascii_digit).collect();
    let what = match kind {
        "Depth" => format!("is nested {count} levels deep"),
        "Nodes" => format!("has {count} nodes (keys, values, list items) or more"),
        "Aliases" | "Anchors" => format!("uses more than {count} YAML {}", kind.to_lowercase()),
        _ => format!(
            "exceeds the parser's limit on {} ({count})",
            kind.to_lowercase()
        ),
    };
    format!(
        "invalid YAML: the document {what}, far beyond any configuration (which has a few dozen \
         keys, three levels deep): is this the right file?"
    )
}

/// Advice added to parser messages that contain the first text.
const HINTS: &[(&str, &str)] = &[
    ("tab", "indent with spaces, not tabs"),
    ("recursion limit", "the document is nested too deeply"),
];

/// The candidate closest to `word`, if it is close enough to be a typo.
pub(crate) fn did_you_mean<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let limit = (word.chars().count() / 3).max(1);
    candidates
        .iter()
        .map(|c| (edit_distance(word, c), *c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Levenshtein distance over characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = diagonal + usize::from(ca != *cb);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()]
}

/// The 1-based line and column (in characters) just after `before`, the
/// text that precedes a position.
pub(crate) fn line_col(before: &str) -> (usize, usize) {
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

fn to_usize(v: u64) -> usize {
    usize::try_from(v).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_formats() {
        let d = Diagnostic::new("a.yaml", 3, 11, "replication.degree: bad");
        assert_eq!(d.to_string(), "a.yaml:3:11: replication.degree: bad");
        let e = Diagnostic::env("REDIO_LOG_LEVEL", "loud", "log.level: bad");
        assert_eq!(e.to_string(), "REDIO_LOG_LEVEL=loud: log.level: bad");
        let all = ConfigError {
            diagnostics: vec![d, e],
        };
        assert_eq!(
            all.to_string(),
            "a.yaml:3:11: replication.degree: bad\nREDIO_LOG_LEVEL=loud: log.level: bad"
        );
    }

    #[test]
    fn suggestions() {
        let keys = ["degree", "layout", "map_file", "source"];
        assert_eq!(did_you_mean("degre", &keys), Some("degree"));
        assert_eq!(did_you_mean("mapfile", &keys), Some("map_file"));
        assert_eq!(did_you_mean("colour", &keys), None);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}
