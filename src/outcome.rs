//! The outcome of a replicated run with failures: the events processes
//! record, and the verdict `redio run` draws from them.
//!
//! The launchers cannot tell whether a job with a dead replica completed
//! (Open MPI's returns 0 even when ranks died; MPICH's returns the victim's
//! exit code even when the survivors finished). So every process of a job
//! started by `redio run` appends one [`Record`] per event, as a JSON line,
//! to `DIR/rank-W.jsonl` in the run directory, and `redio run` reads them
//! back ([`read_dir`]) and computes a [`Summary`] when the launcher returns.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// Environment variable: the run directory of the event files.
pub const ENV_RUN_DIR: &str = "REDIO_RUN_DIR";

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
            out.push_str(&format!(
                "  failed: world rank {} (replica {}, rank {}){}\n",
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

    #[test]
    fn a_rank_without_a_finished_replica_is_lost() {
        let records = vec![record(2.0, process(0, 0, 0), Event::Finished)];
        let summary = summarize(&records, 2);
        assert!(!summary.completed);
        assert_eq!(summary.unfinished_ranks, vec![1]);
    }
}
