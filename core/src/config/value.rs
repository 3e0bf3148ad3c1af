//! Kinds of values: how one piece of text becomes one typed value.
//!
//! The file and the environment both deliver text (YAML numbers and booleans
//! arrive as their text too), so every key is converted by exactly one
//! [`Kind`], whichever source the text came from. Messages returned here do
//! not name the key: the caller prefixes it.

use super::glob::Glob;
use super::named::Named;
use super::template::check_template;
use super::units::{format_duration, format_size, parse_duration, parse_size};
use std::marker::PhantomData;
use std::path::PathBuf;
use std::time::Duration;

/// A conversion from text to one typed value.
pub(crate) trait Kind {
    /// The typed value.
    type Out;
    /// What is accepted, for messages about a node of the wrong shape
    /// ("expected {expects}, found a list").
    fn expects(&self) -> String;
    /// Converts `text`, or says why not.
    fn parse(&self, text: &str) -> Result<Self::Out, String>;
}

/// An integer of at least `min` (and at most `max`, if given), stored as `T`.
pub(crate) struct Int<T> {
    min: u64,
    max: Option<u64>,
    ty: PhantomData<T>,
}

impl<T> Int<T> {
    /// Integers from `min` to `max`.
    pub(crate) const fn between(min: u64, max: u64) -> Self {
        Int {
            min,
            max: Some(max),
            ty: PhantomData,
        }
    }

    /// Integers from `min` up to the largest `T`.
    pub(crate) const fn at_least(min: u64) -> Self {
        Int {
            min,
            max: None,
            ty: PhantomData,
        }
    }

    fn allowed(&self) -> String {
        match self.max {
            Some(max) => format!("{} to {max}", self.min),
            None => format!("{} or more", self.min),
        }
    }
}

impl<T: TryFrom<u64>> Kind for Int<T> {
    type Out = T;

    fn expects(&self) -> String {
        format!("an integer ({})", self.allowed())
    }

    fn parse(&self, text: &str) -> Result<T, String> {
        let trimmed = text.trim();
        let digits = trimmed.strip_prefix(['-', '+']).unwrap_or(trimmed);
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!("expected {}, found {text:?}", self.expects()));
        }
        // Anything that does not fit an i128 is out of range anyway.
        let value = trimmed.parse::<i128>().unwrap_or(i128::MAX);
        let in_range =
            value >= i128::from(self.min) && self.max.is_none_or(|max| value <= i128::from(max));
        if !in_range {
            return Err(format!(
                "{trimmed} is out of range (allowed: {})",
                self.allowed()
            ));
        }
        u64::try_from(value)
            .ok()
            .and_then(|v| T::try_from(v).ok())
            .ok_or_else(|| format!("{trimmed} is too large"))
    }
}

/// One of the words of a [`Named`] enum.
pub(crate) struct Choice<E>(PhantomData<E>);

impl<E> Choice<E> {
    pub(crate) const fn new() -> Self {
        Choice(PhantomData)
    }
}

impl<E: Named> Kind for Choice<E> {
    type Out = E;

    fn expects(&self) -> String {
        format!("one of: {}", E::names())
    }

    fn parse(&self, text: &str) -> Result<E, String> {
        E::from_name(text).ok_or_else(|| {
            format!(
                "unknown {} {text:?} (expected one of: {})",
                E::NOUN,
                E::names()
            )
        })
    }
}

/// `true` or `false`.
pub(crate) struct Bool;

impl Kind for Bool {
    type Out = bool;

    fn expects(&self) -> String {
        "true or false".to_string()
    }

    fn parse(&self, text: &str) -> Result<bool, String> {
        match text {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(format!("expected true or false, found {text:?}")),
        }
    }
}

/// A size in bytes of at least `min` (see [`parse_size`]).
pub(crate) struct Size {
    pub min: u64,
}

impl Kind for Size {
    type Out = u64;

    fn expects(&self) -> String {
        "a size such as 4096, 64KiB or 1GiB".to_string()
    }

    fn parse(&self, text: &str) -> Result<u64, String> {
        let bytes = parse_size(text)?;
        if bytes < self.min {
            return Err(format!(
                "{text:?} is too small (the minimum is {})",
                format_size(self.min)
            ));
        }
        Ok(bytes)
    }
}

/// A duration longer than zero (see [`parse_duration`]).
pub(crate) struct Span;

impl Kind for Span {
    type Out = Duration;

    fn expects(&self) -> String {
        "a duration such as 500ms, 10s or 2m".to_string()
    }

    fn parse(&self, text: &str) -> Result<Duration, String> {
        let duration = parse_duration(text)?;
        if duration.is_zero() {
            return Err(format!(
                "{text:?} is too short (must be longer than {})",
                format_duration(Duration::ZERO)
            ));
        }
        Ok(duration)
    }
}

/// A file path (relative paths are relative to the working directory).
pub(crate) struct FilePath;

impl Kind for FilePath {
    type Out = PathBuf;

    fn expects(&self) -> String {
        "a path".to_string()
    }

    fn parse(&self, text: &str) -> Result<PathBuf, String> {
        non_empty(text, "a path").map(PathBuf::from)
    }
}

/// An absolute path prefix, kept as text.
pub(crate) struct Prefix;

impl Kind for Prefix {
    type Out = String;

    fn expects(&self) -> String {
        "an absolute path".to_string()
    }

    fn parse(&self, text: &str) -> Result<String, String> {
        if !text.starts_with('/') {
            return Err(format!(
                "{text:?} is not an absolute path (it must start with /)"
            ));
        }
        Ok(text.to_string())
    }
}

/// A path that may contain `{replica}` and `{rank}`.
pub(crate) struct Template;

impl Kind for Template {
    type Out = String;

    fn expects(&self) -> String {
        "a path that may use {replica} and {rank}".to_string()
    }

    fn parse(&self, text: &str) -> Result<String, String> {
        non_empty(text, "a path")?;
        check_template(text)?;
        Ok(text.to_string())
    }
}

/// An absolute path that may contain `{replica}` and `{rank}`
/// (`parity.dir`): a relative one would resolve against the working
/// directory of each process, which nobody chose.
pub(crate) struct AbsoluteTemplate;

impl Kind for AbsoluteTemplate {
    type Out = String;

    fn expects(&self) -> String {
        "an absolute path that may use {replica} and {rank}".to_string()
    }

    fn parse(&self, text: &str) -> Result<String, String> {
        Template.parse(text)?;
        if !text.starts_with('/') {
            return Err(format!(
                "{text:?} is not an absolute path (it must start with /, e.g. \
                 \"/scratch/local/parity/r{{replica}}/rank{{rank}}\"); a relative one would \
                 resolve against each process's working directory"
            ));
        }
        Ok(text.to_string())
    }
}

/// A `parity.files` pattern: an absolute path that may use `{replica}`,
/// `{rank}` and the wildcards `*` and `?` (a relative one would be
/// refused by every rank at run time, leaving the job without redundancy).
pub(crate) struct AbsoluteGlob;

impl Kind for AbsoluteGlob {
    type Out = String;

    fn expects(&self) -> String {
        "an absolute path pattern that may use {replica}, {rank}, * and ?".to_string()
    }

    fn parse(&self, text: &str) -> Result<String, String> {
        non_empty(text, "a path pattern")?;
        check_template(text)?;
        if !text.starts_with('/') {
            return Err(format!(
                "{text:?} is not an absolute path (it must start with /, e.g. \
                 \"/scratch/ckpt/rank{{rank}}/*.dat\")"
            ));
        }
        // The placeholders are expanded per rank before matching.
        Glob::new(&crate::config::expand_placeholders(text, 0, 0))?;
        Ok(text.to_string())
    }
}

/// A file-system type name such as `lustre`.
pub(crate) struct FsType;

impl Kind for FsType {
    type Out = String;

    fn expects(&self) -> String {
        "a file-system type name such as lustre".to_string()
    }

    fn parse(&self, text: &str) -> Result<String, String> {
        if text.is_empty() || text.chars().any(|c| c.is_whitespace() || c == '/') {
            return Err(format!(
                "{text:?} is not a file-system type name (no spaces or slashes; e.g. nfs4)"
            ));
        }
        Ok(text.to_string())
    }
}

/// A path glob (see [`Glob`]).
pub(crate) struct Pattern;

impl Kind for Pattern {
    type Out = Glob;

    fn expects(&self) -> String {
        "a path glob such as /scratch/**/*.h5".to_string()
    }

    fn parse(&self, text: &str) -> Result<Glob, String> {
        Glob::new(text)
    }
}

/// `K` for a key that may be absent: the value is stored as `Some`.
pub(crate) struct Opt<K>(pub K);

impl<K: Kind> Kind for Opt<K> {
    type Out = Option<K::Out>;

    fn expects(&self) -> String {
        self.0.expects()
    }

    fn parse(&self, text: &str) -> Result<Self::Out, String> {
        self.0.parse(text).map(Some)
    }
}

fn non_empty<'a>(text: &'a str, what: &str) -> Result<&'a str, String> {
    if text.is_empty() {
        return Err(format!("expected {what}, found an empty string"));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::schema::WriteProtocol;

    #[test]
    fn parity_dir_is_an_absolute_template() {
        assert!(AbsoluteTemplate.parse("/p/r{replica}/rank{rank}").is_ok());
        for bad in ["../../etc", "parity/{rank}", "{rank}/x"] {
            let e = AbsoluteTemplate.parse(bad).unwrap_err();
            assert!(e.contains("not an absolute path"), "{bad}: {e}");
        }
    }

    #[test]
    fn parity_file_patterns_are_absolute_globs_with_placeholders() {
        assert!(AbsoluteGlob
            .parse("/ckpt/r{replica}/rank{rank}/*.dat")
            .is_ok());
        let e = AbsoluteGlob.parse("ckpt/*.dat").unwrap_err();
        assert!(e.contains("not an absolute path"), "{e}");
        assert!(AbsoluteGlob.parse("/ckpt/[ab]").is_err());
        assert!(AbsoluteGlob.parse("/ckpt/{node}/x").is_err());
    }

    #[test]
    fn integers() {
        let degree = Int::<u8>::between(1, 3);
        assert_eq!(degree.parse("3"), Ok(3));
        assert_eq!(degree.parse("+2"), Ok(2));
        let cases: &[(&str, &str)] = &[
            ("4", "4 is out of range (allowed: 1 to 3)"),
            ("0", "0 is out of range (allowed: 1 to 3)"),
            ("-1", "-1 is out of range"),
            (
                "99999999999999999999999999999999999999999",
                "is out of range",
            ),
            ("three", "expected an integer (1 to 3), found \"three\""),
            ("2.0", "expected an integer"),
            ("", "expected an integer"),
        ];
        for (text, message) in cases {
            let err = degree.parse(text).unwrap_err();
            assert!(err.contains(message), "{text}: {err}");
        }
        let set_size = Int::<u32>::at_least(2);
        assert!(set_size
            .parse("1")
            .unwrap_err()
            .contains("allowed: 2 or more"));
        assert!(set_size
            .parse("4294967296")
            .unwrap_err()
            .contains("too large"));
    }

    #[test]
    fn choices_list_the_words() {
        let write = Choice::<WriteProtocol>::new();
        assert_eq!(write.parse("distributed"), Ok(WriteProtocol::Distributed));
        assert_eq!(
            write.parse("fast").unwrap_err(),
            "unknown protocol \"fast\" (expected one of: none, simple, distributed, distributed-separate, auto)"
        );
    }
}
