//! File I/O interposition: the C library's file functions, hooked.
//!
//! - [`hooks`]: every hooked symbol, declared once; `real::*` are the C
//!   library's own functions;
//! - [`route`]: which calls are coordinated, and the named reason
//!   ([`route::Bypass`]) why the others pass through;
//! - [`paths`]: absolute, symlink-resolved, remapped, classified paths;
//! - [`table`]: managed descriptors and streams;
//! - [`managed`]: the coordinated operations; [`failover`]: running one
//!   again when a replica dies; [`divergence`]: replicas that issue
//!   different calls;
//! - [`posix`], [`stdio`], [`unsupported`]: the hook handlers;
//! - [`link`]: the replicas' MPI message link; [`faults`]: the replica's
//!   real file, with test-only fault injection.
//!
//! See `docs/interposition.md` for what is intercepted and why.

pub mod divergence;
pub mod failover;
pub mod faults;
pub mod hooks;
pub mod link;
pub mod managed;
pub mod parts;
pub mod paths;
pub mod posix;
pub mod route;
pub mod stdio;
pub mod table;
pub mod unsupported;

/// Resolves every real function when the library is loaded, before the
/// application's `main`. (Hooks that fire even earlier, from other
/// libraries' constructors, resolve their function on first use.)
#[used]
#[link_section = ".init_array"]
static RESOLVE_AT_LOAD: extern "C" fn() = {
    extern "C" fn resolve_at_load() {
        hooks::real::resolve_all();
    }
    resolve_at_load
};

/// Turns coordination on, at the end of `MPI_Init`.
pub fn start() {
    faults::load();
    paths::load_mounts();
    route::activate();
}

/// What this process did with shared files: coordinated operations, bytes
/// it read and bytes it wrote itself.
pub fn counters() -> [u64; 3] {
    let (read, written) = faults::bytes_moved();
    [managed::operations(), read, written]
}

/// Flushes managed streams while the replicas can still coordinate, then
/// turns coordination off (in `MPI_Finalize`).
pub fn stop() {
    if route::active() {
        stdio::flush_all();
        managed::settle_all();
        managed::announce_finalize();
        crate::log!(Debug, "{} coordinated operations", managed::operations());
    }
    route::finish();
}
