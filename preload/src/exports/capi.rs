//! The C API declared in `include/redio.h`.

use crate::comm::ffi;

use crate::state::world;
use std::ffi::c_int;

/// Tells redio the replica-set communicator chosen by an outer redundancy
/// layer (external mode): the processes of `replica_set` run the same
/// logical rank, and a process's rank in it is its replica index.
///
/// Collective over the real `MPI_COMM_WORLD`: every process calls it once,
/// after `MPI_Init`. Logical ranks are numbered by the lowest world rank of
/// each replica set. Returns 0, or -1 when the mapping was already set or
/// the sets do not form a valid topology.
///
/// # Safety
/// `replica_set` is a valid communicator of the calling process.
#[no_mangle]
pub unsafe extern "C" fn redio_set_replica_comm(replica_set: ffi::MPI_Comm) -> c_int {
    crate::lifecycle::external::set_replica_comm(replica_set)
}

/// Reports this process's replica, logical rank and degree. Any pointer may
/// be NULL. Returns 0, or -1 when the mapping is not known (yet).
///
/// # Safety
/// Each pointer is NULL or points to writable memory for one `int`.
#[no_mangle]
pub unsafe extern "C" fn redio_replica_info(
    replica: *mut c_int,
    rank: *mut c_int,
    degree: *mut c_int,
) -> c_int {
    let Some(identity) = world::identity() else {
        return -1;
    };
    for (out, value) in [
        (replica, identity.placement.replica),
        (rank, identity.placement.rank),
        (degree, identity.degree),
    ] {
        if !out.is_null() {
            *out = value as c_int;
        }
    }
    0
}

/// Computes redundancy data for `files` (absolute paths, `count` of them)
/// with the configured `parity` scheme, across the ranks of this process's
/// replica world. Collective over the replica world: every rank calls it,
/// each with its own files (zero files is allowed). Returns 0, or -1 when
/// it failed on any rank (nothing is then committed; the log says why).
///
/// # Safety
/// `files` points to `count` NUL-terminated strings (or is NULL when
/// `count` is 0).
#[no_mangle]
pub unsafe extern "C" fn redio_protect(
    files: *const *const std::ffi::c_char,
    count: c_int,
) -> c_int {
    let paths: Vec<std::path::PathBuf> = (0..count.max(0) as usize)
        .filter_map(|i| {
            let p = *files.add(i);
            (!p.is_null()).then(|| {
                use std::os::unix::ffi::OsStrExt;
                std::ffi::OsStr::from_bytes(std::ffi::CStr::from_ptr(p).to_bytes()).into()
            })
        })
        .collect();
    match crate::parity::protect_now(&paths) {
        Ok(()) => 0,
        Err(e) => {
            crate::log!(Error, "redio_protect: {e}");
            -1
        }
    }
}

/// The collective `redio parity encode | verify | rebuild` job, called by
/// the `redio` CLI's MPI worker processes (which load libredio.so and their
/// MPI library themselves): initialises MPI, runs
/// [`crate::parity::worker::run`] over `MPI_COMM_WORLD` with the `KEY=VALUE`
/// words of `argv`, prints the report and `redio-parity-exit: N` on rank
/// 0's stdout, and finalises MPI. Returns N, or -1 when MPI could not start.
///
/// # Safety
/// `argv` points to `argc` NUL-terminated strings.
#[no_mangle]
pub unsafe extern "C" fn redio_parity_job(
    argc: c_int,
    argv: *const *const std::ffi::c_char,
) -> c_int {
    let args: Vec<String> = (0..argc.max(0) as usize)
        .map(|i| {
            std::ffi::CStr::from_ptr(*argv.add(i))
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    crate::lifecycle::parity_worker::run(&args)
}
