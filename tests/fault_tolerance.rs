//! Replica failures (issue 5), on MPICH with the liveness back-end.
//!
//! A process of a replicated job dies at an injected point
//! (`REDIO_TEST_DIE`: in coordinated operation n, before any file call or
//! right after the first one; by exit or by SIGSEGV). The job must complete
//! on the survivors: `redio run` exits 0, every file the program wrote on
//! the shared file system is byte-identical to a fault-free run's, and the
//! JSON summary names the dead process. `tests/programs/io/io_failover.c`
//! lists the numbered operations.
//!
//! The randomised trials draw from `REDIO_FT_SEED` (printed; set it to
//! replay a run) and cover every read and write protocol, r=2 and r=3,
//! master and non-master victims, and deaths in the middle of a chunked
//! transfer.

mod common;

use common::{compile_flavour, fresh_dir, Flavour, Job, Launch, Mpi};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

const PROGRAM: &str = "io/io_failover.c";
const RANKS: u32 = 2;
/// Bytes per write and read: four chunks of [`CHUNK`].
const BLOCK: &str = "262144";
const CHUNK: &str = "64KiB";
/// Coordinated operations per logical rank (see io_failover.c).
const OPERATIONS: u64 = 13;
/// Operations whose data moves (writes 1..=4, reads 6..=10).
const DATA_OPERATIONS: [u64; 9] = [1, 2, 3, 4, 6, 7, 8, 9, 10];
/// Seconds a trial may take before it counts as hung.
const TIMEOUT: u32 = 60;

const READS: [&str; 7] = [
    "simple",
    "extended-simple",
    "read-distribute",
    "chained",
    "chunked-chained",
    "distributed-chunked",
    "auto",
];
const WRITES: [&str; 5] = [
    "simple",
    "distributed",
    "distributed-separate",
    "auto",
    "none",
];

/// One run's directory: `shared/`, the configuration and the summary.
struct Area {
    shared: PathBuf,
    config: PathBuf,
    summary: PathBuf,
}

impl Area {
    fn new(name: &str, read: &str, write: &str, extra_yaml: &str) -> Area {
        let root = fresh_dir(&format!("ft/{name}")).canonicalize().unwrap();
        let shared = root.join("shared");
        std::fs::create_dir_all(&shared).unwrap();
        let config = root.join("redio.yaml");
        std::fs::write(
            &config,
            format!(
                "version: 1\n\
                 shared:\n  paths: [\"{}\"]\n\
                 io: {{read: {read}, write: {write}, chunk_size: {CHUNK}, readers: 2}}\n\
                 {extra_yaml}",
                shared.display()
            ),
        )
        .unwrap();
        Area {
            shared,
            summary: root.join("summary.json"),
            config,
        }
    }

    /// Runs io_failover under redio with `env`, on MPICH.
    fn run(&self, degree: u32, env: &[(&str, String)]) -> Job {
        self.run_on(Mpi::Mpich, degree, env)
    }

    /// Runs io_failover under redio with `env`, on `mpi`.
    fn run_on(&self, mpi: Mpi, degree: u32, env: &[(&str, String)]) -> Job {
        let exe = compile_flavour(mpi, PROGRAM, Flavour::Fortify);
        let mut launch = Launch::redio(mpi, RANKS, degree, "block", &exe)
            .config(&self.config)
            .args([self.shared.display().to_string(), BLOCK.to_string()])
            .timeout(TIMEOUT);
        launch.redio_args = vec!["--summary".to_string(), self.summary.display().to_string()];
        for (name, value) in env {
            launch = launch.env(name, value);
        }
        launch.run()
    }

    /// The run's summary, parsed.
    fn summary(&self) -> serde_json::Value {
        let text = std::fs::read_to_string(&self.summary)
            .unwrap_or_else(|e| panic!("no summary at {}: {e}", self.summary.display()));
        serde_json::from_str(&text).unwrap()
    }
}

/// Every file under `dir`, by name, with its bytes.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

/// The files of a fault-free run (r=2, simple protocols), computed once.
fn reference() -> &'static BTreeMap<String, Vec<u8>> {
    static FILES: OnceLock<BTreeMap<String, Vec<u8>>> = OnceLock::new();
    FILES.get_or_init(|| {
        let area = Area::new("reference", "simple", "simple", "");
        let job = area.run(2, &[]);
        assert_eq!(job.code, Some(0), "the fault-free run failed:\n{job:#?}");
        let found = files(&area.shared);
        assert_eq!(found.len(), 2 * RANKS as usize, "{found:?}");
        found
    })
}

/// Bytes written on the shared file system by a fault-free run of the
/// same protocols and degree (computed once per combination).
fn fault_free_written(mpi: Mpi, read: &str, write: &str, degree: u32) -> u64 {
    type Key = (&'static str, String, String, u32);
    static CACHE: Mutex<BTreeMap<Key, u64>> = Mutex::new(BTreeMap::new());
    let key: Key = (mpi.key(), read.into(), write.into(), degree);
    if let Some(&bytes) = CACHE.lock().unwrap().get(&key) {
        return bytes;
    }
    let area = Area::new(
        &format!("fault-free-{}-{read}-{write}-{degree}", mpi.key()),
        read,
        write,
        "",
    );
    let job = area.run_on(mpi, degree, &[]);
    assert_eq!(job.code, Some(0), "fault-free run failed:\n{job:#?}");
    let bytes = area.summary()["bytes"]["bytes_written"].as_u64().unwrap();
    CACHE.lock().unwrap().insert(key, bytes);
    bytes
}

/// What a trial expects besides completion.
#[derive(Debug)]
struct Trial {
    read: &'static str,
    write: &'static str,
    degree: u32,
    /// `REDIO_TEST_DIE`, e.g. `2:7:segv:1`.
    deaths: String,
    /// World ranks that must be reported failed.
    victims: Vec<u32>,
}

/// Runs `trial` on MPICH; returns why it failed, if it did.
fn run_trial(name: &str, trial: &Trial) -> Result<(), String> {
    run_trial_on(Mpi::Mpich, name, trial)
}

/// Runs `trial` on `mpi`; returns why it failed, if it did.
fn run_trial_on(mpi: Mpi, name: &str, trial: &Trial) -> Result<(), String> {
    let area = Area::new(name, trial.read, trial.write, "");
    let job = area.run_on(
        mpi,
        trial.degree,
        &[("REDIO_TEST_DIE", trial.deaths.clone())],
    );
    let story = || format!("{trial:?}\n{job:#?}");
    if job.code != Some(0) {
        return Err(format!(
            "the job did not complete (exit {:?}):\n{}",
            job.code,
            story()
        ));
    }
    let got = files(&area.shared);
    if &got != reference() {
        let differing: Vec<&String> = reference()
            .keys()
            .chain(got.keys())
            .filter(|k| reference().get(*k) != got.get(*k))
            .collect();
        return Err(format!(
            "output differs from the fault-free run in {differing:?}:\n{}",
            story()
        ));
    }
    let summary = area.summary();
    let failed: Vec<u64> = summary["failed"]
        .as_array()
        .map(|a| a.iter().filter_map(|f| f["world_rank"].as_u64()).collect())
        .unwrap_or_default();
    for victim in &trial.victims {
        if !failed.contains(&u64::from(*victim)) {
            return Err(format!(
                "the summary does not name world rank {victim} as failed: {summary:#}\n{}",
                story()
            ));
        }
    }
    if summary["completed"] != serde_json::Value::Bool(true) {
        return Err(format!("the summary says not completed: {summary:#}"));
    }
    // Bytes on the shared file system: what the protocol writes without a
    // failure, plus at most one re-executed operation per failure, by every
    // replica (docs/fault-tolerance.md, "What is written twice").
    let written = summary["bytes"]["bytes_written"]
        .as_u64()
        .unwrap_or(u64::MAX);
    let expected = fault_free_written(mpi, trial.read, trial.write, trial.degree);
    let block: u64 = BLOCK.parse().unwrap();
    let allowance = trial.victims.len() as u64 * u64::from(trial.degree) * block;
    if written > expected + allowance {
        return Err(format!(
            "{written} bytes reached the shared file system; a fault-free run writes \
             {expected}, and re-execution may add {allowance}:\n{}",
            story()
        ));
    }
    Ok(())
}

/// A small deterministic generator (xorshift), seeded from
/// `REDIO_FT_SEED` or the clock.
struct Dice(u64);

impl Dice {
    fn new() -> Dice {
        let seed = std::env::var("REDIO_FT_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_nanos() as u64
            });
        eprintln!("fault trials: REDIO_FT_SEED={seed}");
        Dice(seed | 1)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// World rank of (replica, rank) under the block layout.
fn world(replica: u32, rank: u32) -> u32 {
    replica * RANKS + rank
}

/// `count` random trials on `mpi` (see the module comment); panics with
/// every failed trial.
fn random_trials(mpi: Mpi, count: usize) {
    reference();
    let mut dice = Dice::new();
    let mut failures = Vec::new();
    for i in 0..count {
        // Coverage by construction: every read and write protocol, both
        // degrees, master and non-master victims; the moment is random.
        let read = READS[i % READS.len()];
        let write = WRITES[i % WRITES.len()];
        let degree = 2 + (i % 2) as u32;
        let master = (i / 2) % 2 == 0;
        let replica = if master {
            0
        } else {
            1 + dice.below(u64::from(degree) - 1) as u32
        };
        let rank = dice.below(u64::from(RANKS)) as u32;
        // Mid-transfer deaths need the victim to touch the file: the master
        // does in every protocol's data operations.
        let mid_transfer = master && dice.below(2) == 0;
        let seq = if mid_transfer {
            DATA_OPERATIONS[dice.below(DATA_OPERATIONS.len() as u64) as usize]
        } else {
            dice.below(OPERATIONS)
        };
        let how = if dice.below(2) == 0 { "exit" } else { "segv" };
        let victim = world(replica, rank);
        let trial = Trial {
            read,
            write,
            degree,
            deaths: format!("{victim}:{seq}:{how}:{}", u32::from(mid_transfer)),
            victims: vec![victim],
        };
        eprintln!("trial {i}: {trial:?}");
        let name = format!("random-{}-{i}", mpi.key());
        if let Err(why) = run_trial_on(mpi, &name, &trial) {
            failures.push(format!("trial {i}: {why}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {count} trials failed:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn survivors_finish_with_identical_output_after_random_deaths_mpich() {
    random_trials(Mpi::Mpich, 28);
}

#[test]
fn survivors_finish_with_identical_output_after_random_deaths_openmpi() {
    // Open MPI 4.1 under `--enable-recovery`: the same liveness back-end.
    random_trials(Mpi::OpenMpi, 8);
}

#[test]
fn two_failures_in_one_run_at_three_replicas() {
    reference();
    // Replica 0 of rank 0 dies in a write, later replica 1 of rank 1 in a
    // read: each set ends with one survivor, and they are of replica 2.
    let trial = Trial {
        read: "chunked-chained",
        write: "distributed",
        degree: 3,
        deaths: format!("{}:2:exit:1,{}:7:segv", world(0, 0), world(1, 1)),
        victims: vec![world(0, 0), world(1, 1)],
    };
    run_trial("two-failures", &trial).unwrap();
}

#[test]
fn the_leader_dies_after_truncating_in_open() {
    reference();
    // Operation 0 is open(O_CREAT|O_TRUNC); operation 11 is fopen("w").
    for (name, seq) in [("open-trunc", 0), ("fopen-w", 11)] {
        let trial = Trial {
            read: "simple",
            write: "simple",
            degree: 2,
            deaths: format!("{}:{seq}:exit:1", world(0, 1)),
            victims: vec![world(0, 1)],
        };
        run_trial(name, &trial).unwrap();
    }
}

#[test]
fn a_replica_dies_in_close_while_parts_are_joined() {
    reference();
    // Under distributed-separate, the last close joins the parts: operation
    // 5 is that join (the leader's), so the reads move to 6..=11.
    let trial = Trial {
        read: "simple",
        write: "distributed-separate",
        degree: 2,
        deaths: format!("{}:5:exit:1", world(0, 0)),
        victims: vec![world(0, 0)],
    };
    run_trial("close-join", &trial).unwrap();
}

#[test]
fn processes_waiting_in_an_application_collective_are_retired() {
    reference();
    // Replica 1 of rank 0 dies in its last read; replica 1 of rank 1 has
    // reached MPI_Barrier by then and waits there for a dead peer.
    let trial = Trial {
        read: "simple",
        write: "simple",
        degree: 2,
        deaths: format!("{}:10", world(1, 0)),
        victims: vec![world(1, 0)],
    };
    let area = Area::new("in-collective", trial.read, trial.write, "");
    let job = area.run(trial.degree, &[("REDIO_TEST_DIE", trial.deaths.clone())]);
    assert_eq!(job.code, Some(0), "{job:#?}");
    assert_eq!(&files(&area.shared), reference());
    let summary = area.summary();
    let retired: Vec<u64> = summary["retired"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["world_rank"].as_u64())
        .collect();
    assert_eq!(retired, vec![u64::from(world(1, 1))], "{summary:#}");
}

#[test]
fn losing_every_replica_of_a_rank_is_a_clean_fatal_error() {
    let area = Area::new("rank-lost", "simple", "simple", "");
    let deaths = format!("{}:3,{}:3", world(0, 1), world(1, 1));
    let started = std::time::Instant::now();
    let job = area.run(2, &[("REDIO_TEST_DIE", deaths)]);
    assert_eq!(job.code, Some(3), "{job:#?}");
    assert!(
        job.stderr
            .contains("every replica of logical rank(s) 1 failed: the job did not complete"),
        "{job:#?}"
    );
    assert!(started.elapsed().as_secs() < u64::from(TIMEOUT), "it hung");
    let summary = area.summary();
    assert_eq!(summary["completed"], serde_json::Value::Bool(false));
    assert_eq!(summary["lost_ranks"], serde_json::json!([1]));
}

#[test]
fn on_replica_failure_abort_ends_the_job() {
    let area = Area::new(
        "abort",
        "simple",
        "simple",
        "faults:\n  on_replica_failure: abort\n",
    );
    let job = area.run(2, &[("REDIO_TEST_DIE", format!("{}:3", world(1, 0)))]);
    // The launcher ends every process (no -disable-auto-cleanup), so no
    // logical rank finishes.
    assert_eq!(job.code, Some(3), "{job:#?}");
    assert!(job.stderr.contains("did not complete"), "{job:#?}");
}
