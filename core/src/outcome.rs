//! The outcome of a replicated run with failures: the events processes
//! record, and the verdict `redio run` draws from them.
//!
//! The launchers cannot tell whether a job with a dead replica completed
//! (Open MPI's returns 0 even when ranks died; MPICH's returns the victim's
//! exit code even when the survivors finished). So every process of a job
//! started by `redio run` appends one [`Record`] per event, as a JSON line,
//! to `DIR/rank-W.jsonl` in the run directory, and `redio run` reads them
//! back ([`read_dir`]) and computes a [`Summary`] when the launcher returns.
//!
//! Besides those events, every process started through `redio exec` writes
//! two [`Life`] lines to the same file, from outside MPI: `spawned` when
//! libredio.so is loaded (its process id and host) and `exit` when it ends
//! (its exit status, and whether the exit was the application's or one of
//! redio's own). A process that leaves no `exit` line was killed by a
//! signal. [`judge`] draws the exit code of `redio run` from both
//! (docs/fault-tolerance.md, "The outcome").

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
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

/// The shape of the job `redio run` launched.
pub struct Shape<'a> {
    /// Logical ranks.
    pub ranks: u32,
    /// Processes (ranks × degree).
    pub processes: u32,
    /// The placement of a world rank (used for processes that recorded no
    /// event with their own).
    pub place: &'a dyn Fn(u32) -> Process,
}

/// What `redio run` saw besides the run directory.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Seen {
    /// How the launcher ended.
    pub launcher: LauncherEnd,
    /// Why `redio run` ended the job early, if it did.
    pub interrupted: Option<String>,
    /// The signal `redio run` itself received, if any.
    pub signal: Option<i32>,
    /// `redio run` stopped the launcher itself (a death during start-up):
    /// a signal that then ended the launcher is not a cause of its own.
    pub stopped_launcher: bool,
    /// World ranks `redio run` killed itself (during start-up, or still
    /// running after the launcher ended).
    pub killed: Vec<u32>,
}

/// The verdict on a run: the [`Summary`] of the events ([`summarize`]),
/// completed with how every process ended and the exit code.
///
/// - A process is *failed* (dead) when it ended without reaching
///   `MPI_Finalize` and without being retired: killed by a signal (no exit
///   line), a fatal signal turned into an exit, or an exit in the middle of
///   an MPI job; or when survivors found it dead.
/// - The exit code: `128 + signal` when `redio run` or the launcher was
///   killed; else the first non-zero status a process exited with on its
///   own (the application's failure, as plain `mpiexec` reports it); else
///   [`EXIT_RANK_LOST`] when a logical rank did not finish; else the
///   launcher's code when no process was seen at all; else 0.
pub fn judge(run: &Run, shape: &Shape, seen: &Seen) -> Summary {
    let mut summary = summarize(&run.records, shape.ranks);
    // Any process that got through MPI_Init makes this an MPI job: its
    // processes must reach MPI_Finalize.
    let mpi_job = run
        .records
        .iter()
        .any(|r| matches!(r.event, Event::Started | Event::Finished));
    let has = |w: u32, f: &dyn Fn(&Event) -> bool| {
        run.records
            .iter()
            .any(|r| r.process.world_rank == w && f(&r.event))
    };
    let mut non_zero: Vec<(u64, ProcessEnd)> = Vec::new();
    for w in 0..shape.processes {
        let process = run
            .records
            .iter()
            .find(|r| r.process.world_rank == w)
            .map_or_else(|| (shape.place)(w), |r| r.process);
        let mine = || run.lives.iter().filter(move |l| l.world_rank == w);
        let pid = mine().map(|l| l.pid).next_back();
        let exit = mine()
            .filter_map(|l| match l.event {
                LifeEvent::Exit { status, how } => Some((l.time_us, status, how)),
                LifeEvent::Spawned { .. } => None,
            })
            .next_back();
        let started = has(w, &|e| *e == Event::Started);
        let finished = has(w, &|e| *e == Event::Finished);
        let retired = has(w, &|e| matches!(e, Event::Retired { .. }));
        let injected = has(w, &|e| matches!(e, Event::Injected { .. }));
        let end = match (exit, pid) {
            (Some((_, _, how)), _) => how.key(),
            (None, Some(_)) => "killed",
            (None, None) => "unseen",
        };
        let dead = !finished
            && !retired
            && match exit {
                None => pid.is_some(),
                Some((_, _, ExitHow::Signal)) => true,
                Some((_, status, ExitHow::Exit)) => mpi_job || status != 0,
                Some((_, _, ExitHow::Retired | ExitHow::RankLost)) => false,
            };
        if dead && !summary.failed.iter().any(|f| f.process.world_rank == w) {
            summary.failed.push(Failure {
                process,
                // A kill leaves no time: the verdict's is when it was seen.
                reported: exit.map_or_else(now, |(t, _, _)| t as f64 / 1e6),
                seq: None,
                end: None,
                status: None,
            });
        }
        if let Some(failure) = summary
            .failed
            .iter_mut()
            .find(|f| f.process.world_rank == w)
        {
            failure.end = Some(end.to_string());
            failure.status = exit.map(|(_, status, _)| status);
        }
        let end = ProcessEnd {
            process,
            pid,
            started,
            finished,
            end: end.to_string(),
            status: exit.map(|(_, status, _)| status),
        };
        if let Some((time, status, ExitHow::Exit)) = exit {
            if status & 0xff != 0 && !injected {
                non_zero.push((time, end.clone()));
            }
        }
        summary.processes.push(end);
    }
    summary.failed.sort_by_key(|f| f.process.world_rank);
    non_zero.sort_by_key(|(time, _)| *time);
    summary.exited_non_zero = non_zero.into_iter().map(|(_, end)| end).collect();
    if !mpi_job {
        // Not an MPI program (or none got through MPI_Init): complete when
        // every process exited on its own with 0.
        summary.completed = summary
            .processes
            .iter()
            .all(|p| p.end == "exit" && p.status == Some(0));
    }
    summary.launcher = seen.launcher;
    summary.killed_by_redio_run = seen.killed.clone();
    summary.interrupted = seen.interrupted.clone();
    let seen_any = summary.processes.iter().any(|p| p.pid.is_some());
    let launcher_killed = seen.launcher.signal.filter(|_| !seen.stopped_launcher);
    let killed_by = seen.signal.or(launcher_killed);
    summary.exit_code = if let Some(signal) = killed_by {
        (128 + signal).clamp(1, 255) as u8
    } else if let Some(first) = summary.exited_non_zero.first() {
        (first.status.unwrap_or(1) & 0xff) as u8
    } else if !seen_any {
        seen.launcher.code.unwrap_or(1).clamp(0, 255) as u8
    } else if !summary.completed || seen.interrupted.is_some() {
        EXIT_RANK_LOST
    } else if !summary.had_failures() {
        // No failure: the launcher's code is the application's too (a
        // non-zero one here means something redio did not see).
        seen.launcher.code.unwrap_or(0).clamp(0, 255) as u8
    } else {
        0
    };
    summary
}

/// The verdict on a run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// True when every logical rank finished on at least one replica.
    pub completed: bool,
    /// Logical ranks all of whose replicas failed (the cause of an
    /// incomplete run).
    pub lost_ranks: Vec<u32>,
    /// Logical ranks no replica finished.
    pub unfinished_ranks: Vec<u32>,
    /// Processes that died (found dead by a survivor, or killed by an
    /// injected fault), with the time they were first reported.
    pub failed: Vec<Failure>,
    /// Processes retired because their replica lost a process.
    pub retired: Vec<Process>,
    /// Processes that finished.
    pub finished: u32,
    /// Every fail-over, in time order.
    pub fail_overs: Vec<FailOverReport>,
    /// Bytes the processes read from and wrote to the shared file system,
    /// as of their last event (a process killed without a last word is
    /// counted up to its previous event).
    pub bytes: Bytes,
    /// The exit code `redio run` returns ([`judge`]).
    pub exit_code: u8,
    /// How the launcher (`mpiexec`) ended.
    pub launcher: LauncherEnd,
    /// Why the job was ended before it could finish on its own (a death
    /// during start-up, a signal to `redio run` or to the launcher).
    pub interrupted: Option<String>,
    /// Processes that exited with a non-zero status on their own (the
    /// application's failure, not a death redio caused or injected).
    pub exited_non_zero: Vec<ProcessEnd>,
    /// How every process of the job ended, by world rank.
    pub processes: Vec<ProcessEnd>,
    /// World ranks `redio run` killed itself: during start-up, or because
    /// they still ran after the launcher had ended.
    pub killed_by_redio_run: Vec<u32>,
}

/// How the launcher process ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LauncherEnd {
    /// Its exit code, when it exited.
    pub code: Option<i32>,
    /// The signal that killed it, when one did.
    pub signal: Option<i32>,
}

/// How one process ended, in the [`Summary`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ProcessEnd {
    /// The process.
    #[serde(flatten)]
    pub process: Process,
    /// Its process id, when it reached libredio.so.
    pub pid: Option<i32>,
    /// It got through redio's start-up in `MPI_Init`.
    pub started: bool,
    /// It reached `MPI_Finalize`.
    pub finished: bool,
    /// How it ended: `exit` (on its own), `retired`, `signal` (a fatal
    /// signal that redio turned into an exit), `rank-lost`, `killed` (no
    /// exit recorded: a signal ended it), `unseen` (it never reached
    /// libredio.so).
    pub end: String,
    /// Its exit status, when it exited.
    pub status: Option<i32>,
}

/// A dead process in the [`Summary`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Failure {
    /// The process.
    #[serde(flatten)]
    pub process: Process,
    /// When it was first reported dead (seconds since the epoch).
    pub reported: f64,
    /// The operation (sequence number) it died in, when known.
    pub seq: Option<u64>,
    /// How it ended, when its exit was recorded or missed
    /// ([`ProcessEnd::end`]; set by [`judge`]).
    pub end: Option<String>,
    /// Its exit status, when it exited.
    pub status: Option<i32>,
}

/// One fail-over, as a survivor reported it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FailOverReport {
    /// The survivor.
    #[serde(flatten)]
    pub survivor: Process,
    /// When (seconds since the epoch).
    pub time: f64,
    /// The [`Event::FailOver`] fields.
    pub failed: Vec<u32>,
    /// Sequence number of the operation in flight.
    pub seq: u64,
    /// Its call.
    pub operation: String,
    /// Its file.
    pub path: String,
    /// Whether the survivor ran it again.
    pub redone: bool,
    /// Replicas left.
    pub degree: u32,
    /// Detection and agreement time in seconds.
    pub recovery_seconds: f64,
}

/// Draws the verdict from the records of a job of `ranks` logical ranks.
pub fn summarize(records: &[Record], ranks: u32) -> Summary {
    let mut failed: BTreeMap<u32, Failure> = BTreeMap::new();
    let mut retired = Vec::new();
    let mut finished_ranks = vec![false; ranks as usize];
    let mut finished = 0;
    let mut fail_overs = Vec::new();
    let mut lost = std::collections::BTreeSet::new();
    let mut note_failed = |process: Process, time: f64, seq: Option<u64>| {
        let entry = failed.entry(process.world_rank).or_insert(Failure {
            process,
            reported: time,
            seq,
            end: None,
            status: None,
        });
        entry.reported = entry.reported.min(time);
        entry.seq = entry.seq.or(seq);
    };
    for record in records {
        match &record.event {
            Event::FailOver {
                failed: dead,
                seq,
                operation,
                path,
                redone,
                degree,
                recovery_seconds,
            } => {
                for &process in dead {
                    note_failed(process, record.time, None);
                }
                fail_overs.push(FailOverReport {
                    survivor: record.process,
                    time: record.time,
                    failed: dead.iter().map(|p| p.world_rank).collect(),
                    seq: *seq,
                    operation: operation.clone(),
                    path: path.clone(),
                    redone: *redone,
                    degree: *degree,
                    recovery_seconds: *recovery_seconds,
                });
            }
            Event::Injected { seq, .. } => note_failed(record.process, record.time, Some(*seq)),
            Event::DeathSeen { failed: dead, .. } => {
                for &process in dead {
                    note_failed(process, record.time, None);
                }
            }
            Event::Retired { .. } => retired.push(record.process),
            Event::RankLost { lost_rank } => {
                lost.insert(*lost_rank);
            }
            Event::Started => {}
            Event::Finished => {
                finished += 1;
                if let Some(slot) = finished_ranks.get_mut(record.process.rank as usize) {
                    *slot = true;
                }
            }
        }
    }
    // A process that retired or finished did not fail, even if a survivor
    // saw it go.
    for process in &retired {
        failed.remove(&process.world_rank);
    }
    for record in records {
        if record.event == Event::Finished {
            failed.remove(&record.process.world_rank);
        }
    }
    let mut last: BTreeMap<u32, Bytes> = BTreeMap::new();
    for record in records {
        last.insert(record.process.world_rank, record.bytes);
    }
    let bytes = last.values().fold(Bytes::default(), |sum, b| Bytes {
        bytes_read: sum.bytes_read + b.bytes_read,
        bytes_written: sum.bytes_written + b.bytes_written,
    });
    let unfinished_ranks: Vec<u32> = (0..ranks)
        .filter(|&r| !finished_ranks[r as usize])
        .collect();
    Summary {
        completed: unfinished_ranks.is_empty(),
        lost_ranks: lost.into_iter().collect(),
        unfinished_ranks,
        failed: failed.into_values().collect(),
        retired,
        finished,
        fail_overs,
        bytes,
        exit_code: 0,
        launcher: LauncherEnd::default(),
        interrupted: None,
        exited_non_zero: Vec::new(),
        processes: Vec::new(),
        killed_by_redio_run: Vec::new(),
    }
}

impl Summary {
    /// True when anything went wrong during the run.
    pub fn had_failures(&self) -> bool {
        !self.failed.is_empty() || !self.retired.is_empty() || !self.fail_overs.is_empty()
    }

    /// A few human-readable lines.
    pub fn describe(&self) -> String {
        let mut out = String::new();
        for f in &self.failed {
            let how = match (f.end.as_deref(), f.status) {
                (Some("killed"), _) => ": killed by a signal".to_string(),
                (Some("signal"), Some(status)) => format!(
                    ": fatal signal {} (turned into exit status {status})",
                    status - 128
                ),
                (Some("exit"), Some(status)) => {
                    format!(": exited with status {status} without reaching MPI_Finalize")
                }
                _ => String::new(),
            };
            out.push_str(&format!(
                "  failed: world rank {} (replica {}, rank {}){}{how}\n",
                f.process.world_rank,
                f.process.replica,
                f.process.rank,
                f.seq
                    .map(|s| format!(" in coordinated operation {s}"))
                    .unwrap_or_default()
            ));
        }
        if !self.retired.is_empty() {
            let list: Vec<String> = self
                .retired
                .iter()
                .map(|p| format!("{} (replica {})", p.world_rank, p.replica))
                .collect();
            out.push_str(&format!("  retired: world ranks {}\n", list.join(", ")));
        }
        for f in &self.fail_overs {
            out.push_str(&format!(
                "  fail-over: world rank {} went on with {} replica(s) after operation {} \
                 ({} {}){} in {:.2} s\n",
                f.survivor.world_rank,
                f.degree,
                f.seq,
                f.operation,
                f.path,
                if f.redone { ", redone" } else { "" },
                f.recovery_seconds
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn process(world_rank: u32, replica: u32, rank: u32) -> Process {
        Process {
            world_rank,
            replica,
            rank,
        }
    }

    fn record(time: f64, p: Process, event: Event) -> Record {
        Record {
            time,
            process: p,
            bytes: Bytes::default(),
            event,
        }
    }

    #[test]
    fn records_round_trip_as_json_lines() {
        let r = record(
            1.5,
            process(2, 0, 1),
            Event::FailOver {
                failed: vec![process(3, 1, 1)],
                seq: 7,
                operation: "write".into(),
                path: "/s/out".into(),
                redone: true,
                degree: 1,
                recovery_seconds: 0.25,
            },
        );
        let line = r.to_line();
        assert!(line.ends_with('\n') && line.contains("\"event\":\"fail-over\""));
        assert_eq!(serde_json::from_str::<Record>(line.trim()).unwrap(), r);
    }

    #[test]
    fn a_job_completes_when_every_rank_finished_somewhere() {
        // 2 ranks x 2 replicas; replica 1 of rank 0 died, rank 1 of replica 1 retired.
        let records = vec![
            record(
                1.0,
                process(0, 0, 0),
                Event::FailOver {
                    failed: vec![process(2, 1, 0)],
                    seq: 3,
                    operation: "read".into(),
                    path: "f".into(),
                    redone: true,
                    degree: 1,
                    recovery_seconds: 0.1,
                },
            ),
            record(
                1.1,
                process(3, 1, 1),
                Event::Retired {
                    because: process(2, 1, 0),
                },
            ),
            record(2.0, process(0, 0, 0), Event::Finished),
            record(2.0, process(1, 0, 1), Event::Finished),
        ];
        let summary = summarize(&records, 2);
        assert!(summary.completed && summary.had_failures());
        assert_eq!(summary.failed.len(), 1);
        assert_eq!(summary.failed[0].process.world_rank, 2);
        assert_eq!(summary.retired, vec![process(3, 1, 1)]);
        assert!(summary.describe().contains("failed: world rank 2"));
    }

    fn life(w: u32, time_us: u64, event: LifeEvent) -> Life {
        Life {
            time_us,
            world_rank: w,
            pid: 100 + w as i32,
            event,
        }
    }

    fn spawned(w: u32) -> Life {
        life(w, 1, LifeEvent::Spawned { host: "h".into() })
    }

    fn exited(w: u32, time_us: u64, status: i32, how: ExitHow) -> Life {
        life(w, time_us, LifeEvent::Exit { status, how })
    }

    /// 2 ranks x 2 replicas, block layout.
    fn judge_2x2(records: Vec<Record>, lives: Vec<Life>, launcher: Option<i32>) -> Summary {
        let place = |w: u32| process(w, w / 2, w % 2);
        judge(
            &Run { records, lives },
            &Shape {
                ranks: 2,
                processes: 4,
                place: &place,
            },
            &Seen {
                launcher: LauncherEnd {
                    code: launcher,
                    signal: None,
                },
                ..Seen::default()
            },
        )
    }

    /// Every process of a 2x2 job started and finished.
    fn all_finished() -> Vec<Record> {
        let mut records = Vec::new();
        for w in 0..4 {
            records.push(record(1.0, process(w, w / 2, w % 2), Event::Started));
            records.push(record(2.0, process(w, w / 2, w % 2), Event::Finished));
        }
        records
    }

    #[test]
    fn a_non_zero_exit_after_finalize_is_the_application_s_status() {
        let mut lives: Vec<Life> = (0..4).map(spawned).collect();
        lives
            .extend((0..4).map(|w| exited(w, 10 + u64::from(w), i32::from(w == 0), ExitHow::Exit)));
        // The launcher said 0 (Open MPI 4.1 with --enable-recovery).
        let summary = judge_2x2(all_finished(), lives, Some(0));
        assert_eq!(summary.exit_code, 1);
        assert!(summary.completed && summary.failed.is_empty());
        assert_eq!(summary.exited_non_zero.len(), 1);
        assert_eq!(summary.exited_non_zero[0].process.world_rank, 0);
        assert_eq!(summary.processes[0].status, Some(1));
    }

    #[test]
    fn a_killed_process_is_failed_and_the_survivors_decide() {
        let mut records = all_finished();
        records.retain(|r| !(r.process.world_rank == 3 && r.event == Event::Finished));
        let mut lives: Vec<Life> = (0..4).map(spawned).collect();
        lives.extend((0..3).map(|w| exited(w, 10, 0, ExitHow::Exit)));
        let summary = judge_2x2(records, lives, Some(9));
        assert_eq!(summary.exit_code, 0, "{summary:#?}");
        assert_eq!(summary.failed.len(), 1);
        assert_eq!(summary.failed[0].process.world_rank, 3);
        assert_eq!(summary.processes[3].end, "killed");
    }

    #[test]
    fn returning_without_finalize_does_not_complete() {
        let records: Vec<Record> = (0..4)
            .map(|w| record(1.0, process(w, w / 2, w % 2), Event::Started))
            .collect();
        let mut lives: Vec<Life> = (0..4).map(spawned).collect();
        lives.extend((0..4).map(|w| exited(w, 10, 0, ExitHow::Exit)));
        let summary = judge_2x2(records, lives, Some(0));
        assert!(!summary.completed);
        assert_eq!(summary.exit_code, EXIT_RANK_LOST);
        assert_eq!(summary.failed.len(), 4);
    }

    #[test]
    fn a_crash_on_every_replica_of_a_rank_is_failed_and_lost() {
        let mut records = all_finished();
        records.retain(|r| r.process.rank != 1 || r.event == Event::Started);
        let mut lives: Vec<Life> = (0..4).map(spawned).collect();
        lives.push(exited(1, 10, 128 + 11, ExitHow::Signal));
        lives.extend([0, 2].map(|w| exited(w, 10, 0, ExitHow::Exit)));
        let summary = judge_2x2(records, lives, Some(0));
        let failed: Vec<u32> = summary
            .failed
            .iter()
            .map(|f| f.process.world_rank)
            .collect();
        assert_eq!(failed, [1, 3]);
        assert_eq!(summary.unfinished_ranks, [1]);
        assert_eq!(summary.exit_code, EXIT_RANK_LOST);
        assert!(
            summary.exited_non_zero.is_empty(),
            "a signal is not the application's status"
        );
    }

    #[test]
    fn a_program_that_dies_before_mpi_init_everywhere_gives_its_status() {
        let mut lives: Vec<Life> = (0..4).map(spawned).collect();
        lives.extend((0..4).map(|w| exited(w, 10 + u64::from(w), 1, ExitHow::Exit)));
        let summary = judge_2x2(Vec::new(), lives, Some(0));
        assert_eq!(summary.exit_code, 1);
        assert!(!summary.completed);
        assert_eq!(summary.exited_non_zero.len(), 4);
    }

    #[test]
    fn the_launcher_s_code_stands_when_no_process_was_seen() {
        let summary = judge_2x2(Vec::new(), Vec::new(), Some(127));
        assert_eq!(summary.exit_code, 127);
        assert!(summary.failed.is_empty());
        assert!(summary.processes.iter().all(|p| p.end == "unseen"));
    }

    #[test]
    fn a_killed_launcher_gives_128_plus_the_signal() {
        let place = |w: u32| process(w, w / 2, w % 2);
        let summary = judge(
            &Run {
                records: Vec::new(),
                lives: (0..4).map(spawned).collect(),
            },
            &Shape {
                ranks: 2,
                processes: 4,
                place: &place,
            },
            &Seen {
                launcher: LauncherEnd {
                    code: None,
                    signal: Some(9),
                },
                interrupted: Some("killed".into()),
                signal: None,
                stopped_launcher: false,
                killed: Vec::new(),
            },
        );
        assert_eq!(summary.exit_code, 137);
        assert_eq!(summary.failed.len(), 4);
    }

    #[test]
    fn a_launcher_redio_run_stopped_itself_is_not_a_cause() {
        // World rank 0 exited with 7 during start-up; redio run ended the
        // job and its SIGTERM killed the launcher.
        let place = |w: u32| process(w, w / 2, w % 2);
        let mut lives: Vec<Life> = (0..4).map(spawned).collect();
        lives.push(exited(0, 10, 7, ExitHow::Exit));
        let summary = judge(
            &Run {
                records: Vec::new(),
                lives,
            },
            &Shape {
                ranks: 2,
                processes: 4,
                place: &place,
            },
            &Seen {
                launcher: LauncherEnd {
                    code: None,
                    signal: Some(15),
                },
                interrupted: Some("start-up".into()),
                signal: None,
                stopped_launcher: true,
                killed: vec![1, 2, 3],
            },
        );
        assert_eq!(summary.exit_code, 7);
    }

    #[test]
    fn life_lines_are_not_events_and_events_are_not_life_lines() {
        let line =
            r#"{"time_us":5,"world_rank":2,"pid":7,"event":"exit","status":1,"how":"retired"}"#;
        assert_eq!(
            serde_json::from_str::<Life>(line).unwrap(),
            exited(2, 5, 1, ExitHow::Retired).with_pid(7)
        );
        assert!(serde_json::from_str::<Record>(line).is_err());
        let event = record(1.0, process(0, 0, 0), Event::Started).to_line();
        assert!(serde_json::from_str::<Life>(event.trim()).is_err());
    }

    impl Life {
        fn with_pid(mut self, pid: i32) -> Life {
            self.pid = pid;
            self
        }
    }

    #[test]
    fn a_rank_without_a_finished_replica_is_lost() {
        let records = vec![record(2.0, process(0, 0, 0), Event::Finished)];
        let summary = summarize(&records, 2);
        assert!(!summary.completed);
        assert_eq!(summary.unfinished_ranks, vec![1]);
    }
}
