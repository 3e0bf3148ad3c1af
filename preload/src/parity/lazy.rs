//! `parity.when: close`: lazy redundancy at synchronisation points, as
//! Gropp, Ross & Miller (2004) compute it. Closing a file that
//! `parity.files` selects marks this rank dirty; at the application's next
//! `MPI_Barrier` on its world, the ranks agree whether any of them is
//! dirty, and if so run the protect step over every selected file. So a
//! checkpoint written, closed and followed by a barrier is protected before
//! the run goes on, not only at `MPI_Finalize`.
//!
//! Why not protect inside `close` itself: the protect step is collective,
//! and ranks close their files at different moments (and some close more
//! files than others); a barrier is a point every rank reaches together.

use crate::state::settings;
use crate::state::world;
use crate::sys::guard::InsideMpi;
use redio_core::config::{expand_placeholders, Glob, ParityWhen};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

/// Set when this rank closed a selected file since the last protect step.
static DIRTY: AtomicBool = AtomicBool::new(false);

/// This rank's expanded `parity.files` globs when `when: close` applies.
static GLOBS: OnceLock<Option<Vec<Glob>>> = OnceLock::new();

/// The globs to watch, or `None` when lazy parity is off (another trigger,
/// no scheme, no files, or before the replica mapping is known).
fn globs() -> Option<&'static [Glob]> {
    let identity = world::identity()?;
    GLOBS
        .get_or_init(|| {
            let config = settings::get()?;
            let p = &config.parity;
            if p.when != ParityWhen::Close
                || crate::parity::scheme(config).is_none()
                || p.files.is_empty()
            {
                return None;
            }
            let (replica, rank) = (identity.placement.replica, identity.placement.rank);
            // A bad pattern is reported by the protect step itself.
            p.files
                .iter()
                .map(|f| Glob::new(&expand_placeholders(f, replica, rank)).ok())
                .collect()
        })
        .as_deref()
}

/// Whether lazy parity at barriers is on in this process.
pub fn enabled() -> bool {
    globs().is_some()
}

/// Called before the application closes `fd`: marks this rank dirty when
/// `fd` was open for writing on a file that `parity.files` selects. (redio's
/// own I/O, the protect step's reads included, never counts.)
pub fn closing(fd: libc::c_int) {
    let Some(globs) = globs() else {
        return;
    };
    if DIRTY.load(Ordering::Relaxed) || InsideMpi::active() {
        return;
    }
    // The real fcntl: `libc::fcntl` would bind to redio's own hook.
    // SAFETY: F_GETFL only reads the descriptor's flags.
    let flags = unsafe { crate::sys::real::fcntl(fd, libc::F_GETFL, 0) };
    if flags < 0 || flags & libc::O_ACCMODE == libc::O_RDONLY {
        return;
    }
    let link = format!("/proc/self/fd/{fd}");
    let Ok(path) = std::fs::read_link(&link) else {
        return;
    };
    let text = path.to_string_lossy();
    if globs.iter().any(|g| g.matches(&text)) {
        DIRTY.store(true, Ordering::Relaxed);
    }
}

/// The application's barrier on its world completed: protect if any rank
/// closed a selected file since the last time. Collective over the
/// replica world (every rank is in the same barrier).
pub fn at_barrier() {
    if !enabled() {
        return;
    }
    if any_dirty() {
        crate::parity::protect_selected();
    }
}

/// At `MPI_Finalize` under `when: close`: protects what was closed after
/// the last barrier (nothing when every close was followed by one).
pub fn at_finalize() {
    if any_dirty() {
        crate::parity::protect_selected();
    }
}

/// Whether any rank of the replica world is dirty; clears this rank's mark.
fn any_dirty() -> bool {
    let mine = DIRTY.swap(false, Ordering::Relaxed);
    match crate::parity::collective::all_agree(world::replica_world(), !mine) {
        Ok(all_clean) => !all_clean,
        Err(e) => {
            crate::log!(
                Error,
                "parity (when: close): {e}; no parity at this barrier"
            );
            false
        }
    }
}
