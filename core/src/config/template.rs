//! Path templates with per-process placeholders: `{replica}` and `{rank}`.
//!
//! Used by `remap[].to` and `log.file`, so that each replica (and rank) gets
//! its own path. Braces are reserved for placeholders: any other `{…}` is
//! refused when the configuration is loaded, not discovered at run time.

/// The placeholder names a template may use.
pub const PLACEHOLDERS: &[&str] = &["replica", "rank"];

/// Checks that every `{…}` in `template` is a known placeholder.
pub fn check_template(template: &str) -> Result<(), String> {
    let mut rest = template;
    while let Some(open) = rest.find(['{', '}']) {
        let after = &rest[open + 1..];
        if rest[open..].starts_with('}') {
            return Err(format!("unmatched \"}}\" in \"{template}\""));
        }
        let close = after
            .find('}')
            .ok_or_else(|| format!("unclosed \"{{\" in \"{template}\""))?;
        let name = &after[..close];
        if !PLACEHOLDERS.contains(&name) {
            return Err(format!(
                "unknown placeholder \"{{{name}}}\" in \"{template}\" (allowed: {{replica}}, {{rank}})"
            ));
        }
        rest = &after[close + 1..];
    }
    Ok(())
}

/// Replaces `{replica}` and `{rank}` in a template that [`check_template`] accepted.
pub fn expand_placeholders(template: &str, replica: u32, rank: u32) -> String {
    template
        .replace("{replica}", &replica.to_string())
        .replace("{rank}", &rank.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates() {
        assert_eq!(check_template("/out/r{replica}/{rank}.log"), Ok(()));
        assert_eq!(check_template("/plain"), Ok(()));
        let bad: &[(&str, &str)] = &[
            ("/out/{node}", "unknown placeholder \"{node}\""),
            ("/out/{rank", "unclosed \"{\""),
            ("/out/rank}", "unmatched \"}\""),
            ("/out/{}", "unknown placeholder \"{}\""),
        ];
        for (template, message) in bad {
            let err = check_template(template).unwrap_err();
            assert!(err.contains(message), "{template}: {err}");
        }
        assert_eq!(
            expand_placeholders("/s/r{replica}/{rank}-{rank}", 2, 17),
            "/s/r2/17-17"
        );
    }
}
