//! What every suite of the interposition tests shares: the programs, the
//! area a run writes into, the plain reference runs, the replicated runs,
//! and the comparisons of a replicated run with its plain run.

use crate::common::{compile_flavour, fresh_dir, Flavour, Job, Launch, Mpi};
use redio::topology::{LayoutKind, Topology};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

/// Logical ranks of every job.
pub const RANKS: u32 = 2;

/// Seconds before a job counts as hung. Most of these programs take well
/// under a second, but `mpiio_surface.c` at r=3 under Open MPI makes about
/// 8,800 coordinated operations (its 2100-piece nonblocking transfers):
/// 4-37 s on the 2-core machine under load, and twice in about 100 runs,
/// with a CI run and a build beside the test, more than the 60 s this
/// used to be (one had printed its last line and `mpirun` was finalizing,
/// by the stacks of the hang report). A real hang still ends the test,
/// with its stacks (`tests/common/hang.rs`).
pub const TIMEOUT: u32 = 180;

/// The test programs, under `tests/programs/`.
pub const POSIX: &str = "io/io_posix.c";
pub const STDIO: &str = "io/io_stdio.c";
pub const FSTREAM: &str = "io/io_fstream.cpp";
pub const THREADS: &str = "io/io_threads.c";
pub const CHILD: &str = "io/io_child.c";
pub const UNSUPPORTED: &str = "io/io_unsupported.c";
pub const FAULTS: &str = "io/io_faults.c";
pub const RULES: &str = "io/io_rules.c";
pub const DIVERGE: &str = "io/io_diverge.c";
pub const PAIRS: &str = "io/io_pairs.c";
pub const AIO: &str = "io/io_aio.c";

// ---------------------------------------------------------------------------
// Where a run's files go.

/// One run's directories: `shared/`, `local/` (with `r0 r1 r2` under redio)
/// and the configuration file.
pub struct Area {
    pub root: PathBuf,
    pub shared: PathBuf,
    pub local: PathBuf,
    pub config: PathBuf,
}

impl Area {
    /// A fresh area; `replicated` adds the per-replica directories and the
    /// configuration.
    pub fn new(name: &str, replicated: bool) -> Area {
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
    pub fn args(&self) -> Vec<String> {
        vec![
            self.shared.display().to_string(),
            self.local.display().to_string(),
        ]
    }

    /// `<area>/shared/<name>`.
    pub fn shared_file(&self, name: &str) -> PathBuf {
        self.shared.join(name)
    }
}

pub fn stem(source: &str) -> &str {
    let name = source.rsplit('/').next().unwrap();
    name.split('.').next().unwrap()
}

/// The configuration the replicated runs use is valid as written.
#[test]
fn the_test_configuration_is_valid() {
    let area = Area::new("config-check", true);
    let output = Command::new(crate::common::redio_bin())
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
    let output = Command::new(crate::common::redio_bin())
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

// ---------------------------------------------------------------------------
// Running.

/// A plain run and the area it wrote.
pub struct Reference {
    pub job: Job,
    pub area: Area,
}

/// The plain run of `source` in `flavour` with `extra` arguments, run once
/// per test binary and shared by the tests that need it.
pub fn reference(mpi: Mpi, source: &str, flavour: Flavour, extra: &[&str]) -> Arc<Reference> {
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
pub fn replicated(
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
pub fn check_success(job: &Job, what: &str) {
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
pub fn first_difference(expected: &str, actual: &str) -> String {
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
pub fn assert_stdout_matches(
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
pub fn assert_same_files(expected: &Path, actual: &Path, what: &str, skip: &dyn Fn(&str) -> bool) {
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
pub fn assert_local_copies(
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

pub fn no_skip(_: &str) -> bool {
    false
}

/// Every process printed what the plain run's process of the same logical
/// rank printed, and the shared files are the plain run's, byte for byte
/// and with the same permissions.
pub fn assert_like_plain(
    plain: &Reference,
    job: &Job,
    area: &Area,
    degree: u32,
    kind: LayoutKind,
    what: &str,
) {
    assert_stdout_matches(&plain.job, job, degree, kind, what, str::to_string);
    assert_same_files(
        &plain.area.shared,
        &area.shared,
        &format!("{what}: shared files"),
        &no_skip,
    );
}

/// The lines of `stderr` that contain every one of `words`.
pub fn lines_with<'a>(stderr: &'a str, words: &[&str]) -> Vec<&'a str> {
    stderr
        .lines()
        .filter(|line| words.iter().all(|w| line.contains(w)))
        .collect()
}
