//! Layer `io`: the handlers of the hooked file functions. Each call is
//! routed: passed through to the real function, or handed to `coord`.
//!
//! Rule: imports `coord` and below; never `lifecycle` or `exports`; no
//! `PMPI_*`.
//!
//! - [`route`]: which calls are coordinated, and the named reason
//!   ([`route::Bypass`]) why the others pass through;
//! - [`dispatch`]: a call on a descriptor or a path, coordinated or passed
//!   through;
//! - [`paths`]: absolute, symlink-resolved, remapped, classified paths;
//! - [`posix`], [`stdio`], [`aio`], [`fsinfo`], [`unsupported`]: the hook
//!   handlers;
//! - [`locks`]: `flock`, `fcntl` locks and `lockf` on managed descriptors;
//! - [`names`]: name and attribute calls on paths (`mkdir`, `rmdir`,
//!   `access`, `link`, `chmod`, `truncate`, …);
//! - [`dirs`]: directory listings (`opendir`, `readdir`, `closedir`).
//!
//! See `docs/interposition.md` for what is intercepted and why.

pub mod aio;
pub mod dirs;
pub mod dispatch;
pub mod fsinfo;
pub mod locks;
pub mod names;
pub mod paths;
pub mod posix;
pub mod route;
pub mod stdio;
pub mod unsupported;
