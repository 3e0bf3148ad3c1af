//! The configuration file as written: the serde schema, with positions.
//!
//! The structs mirror the YAML schema (version 1) with
//! `#[serde(deny_unknown_fields)]`, so serde-saphyr itself rejects unknown
//! keys and duplicate keys. What they do not do is judge values: every leaf
//! is a [`Val`] that accepts any YAML node and remembers what it was and
//! where. Sections and lists accept any node too ([`MapOf`], [`ListOf`]).
//! That way a wrong value or a wrong shape does not stop deserialisation,
//! and the validator can report every such problem with its line and column
//! and with the name of the key, which serde's own errors do not carry.

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_saphyr::{Location, Spanned};
use std::fmt;
use std::marker::PhantomData;

/// What a YAML node turned out to be.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Found {
    /// A string scalar (interpolation applies).
    Text(String),
    /// A number or boolean, as text.
    Scalar(String),
    /// An explicit null in a position where it is not "unset" (a list item).
    Null,
    List,
    Map,
}

impl Found {
    /// How messages show the node: `"text"`, `42`, `a list`, …
    pub(crate) fn describe(&self) -> String {
        match self {
            Found::Text(text) => format!("{text:?}"),
            Found::Scalar(text) => text.clone(),
            Found::Null => "no value".to_string(),
            Found::List => "a list".to_string(),
            Found::Map => "a mapping".to_string(),
        }
    }
}

/// Where a node starts: 1-based line and column, and its byte range when known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Pos {
    pub line: usize,
    pub col: usize,
    pub bytes: Option<(usize, usize)>,
}

impl Pos {
    fn of(location: &Location) -> Pos {
        let span = location.span();
        let as_usize = |v: u64| usize::try_from(v).unwrap_or(usize::MAX);
        Pos {
            line: as_usize(location.line()),
            col: as_usize(location.column()),
            bytes: span
                .byte_offset()
                .zip(span.byte_len())
                .map(|(offset, len)| (as_usize(offset), as_usize(len))),
        }
    }
}

/// A deserialised value with the position of its node.
#[derive(Debug, Clone)]
pub(crate) struct Node<T> {
    pub value: T,
    pub pos: Pos,
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Node<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let spanned = Spanned::<T>::deserialize(d)?;
        Ok(Node {
            pos: Pos::of(&spanned.referenced),
            value: spanned.value,
        })
    }
}

/// A leaf: any node, judged later.
pub(crate) type Val = Node<Found>;
/// A node that should be a mapping deserialised as `T`.
pub(crate) type Section<T> = Node<MapOf<T>>;
/// A node that should be a list of `T`.
pub(crate) type Items<T> = Node<ListOf<T>>;

/// A mapping as `T`, or what was found instead.
#[derive(Debug, Clone)]
pub(crate) enum MapOf<T> {
    Map(T),
    Wrong(Found),
}

/// A list of `T`, or what was found instead.
#[derive(Debug, Clone)]
pub(crate) enum ListOf<T> {
    List(Vec<T>),
    Wrong(Found),
}

/// The visits shared by all three tolerant types: scalars become [`Found`].
macro_rules! scalar_visits {
    ($wrap:expr) => {
        fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
            Ok($wrap(Found::Scalar(v.to_string())))
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
            Ok($wrap(Found::Scalar(v.to_string())))
        }
        fn visit_i128<E: de::Error>(self, v: i128) -> Result<Self::Value, E> {
            Ok($wrap(Found::Scalar(v.to_string())))
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
            Ok($wrap(Found::Scalar(v.to_string())))
        }
        fn visit_u128<E: de::Error>(self, v: u128) -> Result<Self::Value, E> {
            Ok($wrap(Found::Scalar(v.to_string())))
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
            Ok($wrap(Found::Scalar(v.to_string())))
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
            Ok($wrap(Found::Text(v.to_string())))
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($wrap(Found::Null))
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($wrap(Found::Null))
        }
    };
}

/// Skips the rest of a list or mapping that is in the wrong place.
fn drain_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
    while seq.next_element::<IgnoredAny>()?.is_some() {}
    Ok(())
}

fn drain_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
    Ok(())
}

impl<'de> Deserialize<'de> for Found {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct FoundVisitor;
        impl<'de> Visitor<'de> for FoundVisitor {
            type Value = Found;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any YAML value")
            }
            scalar_visits!(|found| found);
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Found, A::Error> {
                drain_seq(seq).map(|()| Found::List)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Found, A::Error> {
                drain_map(map).map(|()| Found::Map)
            }
        }
        d.deserialize_any(FoundVisitor)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for MapOf<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct MapVisitor<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for MapVisitor<T> {
            type Value = MapOf<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a mapping")
            }
            scalar_visits!(MapOf::Wrong);
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                drain_seq(seq).map(|()| MapOf::Wrong(Found::List))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                T::deserialize(de::value::MapAccessDeserializer::new(map)).map(MapOf::Map)
            }
        }
        d.deserialize_any(MapVisitor(PhantomData))
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for ListOf<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ListVisitor<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for ListVisitor<T> {
            type Value = ListOf<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list")
            }
            scalar_visits!(ListOf::Wrong);
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(ListOf::List(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                drain_map(map).map(|()| ListOf::Wrong(Found::Map))
            }
        }
        d.deserialize_any(ListVisitor(PhantomData))
    }
}

/// The mapping of `T` inside a section, if it is one.
pub(crate) fn mapping<T>(section: &Option<Section<T>>) -> Option<&T> {
    match section.as_ref().map(|s| &s.value) {
        Some(MapOf::Map(inner)) => Some(inner),
        _ => None,
    }
}

/// Just `version`, read before the full schema: a file written for another
/// version should be told so, not flooded with unknown-key errors.
/// Deliberately lenient (no `deny_unknown_fields`): it ignores everything else.
#[derive(Deserialize)]
pub(crate) struct VersionProbe {
    pub version: Option<Val>,
}

/// The whole file. Absent keys and `null` values are both `None`: "not set".
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawDoc {
    pub version: Option<Val>,
    pub replication: Option<Section<RawReplication>>,
    pub shared: Option<Section<RawShared>>,
    pub local: Option<Section<RawLocal>>,
    pub remap: Option<Items<Section<RawRemap>>>,
    pub io: Option<Section<RawIo>>,
    pub voting: Option<Section<RawVoting>>,
    pub faults: Option<Section<RawFaults>>,
    pub parity: Option<Section<RawParity>>,
    pub log: Option<Section<RawLog>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawReplication {
    pub degree: Option<Val>,
    pub layout: Option<Val>,
    pub map_file: Option<Val>,
    pub source: Option<Val>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawShared {
    pub paths: Option<Items<Val>>,
    pub fs_types: Option<Items<Val>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawLocal {
    pub paths: Option<Items<Val>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawRemap {
    pub prefix: Option<Val>,
    pub to: Option<Val>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawIo {
    pub read: Option<Val>,
    pub write: Option<Val>,
    pub chunk_size: Option<Val>,
    pub readers: Option<Val>,
    pub rules: Option<Items<Section<RawRule>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawRule {
    pub path: Option<Val>,
    pub fs_types: Option<Items<Val>>,
    pub open_mode: Option<Val>,
    pub read: Option<Val>,
    pub write: Option<Val>,
    pub chunk_size: Option<Val>,
    pub readers: Option<Val>,
    pub voting: Option<Val>,
    pub on_mismatch: Option<Val>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawVoting {
    pub checksum: Option<Val>,
    pub enabled: Option<Val>,
    pub on_mismatch: Option<Val>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawFaults {
    pub timeout: Option<Val>,
    pub heartbeat: Option<Val>,
    pub heartbeat_dir: Option<Val>,
    pub on_replica_failure: Option<Val>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawParity {
    pub scheme: Option<Val>,
    pub set_size: Option<Val>,
    pub rs_parity: Option<Val>,
    pub when: Option<Val>,
    pub files: Option<Items<Val>>,
    pub failure_group: Option<Val>,
    pub engine: Option<Val>,
    pub dir: Option<Val>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawLog {
    pub level: Option<Val>,
    pub file: Option<Val>,
}
