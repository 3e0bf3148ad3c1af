//! A Python program with mpi4py under `redio run --mpi openmpi`.
//!
//! Debian's python3-mpi4py is built against Open MPI 4.1; Python loads its
//! extension module, and libmpi with it, with `dlopen(RTLD_LOCAL)`. The
//! interpreter is `/usr/bin/python3` (a `python3` earlier on the PATH may
//! have no mpi4py).

use crate::common::strace::{strace_prefix, written_bytes};
use crate::common::{fresh_dir, repo, Launch, Mpi};
use crate::support::{assert_same_files, check_success, no_skip};
use crate::{assert_stdout_like_plain, write_config};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const PYTHON: &str = "/usr/bin/python3";
const RANKS: u32 = 2;
const TIMEOUT: u32 = 180;

fn program() -> String {
    repo()
        .join("tests/programs/mpi4py_io.py")
        .display()
        .to_string()
}

fn require_mpi4py() {
    let ok = Command::new(PYTHON)
        .args(["-c", "import mpi4py"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "{PYTHON} has no mpi4py: install python3-mpi4py (scripts/setup.sh)"
    );
}

/// One run's directory: `shared/` (created before the run: the program
/// does not create directories) and the configuration.
fn area(name: &str) -> (PathBuf, PathBuf) {
    let root = fresh_dir(&format!("py/{name}")).canonicalize().unwrap();
    let shared = root.join("shared");
    std::fs::create_dir_all(&shared).unwrap();
    (root, shared)
}

#[test]
fn mpi4py_program_runs_replicated_like_plain_and_writes_once_openmpi() {
    require_mpi4py();
    let mpi = Mpi::OpenMpi;
    let (_, plain_shared) = area("plain");
    let plain = Launch::plain(mpi, RANKS, Path::new(PYTHON))
        .args([program(), plain_shared.display().to_string()])
        .timeout(TIMEOUT)
        .run();
    check_success(&plain, "plain mpirun of mpi4py_io.py");
    assert!(
        plain.ranks[&0].contains("rank 0 of 2") && plain.ranks[&1].contains("rank 1 of 2"),
        "the plain run prints ranks: {:#?}",
        plain.ranks
    );
    for degree in [2, 3] {
        let what = format!("mpi4py_io.py under redio run --mpi openmpi -r {degree}");
        let (root, shared) = area(&format!("r{degree}"));
        let config = root.join("redio.yaml");
        write_config(&config, &shared, "{read: simple, write: simple}");
        let trace = root.join("trace");
        let mut args = strace_prefix(&trace);
        args.extend([PYTHON.to_string(), program(), shared.display().to_string()]);
        let job = Launch::redio(mpi, RANKS, degree, "block", Path::new("strace"))
            .args(args)
            .config(&config)
            .timeout(TIMEOUT)
            .run();
        check_success(&job, &what);
        assert!(
            !job.stderr.contains("is not in the libraries"),
            "{what}: {}",
            job.stderr
        );
        assert_stdout_like_plain(&plain, &job, RANKS, degree, &what);
        assert_same_files(&plain_shared, &shared, &what, &no_skip);
        let written = written_bytes(&trace, &shared);
        let expected: BTreeMap<String, u64> = std::fs::read_dir(&plain_shared)
            .unwrap()
            .flatten()
            .filter_map(|entry| {
                let meta = entry.metadata().ok().filter(|m| m.is_file())?;
                Some((entry.file_name().to_string_lossy().into_owned(), meta.len()))
            })
            .collect();
        println!("{what}: bytes written per shared file {written:?}, file sizes {expected:?}");
        assert_eq!(
            written, expected,
            "{what}: every shared file's bytes must be written once (plain file sizes), \
             not once per replica"
        );
    }
}

/// MPICH has no Python build of mpi4py here: `ctypes_mpich.py` loads
/// libmpich the way Python loads mpi4py (`dlopen(RTLD_LOCAL)`) and calls
/// the global `MPI_*` names, libredio.so's wrappers under redio.
#[test]
fn mpich_loaded_with_rtld_local_from_python_runs_replicated_like_plain() {
    let mpi = Mpi::Mpich;
    let program = repo()
        .join("tests/programs/ctypes_mpich.py")
        .display()
        .to_string();
    let (_, plain_shared) = area("ctypes-plain");
    let plain = Launch::plain(mpi, RANKS, Path::new(PYTHON))
        .args([program.clone(), plain_shared.display().to_string()])
        .timeout(TIMEOUT)
        .run();
    check_success(&plain, "plain mpiexec of ctypes_mpich.py");
    for degree in [2, 3] {
        let what = format!("ctypes_mpich.py under redio run --mpi mpich -r {degree}");
        let (root, shared) = area(&format!("ctypes-r{degree}"));
        let config = root.join("redio.yaml");
        write_config(&config, &shared, "{read: simple, write: simple}");
        let job = Launch::redio(mpi, RANKS, degree, "block", Path::new(PYTHON))
            .args([program.clone(), shared.display().to_string()])
            .config(&config)
            .timeout(TIMEOUT)
            .run();
        check_success(&job, &what);
        assert!(
            job.stderr.contains("MPI_COMM_WORLD arguments redirected")
                && !job.stderr.contains("; 0 MPI_COMM_WORLD arguments"),
            "{what}: the program must call redio's wrappers:\n{}",
            job.stderr
        );
        assert_stdout_like_plain(&plain, &job, RANKS, degree, &what);
        assert_same_files(&plain_shared, &shared, &what, &no_skip);
    }
}

/// A process that calls MPI before it loaded any MPI library stops with a
/// message that says what to do, not with a bare missing symbol.
#[test]
fn calling_mpi_with_no_mpi_library_loaded_stops_with_a_remedy() {
    let out = Command::new(crate::common::redio_bin())
        .args(["exec", "--mpi", "openmpi", "--", PYTHON, "-c"])
        .arg(
            "import ctypes; flag = ctypes.c_int(); \
             ctypes.CDLL(None).MPI_Initialized(ctypes.byref(flag))",
        )
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("no library loaded in this process defines PMPI_Init")
            && stderr.contains("LD_PRELOAD="),
        "{stderr}"
    );
}
