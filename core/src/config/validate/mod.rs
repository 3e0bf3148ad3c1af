//! From the parsed file and the environment to a [`Config`], collecting
//! every problem instead of stopping at the first.
//!
//! Order of precedence: built-in defaults, then the file, then `REDIO_*`
//! variables. Each value is converted where it comes from, so a problem is
//! reported at its own line and column (or variable). Checks that involve
//! two keys run last, on the final values, and point at the value that was
//! set explicitly.
//!
//! This module holds the [`Resolver`] and the scalar keys of the file;
//! `lists` reads lists and list entries, `overrides` the `REDIO_*`
//! variables, `combinations` the checks between keys.

mod combinations;
mod lists;
mod overrides;

use super::diagnostics::{line_col, Diagnostic};
use super::interpolate::interpolate;
use super::keys::{scalars, Scalar, SECTIONS};
use super::raw::{Found, MapOf, Pos, RawDoc, Section, Val};
use super::schema::Config;
use super::value::Kind;
use std::collections::{HashMap, HashSet};

/// The supported schema version.
pub(crate) const VERSION: &str = "1";

/// A parsed configuration file.
pub(crate) struct FileInput<'a> {
    /// The name diagnostics use.
    pub name: &'a str,
    /// The text, to locate `${…}` references inside values.
    pub text: &'a str,
    pub doc: &'a RawDoc,
}

/// What the environment contributes.
pub(crate) struct EnvInput<'a> {
    /// Answers `${VAR}` references and `REDIO_*` lookups.
    pub lookup: &'a dyn Fn(&str) -> Option<String>,
    /// Whether `REDIO_*` variables override the file (not when only checking a file).
    pub overrides: bool,
    /// Every variable name, when known, to report misspelled `REDIO_*` names.
    pub names: &'a [String],
}

/// Where a value came from.
#[derive(Debug, Clone)]
enum Origin {
    File(Pos),
    Env { name: String, value: String },
}

/// Builds the configuration, or returns every problem found.
pub(crate) fn resolve(file: Option<FileInput>, env: EnvInput) -> Result<Config, Vec<Diagnostic>> {
    let scalars = scalars();
    let mut resolver = Resolver {
        config: Config::default(),
        diagnostics: Vec::new(),
        origins: HashMap::new(),
        failed: HashSet::new(),
        file_name: file.as_ref().map_or("", |f| f.name),
        text: file.as_ref().map_or("", |f| f.text),
        lookup: env.lookup,
    };
    if let Some(file) = &file {
        resolver.read_file(file.doc, &scalars);
    }
    if env.overrides {
        resolver.read_env(&scalars, env.names);
    }
    resolver.check_combinations();
    let mut diagnostics = resolver.diagnostics;
    // File problems in file order, then the environment's.
    diagnostics.sort_by_key(|d| (d.line == 0, d.line, d.col));
    if diagnostics.is_empty() {
        Ok(resolver.config)
    } else {
        Err(diagnostics)
    }
}

/// The problem with `version`, if any: its position and the message.
pub(crate) fn version_problem(version: Option<&Val>) -> Option<(Pos, String)> {
    let Some(version) = version else {
        let top = Pos {
            line: 1,
            col: 1,
            bytes: None,
        };
        return Some((
            top,
            format!("missing required key \"version\" (add \"version: {VERSION}\" at the top)"),
        ));
    };
    match &version.value {
        Found::Scalar(text) | Found::Text(text) if text == VERSION => None,
        found => Some((
            version.pos,
            format!(
                "version: {} is not supported (this redio reads version {VERSION})",
                found.describe()
            ),
        )),
    }
}

/// The configuration being built and the problems found so far.
struct Resolver<'a> {
    config: Config,
    diagnostics: Vec<Diagnostic>,
    /// Where each successfully set `section.key` came from.
    origins: HashMap<String, Origin>,
    /// Keys whose last value was invalid: combinations involving them are not checked.
    failed: HashSet<String>,
    file_name: &'a str,
    text: &'a str,
    lookup: &'a dyn Fn(&str) -> Option<String>,
}

impl Resolver<'_> {
    fn read_file(&mut self, doc: &RawDoc, scalars: &[Scalar]) {
        if let Some((pos, message)) = version_problem(doc.version.as_ref()) {
            self.report(&Origin::File(pos), message);
        }
        self.check_section_shapes(doc);
        for scalar in scalars {
            if let Some(val) = (scalar.raw)(doc) {
                match self.text_of(val, &scalar.path(), &scalar.expects) {
                    Some(text) => self.apply(scalar, &text, Origin::File(val.pos)),
                    None => {
                        self.failed.insert(scalar.path());
                    }
                }
            }
        }
        self.read_lists(doc);
    }

    /// A section that is not a mapping (or `remap` that is not a list).
    fn check_section_shapes(&mut self, doc: &RawDoc) {
        fn wrong<T>(section: &Option<Section<T>>) -> Option<(&Found, Pos)> {
            match section.as_ref() {
                Some(s) => match &s.value {
                    MapOf::Wrong(found) => Some((found, s.pos)),
                    MapOf::Map(_) => None,
                },
                None => None,
            }
        }
        let sections = [
            ("replication", wrong(&doc.replication)),
            ("shared", wrong(&doc.shared)),
            ("local", wrong(&doc.local)),
            ("io", wrong(&doc.io)),
            ("voting", wrong(&doc.voting)),
            ("faults", wrong(&doc.faults)),
            ("parity", wrong(&doc.parity)),
            ("log", wrong(&doc.log)),
        ];
        for (name, problem) in sections {
            if let Some((found, pos)) = problem {
                let keys = SECTIONS
                    .iter()
                    .find(|(s, _)| *s == name)
                    .map_or(String::new(), |(_, keys)| keys.join(", "));
                self.report(
                    &Origin::File(pos),
                    format!(
                        "{name}: expected a mapping (with keys {keys}), found {}",
                        found.describe()
                    ),
                );
            }
        }
    }

    /// Converts one file value, reporting what is wrong with it.
    fn convert<K: Kind>(&mut self, label: &str, val: &Val, kind: &K) -> Option<K::Out> {
        let text = self.text_of(val, label, &kind.expects())?;
        match kind.parse(&text) {
            Ok(value) => Some(value),
            Err(message) => {
                self.report(&Origin::File(val.pos), format!("{label}: {message}"));
                None
            }
        }
    }

    /// The text of a scalar node, interpolated; reports other node shapes.
    fn text_of(&mut self, val: &Val, label: &str, expects: &str) -> Option<String> {
        match &val.value {
            Found::Scalar(text) => Some(text.clone()),
            Found::Text(text) => match interpolate(text, self.lookup) {
                Ok(text) => Some(text),
                Err(error) => {
                    let pos = self.locate(val.pos, &error.token);
                    self.report(&Origin::File(pos), format!("{label}: {}", error.message));
                    None
                }
            },
            other => {
                self.report(
                    &Origin::File(val.pos),
                    format!("{label}: expected {expects}, found {}", other.describe()),
                );
                None
            }
        }
    }

    /// Sets one scalar key from text, remembering where the value came from.
    fn apply(&mut self, scalar: &Scalar, text: &str, origin: Origin) {
        let path = scalar.path();
        match (scalar.set)(&mut self.config, text) {
            Ok(()) => {
                self.failed.remove(&path);
                self.origins.insert(path, origin);
            }
            Err(message) => {
                self.report(&origin, format!("{path}: {message}"));
                self.failed.insert(path);
            }
        }
    }

    fn report(&mut self, origin: &Origin, message: String) {
        self.diagnostics.push(match origin {
            Origin::File(pos) => Diagnostic::new(self.file_name, pos.line, pos.col, message),
            Origin::Env { name, value } => Diagnostic::env(name, value, message),
        });
    }

    /// The position of `token` inside the node at `pos`, or the node itself.
    fn locate(&self, pos: Pos, token: &str) -> Pos {
        let offset = pos.bytes.and_then(|(start, len)| {
            let end = start.saturating_add(len).min(self.text.len());
            let node = self.text.get(start..end)?;
            node.find(token).map(|i| start + i)
        });
        match offset.and_then(|o| self.text.get(..o)) {
            Some(before) => {
                let (line, col) = line_col(before);
                Pos {
                    line,
                    col,
                    bytes: None,
                }
            }
            None => pos,
        }
    }
}
