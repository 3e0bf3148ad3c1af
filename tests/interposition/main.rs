//! File I/O interposition (issue 3): POSIX, stdio and C++ stream I/O of an
//! MPI program under redio.
//!
//! The C and C++ programs in `tests/programs/io/` take `SHARED_DIR
//! LOCAL_DIR`, name their files by logical rank and print a deterministic
//! log (return values, errno names, checksums of what they read). Each runs
//! plain, then under `redio run --config` with a configuration that declares
//! `<area>/shared` shared (coordinated: Simple Read, Simple Write) and remaps
//! `<area>/local` to `<area>/local/r{replica}` (node-local, one copy per
//! replica). Then:
//!
//! - every process prints what the plain run's process of the same logical
//!   rank printed;
//! - the shared files are byte-identical to the plain run's (and have the
//!   same permissions);
//! - every replica's remapped directory holds its own copy of the plain
//!   run's node-local files, and nothing was written to the un-remapped one;
//! - the bytes that reach a shared file, counted from outside with strace,
//!   are what the plain run wrote (one writer), not r times that;
//! - test-only fault switches (`REDIO_TEST_FLIP_WRITE`, `REDIO_TEST_FLIP_READ`,
//!   `REDIO_TEST_WRITE_ERRNO`) are corrected with 3 replicas and detected
//!   (EIO on every replica, nothing wrong in the file) with 2;
//! - threads, child processes and the calls redio refuses (mmap, sendfile,
//!   copy_file_range, splice on a shared file; shared I/O off the MPI_Init
//!   thread) behave as documented.
//!
//! The symbol coverage is proved mechanically: the programs' imports (`nm
//! -D`) plus the entry points they look up with `dlsym` cover the list, and
//! libredio.so exports every hook.
//!
//! One module per concern: `matrix` (every program and flavour against its
//! plain run, per MPI, degree and layout; every protocol pair), `bytes_once`
//! (the bytes that reach the shared files, counted with strace), `faults`
//! (injected faults, errno agreement, divergence), `threads` (threads,
//! children, refused calls), `stacks` (the calls I/O libraries make:
//! directories, name calls, locks, serial HDF5, Python's directory
//! helpers), `aio` (asynchronous I/O and `statfs`/`statvfs`, `io_aio.c`),
//! `appends` (appends of several ranks to one file, `io_appends.c`),
//! `limits` (paths of `PATH_MAX` bytes, the descriptor limit, a full file
//! system),
//! `link` (the replica link's fallback to MPI) and
//! `coverage` (hook coverage). `support` holds
//! what they share; `tests/common/` is the MPI harness of every test binary
//! (and `tests/common/strace.rs` the strace byte counter).

#[path = "../common/mod.rs"]
mod common;

mod aio;
mod appends;
mod bytes_once;
mod colocated;
mod coverage;
mod faults;
mod limits;
mod link;
mod matrix;
mod stacks;
mod support;
mod threads;
