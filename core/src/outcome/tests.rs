//! Tests of the records and the verdict.

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
    lives.extend((0..4).map(|w| exited(w, 10 + u64::from(w), i32::from(w == 0), ExitHow::Exit)));
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
fn a_replica_killed_after_finalize_is_a_survived_failure() {
    // World rank 3 reached MPI_Finalize and was SIGKILLed there; world
    // rank 1, the other replica of rank 1, exited: Hydra said 137.
    let mut lives: Vec<Life> = (0..4).map(spawned).collect();
    lives.extend((0..3).map(|w| exited(w, 10, 0, ExitHow::Exit)));
    let summary = judge_2x2(all_finished(), lives, Some(137));
    assert_eq!(summary.exit_code, 0, "{summary:#?}");
    assert!(summary.completed);
    assert_eq!(summary.failed.len(), 1);
    assert_eq!(summary.failed[0].process.world_rank, 3);
    assert_eq!(summary.failed[0].end.as_deref(), Some("killed"));
}

#[test]
fn a_rank_killed_after_finalize_everywhere_keeps_the_launcher_s_code() {
    // Both replicas of rank 1 were killed after MPI_Finalize: nobody of
    // that rank ended normally, so the death is not survived.
    let mut lives: Vec<Life> = (0..4).map(spawned).collect();
    lives.extend([0, 2].map(|w| exited(w, 10, 0, ExitHow::Exit)));
    let summary = judge_2x2(all_finished(), lives, Some(137));
    assert_eq!(summary.exit_code, 137, "{summary:#?}");
    assert!(summary.failed.is_empty());
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
    let line = r#"{"time_us":5,"world_rank":2,"pid":7,"event":"exit","status":1,"how":"retired"}"#;
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

#[test]
fn the_recorded_exit_is_found_among_the_other_lines_of_an_event_file() {
    // The lines exactly as libredio.so writes them (state/exits.rs and
    // state/report.rs), with an event record between them.
    let spawned = r#"{"time_us":1,"world_rank":3,"pid":77,"event":"spawned","host":"n1"}"#;
    let event = r#"{"time":2.0,"world_rank":3,"replica":1,"rank":1,"event":"started"}"#;
    let exit = r#"{"time_us":3,"world_rank":3,"pid":77,"event":"exit","status":1,"how":"exit"}"#;
    let file = format!("{spawned}\n{event}\n{exit}\n");
    assert_eq!(recorded_exit(&file), Some((1, ExitHow::Exit)));
    let retired = exit.replace(
        r#""status":1,"how":"exit""#,
        r#""status":0,"how":"retired""#,
    );
    assert_eq!(
        recorded_exit(&format!("{spawned}\n{retired}\n")),
        Some((0, ExitHow::Retired))
    );
    // Killed by a signal: no exit line, perhaps half a line.
    assert_eq!(
        recorded_exit(&format!("{spawned}\n{event}\n{{\"time_us\":4,")),
        None
    );
}

#[test]
fn an_uncorrected_divergence_fails_a_run_that_ended_well() {
    let mut records = all_finished();
    for w in [0, 2] {
        let report = "rank 0 write(/s/out, offset 0, 100 bytes): replicas disagree".to_string();
        records.push(record(
            1.5,
            process(w, w / 2, 0),
            Event::Diverged { report },
        ));
    }
    let lives: Vec<Life> = (0..4)
        .map(spawned)
        .chain((0..4).map(|w| exited(w, 10, 0, ExitHow::Exit)))
        .collect();
    let summary = judge_2x2(records, lives, Some(0));
    assert_eq!(summary.exit_code, 0, "judge alone keeps the old code");
    assert_eq!(summary.divergences.len(), 2);
    let mut warned = summary.clone();
    judge_divergences(&mut warned, false);
    assert_eq!(warned.exit_code, 0);
    let mut failed = summary;
    judge_divergences(&mut failed, true);
    assert_eq!(failed.exit_code, EXIT_DIVERGED);
}

#[test]
fn a_divergence_leaves_another_failure_s_code() {
    let mut summary = judge_2x2(all_finished(), Vec::new(), Some(0));
    summary.exit_code = 5;
    summary.divergences.push(DivergenceReport {
        process: process(0, 0, 0),
        time: 1.0,
        report: "r".into(),
    });
    judge_divergences(&mut summary, true);
    assert_eq!(summary.exit_code, 5);
}

#[test]
fn life_lines_appended_by_redio_exec_read_back() {
    let dir = std::env::temp_dir().join(format!("redio-life-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let host = "h".to_string();
    Life::now(3, 42, LifeEvent::Spawned { host })
        .append_to(&dir)
        .unwrap();
    let how = ExitHow::Exit;
    let exit = LifeEvent::Exit { status: 127, how };
    Life::now(3, 42, exit.clone()).append_to(&dir).unwrap();
    let run = read_run(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(run.lives.len(), 2);
    assert!(run.lives.iter().all(|l| l.world_rank == 3 && l.pid == 42));
    assert_eq!(run.lives[1].event, exit);
}
