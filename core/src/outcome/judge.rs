//! The verdict `redio run` draws from the records: its exit code and
//! the summary of failures and fail-overs.

use super::records::*;
use serde::Serialize;
use std::collections::BTreeMap;

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
    /// `redio run` stopped the launcher itself (a death during start-up,
    /// a launcher that outlived its job), or the launcher died by a signal
    /// after every process had exited on its own: a signal that ended the
    /// launcher is then not a cause of its own.
    pub stopped_launcher: bool,
    /// World ranks `redio run` killed itself (during start-up, or still
    /// running after the launcher ended).
    pub killed: Vec<u32>,
}

/// Replicas killed by a signal after they reached `MPI_Finalize`, while
/// another replica of their logical rank finished and exited: deaths the
/// job survived (a job that survives deaths leaves without the real
/// `PMPI_Finalize`, so a SIGKILL there no longer hangs it). Without such
/// a partner the death is the application's, as under plain `mpiexec`,
/// and the launcher's code stands.
fn killed_after_finalize_and_survived(summary: &Summary) -> Vec<Failure> {
    let killed =
        |p: &ProcessEnd| p.finished && (p.end == "killed" || p.end == ExitHow::Signal.key());
    let exited = |p: &ProcessEnd| p.finished && p.end == ExitHow::Exit.key();
    summary
        .processes
        .iter()
        .filter(|p| killed(p))
        .filter(|p| !summary.failed.iter().any(|f| f.process == p.process))
        .filter(|p| {
            summary
                .processes
                .iter()
                .any(|q| q.process.rank == p.process.rank && exited(q))
        })
        .map(|p| Failure {
            process: p.process,
            reported: now(),
            seq: None,
            end: Some(p.end.clone()),
            status: p.status,
        })
        .collect()
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
    summary
        .failed
        .extend(killed_after_finalize_and_survived(&summary));
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
    /// Divergences of file I/O redio detected and could not correct, as
    /// each replica reported them (every replica got `EIO`).
    pub divergences: Vec<DivergenceReport>,
    /// Replicas whose stdout differs from their logical rank's reference
    /// replica (`crate::output::find_divergences`; filled by `redio run`).
    pub output_divergences: Vec<crate::output::Divergence>,
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
    /// Its process id, when it reached libredio.so (or `redio exec`
    /// recorded it: a program that could not start, or that ended before
    /// the library loaded).
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

/// An uncorrected divergence, as one replica reported it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DivergenceReport {
    /// The reporting replica.
    #[serde(flatten)]
    pub process: Process,
    /// When (seconds since the epoch).
    pub time: f64,
    /// What disagreed ([`Event::Diverged`]).
    pub report: String,
}

/// Makes an uncorrected divergence fail a run that would otherwise exit 0
/// (when `fail`, the default of `redio run`): the application may have
/// ignored the `EIO`, but its results cannot be trusted. Any other
/// non-zero code already says the run failed, and stands.
pub fn judge_divergences(summary: &mut Summary, fail: bool) {
    if fail && summary.exit_code == 0 && !summary.divergences.is_empty() {
        summary.exit_code = EXIT_DIVERGED;
    }
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
    let mut divergences = Vec::new();
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
            Event::Diverged { report } => divergences.push(DivergenceReport {
                process: record.process,
                time: record.time,
                report: report.clone(),
            }),
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
        divergences,
        output_divergences: Vec::new(),
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
