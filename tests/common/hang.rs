//! What a hung job was doing. A job still running at its deadline is not
//! just killed: first every one of its processes (the launcher's own
//! excepted) is shown with gdb's backtrace of each thread, so that a hang
//! seen once, in a loaded CI run, can be analysed from its report.

use std::collections::BTreeMap;
use std::io::Read;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Processes of the job's own machinery, not worth a backtrace.
const LAUNCHERS: &[&str] = &[
    "timeout",
    "redio",
    "mpiexec",
    "mpiexec.hydra",
    "mpiexec.mpich",
    "hydra_pmi_proxy",
    "mpirun",
    "orterun",
    "orted",
    "prterun",
    "prted",
    "strace",
];

/// How long one process's backtraces may take (gdb attaching under load).
const GDB_SECONDS: &str = "30";

/// What a job left: its exit status, stdout and stderr, and when it was
/// still running at the deadline, the stacks of its processes.
pub struct Finished {
    /// The exit status of the command (after the kill, when it hung).
    pub status: ExitStatus,
    /// Its stdout.
    pub stdout: Vec<u8>,
    /// Its stderr.
    pub stderr: Vec<u8>,
    /// `Some` when the deadline passed: every process's threads' stacks.
    pub hung: Option<String>,
}

/// Runs `command` until it exits, or until `deadline`: then reports the
/// stacks of its processes and stops it with `SIGTERM` (its `timeout`
/// wrapper passes the signal on to the job).
pub fn run(command: &mut Command, deadline: Duration) -> Finished {
    // As `Command::output` does: no stdin, stdout and stderr captured.
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cannot start the job");
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let started = Instant::now();
    let mut hung = None;
    let status = loop {
        if let Some(status) = child.try_wait().expect("cannot wait for the job") {
            break status;
        }
        if hung.is_none() && started.elapsed() >= deadline {
            hung = Some(stacks_of_job(&child));
            // SAFETY: kill(2) on our own child's process id.
            unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    Finished {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
        hung,
    }
}

fn drain(stream: Option<impl Read + Send + 'static>) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut stream) = stream {
            let _ = stream.read_to_end(&mut bytes);
        }
        bytes
    })
}

/// The stacks of every descendant of `child` that is not a launcher.
fn stacks_of_job(child: &Child) -> String {
    let processes = descendants(child.id());
    if Command::new("gdb").arg("--version").output().is_err() {
        return format!(
            "(gdb is not installed: no stacks of the {} processes)",
            processes.len()
        );
    }
    let mut report = String::new();
    for (pid, name) in processes {
        if LAUNCHERS.contains(&name.as_str()) {
            continue;
        }
        let command_line = std::fs::read(format!("/proc/{pid}/cmdline"))
            .map(|raw| String::from_utf8_lossy(&raw).replace('\0', " "))
            .unwrap_or_default();
        report.push_str(&format!("=== process {pid} ({name}): {command_line}\n"));
        let gdb = Command::new("timeout")
            .args([GDB_SECONDS, "gdb", "-nx", "-batch", "-p", &pid.to_string()])
            .args(["-ex", "thread apply all bt 40"])
            .output();
        match gdb {
            Ok(out) => {
                for line in String::from_utf8_lossy(&out.stdout).lines() {
                    if line.starts_with('#') || line.starts_with("Thread ") {
                        report.push_str(line);
                        report.push('\n');
                    }
                }
            }
            Err(e) => report.push_str(&format!("(gdb: {e})\n")),
        }
    }
    report
}

/// Every process below `root` (process id and command name), parents
/// first, from `/proc/*/stat`.
fn descendants(root: u32) -> Vec<(u32, String)> {
    let mut children: BTreeMap<u32, Vec<(u32, String)>> = BTreeMap::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // "pid (name) state ppid ...": the name may hold spaces and parens.
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let name = stat[open + 1..close].to_string();
        let ppid = stat[close + 1..]
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse::<u32>().ok());
        if let Some(ppid) = ppid {
            children.entry(ppid).or_default().push((pid, name));
        }
    }
    let mut found = Vec::new();
    let mut queue = vec![root];
    while let Some(parent) = queue.pop() {
        for (pid, name) in children.remove(&parent).unwrap_or_default() {
            queue.push(pid);
            found.push((pid, name));
        }
    }
    found
}
