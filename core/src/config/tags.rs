//! YAML tags (`!foo`, `!!binary`, `!!str`) are refused wherever they
//! appear: no key of redio's configuration gives one a meaning, and
//! serde-saphyr would otherwise drop an unknown tag silently, or decode
//! `!!binary` into text nobody wrote (issue 44).

use super::diagnostics::Diagnostic;
use serde_saphyr::granit_parser::{Scanner, StrInput, TokenType};

/// The first tag in `text`, as a diagnostic at the tag's own line and
/// column. A syntax error yields `None`: the parser proper reports it.
pub(super) fn refuse_tags(text: &str, file: &str) -> Option<Diagnostic> {
    // The scanner's tokens, not the parser's events: a tag token has its
    // own position (a tagged block mapping's event starts at its first key).
    for token in Scanner::new(StrInput::new(text)) {
        let (span, kind) = token.ok()?.into_parts();
        if let TokenType::Tag(handle, suffix) = kind {
            return Some(Diagnostic::new(
                file,
                span.start.line(),
                span.start.col() + 1,
                format!(
                    "YAML tag \"{handle}{suffix}\" is not accepted: no key of redio's \
                     configuration uses tags (remove it; quote the value if it must stay text)"
                ),
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> (usize, usize, String) {
        let d = refuse_tags(text, "t.yaml").expect("a tag is refused");
        (d.line, d.col, d.message)
    }

    #[test]
    fn every_tag_is_refused_at_its_line_and_column() {
        let (l, c, m) = at("version: 1\nlog:\n  file: !foo /tmp/x\n");
        assert_eq!((l, c), (3, 9), "{m}");
        assert!(m.contains("YAML tag \"!foo\""), "{m}");
        let (l, c, m) = at("version: 1\nparity:\n  dir: !!binary L3RtcA==\n");
        assert_eq!((l, c), (3, 8), "{m}");
        assert!(m.contains("\"!!binary\""), "{m}");
        let (l, c, _) = at("version: 1\nlocal:\n  paths: [/a, !!str /b]\n");
        assert_eq!((l, c), (3, 15));
        let (l, c, _) = at("version: 1\nparity: !x\n  scheme: xor\n");
        assert_eq!((l, c), (2, 9));
        let (l, c, _) = at("version: 1\nparity:\n  files: !list\n    - /a/*\n");
        assert_eq!((l, c), (3, 10));
    }

    #[test]
    fn text_with_exclamation_marks_is_not_a_tag() {
        for ok in [
            "version: 1\nlog:\n  file: \"/tmp/!x\"\n",
            "version: 1\nlog:\n  file: /tmp/a!b\n",
            "version: 1 # hello!\n",
            "version: [1\n",
        ] {
            assert!(refuse_tags(ok, "t.yaml").is_none(), "{ok}");
        }
    }
}
