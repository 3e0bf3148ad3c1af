//! The tables of keys: which keys exist, and how each scalar key is read.
//!
//! [`SECTIONS`] lists every key of the schema; unknown-key messages and the
//! environment-variable names come from it. [`scalars`] gives, for each
//! key that holds one value, where its text sits in the parsed file, what
//! [`Kind`] converts it and which field of [`Config`] receives it. The file
//! and the environment go through this one table: there is no per-key code
//! elsewhere (lists and list entries are handled in `validate`).

use super::raw::{mapping, RawDoc, Val};
use super::schema::{
    Checksum, Config, Layout, LogLevel, OnMismatch, OnReplicaFailure, ParityEngine, ParityScheme,
    ParityWhen, ReadProtocol, Source, WriteProtocol,
};
use super::value::{
    AbsoluteTemplate, Bool, Choice, FilePath, Int, Kind, Opt, Size, Span, Template,
};

/// Top-level keys, in schema order.
pub(crate) const TOP_KEYS: &[&str] = &[
    "version",
    "replication",
    "shared",
    "local",
    "remap",
    "io",
    "voting",
    "faults",
    "parity",
    "log",
];

/// Every section with its keys, in schema order. `remap` is a list, so it
/// has no keys of its own.
pub(crate) const SECTIONS: &[(&str, &[&str])] = &[
    ("replication", &["degree", "layout", "map_file", "source"]),
    ("shared", &["paths", "fs_types"]),
    ("local", &["paths"]),
    ("remap", &[]),
    ("io", &["read", "write", "chunk_size", "readers", "rules"]),
    ("voting", &["checksum", "enabled", "on_mismatch"]),
    (
        "faults",
        &[
            "timeout",
            "heartbeat",
            "heartbeat_dir",
            "on_replica_failure",
        ],
    ),
    (
        "parity",
        &[
            "scheme",
            "set_size",
            "rs_parity",
            "when",
            "files",
            "failure_group",
            "engine",
            "dir",
        ],
    ),
    ("log", &["level", "file"]),
];

/// The keys of list entries, under the name messages give the entry.
pub(crate) const ENTRIES: &[(&str, &[&str])] = &[
    ("a remap entry", &["prefix", "to"]),
    (
        "an io.rules entry",
        &[
            "path",
            "fs_types",
            "open_mode",
            "read",
            "write",
            "chunk_size",
            "readers",
            "voting",
            "on_mismatch",
        ],
    ),
];

/// Shared kinds: `io` and its rules must accept exactly the same values.
pub(crate) const DEGREE: Int<u8> = Int::between(1, 3);
pub(crate) const READERS: Int<u32> = Int::at_least(1);
pub(crate) const CHUNK_SIZE: Size = Size { min: 1 };

/// Converts text and stores the value in its field of the configuration.
pub(crate) type Setter = Box<dyn Fn(&mut Config, &str) -> Result<(), String>>;

/// One key that holds a single value.
pub(crate) struct Scalar {
    pub section: &'static str,
    pub key: &'static str,
    /// The file's node for this key, if the file sets it.
    pub raw: fn(&RawDoc) -> Option<&Val>,
    /// What the key accepts, for messages.
    pub expects: String,
    /// Converts the text and stores it in the configuration.
    pub set: Setter,
}

impl Scalar {
    /// `section.key`, as messages name it.
    pub(crate) fn path(&self) -> String {
        format!("{}.{}", self.section, self.key)
    }
}

/// Builds one table row; the kind's output type must match the field.
fn scalar<K: Kind + 'static>(
    section: &'static str,
    key: &'static str,
    raw: fn(&RawDoc) -> Option<&Val>,
    kind: K,
    field: fn(&mut Config) -> &mut K::Out,
) -> Scalar {
    Scalar {
        section,
        key,
        raw,
        expects: kind.expects(),
        set: Box::new(move |config, text| {
            *field(config) = kind.parse(text)?;
            Ok(())
        }),
    }
}

/// One row for `section.key`: the names, the raw node and the typed field
/// all come from the same two identifiers, so they cannot disagree.
macro_rules! scalar {
    ($section:ident . $key:ident, $kind:expr) => {
        scalar(
            stringify!($section),
            stringify!($key),
            |d| mapping(&d.$section)?.$key.as_ref(),
            $kind,
            |c| &mut c.$section.$key,
        )
    };
}

/// Every scalar key, in schema order.
pub(crate) fn scalars() -> Vec<Scalar> {
    vec![
        scalar!(replication.degree, DEGREE),
        scalar!(replication.layout, Choice::<Layout>::new()),
        scalar!(replication.map_file, Opt(FilePath)),
        scalar!(replication.source, Choice::<Source>::new()),
        scalar!(io.read, Choice::<ReadProtocol>::new()),
        scalar!(io.write, Choice::<WriteProtocol>::new()),
        scalar!(io.chunk_size, CHUNK_SIZE),
        scalar!(io.readers, READERS),
        scalar!(voting.checksum, Choice::<Checksum>::new()),
        scalar!(voting.enabled, Bool),
        scalar!(voting.on_mismatch, Choice::<OnMismatch>::new()),
        scalar!(faults.timeout, Span),
        scalar!(faults.heartbeat, Span),
        scalar!(faults.heartbeat_dir, Opt(FilePath)),
        scalar!(faults.on_replica_failure, Choice::<OnReplicaFailure>::new()),
        scalar!(parity.scheme, Choice::<ParityScheme>::new()),
        scalar!(parity.set_size, Int::<u32>::at_least(2)),
        scalar!(parity.rs_parity, Int::<u32>::at_least(1)),
        scalar!(parity.when, Choice::<ParityWhen>::new()),
        scalar!(parity.failure_group, Opt(Template)),
        scalar!(parity.engine, Choice::<ParityEngine>::new()),
        scalar!(parity.dir, Opt(AbsoluteTemplate)),
        scalar!(log.level, Choice::<LogLevel>::new()),
        scalar!(log.file, Opt(Template)),
    ]
}

/// Where a mapping with exactly these keys sits, in words ("in replication",
/// "at the top level", …): serde's unknown-field error lists the keys of
/// the mapping but does not name it.
pub(crate) fn owner_of(fields: &[&str]) -> Option<String> {
    if fields == TOP_KEYS {
        return Some("at the top level".to_string());
    }
    SECTIONS
        .iter()
        .find(|(_, keys)| *keys == fields)
        .map(|(section, _)| format!("in {section}"))
        .or_else(|| {
            ENTRIES
                .iter()
                .find(|(_, keys)| *keys == fields)
                .map(|(entry, _)| format!("in {entry}"))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_scalar_is_a_listed_key_in_order() {
        let listed: Vec<(&str, &str)> = SECTIONS
            .iter()
            .flat_map(|(section, keys)| keys.iter().map(move |key| (*section, *key)))
            .filter(|(section, key)| {
                // The keys that hold lists are not scalars.
                !matches!(
                    (*section, *key),
                    ("shared", _) | ("local", _) | ("io", "rules") | ("parity", "files")
                )
            })
            .collect();
        let table: Vec<(&str, &str)> = scalars().iter().map(|s| (s.section, s.key)).collect();
        assert_eq!(table, listed);
    }

    #[test]
    fn every_field_list_has_a_distinct_owner() {
        let mut lists: Vec<&[&str]> = vec![TOP_KEYS];
        lists.extend(
            SECTIONS
                .iter()
                .map(|(_, keys)| *keys)
                .filter(|k| !k.is_empty()),
        );
        lists.extend(ENTRIES.iter().map(|(_, keys)| *keys));
        for (i, a) in lists.iter().enumerate() {
            assert!(owner_of(a).is_some());
            assert!(lists[i + 1..].iter().all(|b| a != b), "{a:?} twice");
        }
    }
}
