//! A Python program with mpi4py under `redio run --mpi openmpi`.
//!
//! Debian's python3-mpi4py is built against Open MPI 4.1; Python loads its
//! extension module, and libmpi with it, with `dlopen(RTLD_LOCAL)`. The
//! interpreter is `/usr/bin/python3` (a `python3` earlier on the PATH may
//! have no mpi4py).

use crate::common::{fresh_dir, repo, Launch, Mpi};
use crate::{assert_same_files, assert_stdout_like_plain, check_success, write_config};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

const PYTHON: &str = "/usr/bin/python3";
const RANKS: u32 = 2;
const TIMEOUT: u32 = 180;

/// The write system calls that can put bytes into a file.
const TRACED: [&str; 5] = ["write", "pwrite64", "writev", "pwritev", "pwritev2"];

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

/// `strace … -o DIR/t` before the program: one trace per process (`-ff`),
/// descriptors with their paths (`-y`), no data (`-s 0`).
fn strace_prefix(dir: &Path) -> Vec<String> {
    std::fs::create_dir_all(dir).unwrap();
    let trace = format!("trace={}", TRACED.join(","));
    let mut args: Vec<String> = ["-f", "-ff", "--seccomp-bpf", "-y", "-s", "0", "-e", &trace]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.push("-o".into());
    args.push(dir.join("t").display().to_string());
    args
}

/// Sums, per file directly under `shared`, the byte counts of successful
/// write calls in the traces under `dir` (lines like
/// `write(5</dir/shared/rank-0.dat>, ""..., 65536) = 65536`, or an
/// interrupted call and its `<... write resumed>) = N`).
fn written_bytes(dir: &Path, shared: &Path) -> BTreeMap<String, u64> {
    let prefix = format!("{}/", shared.display());
    let mut bytes = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let text = std::fs::read_to_string(entry.path()).unwrap();
        let mut pending: HashMap<String, String> = HashMap::new();
        for line in text.lines() {
            let path = if let Some(rest) = line.strip_prefix("<... ") {
                let call = rest.split(' ').next().unwrap_or("");
                match pending.remove(call) {
                    Some(path) => path,
                    None => continue,
                }
            } else {
                let Some((call, rest)) = line.split_once('(') else {
                    continue;
                };
                if !TRACED.contains(&call) {
                    continue;
                }
                let Some((fd, after)) = rest.split_once('<') else {
                    continue;
                };
                if fd.is_empty() || !fd.chars().all(|c| c.is_ascii_digit()) {
                    continue;
                }
                let Some((path, _)) = after.split_once(">, ") else {
                    continue;
                };
                let path = path.trim_end_matches(" (deleted)").to_string();
                if line.ends_with("<unfinished ...>") {
                    pending.insert(call.to_string(), path);
                    continue;
                }
                path
            };
            let Some(name) = path.strip_prefix(&prefix) else {
                continue;
            };
            let Some((_, result)) = line.rsplit_once(") = ") else {
                continue;
            };
            let count: i64 = result
                .split_whitespace()
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or(-1);
            if count > 0 {
                *bytes.entry(name.to_string()).or_insert(0) += count as u64;
            }
        }
    }
    bytes
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
        assert_same_files(&plain_shared, &shared, &what);
        let written = written_bytes(&trace, &shared);
        let expected: BTreeMap<String, u64> = crate::files_of(&plain_shared)
            .into_iter()
            .map(|(name, bytes)| (name, bytes.len() as u64))
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
        assert_same_files(&plain_shared, &shared, &what);
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
