//! Configuration: the YAML schema (version 1), loading with precedence and
//! `${VAR}` interpolation, and diagnostics with file, line and column.
//!
//! ```
//! use redio_core::config::{Config, Layout};
//!
//! let yaml = "version: 1\nreplication:\n  degree: 3\n  layout: cyclic\n";
//! let config = Config::from_yaml_str(yaml, "job.yaml", &|_| None).unwrap();
//! assert_eq!(config.replication.degree, 3);
//! assert_eq!(config.replication.layout, Layout::Cyclic);
//! // The resolved configuration is itself a valid file (and the wire format).
//! assert_eq!(Config::from_yaml_str(&config.to_yaml(), "wire", &|_| None).unwrap(), config);
//! ```
//!
//! Precedence, highest first: `REDIO_<SECTION>_<KEY>` environment variables
//! ([`env_var_name`]), the file given explicitly or named by `REDIO_CONFIG`,
//! the built-in defaults ([`Config::default`]). `docs/configuration.md`
//! describes every key.
//!
//! The modules, each with one job:
//! - `schema`: the typed [`Config`] and its defaults;
//! - `raw`: the file as serde-saphyr parses it, every value with its position;
//! - `keys`: the table of keys and how each scalar key is converted;
//! - `value`: the kinds of values (integers, words, sizes, paths, …);
//! - `units`, `glob`, `template`, `interpolate`: the small syntaxes;
//! - `validate`: file + environment → [`Config`], collecting every problem;
//! - `env`: which `REDIO_*` names are configuration variables;
//! - `load`: the entry points and the parsing steps;
//! - `diagnostics`: [`Diagnostic`], [`ConfigError`];
//! - `emit`: [`Config::to_yaml`]; `rules`: [`Config::protocols_for`].

mod diagnostics;
mod emit;
mod env;
mod glob;
mod interpolate;
mod keys;
mod load;
mod named;
mod raw;
mod rules;
mod schema;
mod tags;
mod template;
mod units;
mod validate;
mod value;

pub use diagnostics::{ConfigError, Diagnostic};
pub use env::{env_var_name, CONFIG_VAR, ENV_PREFIX};
pub use glob::Glob;
pub use load::{check_file, check_str};
pub use named::Named;
pub use rules::{FileFacts, ResolvedIo};
pub use schema::{
    Checksum, Config, Faults, Io, IoRule, Layout, Local, Log, LogLevel, OnMismatch,
    OnReplicaFailure, OpenMode, Parity, ParityEngine, ParityScheme, ParityWhen, ReadProtocol,
    Remap, Replication, Shared, Source, Voting, WriteProtocol, DEFAULT_SHARED_FS_TYPES,
};
pub use template::{check_template, expand_placeholders, PLACEHOLDERS};
pub use units::{format_duration, format_size, parse_duration, parse_size};
