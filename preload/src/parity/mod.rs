//! Lazy parity inside the MPI job: the ranks of each replica world protect
//! their own node-local files across ranks (`docs/parity.md`).
//!
//! - [`transport`]: the ring engine's `Transport` over PMPI;
//! - [`collective`]: the polled collectives the protect step needs;
//! - [`protect`]: the collective protect step, which writes redundancy
//!   files the offline tools read;
//! - [`select`]: which files `parity.files` selects, and their root;
//! - [`job`]: the collective `redio parity encode | verify | rebuild` job
//!   (its MPI worker processes call [`job::run`] through `capi.rs`).
//!
//! Triggers: `parity.when: finalize` runs [`at_finalize`] in the
//! `MPI_Finalize` wrapper; `manual` leaves it to `redio_protect` (see
//! `capi.rs`); `close` protects at the first application barrier after a
//! selected file was closed ([`lazy`]), and at `MPI_Finalize` what was
//! closed after the last barrier.

pub mod collective;
pub mod lazy;
pub mod protect;
pub mod reduce_scatter;
pub mod select;
pub mod transport;
pub mod worker;

use crate::state::{settings, world};
use crate::sys::guard::InsideMpi;
use redio_core::config::{expand_placeholders, Config, ParityWhen};
use redio_parity::scheme::Scheme;
use select::Selection;
use std::path::PathBuf;
use std::time::Instant;

/// Redundancy file name prefix (what the offline tools look for by default).
pub const PREFIX: &str = "redio-parity";
/// Pipeline piece size.
const PIECE: usize = 1 << 20;

/// The configured scheme, or None for `parity.scheme: none`.
fn scheme(config: &Config) -> Option<Scheme> {
    redio_core::plan::parity_scheme(&config.parity)
}

/// This host's name.
pub(crate) fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most `len` bytes into the buffer.
    if unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } != 0 {
        return "unknown-host".into();
    }
    let n = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

/// Runs the protect step on `selection` with the configured scheme,
/// collective over this process's replica world, and logs the outcome.
/// Returns false (after logging why) when it failed.
/// `selection` is this rank's files, or why it has none (the step then fails
/// on every rank, after the others have been told).
fn run(config: &Config, scheme: Scheme, selection: Result<Selection, String>) -> bool {
    let _inside = InsideMpi::enter();
    let Some(identity) = world::identity() else {
        crate::log!(Error, "parity: the replica mapping is not known");
        return false;
    };
    if identity.mode != world::Mode::Builtin && identity.degree > 1 {
        // Without redio's own replica worlds, MPI_COMM_WORLD mixes the
        // replicas: sets would span them. Every process sees the same mode.
        crate::log!(
            Error,
            "parity: needs redio's built-in replica worlds when r > 1 (external mode); \
             no redundancy file written"
        );
        return false;
    }
    let (replica, rank) = (identity.placement.replica, identity.placement.rank);
    let host = host_name();
    let group = match &config.parity.failure_group {
        Some(t) => expand_placeholders(t, replica, rank),
        None => host.clone(),
    };
    let (selection, refused) = match selection {
        Ok(s) => (s, None),
        Err(e) => (
            Selection {
                root: PathBuf::new(),
                files: Vec::new(),
            },
            Some(e),
        ),
    };
    let redundancy_dir = match &config.parity.dir {
        Some(t) => PathBuf::from(expand_placeholders(t, replica, rank)),
        None => selection.root.clone(),
    };
    // Temporary files a killed replica left here (issue 44); a live
    // process's are locked and stay. Only this directory: the data
    // directories may be large, and only a rebuild writes there.
    for r in redio_parity::stale::sweep(&redundancy_dir, false) {
        crate::log!(Warn, "parity: {r}");
    }
    let req = protect::Request {
        refused,
        scheme,
        set_size: config.parity.set_size as usize,
        root: selection.root,
        redundancy_dir,
        files: selection.files,
        group,
        host,
        world_rank: identity.world_rank,
        prefix: PREFIX.into(),
        piece: PIECE,
        engine: config.parity.engine,
        // Inside the application: its log says how long it took.
        progress: None,
    };
    let started = Instant::now();
    match protect::protect(world::replica_world(), &req) {
        Ok(out) => {
            let secs = started.elapsed().as_secs_f64().max(1e-9);
            crate::log!(
                Info,
                "parity: {} protected {} file(s), {} bytes, in {:.3} s ({:.0} MB/s); sent {} \
                 received {} read {} bytes; metadata {:.3} s, encode {:.3} s, commit {:.3} s",
                out.path.display(),
                req.files.len(),
                out.protected,
                secs,
                out.protected as f64 / secs / 1e6,
                out.traffic.sent,
                out.traffic.received,
                out.traffic.read,
                out.phases[0],
                out.phases[1],
                out.phases[2]
            );
            true
        }
        Err(e) => {
            crate::log!(Error, "parity: {e}; no redundancy file written");
            false
        }
    }
}

/// The `parity.when: finalize` trigger, and the last chance of `close`:
/// protects the files `parity.files` selects (under `close`, only if a
/// rank closed one after the last barrier). Collective; called by every
/// process in the `MPI_Finalize` wrapper before redio's communicators are
/// freed.
pub fn at_finalize() {
    let Some(config) = settings::get() else {
        return;
    };
    if scheme(config).is_none() || config.parity.files.is_empty() {
        return;
    }
    match config.parity.when {
        ParityWhen::Manual => {}
        ParityWhen::Close => lazy::at_finalize(),
        ParityWhen::Finalize => protect_selected(),
    }
}

/// Whether [`at_finalize`] has a protect step to run (or, under `close`,
/// may have one): a scheme, files, and a trigger other than `manual`.
pub fn wanted_at_finalize() -> bool {
    settings::get().is_some_and(|c| {
        scheme(c).is_some() && !c.parity.files.is_empty() && c.parity.when != ParityWhen::Manual
    })
}

/// Protects every file `parity.files` selects for this rank, now.
/// Collective over the replica world.
fn protect_selected() {
    let (Some(config), Some(identity)) = (settings::get(), world::identity()) else {
        return;
    };
    let Some(scheme) = scheme(config) else {
        return;
    };
    let (replica, rank) = (identity.placement.replica, identity.placement.rank);
    let sel = select::select(&config.parity.files, replica, rank, PREFIX);
    run(config, scheme, sel);
}

/// `redio_protect`: protects exactly `paths` (absolute) with the configured
/// scheme. Collective over the replica world. Returns whether it succeeded.
pub fn protect_now(paths: &[PathBuf]) -> Result<(), String> {
    let config = settings::get().ok_or("redio is not initialised (call after MPI_Init)")?;
    let scheme = scheme(config).ok_or("parity.scheme is none: nothing to compute")?;
    // A bad path list on this rank must not leave the others waiting: it
    // goes into the step as a failed preparation, which every rank agrees on.
    if run(config, scheme, select::explicit(paths)) {
        Ok(())
    } else {
        Err("the protect step failed (see the log)".into())
    }
}
