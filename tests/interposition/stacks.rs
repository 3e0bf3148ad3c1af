//! The POSIX calls I/O libraries make (issue 18): directories and name
//! calls (a `mkdir -p` race of every rank, as Python's
//! `os.makedirs(exist_ok=True)` does it), locks (`fcntl` record and OFD
//! locks, `flock`, `lockf`, with conflicts between ranks), serial HDF5 per
//! rank on a shared path (`H5Fcreate` locks its file), and Python's
//! directory helpers through mpi4py. Each runs plain, then under redio at
//! r=2 and r=3, under MPICH and Open MPI 4.1; every replica must print what
//! the plain run's process of its rank printed.

use crate::bytes_once::replicated_under_strace;
use crate::common::strace::{strace_prefix, written_bytes};
use crate::common::{compile_flavour, scratch, Flavour, Job, Launch, Mpi};
use crate::support::{
    assert_same_files, check_success, first_difference, no_skip, reference, replicated, Area,
    RANKS, TIMEOUT,
};
use redio::topology::{LayoutKind, Topology};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Directories and name calls, with a `mkdir -p` race (under `tests/programs/`).
pub const DIRS: &str = "io/io_dirs.c";
/// Locks with conflicts between ranks.
pub const LOCKS: &str = "io/io_locks.c";
/// Serial HDF5, one file per rank.
pub const HDF5: &str = "io/io_hdf5.c";
/// Python's directory helpers through mpi4py.
pub const PY_DIRS: &str = "py/dirs.py";

const DEGREES: [u32; 2] = [2, 3];

/// For each world rank of `job`: its replica, its logical rank and its
/// stdout (block layout).
fn by_placement(job: &Job, degree: u32) -> Vec<(u32, u32, u32, &str)> {
    let topology = Topology::regular(RANKS * degree, degree, LayoutKind::Block).unwrap();
    job.ranks
        .iter()
        .map(|(world, out)| {
            let placement = topology.place(*world);
            (*world, placement.replica, placement.rank, out.as_str())
        })
        .collect()
}

/// The lines of `out` that start with `race` (`true`) or the others.
fn lines(out: &str, race: bool) -> String {
    out.lines()
        .filter(|line| line.starts_with("race") == race)
        .map(|line| format!("{line}\n"))
        .collect()
}

/// Every process printed the plain run's lines of its logical rank (all
/// but the `race` lines, whose outcome depends on timing), and every
/// replica of a rank printed the same `race shared` lines (the replicas of
/// a rank take the same turn in a race on the shared file system).
fn assert_like_plain_but_races(plain: &Job, job: &Job, degree: u32, what: &str) {
    assert_eq!(
        job.ranks.len() as u32,
        RANKS * degree,
        "{what}: expected a stdout file per process:\n{}",
        job.stderr
    );
    let placed = by_placement(job, degree);
    for &(world, replica, rank, out) in &placed {
        let expected = lines(&plain.ranks[&rank], false);
        let actual = lines(out, false);
        assert!(
            actual == expected,
            "{what}: stdout of world rank {world} (replica {replica}, rank {rank}) differs \
             from the plain run's rank {rank}: {}\n--- stderr ---\n{}",
            first_difference(&expected, &actual),
            job.stderr
        );
        let shared_races = |out: &str| -> String {
            lines(out, true)
                .lines()
                .filter(|l| l.starts_with("race shared"))
                .map(|l| format!("{l}\n"))
                .collect()
        };
        let first = placed
            .iter()
            .find(|p| p.2 == rank && p.1 == 0)
            .map(|p| p.3)
            .unwrap();
        assert!(
            shared_races(out) == shared_races(first),
            "{what}: replica {replica} of rank {rank} took another turn in a race on the \
             shared file system than replica 0: {}",
            first_difference(&shared_races(first), &shared_races(out))
        );
    }
    // redio's I/O divergence ("divergence: rank R operation N ..."), not
    // `redio run`'s report that the replicas' stdout differs: the races on
    // node-local paths legitimately differ between replicas.
    assert!(
        !job.stderr.contains("divergence") && !job.stderr.contains("mismatch"),
        "{what}: replicas diverged:\n{}",
        job.stderr
    );
}

/// `source` compiled in `flavour` under redio at r=2 and r=3 (block
/// layout) against its plain run; the shared files are the plain run's,
/// byte for byte.
fn like_plain(mpi: Mpi, source: &str, flavour: Flavour) {
    let exe = compile_flavour(mpi, source, flavour);
    let plain = reference(mpi, source, flavour, &[]);
    for degree in DEGREES {
        let stem = crate::support::stem(source);
        let what = format!("{source} ({flavour:?}) under {mpi:?}, r={degree}");
        let area = Area::new(
            &format!("{}-{stem}-{}-r{degree}", mpi.key(), flavour.key()),
            true,
        );
        let job = replicated(mpi, &exe, &area, (degree, "block"), &[], &[]);
        check_success(&job, &what);
        assert_like_plain_but_races(&plain.job, &job, degree, &what);
        assert_same_files(
            &plain.area.shared,
            &area.shared,
            &format!("{what}: shared files"),
            &no_skip,
        );
    }
}

/// MPICH: both the plain names and the `_FILE_OFFSET_BITS=64` ones
/// (`readdir64`, `truncate64`).
#[test]
fn makedirs_race_and_name_calls_match_plain_mpich() {
    like_plain(Mpi::Mpich, DIRS, Flavour::Fortify);
    like_plain(Mpi::Mpich, DIRS, Flavour::Fortify64);
}

#[test]
fn makedirs_race_and_name_calls_match_plain_openmpi() {
    like_plain(Mpi::OpenMpi, DIRS, Flavour::Fortify);
}

/// MPICH: both `lockf` and `lockf64`, `fcntl` and `fcntl64`.
#[test]
fn locks_between_ranks_match_plain_mpich() {
    like_plain(Mpi::Mpich, LOCKS, Flavour::Fortify);
    like_plain(Mpi::Mpich, LOCKS, Flavour::Fortify64);
}

#[test]
fn locks_between_ranks_match_plain_openmpi() {
    like_plain(Mpi::OpenMpi, LOCKS, Flavour::Fortify);
}

// ---------------------------------------------------------------------------
// Serial HDF5.

/// Compiles `io_hdf5.c` against `mpi`'s HDF5 (Debian's
/// `libhdf5-<mpi>-dev`), once per test binary.
fn compile_hdf5(mpi: Mpi) -> PathBuf {
    let key = match mpi {
        Mpi::Mpich => "mpich",
        Mpi::OpenMpi => "openmpi",
        Mpi::OpenMpi5 => panic!("no HDF5 is installed for Open MPI 5"),
    };
    let out_dir = scratch().join("bin").join(mpi.key());
    std::fs::create_dir_all(&out_dir).unwrap();
    let exe = out_dir.join("io_hdf5");
    let programs = crate::common::repo().join("tests/programs");
    let output = Command::new(mpi.mpicc())
        .args(["-O2", "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(&exe)
        .arg(programs.join(HDF5))
        .arg(format!("-I{}", programs.display()))
        .arg(format!("-I/usr/include/hdf5/{key}"))
        .arg(format!("-L/usr/lib/x86_64-linux-gnu/hdf5/{key}"))
        .arg("-lhdf5")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e} (run scripts/setup.sh)", mpi.mpicc()));
    assert!(
        output.status.success(),
        "compiling {HDF5} with {} failed (libhdf5-{key}-dev, scripts/setup.sh):\n{}",
        mpi.mpicc(),
        String::from_utf8_lossy(&output.stderr)
    );
    exe
}

/// `h5dump -d /data FILE` without its first line (which names the file).
fn h5dump_data(file: &Path) -> String {
    let output = Command::new("h5dump")
        .args(["-d", "/data"])
        .arg(file)
        .output()
        .expect("cannot run h5dump (hdf5-tools, scripts/setup.sh)");
    assert!(
        output.status.success(),
        "h5dump {} failed: the file does not open:\n{}{}",
        file.display(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8_lossy(&output.stdout);
    text.lines().skip(1).map(|l| format!("{l}\n")).collect()
}

/// Serial HDF5, one file per rank on the shared path (H5Fcreate with the
/// default sec2 driver locks the file with flock): every replica prints
/// the plain run's lines, every file opens with h5dump and holds the plain
/// run's data, and (under MPICH, counted with strace) the bytes that reach
/// each shared file are the plain run's, not r times them.
fn serial_hdf5(mpi: Mpi, count_bytes: bool) {
    let exe = compile_hdf5(mpi);
    let plain_area = Area::new(&format!("{}-hdf5-plain", mpi.key()), false);
    let trace = plain_area.root.join("trace");
    let mut command = vec!["-n".to_string(), RANKS.to_string()];
    if count_bytes {
        command.push("strace".into());
        command.extend(strace_prefix(&trace));
    }
    command.push(exe.display().to_string());
    command.extend(plain_area.args());
    let plain = Launch::launcher(mpi, command).timeout(TIMEOUT).run();
    check_success(&plain, "plain run of io_hdf5");
    assert!(
        plain.ranks.values().all(|out| out.ends_with(" done\n")),
        "plain run of io_hdf5: a rank did not finish:\n{plain:#?}"
    );
    let plain_bytes = count_bytes.then(|| written_bytes(&trace, &plain_area.shared));
    for degree in DEGREES {
        let what = format!("serial HDF5 under {mpi:?}, r={degree}");
        let area = Area::new(&format!("{}-hdf5-r{degree}", mpi.key()), true);
        let (job, trace) = if count_bytes {
            let (job, trace) = replicated_under_strace(mpi, &exe, &area, degree, &[]);
            (job, Some(trace))
        } else {
            let job = replicated(mpi, &exe, &area, (degree, "block"), &[], &[]);
            (job, None)
        };
        check_success(&job, &what);
        assert_like_plain_but_races(&plain, &job, degree, &what);
        for rank in 0..RANKS {
            let name = format!("h5.{rank}.h5");
            assert_eq!(
                h5dump_data(&area.shared_file(&name)),
                h5dump_data(&plain_area.shared_file(&name)),
                "{what}: {name} holds other data than the plain run's"
            );
        }
        if let (Some(plain_bytes), Some(trace)) = (&plain_bytes, trace) {
            let bytes = written_bytes(&trace, &area.shared);
            println!(
                "{what}: bytes written per shared file: plain {plain_bytes:?}, redio {bytes:?}"
            );
            assert_eq!(
                &bytes, plain_bytes,
                "{what}: the bytes that reached the shared files (strace) must be the plain \
                 run's, written once"
            );
        }
    }
}

#[test]
fn serial_hdf5_per_rank_on_a_shared_path_mpich() {
    serial_hdf5(Mpi::Mpich, true);
}

#[test]
fn serial_hdf5_per_rank_on_a_shared_path_openmpi() {
    serial_hdf5(Mpi::OpenMpi, false);
}

// ---------------------------------------------------------------------------
// Python.

/// Debian's Python, with mpi4py built for Open MPI 4.1 (`python3-mpi4py`).
const PYTHON: &str = "/usr/bin/python3";

/// Python's `os.makedirs(exist_ok=True)` race, `os.listdir`, `os.scandir`,
/// `os.walk` and `shutil.rmtree` on the shared path, through mpi4py: every
/// replica prints the plain run's lines.
///
/// mpi4py loads libmpi with `dlopen` after libredio.so, so the job
/// preloads libmpi itself (`env LD_PRELOAD=libredio.so:libmpi.so.40`).
#[test]
fn python_makedirs_listdir_rmtree_openmpi() {
    let mpi = Mpi::OpenMpi;
    let script = crate::common::repo().join("tests/programs").join(PY_DIRS);
    let has_mpi4py = Command::new(PYTHON)
        .args(["-c", "import mpi4py"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        has_mpi4py,
        "{PYTHON} has no mpi4py (python3-mpi4py, scripts/setup.sh)"
    );
    let plain_area = Area::new("openmpi-python-plain", false);
    let plain = Launch::plain(mpi, RANKS, Path::new(PYTHON))
        .args([script.display().to_string()])
        .args([plain_area.shared.display().to_string()])
        .timeout(TIMEOUT)
        .run();
    check_success(&plain, "plain run of dirs.py");
    let preload = format!(
        "LD_PRELOAD={}:libmpi.so.40",
        crate::common::repo()
            .join("target/openmpi/release/libredio.so")
            .display()
    );
    for degree in DEGREES {
        let what = format!("dirs.py under {mpi:?}, r={degree}");
        let area = Area::new(&format!("openmpi-python-r{degree}"), true);
        let args = vec![
            preload.clone(),
            PYTHON.to_string(),
            script.display().to_string(),
            area.shared.display().to_string(),
        ];
        let job = Launch::redio(mpi, RANKS, degree, "block", Path::new("env"))
            .config(&area.config)
            .args(args)
            .timeout(TIMEOUT)
            .run();
        check_success(&job, &what);
        assert_like_plain_but_races(&plain, &job, degree, &what);
    }
}

// ---------------------------------------------------------------------------
// Locks across a fail-over.

/// Locks across a fail-over.
pub const LOCKFAIL: &str = "io/io_lockfail.c";

/// The measured limit of docs/interposition.md ("Locks"): rank 0's leader
/// (world rank 0) takes [0,10), then dies right after taking [100,10) in
/// operation 3. The kernel drops the dead leader's locks with its
/// descriptors; the new leader runs operation 3 again and so holds
/// [100,10), but nobody takes [0,10) again: rank 1 gets it, where a plain
/// run (and a run without the death) answers EAGAIN.
#[test]
fn a_leaders_earlier_locks_die_with_it_mpich() {
    let mpi = Mpi::Mpich;
    let exe = compile_flavour(mpi, LOCKFAIL, Flavour::Fortify);
    let plain = reference(mpi, LOCKFAIL, Flavour::Fortify, &[]);
    let expect = |out: &str, zero_ten: &str, hundred: &str| {
        for (line, result) in [
            ("F_SETLK [0,10) held by rank 0", zero_ten),
            ("F_SETLK [100,10) held by rank 0", hundred),
        ] {
            assert!(
                out.contains(&format!("shared {line}: {result}\n")),
                "expected '{line}: {result}' in:\n{out}"
            );
        }
    };
    expect(&plain.job.ranks[&1], "-1 EAGAIN", "-1 EAGAIN");
    let area = Area::new("mpich-lockfail-r2", true);
    let job = replicated(
        mpi,
        &exe,
        &area,
        (2, "block"),
        &[],
        &[("REDIO_TEST_DIE", "0:3:exit:1")],
    );
    check_success(
        &job,
        "io_lockfail r=2, leader of rank 0 dies in operation 3",
    );
    assert!(
        !crate::support::lines_with(&job.stderr, &["failed during operation 3", "fcntl"])
            .is_empty(),
        "the leader must die in the lock call (operation 3):\n{}",
        job.stderr
    );
    // World rank 3: replica 1 of rank 1, the survivor that asks.
    expect(&job.ranks[&3], "0", "-1 EAGAIN");
}

// ---------------------------------------------------------------------------
// Storage per replica.

/// Every path under `dir`, relative to it, sorted (directories end in `/`).
fn tree_of(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            let name = path.strip_prefix(root).unwrap().display().to_string();
            if entry.file_type().unwrap().is_dir() {
                out.push(format!("{name}/"));
                walk(root, &path, out);
            } else {
                out.push(name);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// With storage per replica (`remap` sends each replica's shared path to
/// its own directory), every replica makes each name call on its own copy
/// and all return the first failure in replica order; a listing through a
/// descriptor (`fdopendir`) is announced with the application's path, not
/// the remapped one. Every replica prints the plain run's lines, and every
/// copy ends up with the plain run's tree.
#[test]
fn name_calls_on_storage_per_replica_mpich() {
    let mpi = Mpi::Mpich;
    let exe = compile_flavour(mpi, DIRS, Flavour::Fortify);
    let plain = reference(mpi, DIRS, Flavour::Fortify, &[]);
    for degree in DEGREES {
        let what = format!("io_dirs with a copy per replica, r={degree}");
        let area = Area::new(&format!("mpich-dirs-copies-r{degree}"), true);
        let copies = area.root.join("copies");
        for replica in 0..degree {
            std::fs::create_dir_all(copies.join(format!("r{replica}"))).unwrap();
        }
        let yaml = format!(
            "version: 1\n\
             shared:\n  paths: [\"{shared}\", \"{copies}\"]\n\
             remap:\n  - prefix: \"{shared}\"\n    to: \"{copies}/r{{replica}}\"\n\
             \x20 - prefix: \"{local}\"\n    to: \"{local}/r{{replica}}\"\n\
             io: {{read: simple, write: none}}\n",
            shared = area.shared.display(),
            copies = copies.display(),
            local = area.local.display(),
        );
        std::fs::write(&area.config, yaml).unwrap();
        let job = replicated(mpi, &exe, &area, (degree, "block"), &[], &[]);
        check_success(&job, &what);
        assert_like_plain_but_races(&plain.job, &job, degree, &what);
        let expected = tree_of(&plain.area.shared);
        for replica in 0..degree {
            assert_eq!(
                tree_of(&copies.join(format!("r{replica}"))),
                expected,
                "{what}: the copy of replica {replica} differs from the plain run's tree"
            );
        }
    }
}
