//! Layer `io`: the handlers of the hooked file functions. Each call is
//! routed: passed through to the real function, or handed to `coord`.
//!
//! Rule: imports `coord` and below; never `lifecycle` or `exports`; no
//! `PMPI_*`.
//!
//! - [`route`]: which calls are coordinated, and the named reason
//!   ([`route::Bypass`]) why the others pass through;
//! - [`paths`]: absolute, symlink-resolved, remapped, classified paths;
//! - [`posix`], [`stdio`], [`aio`], [`fsinfo`], [`unsupported`]: the hook
//!   handlers.
//!
//! See `docs/interposition.md` for what is intercepted and why.

pub mod aio;
pub mod fsinfo;
pub mod paths;
pub mod posix;
pub mod route;
pub mod stdio;
pub mod unsupported;
