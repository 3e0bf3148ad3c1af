//! [`Config::to_yaml`]: the resolved configuration as YAML of the same schema.
//!
//! The output is also the wire format: world rank 0 broadcasts it and the
//! other ranks parse it with [`Config::from_yaml_str`]. Two things make the
//! round trip exact: sizes and durations are written with the largest unit
//! that divides them exactly, and every `$` in text is doubled so that
//! interpolation on the receiving side gives the same text back.

use super::interpolate::escape;
use super::named::Named;
use super::schema::Config;
use super::units::{format_duration, format_size};
use serde::Serializer;
use std::path::Path;
use std::time::Duration;

impl Config {
    /// The fully resolved configuration as YAML (schema version 1), with every key.
    ///
    /// `Config::from_yaml_str(&c.to_yaml(), name, &|_| None)` gives back `c`.
    pub fn to_yaml(&self) -> String {
        match serde_saphyr::to_string(self) {
            Ok(body) => {
                let newline = if body.ends_with('\n') { "" } else { "\n" };
                format!("version: {}\n{body}{newline}", super::validate::VERSION)
            }
            // Plain structs of strings and numbers do not fail to serialise;
            // should it ever happen, the receiver gets a parse error, not a panic.
            Err(error) => format!("# redio could not serialise its configuration: {error}\n"),
        }
    }
}

/// Text, with `$` escaped.
pub(crate) fn escaped<T: AsRef<Path>, S: Serializer>(value: &T, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&escape(&value.as_ref().to_string_lossy()))
}

/// Optional text, with `$` escaped; `None` is written as `null`.
pub(crate) fn escaped_opt<T: AsRef<Path>, S: Serializer>(
    value: &Option<T>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match value {
        Some(value) => escaped(value, s),
        None => s.serialize_none(),
    }
}

/// A list of texts, with `$` escaped.
pub(crate) fn escaped_all<T: AsRef<Path>, S: Serializer>(
    values: &[T],
    s: S,
) -> Result<S::Ok, S::Error> {
    s.collect_seq(
        values
            .iter()
            .map(|v| escape(&v.as_ref().to_string_lossy()).into_owned()),
    )
}

/// Like [`escaped_all`], for an optional list (skipped when `None`).
pub(crate) fn escaped_all_opt<T: AsRef<Path>, S: Serializer>(
    values: &Option<Vec<T>>,
    s: S,
) -> Result<S::Ok, S::Error> {
    escaped_all(values.as_deref().unwrap_or(&[]), s)
}

/// A configuration word of a type declared in another crate (see
/// `named_enum! { impl … }`), which has no `Serialize` of its own.
pub(crate) fn named<T: Named, S: Serializer>(value: &T, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(value.as_str())
}

/// Like [`named`], for an optional value (only called for `Some`: rules
/// skip `None`).
pub(crate) fn named_opt<T: Named, S: Serializer>(
    value: &Option<T>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match value {
        Some(value) => named(value, s),
        None => s.serialize_none(),
    }
}

/// A size in bytes as `64MiB`.
pub(crate) fn size<S: Serializer>(bytes: &u64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format_size(*bytes))
}

/// An optional size (only called for `Some`: rules skip `None`).
pub(crate) fn size_opt<S: Serializer>(bytes: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
    match bytes {
        Some(bytes) => size(bytes, s),
        None => s.serialize_none(),
    }
}

/// A duration as `500ms`.
pub(crate) fn duration<S: Serializer>(value: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format_duration(*value))
}
