//! `redio run` watching its launcher until the job ends.
//!
//! Three things the launcher does not do on its own, each measured
//! (docs/fault-tolerance.md, "The outcome"):
//!
//! - **A death during start-up.** Before every process got through redio's
//!   start-up in `MPI_Init`, the replica mapping does not exist and a death
//!   cannot be survived. Under `--enable-recovery` Open MPI 4.1 then waits
//!   forever (the survivors sleep in `MPI_Init`'s fence for the dead one).
//!   So while some process has not started, the watch looks for processes
//!   of this node that are gone before they started themselves, and ends
//!   the job when one is.
//! - **Signals to `redio run`** (`SIGTERM`, `SIGINT`, `SIGHUP`) go on to the
//!   launcher, which stops every process; `SIGKILL` of `redio run` reaches
//!   the launcher as `SIGTERM` (`PR_SET_PDEATHSIG`).
//! - **A launcher that outlives its job.** Open MPI 4.1's `mpirun
//!   --enable-recovery` never exits when a SIGKILLed process was the child
//!   of an `orted` that has other processes (two emulated Slurm nodes,
//!   docs/slurm.md), although every survivor finished. Once every process
//!   of the run has ended, the launcher gets [`GRACE`] to exit, then is
//!   stopped; the verdict comes from the run directory as always.
//! - **Orphans.** Open MPI 5's `mpirun` killed by `SIGKILL` leaves its
//!   processes running, and after a non-zero exit it was seen to exit
//!   while a survivor still worked: once the launcher has ended, processes
//!   of the run still alive on this node get [`GRACE`] to end on their
//!   own (when the launcher exited by itself), then are killed.
//!
//! Processes are known from the `spawned` lines they write in the run
//! directory ([`outcome::LifeEvent::Spawned`]), or `redio exec` writes for
//! them when they end before libredio.so is loaded
//! ([`super::exec_life`]); one is alive while
//! `/proc/PID` exists, is not a zombie and its environment names this run
//! directory (so a reused process id is never mistaken for it).

use crate::outcome::{self, LauncherEnd, LifeEvent, Seen};
use std::collections::BTreeSet;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, Command};
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

/// How long the launcher may take to end after it was told to stop,
/// before it is killed.
const GRACE: Duration = Duration::from_secs(10);
/// Period of the watch.
const PERIOD: Duration = Duration::from_millis(100);
/// Period of the check that every process has ended (it reads the run
/// directory, so less often than the launcher's status).
const ENDED_PERIOD: Duration = Duration::from_secs(1);

/// The last signal `redio run` received (0: none).
static RECEIVED: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(signal: i32) {
    RECEIVED.store(signal, Ordering::SeqCst);
}

/// What to watch.
pub struct Watch<'a> {
    /// The run directory.
    pub run_dir: &'a Path,
    /// Processes of the job.
    pub processes: u32,
    /// Whether to end the job on a death during start-up (built-in
    /// replication: the mapping exists once every process has started).
    pub startup: bool,
}

/// Makes the launcher get `SIGTERM` when `redio run` dies (even by
/// `SIGKILL`), and catches the signals that should stop the job.
pub fn prepare(command: &mut Command) {
    // SAFETY: prctl and getppid are async-signal-safe; nothing else runs
    // between fork and exec.
    unsafe {
        let parent = libc::getpid();
        command.pre_exec(move || {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            if libc::getppid() != parent {
                // redio run died before the prctl: do not run orphaned.
                libc::_exit(128 + libc::SIGTERM);
            }
            Ok(())
        });
        for signal in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as extern "C" fn(i32) as usize;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}

/// Waits for the launcher, acting as the module documentation says;
/// returns what `redio run` saw.
pub fn supervise(mut child: Child, watch: &Watch) -> Seen {
    let mut seen = Seen::default();
    let mut startup = watch.startup && watch.processes > 1;
    let mut kill_at: Option<Instant> = None;
    let mut next_ended_check = Instant::now() + ENDED_PERIOD;
    // When every process of the run was first seen ended.
    let mut job_ended_at: Option<Instant> = None;
    let launcher = child.id() as i32;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) => {}
            Err(_) => break None,
        }
        let signal = RECEIVED.swap(0, Ordering::SeqCst);
        if signal != 0 {
            // SAFETY: signalling our own child.
            unsafe { libc::kill(launcher, signal) };
            seen.signal.get_or_insert(signal);
            seen.interrupted.get_or_insert_with(|| {
                format!("redio run received signal {signal}: the job was stopped")
            });
            kill_at.get_or_insert_with(|| Instant::now() + GRACE);
        }
        if startup {
            match startup_death(watch) {
                Startup::Pending => {}
                Startup::Done => startup = false,
                Startup::Died(message) => {
                    startup = false;
                    eprintln!("redio run: error: {message}");
                    seen.interrupted = Some(message);
                    seen.stopped_launcher = true;
                    seen.killed.extend(kill_processes(watch.run_dir));
                    // SAFETY: signalling our own child.
                    unsafe { libc::kill(launcher, libc::SIGTERM) };
                    kill_at.get_or_insert_with(|| Instant::now() + GRACE);
                }
            }
        }
        if !startup && kill_at.is_none() && Instant::now() >= next_ended_check {
            next_ended_check = Instant::now() + ENDED_PERIOD;
            if !every_process_ended(watch) {
                job_ended_at = None;
            } else if job_ended_at.get_or_insert_with(Instant::now).elapsed() >= GRACE {
                eprintln!(
                    "redio run: every process of the job has ended, and the launcher had not \
                     exited {} s later: stopped",
                    GRACE.as_secs()
                );
                seen.stopped_launcher = true;
                // SAFETY: signalling our own child.
                unsafe { libc::kill(launcher, libc::SIGTERM) };
                kill_at = Some(Instant::now() + GRACE);
            }
        }
        if kill_at.is_some_and(|at| Instant::now() >= at) {
            let _ = child.kill();
            kill_at = None;
        }
        std::thread::sleep(PERIOD);
    };
    seen.launcher = match status {
        Some(status) => LauncherEnd {
            code: status.code(),
            signal: status.signal(),
        },
        None => LauncherEnd::default(),
    };
    // A launcher killed by a signal after every process of its job had
    // exited on its own did not end the job: MPICH's mpiexec was seen to
    // die of SIGPIPE, writing to processes that had all exited with 127
    // (a program that cannot run), and their statuses are the outcome.
    if seen.launcher.signal.is_some() && !seen.stopped_launcher && every_process_exited(watch) {
        seen.stopped_launcher = true;
    }
    if let Some(signal) = seen.launcher.signal.filter(|_| !seen.stopped_launcher) {
        seen.interrupted.get_or_insert_with(|| {
            format!("the launcher was killed by signal {signal}: its processes were stopped")
        });
    }
    // A launcher that exited on its own may leave processes that are still
    // finishing their work: Open MPI 5's mpirun was seen to exit (code 1,
    // after a process exited with 1) while a survivor still ran its last
    // operations. They get GRACE to end by themselves.
    if seen.interrupted.is_none() && seen.launcher.code.is_some() {
        let deadline = Instant::now() + GRACE;
        while Instant::now() < deadline && !live_processes(watch.run_dir).is_empty() {
            std::thread::sleep(PERIOD);
        }
    }
    // Whatever the launcher left behind on this node ends with it.
    let deadline = Instant::now() + GRACE;
    loop {
        let killed = kill_processes(watch.run_dir);
        let done = killed.is_empty() || Instant::now() >= deadline;
        for w in killed {
            if !seen.killed.contains(&w) {
                eprintln!(
                    "redio run: world rank {w} was still running after the launcher ended: killed"
                );
                seen.killed.push(w);
            }
        }
        if done {
            break;
        }
        std::thread::sleep(PERIOD);
    }
    seen
}

enum Startup {
    /// Some process has not got through start-up yet; none died.
    Pending,
    /// Every process got through start-up.
    Done,
    /// A process died during start-up: why.
    Died(String),
}

fn startup_death(watch: &Watch) -> Startup {
    let started = |run: &outcome::Run| -> BTreeSet<u32> {
        run.records
            .iter()
            .filter(|r| r.event == outcome::Event::Started)
            .map(|r| r.process.world_rank)
            .collect()
    };
    let run = outcome::read_run(watch.run_dir);
    if started(&run).len() as u32 >= watch.processes {
        return Startup::Done;
    }
    let gone: Vec<(u32, i32)> = local_processes(&run)
        .into_iter()
        .filter(|&(_, pid)| !alive(pid, watch.run_dir))
        .collect();
    if gone.is_empty() {
        return Startup::Pending;
    }
    // Read again: a process that is gone writes nothing more, so this tells
    // whether it got through start-up before it went.
    let run = outcome::read_run(watch.run_dir);
    let started = started(&run);
    for (w, pid) in gone {
        let exit = run
            .lives
            .iter()
            .filter(|l| l.world_rank == w)
            .find_map(|l| match l.event {
                LifeEvent::Exit { status, how } => Some((status, how)),
                LifeEvent::Spawned { .. } => None,
            });
        if let Some(how) = startup_death_of(started.contains(&w), exit) {
            return Startup::Died(format!(
                "world rank {w} (process {pid}) {how} before every process got through \
                 redio's start-up in MPI_Init: a death before the replica mapping exists \
                 cannot be survived, so the job is ended"
            ));
        }
    }
    Startup::Pending
}

/// How a gone process ended, if its end is a death during start-up;
/// `None` when it is not (`started`: it got through start-up itself;
/// `exit`: its recorded exit status and kind, `None` if it recorded none).
///
/// A process that got through start-up itself passed start-up's last
/// collective, so the others no longer wait for it there: its death is one
/// for fail-over, even while some other process has not yet recorded its
/// own start (seen in CI: a process died in its first operation while
/// another was still between that collective and its record).
fn startup_death_of(started: bool, exit: Option<(i32, outcome::ExitHow)>) -> Option<String> {
    if started {
        return None;
    }
    match exit {
        // A clean exit of a process that never started MPI: not a failure
        // in itself.
        Some((0, outcome::ExitHow::Exit)) => None,
        Some((status, _)) => Some(format!("exited with status {status}")),
        None => Some("was killed by a signal".to_string()),
    }
}

/// Whether world rank `w` recorded its exit (a process killed by a signal
/// records none; every writer of an `exit` line wrote `spawned` first).
fn exited(run: &outcome::Run, w: u32) -> bool {
    run.lives
        .iter()
        .any(|l| l.world_rank == w && matches!(l.event, LifeEvent::Exit { .. }))
}

/// Whether every process of the job exited on its own.
fn every_process_exited(watch: &Watch) -> bool {
    let run = outcome::read_run(watch.run_dir);
    (0..watch.processes).all(|w| exited(&run, w))
}

/// Whether every process of the job has ended: each one recorded its exit,
/// or is a process of this node that is gone. A process on another node
/// that recorded no exit counts as running.
fn every_process_ended(watch: &Watch) -> bool {
    let run = outcome::read_run(watch.run_dir);
    let local = local_processes(&run);
    (0..watch.processes).all(|w| {
        exited(&run, w)
            || local
                .iter()
                .any(|&(rank, pid)| rank == w && !alive(pid, watch.run_dir))
    })
}

/// The processes of the run on this node, as `(world rank, pid)`.
fn local_processes(run: &outcome::Run) -> Vec<(u32, i32)> {
    let here = host_name();
    run.lives
        .iter()
        .filter_map(|l| match &l.event {
            LifeEvent::Spawned { host } if *host == here => Some((l.world_rank, l.pid)),
            _ => None,
        })
        .collect()
}

/// The processes of the run still alive on this node, as `(world rank,
/// pid)`.
fn live_processes(run_dir: &Path) -> Vec<(u32, i32)> {
    let run = outcome::read_run(run_dir);
    local_processes(&run)
        .into_iter()
        .filter(|&(_, pid)| alive(pid, run_dir))
        .collect()
}

/// Kills every process of the run still alive on this node; returns their
/// world ranks.
fn kill_processes(run_dir: &Path) -> Vec<u32> {
    let live = live_processes(run_dir);
    for &(_, pid) in &live {
        // SAFETY: a process of this run (checked by its environment).
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    live.into_iter().map(|(w, _)| w).collect()
}

/// Whether `pid` is a live (not zombie) process of the run in `run_dir`.
fn alive(pid: i32, run_dir: &Path) -> bool {
    let proc_dir = Path::new("/proc").join(pid.to_string());
    let Ok(stat) = std::fs::read_to_string(proc_dir.join("stat")) else {
        return false;
    };
    // The state follows the parenthesised command name.
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.trim().chars().next());
    if matches!(state, Some('Z' | 'X') | None) {
        return false;
    }
    let Ok(environ) = std::fs::read(proc_dir.join("environ")) else {
        return false;
    };
    let marker = format!("{}={}", outcome::ENV_RUN_DIR, run_dir.display());
    environ
        .split(|&b| b == 0)
        .any(|var| var == marker.as_bytes())
}

/// This node's host name (as the processes record it).
pub fn host_name() -> String {
    let mut name = [0u8; 256];
    // SAFETY: gethostname writes at most `name.len()` bytes.
    unsafe { libc::gethostname(name.as_mut_ptr().cast(), name.len()) };
    let len = name.iter().position(|&b| b == 0).unwrap_or(name.len());
    String::from_utf8_lossy(&name[..len]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::startup_death_of;
    use crate::outcome::ExitHow;

    #[test]
    fn a_process_that_started_itself_is_left_to_fail_over() {
        assert_eq!(startup_death_of(true, Some((1, ExitHow::Exit))), None);
        assert_eq!(startup_death_of(true, None), None);
    }

    #[test]
    fn a_death_before_its_own_start_ends_the_job() {
        assert_eq!(
            startup_death_of(false, Some((1, ExitHow::Exit))).as_deref(),
            Some("exited with status 1")
        );
        assert_eq!(
            startup_death_of(false, None).as_deref(),
            Some("was killed by a signal")
        );
        assert_eq!(startup_death_of(false, Some((0, ExitHow::Exit))), None);
    }
}
