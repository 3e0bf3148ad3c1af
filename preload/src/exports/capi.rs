//! The C API declared in `include/redio.h`.

use crate::comm::collective;
use crate::comm::ffi;

use crate::comm::pmpi;
use crate::comm::request::Op;
use crate::state::world;
use crate::state::world::Identity;
use crate::state::world::Mode;
use crate::sys::guard::InsideMpi;
use crate::sys::log;
use redio_core::topology::Placement;
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
    let _inside = InsideMpi::enter();
    if world::identity().is_some() {
        crate::log!(
            Error,
            "redio_set_replica_comm: the replica mapping is already set"
        );
        return -1;
    }
    let comm = world::real_world();
    let (world_rank, world_size) = collective::rank_and_size(comm);
    let (replica, degree) = collective::rank_and_size(replica_set);
    // Identify each replica set by its lowest world rank.
    let mut lowest = world_rank as c_int;
    collective::check(collective::allreduce_in_place(
        std::slice::from_mut(&mut lowest),
        Op::Min,
        replica_set,
    ));
    let mut ids = vec![0 as c_int; world_size as usize];
    collective::check(collective::allgather(&[lowest], &mut ids, comm));
    let mut distinct = ids.clone();
    distinct.sort_unstable();
    distinct.dedup();
    let rank = distinct.binary_search(&lowest).unwrap_or(0) as u32;
    let ranks = distinct.len() as u32;
    if ranks * degree != world_size {
        crate::log!(
            Error,
            "redio_set_replica_comm: {world_size} processes do not form {ranks} sets of {degree}"
        );
        return -1;
    }
    let mut dup = ffi::redio_mpi_comm_null;
    collective::check(pmpi::PMPI_Comm_dup(replica_set, &mut dup));
    crate::ft::membership::install_from_comm(dup, world_rank);
    let placement = Placement { replica, rank };
    log::set_identity(world_rank, Some((replica, rank)));
    world::set_identity(Identity {
        mode: Mode::ExternalApi,
        world_rank,
        world_size,
        placement,
        degree,
        ranks,
    });
    0
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
    let _inside = InsideMpi::enter();
    let (mut zero_argc, mut zero_argv) = (0, std::ptr::null_mut());
    if pmpi::PMPI_Init(&mut zero_argc, &mut zero_argv) != ffi::redio_mpi_success {
        return -1;
    }
    let world = ffi::redio_mpi_comm_world;
    let mut rank = 0;
    pmpi::PMPI_Comm_rank(world, &mut rank);
    let report = redio_parity::worker_args::JobSpec::from_args(&args)
        .and_then(|spec| crate::parity::worker::run(world, &spec));
    // An error that stopped this rank is printed by it, whatever its rank.
    let (code, lines, stopped) = match report {
        Ok(r) => (r.code, r.lines, false),
        Err(e) => (
            crate::parity::worker::EXIT_ERROR,
            vec![format!("rank {rank}: {e}")],
            true,
        ),
    };
    if rank == 0 || stopped {
        // This process is the redio CLI's worker, not an application: its
        // own stdout is the report channel back to the CLI.
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        for l in &lines {
            let _ = writeln!(out, "{l}");
        }
        if rank == 0 {
            let _ = writeln!(out, "redio-parity-exit: {code}");
        }
        let _ = out.flush();
    }
    pmpi::PMPI_Finalize();
    c_int::from(code)
}
