//! Lists (`shared.paths`, …) and lists of entries (`remap`, `io.rules`).

use super::{Origin, Resolver};
use crate::config::keys::{CHUNK_SIZE, READERS};
use crate::config::raw::{
    mapping, Items, ListOf, MapOf, Pos, RawDoc, RawRemap, RawRule, Section, Val,
};
use crate::config::schema::{IoRule, OnMismatch, OpenMode, ReadProtocol, Remap, WriteProtocol};
use crate::config::value::{AbsoluteGlob, Bool, Choice, FsType, Kind, Pattern, Prefix, Template};

impl Resolver<'_> {
    pub(super) fn read_lists(&mut self, doc: &RawDoc) {
        let shared = mapping(&doc.shared);
        if let Some(paths) = self.list(
            "shared.paths",
            shared.and_then(|s| s.paths.as_ref()),
            &Prefix,
        ) {
            self.config.shared.paths = paths;
        }
        if let Some(types) = self.list(
            "shared.fs_types",
            shared.and_then(|s| s.fs_types.as_ref()),
            &FsType,
        ) {
            self.config.shared.fs_types = types;
        }
        let local = mapping(&doc.local);
        if let Some(paths) = self.list("local.paths", local.and_then(|s| s.paths.as_ref()), &Prefix)
        {
            self.config.local.paths = paths;
        }
        let parity = mapping(&doc.parity);
        if let Some(files) = self.list(
            "parity.files",
            parity.and_then(|s| s.files.as_ref()),
            &AbsoluteGlob,
        ) {
            self.config.parity.files = files;
        }
        if let Some(entries) = self.entries("remap", doc.remap.as_ref()) {
            let remap = entries
                .into_iter()
                .enumerate()
                .filter_map(|(i, (entry, pos))| self.remap(&format!("remap[{i}]"), entry, pos))
                .collect();
            self.config.remap = remap;
        }
        let rules = mapping(&doc.io).and_then(|io| io.rules.as_ref());
        if let Some(entries) = self.entries("io.rules", rules) {
            let rules = entries
                .into_iter()
                .enumerate()
                .filter_map(|(i, (rule, pos))| self.rule(&format!("io.rules[{i}]"), rule, pos))
                .collect();
            self.config.io.rules = rules;
        }
    }

    fn remap(&mut self, label: &str, entry: &RawRemap, pos: Pos) -> Option<Remap> {
        let prefix = self.required(label, "prefix", entry.prefix.as_ref(), pos, &Prefix);
        let to = self.required(label, "to", entry.to.as_ref(), pos, &Template);
        let (prefix, to) = (prefix?, to?);
        if let Some(problem) = self.remap_escape(&prefix, &to) {
            self.report(&Origin::File(pos), format!("{label}.to: {problem}"));
        }
        Some(Remap { prefix, to })
    }

    /// A `to` whose `..` components lead out of every declared directory
    /// (`shared.paths`, `local.paths` and the directory of `prefix`): the
    /// replicas' files would be written somewhere nobody declared.
    fn remap_escape(&self, prefix: &str, to: &str) -> Option<String> {
        if !to.split('/').any(|c| c == "..") {
            return None;
        }
        let target = normalize(to);
        let parent = normalize(&format!("{prefix}/.."));
        let declared = self
            .config
            .shared
            .paths
            .iter()
            .chain(&self.config.local.paths)
            .map(|d| normalize(d))
            .chain([parent]);
        let mut declared = declared.collect::<Vec<_>>();
        declared.retain(|d| d != "/");
        if declared.iter().any(|d| under(&target, d)) {
            return None;
        }
        Some(format!(
            "{to:?} leads to {target:?} through `..`, outside every declared directory ({}); \
             write the target without `..`, under the directory of the prefix or a shared or \
             local path",
            declared.join(", ")
        ))
    }

    fn rule(&mut self, label: &str, rule: &RawRule, pos: Pos) -> Option<IoRule> {
        let path = self.required(label, "path", rule.path.as_ref(), pos, &Pattern);
        let overrides = [
            &rule.read,
            &rule.write,
            &rule.chunk_size,
            &rule.readers,
            &rule.voting,
            &rule.on_mismatch,
        ];
        if overrides.iter().all(|o| o.is_none()) {
            self.report(
                &Origin::File(pos),
                format!(
                    "{label}: the rule sets nothing (give at least one of read, write, \
                     chunk_size, readers, voting, on_mismatch)"
                ),
            );
        }
        let fs_types = self.list(
            &format!("{label}.fs_types"),
            rule.fs_types.as_ref(),
            &FsType,
        );
        let open_mode = self.optional(
            label,
            "open_mode",
            &rule.open_mode,
            &Choice::<OpenMode>::new(),
        );
        let voting = self.optional(label, "voting", &rule.voting, &Bool);
        let on_mismatch = self.optional(
            label,
            "on_mismatch",
            &rule.on_mismatch,
            &Choice::<OnMismatch>::new(),
        );
        let read = self.optional(label, "read", &rule.read, &Choice::<ReadProtocol>::new());
        let write = self.optional(label, "write", &rule.write, &Choice::<WriteProtocol>::new());
        let chunk_size = self.optional(label, "chunk_size", &rule.chunk_size, &CHUNK_SIZE);
        let readers = self.optional(label, "readers", &rule.readers, &READERS);
        Some(IoRule {
            path: path?,
            fs_types,
            open_mode,
            read,
            write,
            chunk_size,
            readers,
            voting,
            on_mismatch,
        })
    }

    /// A list of single values; `None` leaves the default in place.
    fn list<K: Kind>(
        &mut self,
        label: &str,
        items: Option<&Items<Val>>,
        kind: &K,
    ) -> Option<Vec<K::Out>> {
        let items = items?;
        match &items.value {
            ListOf::Wrong(found) => {
                self.report(
                    &Origin::File(items.pos),
                    format!(
                        "{label}: expected a list (each item {}), found {}",
                        kind.expects(),
                        found.describe()
                    ),
                );
                None
            }
            ListOf::List(values) => Some(
                values
                    .iter()
                    .enumerate()
                    .filter_map(|(i, val)| self.convert(&format!("{label}[{i}]"), val, kind))
                    .collect(),
            ),
        }
    }

    /// The entries of a list of mappings that are mappings, with their positions.
    fn entries<'d, T>(
        &mut self,
        label: &str,
        items: Option<&'d Items<Section<T>>>,
    ) -> Option<Vec<(&'d T, Pos)>> {
        let items = items?;
        let entries = match &items.value {
            ListOf::Wrong(found) => {
                self.report(
                    &Origin::File(items.pos),
                    format!(
                        "{label}: expected a list of mappings, found {}",
                        found.describe()
                    ),
                );
                return None;
            }
            ListOf::List(entries) => entries,
        };
        let mut mappings = Vec::new();
        for (i, entry) in entries.iter().enumerate() {
            match &entry.value {
                MapOf::Map(inner) => mappings.push((inner, entry.pos)),
                MapOf::Wrong(found) => self.report(
                    &Origin::File(entry.pos),
                    format!(
                        "{label}[{i}]: expected a mapping, found {}",
                        found.describe()
                    ),
                ),
            }
        }
        Some(mappings)
    }

    /// A key an entry must have.
    fn required<K: Kind>(
        &mut self,
        entry: &str,
        key: &str,
        val: Option<&Val>,
        entry_pos: Pos,
        kind: &K,
    ) -> Option<K::Out> {
        let label = format!("{entry}.{key}");
        match val {
            Some(val) => self.convert(&label, val, kind),
            None => {
                self.report(
                    &Origin::File(entry_pos),
                    format!(
                        "{entry}: missing key \"{key}\" (expected {})",
                        kind.expects()
                    ),
                );
                None
            }
        }
    }

    /// A key an entry may have.
    fn optional<K: Kind>(
        &mut self,
        entry: &str,
        key: &str,
        val: &Option<Val>,
        kind: &K,
    ) -> Option<K::Out> {
        self.convert(&format!("{entry}.{key}"), val.as_ref()?, kind)
    }
}

/// `path` with `.`, `..` and repeated `/` resolved lexically (no file
/// system access; `..` at the root stays at the root).
fn normalize(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    for c in path.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    format!("/{}", out.join("/"))
}

/// Whether `path` is `dir` or below it (both normalized).
fn under(path: &str, dir: &str) -> bool {
    path == dir || path.starts_with(&format!("{}/", dir.trim_end_matches('/')))
}
