//! `redio exec` as the application's parent: the application runs as a
//! child of `redio exec`, which waits for it and leaves with its status; a
//! death by a signal becomes an exit with 128 + signal. Used by `--survive`
//! under MPICH (below) and, with replicas, to own the application's stdout
//! and stderr ([`super::output`]: each line once, or every replica's
//! prefixed).
//!
//! Why: MPICH's process manager (Hydra 4.0.2, `hydra_pmi_proxy`) reaps its
//! children after every event it handles (an output line, a closed socket)
//! and, when one of them was killed by a signal, sends SIGKILL to all the
//! others on its node, whatever `-disable-auto-cleanup` says. A replica
//! killed by SIGKILL (the OOM killer, a batch system, a test) thus took
//! every survivor with it at the next line anyone printed. Seen with a
//! plain MPI program (no redio): one of 4 ranks SIGKILLed, the others are
//! killed at the next output line of any rank (docs/fault-tolerance.md,
//! "SIGKILL under MPICH"). An exit, even non-zero, does not trigger it, so
//! this process turns the application's death into an exit.
//!
//! Under `redio run` it also records the application's end when
//! libredio.so could not: a program that did not start, or ended before
//! the library was loaded ([`super::exec_life`]).
//!
//! The supervisor is invisible otherwise: the application is in the same
//! process group (Hydra signals whole groups), signals sent to the
//! supervisor alone are passed on, the application dies with the
//! supervisor (`PR_SET_PDEATHSIG`), and the supervisor lets go of the PMI
//! socket so that MPICH still sees the application's own death at once.

use super::exec_life::{Recorder, CANNOT_RUN};
use super::output;
use redio_core::signals::set_handler;
use std::io;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, ExitCode, ExitStatus, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};

/// The application's process id, for the signal handlers (0: not started).
static CHILD: AtomicI32 = AtomicI32::new(0);

/// Signals passed on to the application when sent to the supervisor.
const FORWARDED: [i32; 5] = [
    libc::SIGTERM,
    libc::SIGINT,
    libc::SIGHUP,
    libc::SIGQUIT,
    libc::SIGUSR2,
];

/// Signals the supervisor outlives without passing them on: MPICH's death
/// hint (SIGUSR1) goes to the whole process group, so the application has
/// it already; a closed output pipe must not kill the supervisor before
/// the application.
const ABSORBED: [i32; 2] = [libc::SIGUSR1, libc::SIGPIPE];

/// Runs `command` as a child, waits for it and returns its status as an
/// exit code. With `output`, the child's stdout and stderr are pipes that
/// [`super::output::pump`] reads. A death by a signal becomes an exit with
/// 128 + signal when `signal_as_exit` (MPICH's `--survive`); otherwise
/// this process dies by the same signal, so that the launcher sees what
/// it would have seen without it (Open MPI 5 reports a death by a signal
/// to the survivors at once, a non-zero exit not at all).
pub fn run(
    mut command: Command,
    program: &str,
    output: Option<output::Plan>,
    signal_as_exit: bool,
) -> ExitCode {
    install_handlers();
    let supervisor = std::process::id();
    // SAFETY: prctl and getppid are async-signal-safe; nothing else runs
    // between fork and exec.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(io::Error::last_os_error());
            }
            // The supervisor died before the prctl took effect.
            if libc::getppid() as u32 != supervisor {
                return Err(io::Error::other("redio exec: the supervisor is gone"));
            }
            Ok(())
        });
    }
    let recorder = Recorder::from_env();
    let mut terminal = None;
    if let Some(plan) = &output {
        let stdout = match output::terminal_for_stdout() {
            Some((master, slave)) => {
                terminal = Some(master);
                Stdio::from(slave)
            }
            None => Stdio::piped(),
        };
        command.stdout(stdout).stderr(Stdio::piped());
        if plan.shares_stdin() {
            command.stdin(Stdio::piped());
        }
    }
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(error) => {
            eprintln!("redio exec: cannot run {program}: {error}");
            if let Some(recorder) = &recorder {
                recorder.cannot_run(CANNOT_RUN);
            }
            return ExitCode::from(CANNOT_RUN);
        }
    };
    // The command holds the terminal's application end: closing it lets
    // the pump see the end of the application's stdout.
    drop(command);
    CHILD.store(child.id() as i32, Ordering::SeqCst);
    release_pmi_socket();
    if let (Some(plan), Some(stdin)) = (&output, child.stdin.take()) {
        output::feed_stdin(plan, stdin);
    }
    let status = match output {
        Some(plan) => output::pump(&mut child, plan, terminal),
        None => child.wait(),
    };
    match status {
        Ok(status) => {
            if let Some(recorder) = &recorder {
                recorder.ended(child.id(), status);
            }
            if let (false, Some(signal)) = (signal_as_exit, status.signal()) {
                die_by(signal);
            }
            ExitCode::from(exit_code(status, program))
        }
        Err(error) => {
            eprintln!("redio exec: cannot wait for {program}: {error}");
            ExitCode::from(1)
        }
    }
}

/// The exit code that stands for `status`: the application's own code, or
/// 128 + signal (as a shell reports it) after saying which signal.
fn exit_code(status: ExitStatus, program: &str) -> u8 {
    if let Some(code) = status.code() {
        return code as u8;
    }
    let signal = status.signal().unwrap_or(0);
    eprintln!(
        "redio exec: {program} (pid {}) was killed by signal {signal}",
        CHILD.load(Ordering::SeqCst)
    );
    (128 + signal).clamp(0, 255) as u8
}

/// Ends this process by `signal`, without a core dump of its own (the
/// application's was its own). Returns only if the signal does not kill.
fn die_by(signal: i32) {
    // SAFETY: resetting a disposition, lowering our own core limit,
    // unblocking and raising a signal on ourselves.
    unsafe {
        let none = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        libc::setrlimit(libc::RLIMIT_CORE, &none);
        libc::signal(signal, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, signal);
        libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::raise(signal);
    }
}

/// Closes this process's copy of MPICH's PMI socket (`PMI_FD`): Hydra
/// learns of a process's death when that socket closes, and it must close
/// when the application dies, not when the supervisor does.
fn release_pmi_socket() {
    let fd = std::env::var("PMI_FD")
        .ok()
        .and_then(|v| v.parse::<i32>().ok());
    if let Some(fd) = fd.filter(|&fd| fd > 2) {
        // SAFETY: the descriptor was inherited for the application only;
        // the supervisor never uses it.
        unsafe {
            libc::close(fd);
        }
    }
}

fn install_handlers() {
    for signal in FORWARDED {
        set_handler(signal, forward);
    }
    for signal in ABSORBED {
        set_handler(signal, absorb);
    }
}

/// Installs `handler` for `signal`. A handler (not `SIG_IGN`) so that the
/// application, after exec, starts with the default dispositions.
extern "C" fn forward(signal: i32) {
    let child = CHILD.load(Ordering::SeqCst);
    if child > 0 {
        // SAFETY: kill is async-signal-safe.
        unsafe {
            libc::kill(child, signal);
        }
    }
}

extern "C" fn absorb(_: i32) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exit_keeps_its_code_and_a_signal_becomes_128_plus_signal() {
        assert_eq!(exit_code(ExitStatus::from_raw(3 << 8), "app"), 3);
        assert_eq!(exit_code(ExitStatus::from_raw(0), "app"), 0);
        assert_eq!(exit_code(ExitStatus::from_raw(libc::SIGKILL), "app"), 137);
        assert_eq!(exit_code(ExitStatus::from_raw(libc::SIGSEGV), "app"), 139);
    }

    #[test]
    fn a_supervised_program_killed_by_a_signal_exits_with_128_plus_signal() {
        let mut command = Command::new("sh");
        command.args(["-c", "kill -KILL $$"]);
        assert_eq!(run(command, "sh", None, true), ExitCode::from(137));
    }
}
