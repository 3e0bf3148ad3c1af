//! Replica failures (issue 5): the liveness back-end on MPICH and Open MPI
//! 4.1, the ULFM back-end on Open MPI 5.
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
//! transfer. The SIGKILL trials kill a process from outside at a random
//! moment of a run with 8 MiB operations, under ULFM.

mod common;

use common::{compile_flavour, files, fresh_dir, Flavour, Job, Launch, Mpi};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

const PROGRAM: &str = "io/io_failover.c";
const RANKS: u32 = 2;
/// Bytes per write and read: four chunks of [`CHUNK`].
const BLOCK: u64 = 262144;
const CHUNK: &str = "64KiB";
/// Coordinated operations per logical rank (see io_failover.c).
const OPERATIONS: u64 = 13;
/// Operations whose data moves (writes 1..=4, reads 6..=10).
const DATA_OPERATIONS: [u64; 9] = [1, 2, 3, 4, 6, 7, 8, 9, 10];
/// Seconds a trial may take before it counts as hung: a hang is caught
/// either way, and 60 s once ended a fault-free run starved by other jobs
/// on the 2 cores (docs/fault-tolerance.md, "The soak").
const TIMEOUT: u32 = 120;

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
    /// Bytes per write and read of io_failover.
    block: u64,
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
            block: BLOCK,
        }
    }

    /// The same area with `block`-byte writes and reads.
    fn with_block(mut self, block: u64) -> Area {
        self.block = block;
        self
    }

    /// Runs io_failover under redio with `env`, on MPICH.
    fn run(&self, degree: u32, env: &[(&str, String)]) -> Job {
        self.run_on(Mpi::Mpich, degree, env)
    }

    /// Runs io_failover under redio with `env`, on `mpi`.
    fn run_on(&self, mpi: Mpi, degree: u32, env: &[(&str, String)]) -> Job {
        self.run_with(mpi, degree, env, &[])
    }

    /// [`run_on`](Self::run_on) with more arguments for the launcher.
    fn run_with(&self, mpi: Mpi, degree: u32, env: &[(&str, String)], launcher: &[&str]) -> Job {
        let exe = compile_flavour(mpi, PROGRAM, Flavour::Fortify);
        let mut launch = Launch::redio(mpi, RANKS, degree, "block", &exe)
            .config(&self.config)
            .args([self.shared.display().to_string(), self.block.to_string()])
            .timeout(TIMEOUT);
        launch.redio_args = vec!["--summary".to_string(), self.summary.display().to_string()];
        launch
            .redio_args
            .extend(launcher.iter().map(|a| format!("--launcher-arg={a}")));
        for (name, value) in env {
            launch = launch.env(name, value);
        }
        launch.run()
    }

    /// Deletes the run's directory (a passed trial's 8 MiB-block files: a
    /// 500-trial soak kept 60 GB of them and filled the disk).
    fn remove(&self) {
        if let Some(root) = self.shared.parent() {
            let _ = std::fs::remove_dir_all(root);
        }
    }

    /// The run's summary, parsed.
    fn summary(&self) -> serde_json::Value {
        let text = std::fs::read_to_string(&self.summary)
            .unwrap_or_else(|e| panic!("no summary at {}: {e}", self.summary.display()));
        serde_json::from_str(&text).unwrap()
    }
}

/// The files of a fault-free run (r=2, simple protocols), computed once.
fn reference() -> &'static BTreeMap<String, Vec<u8>> {
    static FILES: OnceLock<BTreeMap<String, Vec<u8>>> = OnceLock::new();
    FILES.get_or_init(|| reference_files(BLOCK))
}

/// The files of a fault-free run with `block`-byte operations, computed
/// once per block size: tests running in parallel share it (each making
/// its own would remove the others' directory).
fn reference_files(block: u64) -> BTreeMap<String, Vec<u8>> {
    static CACHE: Mutex<BTreeMap<u64, BTreeMap<String, Vec<u8>>>> = Mutex::new(BTreeMap::new());
    let mut cache = CACHE.lock().unwrap_or_else(|p| p.into_inner());
    cache
        .entry(block)
        .or_insert_with(|| fault_free_files(block))
        .clone()
}

fn fault_free_files(block: u64) -> BTreeMap<String, Vec<u8>> {
    let area = Area::new(&format!("reference-{block}"), "simple", "simple", "").with_block(block);
    let job = area.run(2, &[]);
    assert_eq!(job.code, Some(0), "the fault-free run failed:\n{job:#?}");
    let found = files(&area.shared);
    assert_eq!(found.len(), 2 * RANKS as usize, "{found:?}");
    found
}

/// Bytes written on the shared file system by a fault-free run of the
/// same protocols and degree (computed once per combination).
fn fault_free_written(mpi: Mpi, read: &str, write: &str, degree: u32, block: u64) -> u64 {
    type Key = (&'static str, String, String, u32, u64);
    static CACHE: Mutex<BTreeMap<Key, u64>> = Mutex::new(BTreeMap::new());
    let key: Key = (mpi.key(), read.into(), write.into(), degree, block);
    if let Some(&bytes) = CACHE.lock().unwrap().get(&key) {
        return bytes;
    }
    let area = Area::new(
        &format!("fault-free-{}-{read}-{write}-{degree}-{block}", mpi.key()),
        read,
        write,
        "",
    )
    .with_block(block);
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
    run_trial_on(Mpi::Mpich, name, trial, BLOCK)
}

/// Runs `trial` on `mpi` with `block`-byte operations; returns why it
/// failed, if it did.
fn run_trial_on(mpi: Mpi, name: &str, trial: &Trial, block: u64) -> Result<(), String> {
    let area = Area::new(name, trial.read, trial.write, "").with_block(block);
    let job = area.run_on(
        mpi,
        trial.degree,
        &[("REDIO_TEST_DIE", trial.deaths.clone())],
    );
    let expected = reference_files(block);
    check_outcome(mpi, &area, trial, &job, &expected, &format!("{trial:?}"))
}

/// Runs `trial` on MPICH in the area `name` with one more test switch
/// `extra` (beside `REDIO_TEST_DIE`), and returns the area and the job.
fn run_trial_with(name: &str, trial: &Trial, extra: (&str, String)) -> (Area, Job) {
    run_trial_on_with(Mpi::Mpich, name, trial, extra)
}

/// [`run_trial_with`] on `mpi`.
fn run_trial_on_with(mpi: Mpi, name: &str, trial: &Trial, extra: (&str, String)) -> (Area, Job) {
    let area = Area::new(name, trial.read, trial.write, "");
    let job = area.run_on(
        mpi,
        trial.degree,
        &[("REDIO_TEST_DIE", trial.deaths.clone()), extra],
    );
    (area, job)
}

/// What a user needs from a run that lost `trial.victims`: it completed,
/// its files equal `expected`, the summary names the dead, and the shared
/// file system received what the protocol writes without a failure plus at
/// most one re-executed operation per failure, by every replica
/// (docs/fault-tolerance.md, "What is written twice"). Returns why not.
fn check_outcome(
    mpi: Mpi,
    area: &Area,
    trial: &Trial,
    job: &Job,
    expected: &BTreeMap<String, Vec<u8>>,
    what: &str,
) -> Result<(), String> {
    let story = || format!("{what}\n{job:#?}");
    if job.code != Some(0) {
        return Err(format!(
            "the job did not complete (exit {:?}):\n{}",
            job.code,
            story()
        ));
    }
    let got = files(&area.shared);
    if &got != expected {
        let differing: Vec<&String> = expected
            .keys()
            .chain(got.keys())
            .filter(|k| expected.get(*k) != got.get(*k))
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
    let written = summary["bytes"]["bytes_written"]
        .as_u64()
        .unwrap_or(u64::MAX);
    let fault_free = fault_free_written(mpi, trial.read, trial.write, trial.degree, area.block);
    let allowance = trial.victims.len() as u64 * u64::from(trial.degree) * area.block;
    if written > fault_free + allowance {
        return Err(format!(
            "{written} bytes reached the shared file system; a fault-free run writes \
             {fault_free}, and re-execution may add {allowance}:\n{}",
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

/// The world ranks a run's summary lists as retired.
fn retired_ranks(summary: &serde_json::Value) -> Vec<u32> {
    summary["retired"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["world_rank"].as_u64())
        .map(|w| w as u32)
        .collect()
}

/// World rank of (replica, rank) under the block layout.
fn world(replica: u32, rank: u32) -> u32 {
    replica * RANKS + rank
}

/// Trial `i` of a randomised series, with no death set yet, and whether
/// its victim is the master (replica 0). Coverage comes by construction:
/// every read and write protocol, both degrees, master and non-master
/// victims; the victim's replica (if not the master) and rank are random.
fn covering_trial(i: usize, dice: &mut Dice) -> (Trial, bool) {
    let degree = 2 + (i % 2) as u32;
    let master = (i / 2) % 2 == 0;
    let replica = if master {
        0
    } else {
        1 + dice.below(u64::from(degree) - 1) as u32
    };
    let victim = world(replica, dice.below(u64::from(RANKS)) as u32);
    let trial = Trial {
        read: READS[i % READS.len()],
        write: WRITES[i % WRITES.len()],
        degree,
        deaths: String::new(),
        victims: vec![victim],
    };
    (trial, master)
}

/// `count` random trials on `mpi` (see the module comment); panics with
/// every failed trial.
fn random_trials(mpi: Mpi, count: usize) {
    reference();
    let mut dice = Dice::new();
    let mut failures = Vec::new();
    for i in 0..count {
        let (mut trial, master) = covering_trial(i, &mut dice);
        let victim = trial.victims[0];
        // Mid-transfer deaths need the victim to touch the file: the master
        // does in every protocol's data operations.
        let mid_transfer = master && dice.below(2) == 0;
        let seq = if mid_transfer {
            DATA_OPERATIONS[dice.below(DATA_OPERATIONS.len() as u64) as usize]
        } else {
            dice.below(OPERATIONS)
        };
        let how = if dice.below(2) == 0 { "exit" } else { "segv" };
        trial.deaths = format!("{victim}:{seq}:{how}:{}", u32::from(mid_transfer));
        eprintln!("trial {i}: {trial:?}");
        let name = format!("random-{}-{i}", mpi.key());
        if let Err(why) = run_trial_on(mpi, &name, &trial, BLOCK) {
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
fn two_deaths_in_one_replica_set_within_one_operation_at_three_replicas() {
    reference();
    // Replicas 0 and 1 of rank 0 die in the same write (the master after
    // its first pwrite, the other before touching the file): replica 2 is
    // left alone for both logical ranks and finishes the job.
    let trial = Trial {
        read: "distributed-chunked",
        write: "distributed",
        degree: 3,
        deaths: format!("{}:2:exit:1,{}:2:kill", world(0, 0), world(1, 0)),
        victims: vec![world(0, 0), world(1, 0)],
    };
    run_trial("two-deaths-one-op", &trial).unwrap();
}

/// Replica 0 of rank 0 exits in a write at r=3, and replica 1 of rank 0 is
/// SIGKILLed in the fail-over about that death (`REDIO_TEST_DIE_IN_FAILOVER`
/// with `when`: "" as it joins the survivors' meeting, ":agreed" once they
/// agreed; `said` is how its log line puts it). Replica 2 must fail over
/// again and finish for both logical ranks.
fn second_death_in_the_fail_over(mpi: Mpi, name: &str, when: &str, said: &str) {
    let trial = Trial {
        read: "simple",
        write: "distributed",
        degree: 3,
        deaths: format!("{}:2:exit:1", world(0, 0)),
        victims: vec![world(0, 0), world(1, 0)],
    };
    let (area, job) = run_trial_on_with(
        mpi,
        name,
        &trial,
        (
            "REDIO_TEST_DIE_IN_FAILOVER",
            format!("{}:kill{when}", world(1, 0)),
        ),
    );
    assert!(
        job.stderr
            .contains(&format!("REDIO_TEST_DIE_IN_FAILOVER: dying (kill) {said}")),
        "{name}: the second victim must die {said}, not elsewhere:\n{job:#?}"
    );
    check_outcome(mpi, &area, &trial, &job, reference(), name).unwrap();
}

#[test]
fn two_exits_in_one_replica_set_are_survived_openmpi5() {
    // Replicas 0 and 1 of rank 0 exit with status 1 in the same write at
    // r=3, with 8 MiB operations, so that the survivors are still inside
    // MPI about a second later, when the other processes of their replicas
    // have retired. PRRTE 3.0 counted each non-zero exit twice and ended
    // the job then: Open MPI aborted both survivors (exit 195, "An error
    // occurred in PMIx Event Notification"), 4 runs of 4, until redio
    // turned PRRTE's non-zero-exit error state off (`OPENMPI5_FT_ARGS`).
    let trial = Trial {
        read: "simple",
        write: "distributed",
        degree: 3,
        deaths: format!("{}:2:exit:1,{}:2:exit", world(0, 0), world(1, 0)),
        victims: vec![world(0, 0), world(1, 0)],
    };
    run_trial_on(Mpi::OpenMpi5, "two-exits-openmpi5", &trial, KILL_BLOCK).unwrap();
}

#[test]
fn a_replica_dies_during_the_fail_over_itself_at_three_replicas() {
    reference();
    // Replica 2 meets again about both deaths.
    second_death_in_the_fail_over(
        Mpi::Mpich,
        "die-in-failover",
        "",
        "in the survivors' meeting",
    );
}

#[test]
fn a_survivor_that_dies_once_the_survivors_agreed_leaves_the_last_one_going() {
    reference();
    // The second victim dies before the survivors' communicator is in use.
    // It was built at start-up (`ft/spares.rs`): replica 2 needs no
    // collective with the dead to go on. Open MPI 5 never reports the
    // first death (an exit with status 1), so there too the survivors meet
    // by process id, where one once hung inside `MPI_Comm_create_group`
    // (docs/fault-tolerance.md, soak run 9).
    for mpi in [Mpi::Mpich, Mpi::OpenMpi, Mpi::OpenMpi5] {
        second_death_in_the_fail_over(
            mpi,
            &format!("die-once-agreed-{}", mpi.key()),
            ":agreed",
            "after the survivors agreed",
        );
    }
}

#[test]
fn a_survivor_that_cannot_hear_its_barrier_goes_on_once_the_others_left() {
    reference();
    // Replica 0 of rank 1 dies in a read; its peer, replica 1 of rank 1,
    // is the only one left of its rank and (REDIO_TEST_DEAF_BARRIER) never
    // sees the application's MPI_Barrier complete, as after a SIGKILL that
    // stalled its shared-memory channel. Replica 1 of rank 0 passes the
    // barrier and leaves; then the deaf one goes on alone and finishes.
    let trial = Trial {
        read: "simple",
        write: "simple",
        degree: 2,
        deaths: format!("{}:7:exit", world(0, 1)),
        victims: vec![world(0, 1)],
    };
    let (area, job) = run_trial_with(
        "deaf-barrier",
        &trial,
        ("REDIO_TEST_DEAF_BARRIER", world(1, 1).to_string()),
    );
    assert!(
        job.stderr
            .contains("the barrier is complete, it goes on alone"),
        "the deaf survivor must leave its barrier because the others left:\n{job:#?}"
    );
    check_outcome(Mpi::Mpich, &area, &trial, &job, reference(), "deaf barrier").unwrap();
}

#[test]
fn a_death_in_the_first_operation_is_survived_while_another_process_is_still_starting() {
    reference();
    // Replica 1 of rank 1 dies in its first operation, while world rank 0
    // (rank 0) is slow to record its start (REDIO_TEST_LATE_START): the
    // victim itself got through start-up, so the death is one for
    // fail-over, not a death during start-up that ends the job. CI once
    // ended such a job (random trial `3:0:exit:0` at r=3).
    let trial = Trial {
        read: "read-distribute",
        write: "auto",
        degree: 2,
        deaths: format!("{}:0:exit", world(1, 1)),
        victims: vec![world(1, 1)],
    };
    let (area, job) = run_trial_with(
        "late-start",
        &trial,
        ("REDIO_TEST_LATE_START", format!("{}:3000", world(0, 0))),
    );
    assert!(
        job.stderr.contains("REDIO_TEST_LATE_START"),
        "world rank 0 must have started late:\n{job:#?}"
    );
    check_outcome(Mpi::Mpich, &area, &trial, &job, reference(), "late start").unwrap();
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
    assert_eq!(retired_ranks(&summary), [world(1, 1)], "{summary:#}");
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
    // Whoever is first ends the job: the launcher, after the death (no
    // -disable-auto-cleanup), and no logical rank finishes (3); or a
    // survivor that saw the death in its coordinated write and aborts with
    // redio's code for it (76). Either way no rank finishes and the run says so.
    assert!(matches!(job.code, Some(3) | Some(76)), "{job:#?}");
    assert!(job.stderr.contains("did not complete"), "{job:#?}");
    let summary = area.summary();
    assert_eq!(
        summary["completed"],
        serde_json::Value::Bool(false),
        "{job:#?}"
    );
}

// ---------------------------------------------------------------------------
// SIGKILL from outside, at a random moment.

/// Bytes per operation of the kill trials: 4 writes and 5 reads of 8 MiB per
/// rank keep a job busy long enough to be hit anywhere, transfers included.
const KILL_BLOCK: u64 = 8 << 20;

/// The environment of the process whose `/proc` directory is `proc_dir`,
/// one `NAME=value` per entry.
fn environment(proc_dir: &Path) -> Option<Vec<Vec<u8>>> {
    let environ = std::fs::read(proc_dir.join("environ")).ok()?;
    Some(environ.split(|&b| b == 0).map(<[u8]>::to_vec).collect())
}

/// The value of `REDIO_FT_TRIAL` that marks the processes of trial
/// `trial` of this test process. The test's process id is part of it: two
/// suites on one machine (two clones, or a soak beside CI) run trials of
/// the same name, and one must not signal the other's processes.
fn trial_marker(trial: &str) -> String {
    format!("{}/{trial}", std::process::id())
}

/// The process of world rank `world_rank` of the job marked `trial`:
/// found by its environment (the launcher's rank variable and the trial
/// marker) and its name.
fn find_process(trial: &str, world_rank: u32) -> Option<i32> {
    let marker = format!("REDIO_FT_TRIAL={}", trial_marker(trial));
    let ranks = [
        format!("OMPI_COMM_WORLD_RANK={world_rank}"),
        format!("PMI_RANK={world_rank}"),
    ];
    std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .find_map(|entry| {
            let pid: i32 = entry.file_name().to_str()?.parse().ok()?;
            let comm = std::fs::read_to_string(entry.path().join("comm")).ok()?;
            if !comm.trim().starts_with("io_failover") {
                return None;
            }
            let vars = environment(&entry.path())?;
            let has = |v: &str| vars.iter().any(|var| var == v.as_bytes());
            (has(&marker) && ranks.iter().any(|r| has(r))).then_some(pid)
        })
}

/// True when process `pid`, world rank `world_rank` of a job under `redio
/// run`, has recorded that it got through redio's start-up (its event file
/// in the run directory named by its environment holds `started`): from
/// then on `redio run` treats its death as one for fail-over.
fn got_through_startup(pid: i32, world_rank: u32) -> bool {
    let Some(vars) = environment(Path::new(&format!("/proc/{pid}"))) else {
        return false;
    };
    let prefix = format!("{}=", redio::outcome::ENV_RUN_DIR);
    let run_dir = vars
        .iter()
        .find_map(|var| var.strip_prefix(prefix.as_bytes()))
        .map(|dir| PathBuf::from(String::from_utf8_lossy(dir).into_owned()));
    run_dir.is_some_and(|dir| {
        std::fs::read_to_string(dir.join(format!("rank-{world_rank}.jsonl")))
            .is_ok_and(|events| events.contains("\"event\":\"started\""))
    })
}

/// Runs io_failover on `mpi` with `extra_yaml` in its configuration and
/// sends `signal` to the trial's victim `delay_ms` after the program's I/O
/// began. Returns `Ok(false)` when the victim was already gone or done (the
/// trial did not happen), else whether the job passed every check
/// ([`check_outcome`]). The victim is killed after the job in any case (a
/// stopped process must not outlive a failed trial).
fn signal_trial(
    mpi: Mpi,
    name: &str,
    trial: &Trial,
    (signal, delay_ms): (i32, u64),
    extra_yaml: &str,
    expected: &BTreeMap<String, Vec<u8>>,
) -> Result<bool, String> {
    let victim = trial.victims[0];
    let area = Area::new(name, trial.read, trial.write, extra_yaml).with_block(KILL_BLOCK);
    let (job, killed) = std::thread::scope(|scope| {
        let running = scope
            .spawn(|| area.run_on(mpi, trial.degree, &[("REDIO_FT_TRIAL", trial_marker(name))]));
        let started = std::time::Instant::now();
        // From the moment the program's I/O began (its first shared file
        // exists) and the victim itself got through redio's start-up: a
        // death inside MPI_Init is not survived (docs/fault-tolerance.md,
        // "Limits"). Under load the other rank's I/O can begin while the
        // victim is still there (CI: killed 1 ms after the first file
        // appeared, before its start was recorded; the job was ended).
        let pid = loop {
            let io_began = std::fs::read_dir(&area.shared).is_ok_and(|mut d| d.next().is_some());
            let found = find_process(name, victim)
                .filter(|&pid| io_began && got_through_startup(pid, victim));
            if let Some(pid) = found {
                break Some(pid);
            }
            if running.is_finished() || started.elapsed().as_secs() > 30 {
                break None;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        };
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        // SAFETY: signalling a process of our own job.
        let killed = pid.is_some_and(|pid| unsafe { libc::kill(pid, signal) } == 0);
        let job = running.join().unwrap();
        if let Some(pid) = pid.filter(|_| signal != libc::SIGKILL) {
            // SAFETY: as above; it may be gone already.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        (job, killed)
    });
    // A kill that landed after every process had finished (the summary
    // counts them all, and nobody saw a failure) did not test anything.
    let summary = std::fs::read_to_string(&area.summary)
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok());
    let finished_first = summary.is_some_and(|s| {
        s["failed"].as_array().is_none_or(|f| f.is_empty())
            && s["finished"].as_u64() == Some(u64::from(RANKS * trial.degree))
    });
    if !killed || finished_first {
        area.remove();
        return Ok(false);
    }
    let what = format!("{trial:?}, victim {victim}, killed after {delay_ms} ms");
    let checked = check_outcome(mpi, &area, trial, &job, expected, &what);
    if checked.is_ok() {
        area.remove();
    }
    checked.map(|()| true)
}

/// At least `count` trials that hit a live victim with `signal` on `mpi`,
/// over every protocol, r=2 and 3, master and non-master victims, with
/// `extra_yaml` in the configuration.
fn signal_trials(mpi: Mpi, signal: i32, extra_yaml: &str, count: usize) {
    mixed_signal_trials(&[mpi], &[signal], extra_yaml, count);
}

/// At least `count` trials that hit a live victim, each on an MPI of
/// `mpis` with a signal of `signals` (both drawn at random), over every
/// protocol, r=2 and 3, master and non-master victims, with `extra_yaml`
/// in the configuration. Prints one line per (signal, MPI) pair, which the
/// soak (benches/soak.sh) reads, and panics with every failed trial.
fn mixed_signal_trials(mpis: &[Mpi], signals: &[i32], extra_yaml: &str, count: usize) {
    let expected = reference_files(KILL_BLOCK);
    let mut dice = Dice::new();
    // (signal, MPI) -> (run, hit a live victim, failed)
    let mut tally: BTreeMap<(i32, &str), (usize, usize, usize)> = BTreeMap::new();
    let (mut hits, mut failures, mut i) = (0, Vec::new(), 0usize);
    while hits < count && i < 3 * count {
        let (trial, _) = covering_trial(i, &mut dice);
        let mpi = mpis[dice.below(mpis.len() as u64) as usize];
        let signal = signals[dice.below(signals.len() as u64) as usize];
        let victim = trial.victims[0];
        // The I/O lasts about half a second here: any moment of it.
        let delay = dice.below(450);
        let name = format!("signal-{signal}-{}-{i}", mpi.key());
        eprintln!(
            "signal {signal} trial {i} on {}: {trial:?}, victim {victim}, after {delay} ms",
            mpi.key()
        );
        let counts = tally.entry((signal, mpi.key())).or_default();
        counts.0 += 1;
        match signal_trial(mpi, &name, &trial, (signal, delay), extra_yaml, &expected) {
            Ok(true) => counts.1 += 1,
            Ok(false) => eprintln!("  (the victim had finished: not counted)"),
            Err(why) => {
                counts.1 += 1;
                counts.2 += 1;
                eprintln!("  failed:\n{why}");
                failures.push(format!("signal {signal} trial {i} on {}: {why}", mpi.key()));
            }
        }
        hits = tally.values().map(|c| c.1).sum();
        i += 1;
    }
    for ((signal, mpi), (run, hit, failed)) in &tally {
        eprintln!(
            "signal trials: {signal} on {mpi}: {run} run, {hit} hit a live victim, {failed} failed"
        );
    }
    assert!(hits >= count, "only {hits} of {i} trials hit a live victim");
    assert!(
        failures.is_empty(),
        "{} failed:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// At least `count` SIGKILL trials on `mpi` ([`signal_trials`]), or
/// `REDIO_FT_KILL_TRIALS` of them (the soak: docs/fault-tolerance.md).
fn kill_trials(mpi: Mpi, count: usize) {
    let count = std::env::var("REDIO_FT_KILL_TRIALS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(count);
    signal_trials(mpi, libc::SIGKILL, "", count);
}

#[test]
fn survivors_finish_after_sigkill_at_a_random_moment_ulfm() {
    // The ULFM back-end (Open MPI 5, `--with-ft ulfm`).
    kill_trials(Mpi::OpenMpi5, 20);
}

#[test]
fn survivors_finish_after_sigkill_at_a_random_moment_mpich() {
    // Hydra kills every process of a node after a death by a signal unless
    // the application runs under `redio exec --survive` (src/cli/supervise.rs).
    kill_trials(Mpi::Mpich, 20);
}

#[test]
fn survivors_finish_after_sigkill_at_a_random_moment_openmpi() {
    kill_trials(Mpi::OpenMpi, 20);
}

/// The soak (benches/soak.sh, docs/fault-tolerance.md): `REDIO_FT_SOAK_TRIALS`
/// (default 500) trials, each on a random MPI of `REDIO_FT_SOAK_MPIS`
/// (default `mpich,openmpi,openmpi5`) with a random fatal signal of
/// `REDIO_FT_SOAK_SIGNALS` (default SIGKILL, SIGTERM, SIGINT, SIGSEGV,
/// SIGBUS, SIGABRT, as numbers). Ignored in the suite: it takes an hour.
#[test]
#[ignore = "the soak: benches/soak.sh runs it"]
fn soak_random_signals_on_every_mpi() {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let count = var("REDIO_FT_SOAK_TRIALS").map_or(500, |n| n.parse().expect("a trial count"));
    let mpis: Vec<Mpi> = var("REDIO_FT_SOAK_MPIS")
        .unwrap_or_else(|| "mpich,openmpi,openmpi5".into())
        .split(',')
        .map(|key| {
            [Mpi::Mpich, Mpi::OpenMpi, Mpi::OpenMpi5]
                .into_iter()
                .find(|mpi| mpi.key() == key)
                .unwrap_or_else(|| panic!("REDIO_FT_SOAK_MPIS: unknown MPI {key:?}"))
        })
        .collect();
    let default_signals = [
        libc::SIGKILL,
        libc::SIGTERM,
        libc::SIGINT,
        libc::SIGSEGV,
        libc::SIGBUS,
        libc::SIGABRT,
    ];
    let signals: Vec<i32> = var("REDIO_FT_SOAK_SIGNALS").map_or(default_signals.to_vec(), |list| {
        list.split(',')
            .map(|n| n.parse().expect("REDIO_FT_SOAK_SIGNALS: signal numbers"))
            .collect()
    });
    mixed_signal_trials(&mpis, &signals, "", count);
}

#[test]
fn a_stopped_replica_is_failed_and_killed_after_the_timeout() {
    // SIGSTOP: the process lives but makes no progress. Its peers kill it
    // after `faults.timeout` and fail over (a run that hung would end by
    // the harness's timeout and fail).
    signal_trials(
        Mpi::Mpich,
        libc::SIGSTOP,
        "faults: {timeout: 2s, heartbeat: 500ms}\n",
        4,
    );
}

#[test]
fn a_replica_ended_by_sigterm_is_survived_under_mpich() {
    // Hydra ends the job after a death by a signal unless the application
    // runs supervised (src/cli/supervise.rs); SIGTERM is what a user sends.
    signal_trials(Mpi::Mpich, libc::SIGTERM, "", 4);
}

#[test]
fn a_replica_killed_half_way_through_a_link_message_is_survived() {
    // The replica-set link runs over TCP connections of redio's own
    // (coord/link/stream.rs). A replica SIGKILLed in the middle of a link
    // message leaves its peer half a message and a closed connection, never
    // a stalled MPI channel (inside MPICH's UCX such a death could deafen
    // the peer: docs/fault-tolerance.md, "Limits"). The victim sends half
    // of its first link message of the operation, then dies by SIGKILL.
    reference();
    let cases = [
        // The master of a read distributes the data it read.
        (Mpi::Mpich, 2, "read-distribute", "simple", world(0, 0), 7),
        // A chunk in the middle of a chain, at three replicas.
        (
            Mpi::Mpich,
            3,
            "chunked-chained",
            "distributed",
            world(1, 1),
            8,
        ),
        // A write's vote, from a replica that is not the master.
        (Mpi::Mpich, 2, "simple", "distributed", world(1, 1), 2),
        // Open MPI 4.1 runs the same link.
        (Mpi::OpenMpi, 2, "read-distribute", "simple", world(0, 1), 6),
    ];
    for (mpi, degree, read, write, victim, operation) in cases {
        let trial = Trial {
            read,
            write,
            degree,
            deaths: format!("{victim}:{operation}:kill:link"),
            victims: vec![victim],
        };
        let name = format!("mid-message-{}-{degree}-{read}-{write}", mpi.key());
        let area = Area::new(&name, read, write, "");
        let job = area.run_on(mpi, degree, &[("REDIO_TEST_DIE", trial.deaths.clone())]);
        check_outcome(mpi, &area, &trial, &job, reference(), &name).unwrap();
        assert!(
            job.stderr.contains("half-way through a link message"),
            "{name}: the victim did not die in the middle of a link message:\n{}",
            job.stderr
        );
        area.remove();
    }
}

#[test]
fn a_death_open_mpi_never_reports_is_survived_by_process_id_ulfm() {
    // Open MPI 5 does not report a process that exits with a non-zero code
    // (and, rarely, not a SIGKILL either): the survivors see the death by
    // process id, wait for the report in vain, and meet by process id
    // instead of shrinking. Replica 0 (the master) of rank 0 dies in the
    // middle of a write at r=3; replica 1 of rank 1 before a read at r=2.
    reference();
    let cases = [
        (
            3,
            "distributed",
            format!("{}:2:exit:1", world(0, 0)),
            world(0, 0),
        ),
        (2, "simple", format!("{}:7:exit", world(1, 1)), world(1, 1)),
    ];
    for (degree, write, deaths, victim) in cases {
        let trial = Trial {
            read: "chunked-chained",
            write,
            degree,
            deaths,
            victims: vec![victim],
        };
        let name = format!("unreported-{degree}");
        let area = Area::new(&name, trial.read, trial.write, "");
        let job = area.run_on(
            Mpi::OpenMpi5,
            trial.degree,
            &[("REDIO_TEST_DIE", trial.deaths.clone())],
        );
        check_outcome(Mpi::OpenMpi5, &area, &trial, &job, reference(), &name).unwrap();
        assert!(
            job.stderr.contains("the survivors meet by process id"),
            "the fail-over did not go through the meeting by process id:\n{}",
            job.stderr
        );
    }
}

// ---------------------------------------------------------------------------
// Peers on other nodes: heartbeats.

#[test]
fn a_peer_on_another_node_is_found_dead_by_its_heartbeat() {
    reference();
    // Two emulated nodes (cluster/node-launcher: each of Hydra's proxies in
    // its own UTS namespace, host names node0 and node1), two processes
    // each: replica 0 on node0, replica 1 on node1. Every replica set spans
    // both nodes, so its members cannot see each other's process ids, only
    // the beat files in `faults.heartbeat_dir`.
    // SAFETY: geteuid has no preconditions and cannot fail.
    assert_eq!(
        unsafe { libc::geteuid() },
        0,
        "the emulated nodes need root (unshare --uts); run the test suite as root, as CI does"
    );
    let beats = fresh_dir("ft/heartbeat-beats").canonicalize().unwrap();
    let area = Area::new(
        "heartbeat",
        "simple",
        "distributed",
        &format!(
            "faults: {{timeout: 2s, heartbeat: 200ms, heartbeat_dir: \"{}\"}}\n",
            beats.display()
        ),
    );
    let victim = world(1, 0);
    let trial = Trial {
        read: "simple",
        write: "distributed",
        degree: 2,
        deaths: format!("{victim}:3:exit"),
        victims: vec![victim],
    };
    let launcher = Path::new(env!("CARGO_MANIFEST_DIR")).join("cluster/node-launcher");
    let nodes = [
        "-launcher",
        "ssh",
        "-launcher-exec",
        launcher.to_str().unwrap(),
        "-hosts",
        "node0,node1",
        "-ppn",
        "2",
    ];
    let job = area.run_with(
        Mpi::Mpich,
        2,
        &[("REDIO_TEST_DIE", trial.deaths.clone())],
        &nodes,
    );
    check_outcome(Mpi::Mpich, &area, &trial, &job, reference(), "heartbeat").unwrap();
    // Every process beat in the job's directory.
    let job_dir = std::fs::read_dir(&beats)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let beating = std::fs::read_dir(&job_dir)
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            name.to_string_lossy().starts_with("beat.")
        })
        .count();
    assert_eq!(beating, 4, "beat files in {}", job_dir.display());
    // Found by the silence of its beat (2 s), not by its process id (ms).
    let summary = area.summary();
    let died = summary["failed"][0]["reported"].as_f64().unwrap();
    let resumed = summary["fail_overs"][0]["time"].as_f64().unwrap();
    assert!(
        resumed - died > 1.5,
        "fail-over {:.3} s after the death: not by heartbeat\n{summary:#}",
        resumed - died
    );
    // The victim's partner on its own node saw the death by process id and
    // retired its replica.
    assert_eq!(retired_ranks(&summary), [world(1, 1)], "{summary:#}");
}
