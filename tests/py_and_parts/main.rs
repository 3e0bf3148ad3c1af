//! Real I/O stacks under redundancy (issue 18): a Python program with
//! mpi4py, and several ranks writing one file with Distributed Separate
//! Write, under real launchers.
//!
//! - `mpi4py`: `redio run --mpi openmpi -- /usr/bin/python3 PROGRAM` with
//!   Debian's python3-mpi4py (Open MPI 4.1), which Python loads with
//!   `dlopen(RTLD_LOCAL)`: every replica prints what the plain run printed,
//!   the shared files are the plain run's, and their bytes are written once
//!   (counted with strace); and MPICH loaded from Python the same way
//!   (`ctypes_mpich.py`: there is no MPICH build of mpi4py here);
//! - `shared_writers`: 2 or 3 ranks write disjoint regions of one shared
//!   file under `write: distributed-separate` (MPICH and Open MPI 4.1,
//!   r = 2 and 3, several runs each): the file is the plain run's, byte for
//!   byte, and no part is left; parts of an earlier run are joined (or
//!   dropped under `O_TRUNC`) as documented, and a part a running job holds
//!   is left alone.
//!
//! The comparisons with the plain run (`check_success`, `assert_same_files`)
//! are `tests/interposition/support.rs`'s, the strace byte counter is
//! `tests/common/strace.rs`.

#[path = "../common/mod.rs"]
mod common;
#[allow(dead_code)] // shared with tests/interposition, which uses all of it
#[path = "../interposition/support.rs"]
mod support;

mod mpi4py;
mod shared_writers;

use common::Job;
use std::path::Path;

/// `version: 1` configuration that declares `shared` a shared directory,
/// with `io` (a YAML flow mapping, e.g. `{write: distributed-separate}`),
/// written to `path`.
pub fn write_config(path: &Path, shared: &Path, io: &str) {
    let yaml = format!(
        "version: 1\nshared:\n  paths: [\"{}\"]\nio: {io}\n",
        shared.display()
    );
    std::fs::write(path, yaml).unwrap();
}

/// Every world rank of a replicated run (`degree` replicas of `ranks`
/// ranks, block layout) printed what the plain run's process of the same
/// logical rank printed.
pub fn assert_stdout_like_plain(plain: &Job, job: &Job, ranks: u32, degree: u32, what: &str) {
    assert_eq!(
        job.ranks.len() as u32,
        ranks * degree,
        "{what}: one stdout per process: {:#?}",
        job.ranks
    );
    for (&world, out) in &job.ranks {
        let logical = world % ranks;
        assert_eq!(
            out.as_str(),
            plain.ranks[&logical].as_str(),
            "{what}: world rank {world} (logical rank {logical}) printed something else \
             than the plain run"
        );
    }
}
