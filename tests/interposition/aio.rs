//! POSIX asynchronous I/O and file-system queries (`io_aio.c`): on a shared
//! file every `aio_*` / `lio_listio` request is done at submission through
//! the coordinated `pread`/`pwrite` (its bytes written once), its result is
//! kept for `aio_error`/`aio_return` and its completion signal queued; on a
//! node-local file the C library does it; `statfs`/`statvfs` answer for the
//! remapped path.

use crate::bytes_once::written_once_like_plain;
use crate::common::{Flavour, Mpi};
use crate::matrix::replicas_match_plain;
use crate::support::AIO;
use redio::topology::LayoutKind;

/// r = 2 and 3, block layout.
const RUNS: [(u32, &str, LayoutKind); 2] = [
    (2, "block", LayoutKind::Block),
    (3, "block", LayoutKind::Block),
];

/// Every process prints what the plain run's process of its logical rank
/// printed (results, errors, checksums, the count of completion signals);
/// the shared files are the plain run's; each replica has its own copy of
/// the node-local files.
#[test]
fn aio_o0_mpich() {
    replicas_match_plain(Mpi::Mpich, AIO, Flavour::O0, &RUNS);
}

/// The 64 variants (`aio_write64`, `lio_listio64`, `statfs64`, ...).
#[test]
fn aio_fortify64_mpich() {
    replicas_match_plain(Mpi::Mpich, AIO, Flavour::Fortify64, &RUNS);
}

#[test]
fn aio_o0_openmpi() {
    replicas_match_plain(Mpi::OpenMpi, AIO, Flavour::O0, &RUNS);
}

#[test]
fn aio_fortify64_openmpi() {
    replicas_match_plain(Mpi::OpenMpi, AIO, Flavour::Fortify64, &RUNS);
}

/// The bytes the requests put on the shared files, counted with strace
/// (glibc's helper threads included), are the plain run's: written once,
/// not once per replica.
#[test]
fn aio_bytes_are_written_once_mpich() {
    for flavour in [Flavour::O0, Flavour::Fortify64] {
        written_once_like_plain(Mpi::Mpich, AIO, flavour, &[2, 3], "aio.{}.dat", "simple");
    }
}
