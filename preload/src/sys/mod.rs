//! Layer `sys`: the C library's real functions, the thread guards, logging
//! and raw file access. No MPI.
//!
//! Rule: imports nothing from the crate outside `sys`.
//!
//! - [`real`]: the hooked functions' real versions (`real::write`, …);
//! - [`symbols`]: finding functions with `dlsym`: the C library's after
//!   libredio.so (`RTLD_NEXT`), MPI's in the one loaded MPI library;
//! - [`guard`]: the thread-local marks "inside MPI" and "inside redio";
//! - [`log`]: logging through the raw `write` system call;
//! - [`rawfs`]: raw-syscall file access for redio's own bookkeeping files;
//! - [`socket`]: raw-syscall TCP sockets for the replica-set link;
//! - [`descriptors`]: redio's own descriptors kept above the application's
//!   limit, and whether a descriptor is free;
//! - [`pmi`]: telling MPICH's launcher that this process finalized;

pub mod descriptors;
pub mod errno;
pub mod guard;
pub mod log;
pub mod pmi;
pub mod rawfs;
pub mod real;
pub mod socket;
pub mod symbols;
