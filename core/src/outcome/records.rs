//! The events processes record for `redio run`, and their life lines:
//! one JSON line each in `DIR/rank-W.jsonl`.

use serde::{Deserialize, Serialize};

use std::path::Path;

/// Environment variable: the run directory of the event files.
pub const ENV_RUN_DIR: &str = "REDIO_RUN_DIR";

/// Environment variable: the process id of `redio exec`, which becomes the
/// application process (its children inherit the variable, not the pid);
/// `parent:PID` when `redio exec` stays as the application's parent
/// (`--survive` under MPICH).
pub const ENV_EXEC_PID: &str = "REDIO_EXEC_PID";

/// Exit code of `redio run` when every replica of a logical rank was lost.
pub const EXIT_RANK_LOST: u8 = 3;

/// Exit code of `redio run` when the replicas diverged and redio could
/// not correct it (every replica got `EIO`), and the application still
/// ended well; also the status of a job `on_mismatch: abort` ended.
pub const EXIT_DIVERGED: u8 = 75;

/// A process, by world rank and placement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Process {
    /// Rank in the real `MPI_COMM_WORLD`.
    pub world_rank: u32,
    /// Its replica.
    pub replica: u32,
    /// Its logical rank.
    pub rank: u32,
}

/// What happened to a process.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum Event {
    /// The survivors of this process's replica set failed over: they agreed
    /// that `failed` are dead and went on without them.
    FailOver {
        /// The processes found dead.
        failed: Vec<Process>,
        /// The coordinated operation in flight (its sequence number).
        seq: u64,
        /// Its call (`read`, `write`, `open`, …).
        operation: String,
        /// The file it was on.
        path: String,
        /// Whether this process ran the operation again.
        redone: bool,
        /// Replicas left in the set.
        degree: u32,
        /// Seconds from the start of the failed wait to the agreement.
        recovery_seconds: f64,
    },
    /// This process saw processes dead outside a coordinated operation
    /// (at `MPI_Finalize`) and finished without them.
    DeathSeen {
        /// The processes found dead.
        failed: Vec<Process>,
        /// Where (`MPI_Finalize`).
        at: String,
    },
    /// This process stopped because another process of its replica died:
    /// a replica is retired as a unit.
    Retired {
        /// The dead process of the same replica.
        because: Process,
    },
    /// A fault injected for a test killed this process on purpose.
    Injected {
        /// How it dies (`exit`, `segv`, `abort`, `kill`).
        how: String,
        /// The operation (sequence number) it dies in.
        seq: u64,
    },
    /// Every replica of a logical rank is gone: the job cannot complete.
    RankLost {
        /// The logical rank.
        lost_rank: u32,
    },
    /// This process reached `MPI_Finalize` (the application completed here).
    Finished,
    /// This process got through redio's start-up in `MPI_Init`: from now on
    /// its death can be survived.
    Started,
    /// The replicas of this process's logical rank disagreed (data or
    /// calls) with no majority to correct them: the operation failed with
    /// `EIO` on every replica.
    Diverged {
        /// The report, as logged.
        report: String,
    },
}

/// Bytes a process read from and wrote to shared files itself, so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bytes {
    /// Bytes read.
    pub bytes_read: u64,
    /// Bytes written.
    pub bytes_written: u64,
}

/// One line of an event file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// Seconds since the Unix epoch.
    pub time: f64,
    /// The process that wrote it.
    #[serde(flatten)]
    pub process: Process,
    /// Its I/O on shared files up to this event.
    #[serde(flatten, default)]
    pub bytes: Bytes,
    /// What happened.
    #[serde(flatten)]
    pub event: Event,
}

impl Record {
    /// The record as one JSON line (with the newline).
    pub fn to_line(&self) -> String {
        let mut line = serde_json::to_string(self).unwrap_or_default();
        line.push('\n');
        line
    }
}

/// Seconds since the Unix epoch.
pub fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Reads every event file of a run directory. Lines that do not parse (a
/// process killed in the middle of a write) are skipped.
pub fn read_dir(dir: &Path) -> Vec<Record> {
    let mut records = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return records;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !name.to_string_lossy().ends_with(".jsonl") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(entry.path()) else {
            continue;
        };
        records.extend(text.lines().filter_map(|l| serde_json::from_str(l).ok()));
    }
    records.sort_by(|a, b| a.time.total_cmp(&b.time));
    records
}

/// A line a process writes outside MPI, from its first to its last moment
/// (see the module documentation).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Life {
    /// Seconds since the Unix epoch, in microseconds.
    pub time_us: u64,
    /// Rank in the real `MPI_COMM_WORLD` (from the launcher's environment).
    pub world_rank: u32,
    /// Process id.
    pub pid: i32,
    /// What happened.
    #[serde(flatten)]
    pub event: LifeEvent,
}

impl Life {
    /// A line written now by process `pid` of world rank `world_rank`.
    pub fn now(world_rank: u32, pid: i32, event: LifeEvent) -> Life {
        let time_us = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_micros() as u64);
        Life {
            time_us,
            world_rank,
            pid,
            event,
        }
    }

    /// Appends the line to `rank-W.jsonl` in the run directory `dir`.
    pub fn append_to(&self, dir: &Path) -> std::io::Result<()> {
        use std::io::Write;
        let mut line = serde_json::to_string(self).map_err(std::io::Error::other)?;
        line.push('\n');
        // One write of a whole line, appended: lines of several writers
        // never interleave.
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join(format!("rank-{}.jsonl", self.world_rank)))?
            .write_all(line.as_bytes())
    }
}

/// What a [`Life`] line says.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum LifeEvent {
    /// libredio.so was loaded into the process.
    Spawned {
        /// Its host name.
        host: String,
    },
    /// The process ended with `status`.
    Exit {
        /// The exit status (`exit`'s argument, or 128 + signal).
        status: i32,
        /// Who decided it.
        how: ExitHow,
    },
}

/// Who ended a process that exited.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExitHow {
    /// The application (`exit`, `_exit`, a return from `main`).
    Exit,
    /// redio retired its replica.
    Retired,
    /// redio turned a fatal signal into an exit (status 128 + signal).
    Signal,
    /// redio stopped it because a logical rank lost every replica.
    RankLost,
}

impl ExitHow {
    /// The name used in [`ProcessEnd::end`].
    pub fn key(self) -> &'static str {
        match self {
            ExitHow::Exit => "exit",
            ExitHow::Retired => "retired",
            ExitHow::Signal => "signal",
            ExitHow::RankLost => "rank-lost",
        }
    }
}

/// Everything the processes of a run wrote in its run directory.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Run {
    /// Events, in time order.
    pub records: Vec<Record>,
    /// Life lines, in the order written.
    pub lives: Vec<Life>,
}

/// The exit a process recorded in its event file (`text`, the whole file):
/// its status and who decided it, or `None` when it recorded none (it was
/// killed by a signal, or is still running).
pub fn recorded_exit(text: &str) -> Option<(i32, ExitHow)> {
    text.lines()
        .filter_map(|l| serde_json::from_str::<Life>(l).ok())
        .find_map(|life| match life.event {
            LifeEvent::Exit { status, how } => Some((status, how)),
            LifeEvent::Spawned { .. } => None,
        })
}

/// Reads every event and life line of a run directory (lines that parse
/// as neither are skipped).
pub fn read_run(dir: &Path) -> Run {
    let mut lives = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            if !entry.file_name().to_string_lossy().ends_with(".jsonl") {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(entry.path()) else {
                continue;
            };
            lives.extend(
                text.lines()
                    .filter_map(|l| serde_json::from_str::<Life>(l).ok()),
            );
        }
    }
    lives.sort_by_key(|l| l.time_us);
    Run {
        records: read_dir(dir),
        lives,
    }
}
