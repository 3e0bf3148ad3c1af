//! Checks between keys, run on the final values (after the environment).
//!
//! A combination is only judged when none of its keys had an invalid value
//! (the default left in its place would give a misleading second error),
//! and it is reported where the offending value was set.

use super::Resolver;
use crate::config::diagnostics::Diagnostic;
use crate::config::schema::{Layout, ParityScheme};
use crate::config::units::format_duration;

impl Resolver<'_> {
    /// Checks that involve two keys, on the final values.
    pub(super) fn check_combinations(&mut self) {
        self.check_map_file();
        self.check_rs_parity();
        self.check_heartbeat();
    }

    /// `replication.map_file` is set exactly when the layout is `map`.
    fn check_map_file(&mut self) {
        if !self.valid(&["replication.layout", "replication.map_file"]) {
            return;
        }
        let replication = &self.config.replication;
        match (replication.layout, replication.map_file.is_some()) {
            (Layout::Map, false) => self.report_at(
                &["replication.layout"],
                "replication.map_file: required when replication.layout is \"map\" \
                 (the file that assigns world ranks to replicas)"
                    .to_string(),
            ),
            (layout, true) if layout != Layout::Map => self.report_at(
                &["replication.map_file"],
                format!(
                    "replication.map_file: only used with layout \"map\", but \
                     replication.layout is \"{layout}\" (remove map_file or set layout: map)"
                ),
            ),
            _ => {}
        }
    }

    /// Reed-Solomon needs data blocks: `rs_parity < set_size`. Checked only
    /// when the scheme is `rs`: for any other scheme the value does not
    /// matter, and the configuration that world rank 0 broadcasts spells out
    /// every key, so "given" cannot be told from "default" there (a job with
    /// `scheme: xor, set_size: 2` was refused at start-up).
    /// GF(2^8) has 256 elements: the Cauchy matrix needs
    /// `set_size + rs_parity <= 256`.
    fn check_rs_parity(&mut self) {
        let parity = &self.config.parity;
        let (k, size) = (u64::from(parity.rs_parity), u64::from(parity.set_size));
        if parity.scheme != ParityScheme::Rs
            || (k < size && k + size <= 256)
            || !self.valid(&["parity.scheme", "parity.set_size", "parity.rs_parity"])
        {
            return;
        }
        let message = if k >= size {
            format!("parity.rs_parity: {k} must be less than parity.set_size ({size})")
        } else {
            format!(
                "parity.rs_parity: {k} with parity.set_size {size} makes {}, but Reed-Solomon over \
                 GF(2^8) allows set_size + rs_parity <= 256; lower one of them",
                k + size
            )
        };
        self.report_at(
            &["parity.rs_parity", "parity.set_size", "parity.scheme"],
            message,
        );
    }

    /// A replica must signal life more often than it is suspected.
    fn check_heartbeat(&mut self) {
        let faults = &self.config.faults;
        if faults.heartbeat < faults.timeout || !self.valid(&["faults.heartbeat", "faults.timeout"])
        {
            return;
        }
        let message = format!(
            "faults.heartbeat: {} must be shorter than faults.timeout ({})",
            format_duration(faults.heartbeat),
            format_duration(faults.timeout)
        );
        self.report_at(&["faults.heartbeat", "faults.timeout"], message);
    }

    fn valid(&self, keys: &[&str]) -> bool {
        keys.iter().all(|k| !self.failed.contains(*k))
    }

    /// Reports at the origin of the first of `keys` that was set explicitly.
    fn report_at(&mut self, keys: &[&str], message: String) {
        match keys.iter().find_map(|k| self.origins.get(*k)).cloned() {
            Some(origin) => self.report(&origin, message),
            // Only reachable if the built-in defaults were inconsistent.
            None => self
                .diagnostics
                .push(Diagnostic::new("<defaults>", 0, 0, message)),
        }
    }
}
