//! Path globs for `io.rules`: `*`, `**` and `?`.
//!
//! - `*` matches any characters within one path component (not `/`);
//! - `?` matches exactly one character other than `/`;
//! - `**` as a whole component matches any number of components, including none;
//! - a pattern that does not start with `/` may match at any depth, as if it
//!   began with `**/` (so `*.h5` matches every `.h5` file).
//!
//! Character classes and braces (`[…]`, `{…}`) are refused rather than taken
//! literally, so that a pattern written for a shell does not silently match
//! nothing. Repeated slashes are ignored on both sides.

use serde::Serialize;
use std::fmt;

/// A compiled path pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Glob {
    source: String,
    segments: Vec<Segment>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    /// `**`: any number of components.
    AnyDepth,
    /// One component made of literals and `*` / `?`.
    Component(Vec<Token>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    Literal(char),
    /// `*`
    Any,
    /// `?`
    One,
}

impl Glob {
    /// Compiles `pattern`; the error says what is wrong with it.
    pub fn new(pattern: &str) -> Result<Glob, String> {
        if pattern.is_empty() {
            return Err("the pattern is empty".to_string());
        }
        if let Some(c) = pattern.chars().find(|c| "[]{}".contains(*c)) {
            return Err(format!(
                "\"{c}\" is not supported in \"{pattern}\" (the wildcards are *, ** and ?)"
            ));
        }
        let mut segments = Vec::new();
        if !pattern.starts_with('/') {
            segments.push(Segment::AnyDepth);
        }
        for part in pattern.split('/').filter(|p| !p.is_empty()) {
            if part == "**" {
                // `**/**` means the same as `**`.
                if segments.last() != Some(&Segment::AnyDepth) {
                    segments.push(Segment::AnyDepth);
                }
            } else if part.contains("**") {
                return Err(format!(
                    "\"**\" must be a whole path component, as in /data/**/out.h5; \
                     found \"{part}\" in \"{pattern}\""
                ));
            } else {
                segments.push(Segment::Component(
                    part.chars()
                        .map(|c| match c {
                            '*' => Token::Any,
                            '?' => Token::One,
                            c => Token::Literal(c),
                        })
                        .collect(),
                ));
            }
        }
        Ok(Glob {
            source: pattern.to_string(),
            segments,
        })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// Whether `path` matches the whole pattern.
    pub fn matches(&self, path: &str) -> bool {
        let components: Vec<&str> = path.split('/').filter(|c| !c.is_empty()).collect();
        // ok[j]: the segments from i on match the components from j on,
        // computed from the last segment backwards (no recursion, no blow-up).
        let n = components.len();
        let mut ok = vec![false; n + 1];
        ok[n] = true;
        for segment in self.segments.iter().rev() {
            let mut next = vec![false; n + 1];
            for j in (0..=n).rev() {
                next[j] = match segment {
                    Segment::AnyDepth => ok[j] || (j < n && next[j + 1]),
                    Segment::Component(tokens) => {
                        j < n && ok[j + 1] && component_matches(tokens, components[j])
                    }
                };
            }
            ok = next;
        }
        ok[0]
    }
}

/// Wildcard match of one component: greedy `*` with backtracking to the last star.
fn component_matches(tokens: &[Token], text: &str) -> bool {
    let chars: Vec<char> = text.chars().collect();
    let (mut t, mut c) = (0, 0);
    let mut last_star: Option<(usize, usize)> = None;
    while c < chars.len() {
        match tokens.get(t) {
            Some(Token::Any) => {
                last_star = Some((t, c));
                t += 1;
            }
            Some(Token::One) => {
                t += 1;
                c += 1;
            }
            Some(Token::Literal(l)) if *l == chars[c] => {
                t += 1;
                c += 1;
            }
            _ => match last_star {
                // Let the last `*` swallow one more character and retry.
                Some((star_t, star_c)) => {
                    last_star = Some((star_t, star_c + 1));
                    t = star_t + 1;
                    c = star_c + 1;
                }
                None => return false,
            },
        }
    }
    tokens[t..].iter().all(|token| *token == Token::Any)
}

impl fmt::Display for Glob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

impl Serialize for Glob {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        super::emit::escaped(&self.source, s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn glob(pattern: &str) -> Glob {
        Glob::new(pattern).unwrap()
    }

    #[test]
    fn matching() {
        let cases: &[(&str, &str, bool)] = &[
            ("/data/*.h5", "/data/a.h5", true),
            ("/data/*.h5", "/data/sub/a.h5", false),
            ("/data/*.h5", "/data/a.h5x", false),
            ("/data/**/*.h5", "/data/a.h5", true),
            ("/data/**/*.h5", "/data/x/y/a.h5", true),
            ("/data/**", "/data/x/y", true),
            ("/data/**", "/other/x", false),
            ("*.h5", "/anywhere/deep/a.h5", true),
            ("*.h5", "a.h5", true),
            ("out/*.dat", "/scratch/run1/out/x.dat", true),
            ("out/*.dat", "/scratch/out/sub/x.dat", false),
            ("/a/?.txt", "/a/b.txt", true),
            ("/a/?.txt", "/a/bc.txt", false),
            ("/a/?.txt", "/a/.txt", false),
            ("/a/*", "/a/", false),
            ("/a/*", "/a/b", true),
            ("/a//b", "/a/b", true),
            ("/a/b", "/a//b/", true),
            ("/a/*x*y*", "/a/1x2y3", true),
            ("/a/*x*y*", "/a/1y2x3", false),
            ("/a/é*", "/a/école", true),
            ("/**/**/c", "/c", true),
            ("/**/a/**/a/**/b", &format!("/{}", "a/".repeat(200)), false),
        ];
        for (pattern, path, expected) in cases {
            assert_eq!(
                glob(pattern).matches(path),
                *expected,
                "{pattern} vs {path}"
            );
        }
    }

    #[test]
    fn bad_patterns() {
        let cases: &[(&str, &str)] = &[
            ("", "empty"),
            ("/data/[ab].h5", "\"[\" is not supported"),
            ("/data/{a,b}", "\"{\" is not supported"),
            ("/data/a**", "whole path component"),
            ("/data/***/x", "whole path component"),
        ];
        for (pattern, message) in cases {
            let err = Glob::new(pattern).unwrap_err();
            assert!(err.contains(message), "{pattern}: {err}");
        }
    }
}
