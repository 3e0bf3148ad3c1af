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

mod common;

use common::{compile_flavour, fresh_dir, Flavour, Job, Launch, Mpi};
use redio::topology::{LayoutKind, Topology};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

/// Logical ranks of every job.
const RANKS: u32 = 2;

/// Seconds before a job counts as hung (these programs take well under 1 s).
const TIMEOUT: u32 = 60;

/// Replicated runs of the main programs under MPICH (one cyclic run is added
/// for `io_posix -O0`).
const MPICH_RUNS: [(u32, &str, LayoutKind); 3] = [
    (1, "block", LayoutKind::Block),
    (2, "block", LayoutKind::Block),
    (3, "block", LayoutKind::Block),
];

/// Under Open MPI, a representative subset.
const OPENMPI_RUNS: [(u32, &str, LayoutKind); 1] = [(2, "block", LayoutKind::Block)];

const POSIX: &str = "io/io_posix.c";
const STDIO: &str = "io/io_stdio.c";
const FSTREAM: &str = "io/io_fstream.cpp";
const THREADS: &str = "io/io_threads.c";
const CHILD: &str = "io/io_child.c";
const UNSUPPORTED: &str = "io/io_unsupported.c";
const FAULTS: &str = "io/io_faults.c";
const RULES: &str = "io/io_rules.c";
const DIVERGE: &str = "io/io_diverge.c";
const PAIRS: &str = "io/io_pairs.c";

/// Every read and write protocol name the configuration accepts.
const READ_PROTOCOLS: [&str; 8] = [
    "none",
    "simple",
    "extended-simple",
    "read-distribute",
    "chained",
    "chunked-chained",
    "distributed-chunked",
    "auto",
];
const WRITE_PROTOCOLS: [&str; 5] = [
    "none",
    "simple",
    "distributed",
    "distributed-separate",
    "auto",
];

/// Every program and the flavours it is compiled in.
const PROGRAMS: [(&str, Flavour); 12] = [
    (POSIX, Flavour::O0),
    (POSIX, Flavour::Fortify),
    (POSIX, Flavour::Fortify64),
    (STDIO, Flavour::O0),
    (STDIO, Flavour::Fortify),
    (STDIO, Flavour::Fortify64),
    (FSTREAM, Flavour::Cxx),
    (THREADS, Flavour::Fortify),
    (CHILD, Flavour::Fortify),
    (FAULTS, Flavour::Fortify),
    (UNSUPPORTED, Flavour::O0),
    (UNSUPPORTED, Flavour::Fortify64),
];

// ---------------------------------------------------------------------------
// Where a run's files go.

/// One run's directories: `shared/`, `local/` (with `r0 r1 r2` under redio)
/// and the configuration file.
struct Area {
    root: PathBuf,
    shared: PathBuf,
    local: PathBuf,
    config: PathBuf,
}

impl Area {
    /// A fresh area; `replicated` adds the per-replica directories and the
    /// configuration.
    fn new(name: &str, replicated: bool) -> Area {
        let root = fresh_dir(&format!("io/{name}")).canonicalize().unwrap();
        let shared = root.join("shared");
        let local = root.join("local");
        std::fs::create_dir_all(&shared).unwrap();
        std::fs::create_dir_all(&local).unwrap();
        let config = root.join("redio.yaml");
        if replicated {
            for replica in 0..3 {
                std::fs::create_dir_all(local.join(format!("r{replica}"))).unwrap();
            }
            let yaml = format!(
                "version: 1\n\
                 shared:\n  paths: [\"{shared}\"]\n\
                 remap:\n  - prefix: \"{local}\"\n    to: \"{local}/r{{replica}}\"\n\
                 io: {{read: simple, write: simple}}\n",
                shared = shared.display(),
                local = local.display(),
            );
            std::fs::write(&config, yaml).unwrap();
        }
        Area {
            root,
            shared,
            local,
            config,
        }
    }

    /// The program's arguments.
    fn args(&self) -> Vec<String> {
        vec![
            self.shared.display().to_string(),
            self.local.display().to_string(),
        ]
    }

    /// `<area>/shared/<name>`.
    fn shared_file(&self, name: &str) -> PathBuf {
        self.shared.join(name)
    }
}

fn stem(source: &str) -> &str {
    let name = source.rsplit('/').next().unwrap();
    name.split('.').next().unwrap()
}

// ---------------------------------------------------------------------------
// Running.

/// A plain run and the area it wrote.
struct Reference {
    job: Job,
    area: Area,
}

/// The plain run of `source` in `flavour` with `extra` arguments, run once
/// per test binary and shared by the tests that need it.
fn reference(mpi: Mpi, source: &str, flavour: Flavour, extra: &[&str]) -> Arc<Reference> {
    type Key = (&'static str, String, Flavour, Vec<String>);
    static CACHE: Mutex<Option<HashMap<Key, Arc<Reference>>>> = Mutex::new(None);
    let key: Key = (
        mpi.key(),
        source.to_string(),
        flavour,
        extra.iter().map(|s| s.to_string()).collect(),
    );
    let mut cache = CACHE.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(found) = cache.get_or_insert_with(HashMap::new).get(&key) {
        return found.clone();
    }
    let exe = compile_flavour(mpi, source, flavour);
    let mut name = format!("plain-{}-{}-{}", mpi.key(), stem(source), flavour.key());
    for arg in extra {
        name.push('-');
        name.extend(
            arg.chars()
                .map(|c| if c.is_alphanumeric() { c } else { '_' }),
        );
    }
    let area = Area::new(&name, false);
    let job = Launch::plain(mpi, RANKS, &exe)
        .args(area.args())
        .args(extra.iter().copied())
        .timeout(TIMEOUT)
        .run();
    let what = format!("plain run of {name}");
    check_success(&job, &what);
    assert_eq!(
        job.ranks.len() as u32,
        RANKS,
        "{what}: expected {RANKS} stdout files:\n{job:#?}"
    );
    assert!(
        job.ranks.values().all(|out| out.ends_with(" done\n")),
        "{what}: a rank did not finish:\n{job:#?}"
    );
    let found = Arc::new(Reference { job, area });
    cache.as_mut().unwrap().insert(key, found.clone());
    found
}

/// `redio run --config <area>/redio.yaml -n RANKS -r degree --layout layout
/// -- program <area>/shared <area>/local extra…`.
fn replicated(
    mpi: Mpi,
    program: &Path,
    area: &Area,
    (degree, layout): (u32, &str),
    extra: &[String],
    env: &[(&str, &str)],
) -> Job {
    let mut launch = Launch::redio(mpi, RANKS, degree, layout, program)
        .config(&area.config)
        .args(extra.iter().cloned())
        .args(area.args())
        .timeout(TIMEOUT);
    for (name, value) in env {
        launch = launch.env(name, value);
    }
    launch.run()
}

/// Panics with the launcher's story unless the job exited with 0.
fn check_success(job: &Job, what: &str) {
    if job.code == Some(0) {
        return;
    }
    let mut story = format!(
        "{what}: the job failed (exit code {:?}{})\n--- stderr ---\n{}",
        job.code,
        if job.timed_out() {
            ", killed by the timeout: hung?"
        } else {
            ""
        },
        job.stderr
    );
    for (rank, out) in &job.ranks {
        let tail: Vec<&str> = out.lines().rev().take(5).collect();
        let _ = write!(
            story,
            "--- stdout of world rank {rank}, last lines ---\n{}\n",
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        );
    }
    panic!("{story}");
}

// ---------------------------------------------------------------------------
// Comparing.

/// Where two texts first differ, by line.
fn first_difference(expected: &str, actual: &str) -> String {
    let expected_lines: Vec<&str> = expected.lines().collect();
    let actual_lines: Vec<&str> = actual.lines().collect();
    for i in 0..expected_lines.len().max(actual_lines.len()) {
        let e = expected_lines.get(i).copied();
        let a = actual_lines.get(i).copied();
        if e != a {
            return format!(
                "first difference at line {}:\n  expected: {}\n  actual:   {}",
                i + 1,
                e.unwrap_or("<end of output>"),
                a.unwrap_or("<end of output>")
            );
        }
    }
    "the texts differ only in their last newline".into()
}

/// Every process printed `expect(plain stdout of its logical rank)`.
fn assert_stdout_matches(
    plain: &Job,
    job: &Job,
    degree: u32,
    kind: LayoutKind,
    what: &str,
    expect: impl Fn(&str) -> String,
) {
    assert_eq!(
        job.ranks.len() as u32,
        RANKS * degree,
        "{what}: expected a stdout file per process:\n{}",
        job.stderr
    );
    let topology = Topology::regular(RANKS * degree, degree, kind).unwrap();
    for (world, output) in &job.ranks {
        let placement = topology.place(*world);
        let expected = expect(&plain.ranks[&placement.rank]);
        assert!(
            *output == expected,
            "{what}: stdout of world rank {world} (replica {}, rank {}) differs from the \
             plain run's rank {}: {}\n--- stderr ---\n{}",
            placement.replica,
            placement.rank,
            placement.rank,
            first_difference(&expected, output),
            job.stderr
        );
    }
}

/// The regular files directly in `dir` (not `*.scratch`): contents and
/// permission bits.
fn snapshot(dir: &Path) -> BTreeMap<String, (Vec<u8>, u32)> {
    use std::os::unix::fs::PermissionsExt;
    let mut files = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let meta = entry.metadata().unwrap();
        if meta.is_file() && !name.ends_with(".scratch") {
            let bytes = std::fs::read(entry.path()).unwrap();
            files.insert(name, (bytes, meta.permissions().mode() & 0o777));
        }
    }
    files
}

/// `actual` holds exactly the files of `expected` (except those `skip`
/// names), byte for byte, with the same permissions.
fn assert_same_files(expected: &Path, actual: &Path, what: &str, skip: &dyn Fn(&str) -> bool) {
    let mut want = snapshot(expected);
    let mut got = snapshot(actual);
    want.retain(|name, _| !skip(name));
    got.retain(|name, _| !skip(name));
    let mut problems = Vec::new();
    for (name, (bytes, mode)) in &want {
        match got.get(name) {
            None => problems.push(format!("{name}: missing")),
            Some((other, other_mode)) => {
                if other != bytes {
                    let at = bytes
                        .iter()
                        .zip(other)
                        .position(|(a, b)| a != b)
                        .unwrap_or(bytes.len().min(other.len()));
                    problems.push(format!(
                        "{name}: {} bytes instead of {}, first difference at byte {at}",
                        other.len(),
                        bytes.len()
                    ));
                }
                if other_mode != mode {
                    problems.push(format!("{name}: mode {other_mode:o} instead of {mode:o}"));
                }
            }
        }
    }
    for name in got.keys().filter(|name| !want.contains_key(*name)) {
        problems.push(format!("{name}: not written by the plain run"));
    }
    assert!(
        problems.is_empty(),
        "{what}: {} differs from {}:\n  {}",
        actual.display(),
        expected.display(),
        problems.join("\n  ")
    );
}

/// Each replica's remapped directory `<area>/local/r<k>` holds the plain
/// run's node-local files; nothing is at the un-remapped path.
fn assert_local_copies(
    plain: &Area,
    area: &Area,
    degree: u32,
    what: &str,
    skip: &dyn Fn(&str) -> bool,
) {
    let replica_dirs: Vec<String> = (0..3).map(|k| format!("r{k}")).collect();
    let stray: Vec<String> = std::fs::read_dir(&area.local)
        .unwrap()
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| !replica_dirs.contains(name))
        .collect();
    assert!(
        stray.is_empty(),
        "{what}: node-local files were written to the un-remapped directory {} \
         (the remap {} -> {}/r{{replica}} was not applied): {stray:?}",
        area.local.display(),
        area.local.display(),
        area.local.display()
    );
    for replica in 0..3 {
        let dir = area.local.join(format!("r{replica}"));
        if replica < degree {
            assert_same_files(
                &plain.local,
                &dir,
                &format!("{what}: node-local copy of replica {replica}"),
                skip,
            );
        } else {
            let extra: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
            assert!(
                extra.is_empty(),
                "{what}: {} (no such replica) is not empty",
                dir.display()
            );
        }
    }
}

fn no_skip(_: &str) -> bool {
    false
}

/// What a plain run's stdout becomes when redio refuses every call on a
/// `[refusable]` line: the result after the first ": " is `-1 ENOTSUP`
/// (`NULL ENOTSUP` for fopen).
fn with_refusals(plain: &str) -> String {
    let mut out = String::new();
    for line in plain.lines() {
        match line.strip_prefix("[refusable] ") {
            Some(rest) => {
                let (what, _) = rest
                    .split_once(": ")
                    .expect("a [refusable] line has a result");
                let failed = if what.contains("fopen") {
                    "NULL ENOTSUP"
                } else {
                    "-1 ENOTSUP"
                };
                let _ = writeln!(out, "[refusable] {what}: {failed}");
            }
            None => {
                let _ = writeln!(out, "{line}");
            }
        }
    }
    out
}

/// The lines of `stderr` that contain every one of `words`.
fn lines_with<'a>(stderr: &'a str, words: &[&str]) -> Vec<&'a str> {
    stderr
        .lines()
        .filter(|line| words.iter().all(|w| line.contains(w)))
        .collect()
}

// ---------------------------------------------------------------------------
// The main matrix: plain against replicated, file by file.

fn replicas_match_plain(
    mpi: Mpi,
    source: &str,
    flavour: Flavour,
    runs: &[(u32, &str, LayoutKind)],
) {
    let exe = compile_flavour(mpi, source, flavour);
    let plain = reference(mpi, source, flavour, &[]);
    for &(degree, layout, kind) in runs {
        let what = format!("{source} ({flavour:?}) under {mpi:?}, r={degree} {layout}");
        let area = Area::new(
            &format!(
                "{}-{}-{}-r{degree}-{layout}",
                mpi.key(),
                stem(source),
                flavour.key()
            ),
            true,
        );
        let job = replicated(mpi, &exe, &area, (degree, layout), &[], &[]);
        check_success(&job, &what);
        assert_stdout_matches(&plain.job, &job, degree, kind, &what, str::to_string);
        assert_same_files(
            &plain.area.shared,
            &area.shared,
            &format!("{what}: shared files"),
            &no_skip,
        );
        assert_local_copies(&plain.area, &area, degree, &what, &no_skip);
    }
}

#[test]
fn posix_o0_mpich() {
    let mut runs = MPICH_RUNS.to_vec();
    runs.push((2, "cyclic", LayoutKind::Cyclic));
    replicas_match_plain(Mpi::Mpich, POSIX, Flavour::O0, &runs);
}

#[test]
fn posix_fortify_mpich() {
    replicas_match_plain(Mpi::Mpich, POSIX, Flavour::Fortify, &MPICH_RUNS);
}

#[test]
fn posix_fortify64_mpich() {
    replicas_match_plain(Mpi::Mpich, POSIX, Flavour::Fortify64, &MPICH_RUNS);
}

#[test]
fn stdio_o0_mpich() {
    replicas_match_plain(Mpi::Mpich, STDIO, Flavour::O0, &MPICH_RUNS);
}

#[test]
fn stdio_fortify_mpich() {
    replicas_match_plain(Mpi::Mpich, STDIO, Flavour::Fortify, &MPICH_RUNS);
}

#[test]
fn stdio_fortify64_mpich() {
    replicas_match_plain(Mpi::Mpich, STDIO, Flavour::Fortify64, &MPICH_RUNS);
}

#[test]
fn fstream_mpich() {
    replicas_match_plain(Mpi::Mpich, FSTREAM, Flavour::Cxx, &MPICH_RUNS);
}

#[test]
fn posix_fortify_openmpi() {
    replicas_match_plain(Mpi::OpenMpi, POSIX, Flavour::Fortify, &OPENMPI_RUNS);
}

#[test]
fn fstream_openmpi() {
    replicas_match_plain(Mpi::OpenMpi, FSTREAM, Flavour::Cxx, &OPENMPI_RUNS);
}

#[test]
fn posix_fortify_openmpi5() {
    replicas_match_plain(Mpi::OpenMpi5, POSIX, Flavour::Fortify, &OPENMPI_RUNS);
}

/// Plain runs only: the C flavours of a program do the same thing, so the
/// flavour matrix tests entry points, not different programs.
#[test]
fn c_flavours_behave_alike_in_plain_runs() {
    for source in [POSIX, STDIO] {
        let o0 = reference(Mpi::Mpich, source, Flavour::O0, &[]);
        for flavour in [Flavour::Fortify, Flavour::Fortify64] {
            let other = reference(Mpi::Mpich, source, flavour, &[]);
            let what = format!("plain {source}: {flavour:?} against O0");
            for (rank, out) in &o0.job.ranks {
                assert!(
                    other.job.ranks[rank] == *out,
                    "{what}: rank {rank}: {}",
                    first_difference(out, &other.job.ranks[rank])
                );
            }
            assert_same_files(&o0.area.shared, &other.area.shared, &what, &no_skip);
            assert_same_files(&o0.area.local, &other.area.local, &what, &no_skip);
        }
    }
}

// ---------------------------------------------------------------------------
// Bytes that really reach a shared file, counted from outside with strace.

/// The write system calls that can put bytes into a file.
const TRACED: [&str; 5] = ["write", "pwrite64", "writev", "pwritev", "pwritev2"];

/// `strace … -o <dir>/t` before the program: one trace file per process
/// and thread (`-ff`), fds shown with their paths (`-y`), no data (`-s 0`).
fn strace_prefix(dir: &Path) -> Vec<String> {
    std::fs::create_dir_all(dir).unwrap();
    let mut args: Vec<String> = [
        "-f",
        "-ff",
        "--seccomp-bpf",
        "-y",
        "-s",
        "0",
        "-e",
        &format!("trace={}", TRACED.join(",")),
        "-o",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.push(dir.join("t").display().to_string());
    args
}

/// Sums, per file under `shared`, the byte counts returned by successful
/// write calls in the traces under `dir`. Lines look like
/// `pwrite64(5</area/shared/posix.0.dat>, ""..., 500, 1500) = 500`.
fn written_bytes(dir: &Path, shared: &Path) -> BTreeMap<String, u64> {
    let prefix = format!("{}/", shared.display());
    let mut bytes = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let text = std::fs::read_to_string(entry.path()).unwrap();
        // An interrupted call: `write(3</p>, ""..., 10 <unfinished ...>`,
        // then `<... write resumed>) = 10`.
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

/// Counts the bytes written into Distributed Separate Write's part files
/// (`.NAME.redio-partK`) as written into NAME; leaves out their indexes.
fn fold_parts(bytes: BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    let mut folded = BTreeMap::new();
    for (name, count) in bytes {
        if name.ends_with(".idx") {
            continue;
        }
        let target = match name
            .strip_prefix('.')
            .and_then(|n| n.rsplit_once(".redio-part"))
        {
            Some((file, replica)) if replica.chars().all(|c| c.is_ascii_digit()) => {
                file.to_string()
            }
            _ => name,
        };
        *folded.entry(target).or_insert(0) += count;
    }
    folded
}

/// Under Simple Write one replica writes: the bytes that reach each shared
/// file equal the plain run's (not `degree` times them), and for the files
/// written once front to back, the file's size.
#[test]
fn shared_bytes_are_written_once_mpich() {
    let mpi = Mpi::Mpich;
    // (program, flavour, degrees, the file each rank writes once front to
    // back, with `{}` for the rank, write protocol)
    let cases: [(&str, Flavour, &[u32], &str, &str); 5] = [
        (POSIX, Flavour::Fortify64, &[2, 3], "posix.{}.dat", "simple"),
        (STDIO, Flavour::O0, &[3], "stdio.{}.txt", "simple"),
        (FSTREAM, Flavour::Cxx, &[3], "fstream.{}.txt", "simple"),
        // Distributed Write: once in all, split across the replicas.
        (
            POSIX,
            Flavour::Fortify64,
            &[3],
            "posix.{}.dat",
            "distributed",
        ),
        // Distributed Separate Write: once in all, into the replicas' part
        // files (the join copies inside the kernel, not with write calls);
        // at r=1 straight into the file, with no part to join.
        (
            POSIX,
            Flavour::Fortify64,
            &[1, 2],
            "posix.{}.dat",
            "distributed-separate",
        ),
    ];
    for (source, flavour, degrees, written_once, protocol) in cases {
        let once = |rank: u32| written_once.replace("{}", &rank.to_string());
        let exe = compile_flavour(mpi, source, flavour);
        let name = format!("strace-{}-{}-{protocol}", stem(source), flavour.key());
        let env = [("REDIO_IO_WRITE", protocol), ("REDIO_IO_CHUNK_SIZE", "64")];

        let plain_area = Area::new(&format!("{name}-plain"), false);
        let trace = plain_area.root.join("trace");
        let mut command = vec!["-n".to_string(), RANKS.to_string(), "strace".into()];
        command.extend(strace_prefix(&trace));
        command.push(exe.display().to_string());
        command.extend(plain_area.args());
        let plain = Launch::launcher(mpi, command).timeout(TIMEOUT).run();
        check_success(&plain, &format!("plain run of {source} under strace"));
        let plain_bytes = written_bytes(&trace, &plain_area.shared);
        for rank in 0..RANKS {
            let file = once(rank);
            let size = std::fs::metadata(plain_area.shared_file(&file))
                .unwrap()
                .len();
            assert_eq!(
                plain_bytes.get(&file).copied(),
                Some(size),
                "the strace count is wrong: the plain run wrote {file} once; counts: {plain_bytes:?}"
            );
        }

        for &degree in degrees {
            let what = format!("{source} ({flavour:?}) r={degree}, write {protocol}, under strace");
            let area = Area::new(&format!("{name}-r{degree}"), true);
            let trace = area.root.join("trace");
            let mut args = strace_prefix(&trace);
            args.push(exe.display().to_string());
            let job = replicated(
                mpi,
                Path::new("strace"),
                &area,
                (degree, "block"),
                &args,
                &env,
            );
            check_success(&job, &what);
            let unfolded = written_bytes(&trace, &area.shared);
            if degree == 1 {
                let parts: Vec<&String> = unfolded
                    .keys()
                    .filter(|name| name.contains(".redio-part"))
                    .collect();
                assert!(
                    parts.is_empty(),
                    "{what}: one replica must write the file itself, not parts: {parts:?}"
                );
            }
            let bytes = fold_parts(unfolded);
            println!(
                "{what}: bytes written per shared file: plain {plain_bytes:?}, redio {bytes:?}"
            );
            let mut problems = Vec::new();
            for (file, &expected) in &plain_bytes {
                let got = bytes.get(file).copied().unwrap_or(0);
                if got != expected {
                    problems.push(format!(
                        "{file}: {got} bytes written instead of {expected} (r x plain would be {})",
                        expected * u64::from(degree)
                    ));
                }
            }
            for (file, got) in &bytes {
                if !plain_bytes.contains_key(file) {
                    problems.push(format!(
                        "{file}: {got} bytes written, the plain run wrote none"
                    ));
                }
            }
            assert!(
                problems.is_empty(),
                "{what}: bytes that reached the shared files (strace, write calls on \
                 their fds):\n  {}",
                problems.join("\n  ")
            );
            for rank in 0..RANKS {
                let file = once(rank);
                let size = std::fs::metadata(area.shared_file(&file)).unwrap().len();
                assert_eq!(bytes.get(&file).copied(), Some(size), "{what}: {file}");
            }
        }
    }
}

/// Every read and write protocol gives the plain run's results: the programs
/// read back what they wrote, seek, stat and append under each pair, with a
/// small chunk so that the chunked protocols really cut buffers.
#[test]
fn every_protocol_matches_plain_mpich() {
    let mpi = Mpi::Mpich;
    let pairs = [
        ("extended-simple", "distributed"),
        ("read-distribute", "simple"),
        ("chained", "distributed"),
        ("chunked-chained", "simple"),
        ("distributed-chunked", "distributed"),
        ("auto", "distributed-separate"),
        ("simple", "auto"),
    ];
    for (source, flavour) in [(POSIX, Flavour::Fortify64), (STDIO, Flavour::O0)] {
        let exe = compile_flavour(mpi, source, flavour);
        let plain = reference(mpi, source, flavour, &[]);
        for (read, write) in pairs {
            for degree in [2, 3] {
                let what = format!("{source} ({flavour:?}) r={degree}, read {read}, write {write}");
                let area = Area::new(
                    &format!("protocols-{}-{read}-{write}-r{degree}", stem(source)),
                    true,
                );
                let env = [
                    ("REDIO_IO_READ", read),
                    ("REDIO_IO_WRITE", write),
                    ("REDIO_IO_CHUNK_SIZE", "64"),
                ];
                let job = replicated(mpi, &exe, &area, (degree, "block"), &[], &env);
                check_success(&job, &what);
                assert!(
                    !job.stderr.contains("not implemented"),
                    "{what}: fell back to another protocol:\n{}",
                    job.stderr
                );
                assert_stdout_matches(
                    &plain.job,
                    &job,
                    degree,
                    LayoutKind::Block,
                    &what,
                    str::to_string,
                );
                assert_same_files(
                    &plain.area.shared,
                    &area.shared,
                    &format!("{what}: shared files"),
                    &no_skip,
                );
            }
        }
    }
}

/// An application reads back its own data under every read/write protocol
/// pair: one job per degree, one file per pair, each file sent through its
/// pair by a rule. The program compares what it reads with what it wrote.
#[test]
fn every_pair_reads_back_what_it_wrote_mpich() {
    let mpi = Mpi::Mpich;
    let exe = compile_flavour(mpi, PAIRS, Flavour::O0);
    let mut pairs = Vec::new();
    for read in READ_PROTOCOLS {
        for write in WRITE_PROTOCOLS {
            // none/none passes the file through entirely: the replicas
            // truncate and write one file each on their own, a race by
            // design (as in io_rules), so reading back is not defined.
            if (read, write) != ("none", "none") {
                pairs.push((read, write));
            }
        }
    }
    for degree in [2, 3] {
        let area = Area::new(&format!("pairs-r{degree}"), true);
        let mut yaml = format!(
            "version: 1\nshared:\n  paths: [\"{}\"]\nio:\n  chunk_size: 4096\n  rules:\n",
            area.shared.display()
        );
        for (i, (read, write)) in pairs.iter().enumerate() {
            yaml += &format!("    - {{path: \"pair.*.{i}.dat\", read: {read}, write: {write}}}\n");
        }
        std::fs::write(&area.config, yaml).unwrap();
        let count = pairs.len().to_string();
        let job = replicated(
            mpi,
            &exe,
            &area,
            (degree, "block"),
            &[],
            &[("IO_PAIRS", &count)],
        );
        check_success(&job, &format!("io_pairs r={degree}"));
        for (world, out) in &job.ranks {
            for (i, (read, write)) in pairs.iter().enumerate() {
                for how in ["pread", "read in steps 75001 bytes,"] {
                    assert!(
                        out.lines()
                            .any(|l| l.contains(&format!("pair {i}: {how}"))
                                && l.ends_with("matches")),
                        "r={degree} world rank {world}, read {read} write {write}: {how} \
                         must read back what was written:\n{out}"
                    );
                }
            }
        }
        let leftovers: Vec<_> = std::fs::read_dir(&area.shared)
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| name.contains(".redio-part"))
            .collect();
        assert!(
            leftovers.is_empty(),
            "r={degree}: part files left behind: {leftovers:?}"
        );
    }
}

/// YAML selection end to end: three rules send three files through three
/// protocol pairs. redio's debug log names each file's protocols, and the
/// bytes counted from outside match each protocol: Distributed and Simple
/// Write put each byte on the file once, None once per replica.
#[test]
fn three_rules_send_three_files_through_three_protocols_mpich() {
    let mpi = Mpi::Mpich;
    let exe = compile_flavour(mpi, RULES, Flavour::O0);
    let plain = reference(mpi, RULES, Flavour::O0, &[]);
    let degree = 3;
    let area = Area::new("rules-r3", true);
    let yaml = format!(
        "version: 1\n\
         shared:\n  paths: [\"{}\"]\n\
         io:\n  read: simple\n  write: simple\n  rules:\n\
         \x20   - {{path: \"*.a\", read: read-distribute, write: distributed, chunk_size: 256}}\n\
         \x20   - {{path: \"*.b\", read: chained, write: simple}}\n\
         \x20   - {{path: \"*.c\", read: none, write: none}}\n",
        area.shared.display()
    );
    std::fs::write(&area.config, yaml).unwrap();
    let trace = area.root.join("trace");
    let mut args = strace_prefix(&trace);
    args.push(exe.display().to_string());
    let job = replicated(
        mpi,
        Path::new("strace"),
        &area,
        (degree, "block"),
        &args,
        &[("REDIO_LOG_LEVEL", "debug")],
    );
    check_success(&job, "io_rules r=3");
    assert_stdout_matches(
        &plain.job,
        &job,
        degree,
        LayoutKind::Block,
        "io_rules r=3",
        str::to_string,
    );
    assert_same_files(
        &plain.area.shared,
        &area.shared,
        "io_rules r=3: shared files",
        &no_skip,
    );
    for rank in 0..RANKS {
        for (suffix, log) in [
            ("a", Some("read read-distribute, write distributed")),
            ("b", Some("read chained, write simple")),
            ("c", None),
        ] {
            let file = area.shared_file(&format!("rules.{rank}.{suffix}"));
            let path = file.display().to_string();
            match log {
                Some(protocols) => assert!(
                    !lines_with(&job.stderr, &["coordinated", &path, protocols]).is_empty(),
                    "the debug log must show {path} opened with {protocols}:\n{}",
                    job.stderr
                ),
                None => assert!(
                    !lines_with(&job.stderr, &["ProtocolNone", &path]).is_empty(),
                    "the debug log must show {path} passing through (protocol none):\n{}",
                    job.stderr
                ),
            }
        }
    }
    let bytes = written_bytes(&trace, &area.shared);
    for rank in 0..RANKS {
        let count = |suffix: &str| bytes.get(&format!("rules.{rank}.{suffix}")).copied();
        assert_eq!(count("a"), Some(4096), "distributed: once; {bytes:?}");
        assert_eq!(count("b"), Some(4096), "simple: once; {bytes:?}");
        assert_eq!(
            count("c"),
            Some(4096 * u64::from(degree)),
            "none: once per replica; {bytes:?}"
        );
    }
}

// ---------------------------------------------------------------------------
// Fault injection.

/// `io_faults` under redio with `env`, against a plain run that prints what
/// the fault must produce (`simulate`: none when redio corrects it).
fn fault_case(
    name: &str,
    degree: u32,
    env: &[(&str, &str)],
    simulate: Option<&str>,
) -> (Job, Area) {
    let mpi = Mpi::Mpich;
    let exe = compile_flavour(mpi, FAULTS, Flavour::Fortify);
    let extra: Vec<&str> = simulate.into_iter().collect();
    let plain = reference(mpi, FAULTS, Flavour::Fortify, &extra);
    let what = format!("io_faults r={degree} with {env:?}");
    let area = Area::new(&format!("faults-{name}-r{degree}"), true);
    let extra: Vec<String> = Vec::new();
    let job = replicated(mpi, &exe, &area, (degree, "block"), &extra, env);
    check_success(&job, &what);
    let expectation = match simulate {
        None => "the plain run".to_string(),
        Some(fault) => format!("a plain run where the first shared {fault}"),
    };
    assert_stdout_matches(
        &plain.job,
        &job,
        degree,
        LayoutKind::Block,
        &format!("{what} (expected: {expectation})"),
        str::to_string,
    );
    assert_same_files(
        &plain.area.shared,
        &area.shared,
        &format!("{what}: shared file (expected: as in {expectation})"),
        &no_skip,
    );
    assert_local_copies(&plain.area, &area, degree, &what, &no_skip);
    (job, area)
}

/// With r=2 a mismatch is logged with the path (and rank, offset, length).
fn assert_mismatch_logged(job: &Job, area: &Area) {
    for rank in 0..RANKS {
        let path = area.shared_file(&format!("faults.{rank}.dat"));
        let path = path.display().to_string();
        assert!(
            !lines_with(&job.stderr, &[&path]).is_empty(),
            "the mismatch on {path} must be logged with its path:\n{}",
            job.stderr
        );
    }
}

#[test]
fn flipped_write_is_corrected_with_three_replicas() {
    // Replica 0 is the writer when the replicas agree: its buffer is the
    // corrupted one, and the majority's must reach the file.
    fault_case("flip-write", 3, &[("REDIO_TEST_FLIP_WRITE", "0")], None);
}

#[test]
fn flipped_read_is_corrected_with_three_replicas() {
    fault_case("flip-read", 3, &[("REDIO_TEST_FLIP_READ", "1")], None);
}

#[test]
fn flipped_write_is_detected_with_two_replicas() {
    // Every write fails with EIO on both replicas; the program stops at the
    // first, so the shared file must stay empty.
    let (job, area) = fault_case(
        "flip-write",
        2,
        &[("REDIO_TEST_FLIP_WRITE", "1")],
        Some("write:EIO"),
    );
    assert_mismatch_logged(&job, &area);
}

#[test]
fn flipped_read_is_detected_with_two_replicas() {
    // The file is written correctly; the first read fails with EIO on both.
    let (job, area) = fault_case(
        "flip-read",
        2,
        &[("REDIO_TEST_FLIP_READ", "0")],
        Some("read:EIO"),
    );
    assert_mismatch_logged(&job, &area);
}

#[test]
fn every_voting_write_protocol_corrects_at_three_and_detects_at_two() {
    for write in ["distributed", "distributed-separate"] {
        let env = |flip| [("REDIO_IO_WRITE", write), ("REDIO_TEST_FLIP_WRITE", flip)];
        fault_case(&format!("flip-write-{write}"), 3, &env("0"), None);
        let (job, area) = fault_case(
            &format!("flip-write-{write}"),
            2,
            &env("1"),
            Some("write:EIO"),
        );
        assert_mismatch_logged(&job, &area);
    }
}

#[test]
fn extended_simple_read_with_two_readers_detects_a_flipped_read() {
    // Two readers of three cannot outvote each other: detected, not corrected.
    let env = [
        ("REDIO_IO_READ", "extended-simple"),
        ("REDIO_IO_READERS", "2"),
        ("REDIO_TEST_FLIP_READ", "1"),
    ];
    let (job, area) = fault_case("flip-read-extended", 3, &env, Some("read:EIO"));
    assert_mismatch_logged(&job, &area);
}

#[test]
fn on_mismatch_error_refuses_even_a_majority() {
    let env = [
        ("REDIO_VOTING_ON_MISMATCH", "error"),
        ("REDIO_TEST_FLIP_READ", "1"),
    ];
    let (job, _) = fault_case("policy-error", 3, &env, Some("read:EIO"));
    assert!(
        job.stderr.contains("EIO returned (on_mismatch: error)"),
        "the report must name the policy:\n{}",
        job.stderr
    );
}

#[test]
fn on_mismatch_warn_goes_on_with_replica_zero_at_two() {
    // Replica 1's buffer is flipped; with warn, replica 0's data reach the
    // file and nothing fails.
    let env = [
        ("REDIO_VOTING_ON_MISMATCH", "warn"),
        ("REDIO_TEST_FLIP_WRITE", "1"),
    ];
    let (job, _) = fault_case("policy-warn", 2, &env, None);
    assert!(
        job.stderr
            .contains("continued with replica 0's data (on_mismatch: warn)"),
        "the report must say what was used:\n{}",
        job.stderr
    );
}

#[test]
fn on_mismatch_abort_ends_the_job() {
    let mpi = Mpi::Mpich;
    let exe = compile_flavour(mpi, FAULTS, Flavour::Fortify);
    let area = Area::new("policy-abort-r2", true);
    let env = [
        ("REDIO_VOTING_ON_MISMATCH", "abort"),
        ("REDIO_TEST_FLIP_WRITE", "1"),
    ];
    let job = replicated(mpi, &exe, &area, (2, "block"), &[], &env);
    assert_ne!(job.code, Some(0), "the job must fail:\n{job:#?}");
    assert!(
        job.stderr.contains("on_mismatch is abort: ending the job"),
        "the abort must be explained:\n{}",
        job.stderr
    );
}

/// Replicas that issue different calls: detected before any protocol runs
/// and reported with both sides' calls. At r=2 every replica gets EIO and
/// they go on in step afterwards; at r=3 the odd replica is outvoted and
/// retires, and the other two run the call and finish.
#[test]
fn diverging_replicas_are_detected_and_reported_mpich() {
    let mpi = Mpi::Mpich;
    let exe = compile_flavour(mpi, DIVERGE, Flavour::O0);
    for (degree, read) in [(2, "simple"), (3, "chunked-chained")] {
        let area = Area::new(&format!("diverge-r{degree}"), true);
        let job = replicated(
            mpi,
            &exe,
            &area,
            (degree, "block"),
            &[],
            &[("REDIO_IO_READ", read)],
        );
        let what = format!("io_diverge r={degree} read {read}");
        check_success(&job, &what);
        for (world, out) in &job.ranks {
            let replica = world / RANKS;
            let expected = match (degree, replica) {
                (2, _) => "shared diverging step: -1 EIO",
                (_, 1) => continue,
                _ => "shared diverging step: 100",
            };
            assert!(
                out.contains(expected),
                "{what}: world rank {world} must print {expected:?}:\n{out}"
            );
            assert!(
                out.contains("shared read block: 4096 crc"),
                "{what}: world rank {world} must go on in step:\n{out}"
            );
        }
        if degree == 3 {
            for world in [RANKS, RANKS + 1] {
                let out = job.ranks.get(&world).cloned().unwrap_or_default();
                assert!(
                    !out.contains("read block"),
                    "{what}: outvoted world rank {world} must have retired:\n{out}"
                );
            }
        }
        for rank in 0..RANKS {
            let path = area.shared_file(&format!("diverge.{rank}.dat"));
            let path = path.display().to_string();
            let lines = lines_with(
                &job.stderr,
                &[
                    "divergence",
                    &format!("replica 0 write({path}, offset 0, 100 bytes)"),
                    &format!("replica 1 read({path}, offset 0, 100 bytes)"),
                ],
            );
            assert!(
                !lines.is_empty(),
                "{what}: the divergence of rank {rank} must be reported with both calls:\n{}",
                job.stderr
            );
        }
    }
}

/// A replica one coordinated call off (an extra write, or a read skipped)
/// meets the others' `MPI_Finalize` with a call of its own at the end. At
/// r=2 the job ends with exit code 75 and the divergence on record; at
/// r=3 the odd replica is outvoted and the job completes. Never a hang.
#[test]
fn a_replica_one_call_off_ends_the_job_instead_of_hanging_mpich() {
    let mpi = Mpi::Mpich;
    let exe = compile_flavour(mpi, DIVERGE, Flavour::O0);
    for mode in ["extra", "skip"] {
        for degree in [2, 3] {
            let area = Area::new(&format!("diverge-{mode}-r{degree}"), true);
            let job = replicated(
                mpi,
                &exe,
                &area,
                (degree, "block"),
                &[],
                &[("IO_DIVERGE_MODE", mode)],
            );
            let what = format!("io_diverge {mode} r={degree}");
            assert!(!job.timed_out(), "{what}: the job hung:\n{job:#?}");
            assert!(
                job.stderr.contains("divergence"),
                "{what}: the divergence must be reported:\n{}",
                job.stderr
            );
            if degree == 2 {
                assert_eq!(job.code, Some(75), "{what}: exit code:\n{job:#?}");
                assert!(
                    job.stderr.contains(
                        "at MPI_Finalize, with no majority to outvote a replica: ending the job"
                    ),
                    "{what}: the end must be explained:\n{}",
                    job.stderr
                );
            } else {
                check_success(&job, &what);
                for world in [0, 1, 2 * RANKS, 2 * RANKS + 1] {
                    let out = job.ranks.get(&world).cloned().unwrap_or_default();
                    assert!(
                        out.contains("shared close: 0"),
                        "{what}: world rank {world} must finish:\n{out}"
                    );
                }
            }
        }
    }
}

/// A read error on replica 0 (the master of the transfer protocols) gives
/// every replica the same result under every read protocol: the errno,
/// or the majority's data where Simple Read can outvote it.
#[test]
fn a_read_error_is_the_same_everywhere_under_every_read_protocol() {
    let cases = [
        ("simple", 2, Some("read:EIO")),
        ("simple", 3, None),
        ("extended-simple", 3, Some("read:EIO")),
        ("read-distribute", 2, Some("read:EIO")),
        ("chained", 3, Some("read:EIO")),
        ("chunked-chained", 2, Some("read:EIO")),
        ("distributed-chunked", 3, Some("read:EIO")),
        ("auto", 2, Some("read:EIO")),
    ];
    for (read, degree, outcome) in cases {
        let env = [("REDIO_IO_READ", read), ("REDIO_TEST_READ_ERRNO", "0:5")];
        fault_case(&format!("read-errno-{read}"), degree, &env, outcome);
    }
}

/// ENOSPC on the writer (replica 0) reaches every replica under every
/// write protocol that writes once.
#[test]
fn a_write_error_is_the_same_everywhere_under_every_write_protocol() {
    for write in ["distributed", "distributed-separate", "auto"] {
        for degree in [2, 3] {
            let env = [
                ("REDIO_IO_WRITE", write),
                ("REDIO_TEST_WRITE_ERRNO", "0:28"),
            ];
            fault_case(
                &format!("enospc-{write}"),
                degree,
                &env,
                Some("write:ENOSPC"),
            );
        }
    }
}

#[test]
fn write_error_on_the_writer_reaches_every_replica() {
    for degree in [2, 3] {
        fault_case(
            "enospc-writer",
            degree,
            &[("REDIO_TEST_WRITE_ERRNO", "0:28")],
            Some("write:ENOSPC"),
        );
    }
}

#[test]
fn write_error_on_a_replica_that_does_not_write_is_not_seen() {
    // Under Simple Write only replica 0 writes when the replicas agree.
    fault_case(
        "enospc-other",
        2,
        &[("REDIO_TEST_WRITE_ERRNO", "1:28")],
        None,
    );
}

// ---------------------------------------------------------------------------
// Threads, children, refused calls.

/// Node-local I/O in threads works; shared I/O from a thread other than the
/// MPI_Init thread fails with ENOTSUP and a log line that says so.
#[test]
fn threads_mpich() {
    let mpi = Mpi::Mpich;
    let exe = compile_flavour(mpi, THREADS, Flavour::Fortify);
    let plain = reference(mpi, THREADS, Flavour::Fortify, &[]);
    for out in plain.job.ranks.values() {
        assert!(
            out.contains("[refusable] thread write on shared fd: 100\n"),
            "plain run: the thread's shared I/O should work:\n{out}"
        );
    }
    let degree = 2;
    let what = format!("io_threads r={degree}");
    let area = Area::new("threads-r2", true);
    let job = replicated(mpi, &exe, &area, (degree, "block"), &[], &[]);
    check_success(&job, &what);
    assert_stdout_matches(
        &plain.job,
        &job,
        degree,
        LayoutKind::Block,
        &format!(
            "{what} (expected: the plain run, with every [refusable] call failing with ENOTSUP)"
        ),
        with_refusals,
    );
    let refused = |name: &str| {
        name.starts_with("refused.")
            || name.starts_with("thread-open.")
            || name.starts_with("thread-fopen.")
    };
    assert_same_files(
        &plain.area.shared,
        &area.shared,
        &format!("{what}: shared files"),
        &refused,
    );
    for rank in 0..RANKS {
        let refused_file = area.shared_file(&format!("refused.{rank}.dat"));
        assert_eq!(
            std::fs::read(&refused_file).unwrap(),
            b"main\n",
            "{what}: {} must hold only the main thread's write (the thread's were refused)",
            refused_file.display()
        );
        for name in [
            format!("thread-open.{rank}.dat"),
            format!("thread-fopen.{rank}.txt"),
        ] {
            assert!(
                !area.shared_file(&name).exists(),
                "{what}: the refused open created {name}"
            );
        }
    }
    assert_local_copies(&plain.area, &area, degree, &what, &no_skip);
    // E.g. `redio[world 0, rank 0 replica 0]: error: open(<path>) from a
    // thread other than the MPI main thread: ... refused with ENOTSUP`.
    for rank in 0..RANKS {
        let path = area.shared_file(&format!("thread-open.{rank}.dat"));
        let path = path.display().to_string();
        assert!(
            !lines_with(&job.stderr, &["thread", &path]).is_empty(),
            "{what}: the refusal must be logged on a line that names the thread and {path}:\n{}",
            job.stderr
        );
    }
}

/// A forked child and a system() shell write shared files themselves; the
/// parent's I/O around them stays coordinated.
#[test]
fn children_mpich() {
    let mpi = Mpi::Mpich;
    let exe = compile_flavour(mpi, CHILD, Flavour::Fortify);
    let plain = reference(mpi, CHILD, Flavour::Fortify, &[]);
    let degree = 2;
    let what = format!("io_child r={degree}");
    let area = Area::new("child-r2", true);
    let job = replicated(mpi, &exe, &area, (degree, "block"), &[], &[]);
    check_success(&job, &what);
    for rank in 0..RANKS {
        for (name, text) in [
            (
                format!("child.{rank}.txt"),
                format!("written by the forked child of rank {rank}\n"),
            ),
            (
                format!("system.{rank}.txt"),
                format!("written by system() for rank {rank}\n"),
            ),
        ] {
            let path = area.shared_file(&name);
            let found = std::fs::read_to_string(&path).unwrap_or_else(|e| {
                panic!("{what}: the child did not write {}: {e}", path.display())
            });
            assert_eq!(found, text, "{what}: {}", path.display());
        }
    }
    assert_stdout_matches(
        &plain.job,
        &job,
        degree,
        LayoutKind::Block,
        &what,
        str::to_string,
    );
    assert_same_files(
        &plain.area.shared,
        &area.shared,
        &format!("{what}: shared files"),
        &no_skip,
    );
    assert_local_copies(&plain.area, &area, degree, &what, &no_skip);
}

/// mmap, sendfile, copy_file_range and splice on a shared file fail with
/// ENOTSUP, logged with the operation and the path; on a node-local file
/// they work.
#[test]
fn unsupported_calls_are_refused_on_shared_files_mpich() {
    let mpi = Mpi::Mpich;
    for flavour in [Flavour::O0, Flavour::Fortify64] {
        let exe = compile_flavour(mpi, UNSUPPORTED, flavour);
        let plain = reference(mpi, UNSUPPORTED, flavour, &[]);
        let degree = 2;
        let what = format!("io_unsupported ({flavour:?}) r={degree}");
        let area = Area::new(&format!("unsupported-{}-r2", flavour.key()), true);
        let job = replicated(mpi, &exe, &area, (degree, "block"), &[], &[]);
        check_success(&job, &what);
        assert_stdout_matches(
            &plain.job,
            &job,
            degree,
            LayoutKind::Block,
            &format!("{what} (expected: the plain run, with every [refusable] call failing with ENOTSUP)"),
            with_refusals,
        );
        assert_same_files(
            &plain.area.shared,
            &area.shared,
            &format!("{what}: shared files"),
            &no_skip,
        );
        assert_local_copies(&plain.area, &area, degree, &what, &no_skip);
        let shared = area.shared.display().to_string();
        for operation in ["mmap", "sendfile", "copy_file_range", "splice"] {
            assert!(
                !lines_with(&job.stderr, &[operation, &shared]).is_empty(),
                "{what}: the refused {operation} must be logged with the path (a stderr line \
                 naming {operation} and a file under {shared}):\n{}",
                job.stderr
            );
        }
    }
}

// ---------------------------------------------------------------------------
// Coverage.

/// Every entry point of the coverage list, each called by at least
/// one program on a shared and on a node-local directory.
#[rustfmt::skip]
const COVERAGE: &[&str] = &[
    // open and create
    "open", "open64", "__open_2", "__open64_2", "openat", "openat64", "__openat_2", "creat",
    "creat64",
    // data transfer
    "read", "write", "pread", "pwrite", "pread64", "pwrite64", "readv", "writev", "preadv",
    "pwritev", "preadv2", "pwritev2", "__read_chk", "__pread_chk", "__pread64_chk",
    // seek and descriptors
    "lseek", "lseek64", "close", "close_range", "dup", "dup2", "dup3", "fcntl",
    // sync, truncate, stat, names
    "fsync", "fdatasync", "ftruncate", "ftruncate64", "fstat", "fstat64", "stat", "stat64",
    "lstat", "lstat64", "fstatat", "fstatat64", "statx", "__fxstat", "__xstat", "__lxstat",
    "__fxstat64", "__xstat64", "__lxstat64", "unlink", "rename",
    // stdio streams
    "fopen", "fopen64", "fdopen", "freopen", "freopen64", "fclose", "fileno", "fflush",
    // stdio served through the streams (not hooked themselves)
    "fprintf", "__fprintf_chk", "fscanf", "fgets", "__fgets_chk", "getline", "fread",
    "__fread_chk", "fwrite", "fseek", "ftell", "rewind",
];

/// Served by redio's stream callbacks, not hooked: need not be exported.
#[rustfmt::skip]
const THROUGH_STREAMS: &[&str] = &[
    "fprintf", "__fprintf_chk", "fscanf", "fgets", "__fgets_chk", "getline", "fread",
    "__fread_chk", "fwrite", "fseek", "ftell", "rewind",
];

/// Entry points outside the list that the programs call anyway (the
/// `_FILE_OFFSET_BITS=64` and fortified variants, `__fxstatat*` through
/// dlsym, and the calls redio must refuse): libredio.so must hook them too,
/// or they bypass it.
#[rustfmt::skip]
const ALSO_HOOKED: &[&str] = &[
    // _FILE_OFFSET_BITS=64 (and fortified) variants
    "__openat64_2", "fcntl64", "preadv64", "pwritev64", "preadv64v2", "pwritev64v2",
    // the other stat compatibility entry points
    "__fxstatat", "__fxstatat64",
    // refused on managed files
    "mmap", "mmap64", "sendfile", "sendfile64", "copy_file_range", "splice",
];

/// Names by which a listed function is linked.
fn linked_as(symbol: &str) -> &[&str] {
    match symbol {
        "fscanf" => &["fscanf", "__isoc99_fscanf"],
        _ => std::slice::from_ref(
            match COVERAGE.iter().chain(ALSO_HOOKED).find(|s| **s == symbol) {
                Some(s) => s,
                None => panic!("{symbol} is not in the lists"),
            },
        ),
    }
}

fn nm(args: &[&str], file: &Path) -> BTreeSet<String> {
    let output = Command::new("nm")
        .args(args)
        .arg(file)
        .output()
        .expect("cannot run nm (binutils)");
    assert!(
        output.status.success(),
        "nm {args:?} {} failed: {}",
        file.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.split_whitespace().last())
        .map(|symbol| symbol.split('@').next().unwrap().to_string())
        .collect()
}

/// The names the programs call through `DLSYM("name")` (see io_posix.c).
fn dlsym_names() -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for (source, _) in PROGRAMS {
        let text =
            std::fs::read_to_string(common::repo().join("tests/programs").join(source)).unwrap();
        for piece in text.split("DLSYM(\"").skip(1) {
            names.insert(piece.split('"').next().unwrap().to_string());
        }
    }
    names
}

/// Everything the MPICH builds of the programs import, plus the dlsym names.
fn program_calls() -> BTreeMap<String, Vec<String>> {
    let mut calls: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (source, flavour) in PROGRAMS {
        let exe = compile_flavour(Mpi::Mpich, source, flavour);
        for symbol in nm(&["-D", "--undefined-only"], &exe) {
            calls
                .entry(symbol)
                .or_default()
                .push(format!("{} ({})", stem(source), flavour.key()));
        }
    }
    for name in dlsym_names() {
        calls
            .entry(name)
            .or_default()
            .push("io_posix (dlsym)".into());
    }
    calls
}

/// (a) The programs, between their flavours, call every listed entry point
/// and every one of [`ALSO_HOOKED`].
#[test]
fn programs_call_every_listed_symbol() {
    let calls = program_calls();
    let missing: Vec<&str> = COVERAGE
        .iter()
        .chain(ALSO_HOOKED)
        .copied()
        .filter(|symbol| {
            !linked_as(symbol)
                .iter()
                .any(|name| calls.contains_key(*name))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "no test program calls {missing:?}; the programs import:\n{:#?}",
        calls.keys().collect::<Vec<_>>()
    );
    // Print who proves what (visible with --nocapture).
    for symbol in COVERAGE.iter().chain(ALSO_HOOKED) {
        let by: Vec<&String> = linked_as(symbol)
            .iter()
            .filter_map(|name| calls.get(*name))
            .flatten()
            .collect();
        println!("{symbol:16} {by:?}");
    }
}

/// (b) libredio.so exports a hook for every entry point that is not served
/// through a stream, and for every one of [`ALSO_HOOKED`].
fn library_exports_every_hook(mpi: Mpi) {
    // The library `redio run` uses: $REDIO_LIB_DIR/<mpi>/, else the source
    // tree's build.
    let library = match std::env::var_os("REDIO_LIB_DIR") {
        Some(dir) => PathBuf::from(dir).join(mpi.key()).join("libredio.so"),
        None => common::repo()
            .join("target")
            .join(mpi.key())
            .join("release/libredio.so"),
    };
    assert!(
        library.exists(),
        "{} is missing: build it with scripts/build.sh",
        library.display()
    );
    let exported = nm(&["-D", "--defined-only"], &library);
    let missing: Vec<&str> = COVERAGE
        .iter()
        .filter(|s| !THROUGH_STREAMS.contains(s))
        .chain(ALSO_HOOKED)
        .copied()
        .filter(|symbol| !exported.contains(*symbol))
        .collect();
    assert!(
        missing.is_empty(),
        "{} does not export {} hooks: {missing:?} (a program calling them bypasses redio)",
        library.display(),
        missing.len()
    );
}

#[test]
fn libredio_exports_every_hook_mpich() {
    library_exports_every_hook(Mpi::Mpich);
}

#[test]
fn libredio_exports_every_hook_openmpi() {
    library_exports_every_hook(Mpi::OpenMpi);
}

#[test]
fn libredio_exports_every_hook_openmpi5() {
    library_exports_every_hook(Mpi::OpenMpi5);
}

/// libstdc++'s file streams reach the C library through fopen64, fileno,
/// read, write, writev, lseek64 and fclose (and not through stdio's data
/// functions): so hooking those, with `fileno` answering a managed fd,
/// covers `std::ofstream` / `std::ifstream`. Checked on a plain run with
/// `LD_DEBUG=bindings` (libstdc++ binds lazily, so only what is called
/// shows up).
#[test]
fn cxx_streams_go_through_fopen64_fileno_and_fd_calls() {
    let exe = compile_flavour(Mpi::Mpich, FSTREAM, Flavour::Cxx);
    let area = Area::new("ld-debug-fstream", false);
    let output = area.root.join("ld");
    let job = Launch::plain(Mpi::Mpich, 1, &exe)
        .args(area.args())
        .env("LD_DEBUG", "bindings")
        .env("LD_DEBUG_OUTPUT", &output.display().to_string())
        .timeout(TIMEOUT)
        .run();
    check_success(&job, "plain io_fstream with LD_DEBUG=bindings");
    let program = exe.file_name().unwrap().to_string_lossy().into_owned();
    let mut bound = BTreeSet::new();
    for entry in std::fs::read_dir(&area.root).unwrap().flatten() {
        if !entry.file_name().to_string_lossy().starts_with("ld.") {
            continue;
        }
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        if !text.contains(&program) {
            continue; // the launcher's own bindings
        }
        for line in text.lines() {
            let Some((from, to)) = line.split_once(" to ") else {
                continue;
            };
            if from.contains("binding file")
                && from.contains("libstdc++.so")
                && to.contains("libc.so")
            {
                if let Some(symbol) = to.split('`').nth(1).and_then(|s| s.split('\'').next()) {
                    bound.insert(symbol.to_string());
                }
            }
        }
    }
    let needed = [
        "fopen64", "fileno", "read", "write", "writev", "lseek64", "fclose",
    ];
    let missing: Vec<&str> = needed
        .iter()
        .copied()
        .filter(|s| !bound.contains(*s))
        .collect();
    assert!(
        missing.is_empty(),
        "libstdc++ did not call {missing:?}; it bound: {bound:?}"
    );
    for unexpected in ["fwrite", "fread", "fputs", "fgets", "fprintf"] {
        assert!(
            !bound.contains(unexpected),
            "libstdc++ called {unexpected}: the streams use stdio for data after all: {bound:?}"
        );
    }
}

/// The configuration the replicated runs use is valid as written.
#[test]
fn the_test_configuration_is_valid() {
    let area = Area::new("config-check", true);
    let output = Command::new(common::redio_bin())
        .args(["config", "check"])
        .arg(&area.config)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}\n{}",
        std::fs::read_to_string(&area.config).unwrap(),
        String::from_utf8_lossy(&output.stderr)
    );
    let output = Command::new(common::redio_bin())
        .arg("info")
        .arg(area.shared_file("x"))
        .arg(area.local.join("x"))
        .env("REDIO_CONFIG", &area.config)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    let class = |path: &Path| {
        let path = path.display().to_string();
        text.lines()
            .find(|line| line.starts_with(&path))
            .and_then(|line| line.split_whitespace().nth(1))
            .map(str::to_string)
    };
    assert_eq!(
        class(&area.shared_file("x")).as_deref(),
        Some("shared"),
        "{text}"
    );
    assert_eq!(
        class(&area.local.join("x")).as_deref(),
        Some("local"),
        "{text}"
    );
}
