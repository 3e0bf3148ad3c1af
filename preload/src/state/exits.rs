//! How this process ends, recorded from inside it for `redio run`
//! ([`redio_core::outcome::Life`]).
//!
//! Launchers do not tell the exit status of each process (Open MPI 4.1
//! with `--enable-recovery` returns 0 even when one exited with 1). So a
//! process started by `redio exec` under `redio run` writes two lines to
//! `rank-W.jsonl` in the run directory: `spawned` when libredio.so is
//! loaded (its pid and host, so that `redio run` can watch it) and `exit`
//! when it ends, with the status:
//!
//! - the application's own exits: an `on_exit` handler registered when the
//!   library is loaded (before the application's `main`, so it runs after
//!   the application's own `atexit` handlers), and the exported `_exit` /
//!   `_Exit`, which bypass exit handlers;
//! - redio's own exits ([`record`]): a retired replica, a fatal signal
//!   turned into an exit, a lost logical rank.
//!
//! A process that leaves no `exit` line was killed by a signal.
//!
//! Only the process `redio exec` became records (`REDIO_EXEC_PID` is its
//! pid); the application's children inherit the environment and the
//! library, not the pid. Everything after loading is async-signal-safe
//! (raw system calls, a line formatted on the stack), because the fatal
//! signal handler records too.

use crate::sys::rawfs;
use redio_core::outcome::{ExitHow, ENV_EXEC_PID, ENV_RUN_DIR};
use std::ffi::{c_int, c_void, CString};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, Ordering};
use std::sync::OnceLock;

/// This process's event file, when it records.
static PATH: OnceLock<CString> = OnceLock::new();
static WORLD_RANK: AtomicU32 = AtomicU32::new(u32::MAX);
static PID: AtomicI32 = AtomicI32::new(0);
/// Set by the first exit recorded: a process ends once.
static RECORDED: AtomicBool = AtomicBool::new(false);

extern "C" {
    fn on_exit(function: extern "C" fn(c_int, *mut c_void), arg: *mut c_void) -> c_int;
}

/// Starts recording when the library is loaded.
#[used]
#[link_section = ".init_array"]
static RECORD_AT_LOAD: extern "C" fn() = {
    extern "C" fn at_load() {
        start();
    }
    at_load
};

/// The world rank the launcher gave this process (MPICH's Hydra sets
/// `PMI_RANK`, Open MPI 4.1 and 5 `OMPI_COMM_WORLD_RANK`).
fn launcher_rank() -> Option<u32> {
    ["PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK"]
        .iter()
        .find_map(|name| std::env::var(name).ok()?.trim().parse().ok())
}

fn start() {
    let Some(dir) = std::env::var_os(ENV_RUN_DIR) else {
        return;
    };
    // SAFETY: getpid has no preconditions.
    let pid = unsafe { libc::getpid() };
    // SAFETY: getppid has no preconditions.
    let parent = unsafe { libc::getppid() };
    // `redio exec` either became this process (its pid) or, supervising
    // under MPICH, is its parent (`parent:PID`, src/cli/supervise.rs).
    let ours = std::env::var(ENV_EXEC_PID).is_ok_and(|p| {
        let p = p.trim();
        p == pid.to_string() || p == format!("parent:{parent}")
    });
    let (true, Some(world_rank)) = (ours, launcher_rank()) else {
        return;
    };
    let path = std::path::Path::new(&dir).join(format!("rank-{world_rank}.jsonl"));
    let Ok(path) = CString::new(path.into_os_string().into_encoded_bytes()) else {
        return;
    };
    let _ = PATH.set(path);
    WORLD_RANK.store(world_rank, Ordering::Relaxed);
    PID.store(pid, Ordering::Relaxed);
    let mut line = Line::start("spawned");
    line.text(",\"host\":\"");
    let mut host = [0u8; 256];
    // SAFETY: gethostname writes at most `host.len()` bytes.
    unsafe { libc::gethostname(host.as_mut_ptr().cast(), host.len()) };
    for &b in host.iter().take_while(|&&b| b != 0) {
        // Host names need no escaping; drop anything that would.
        if b.is_ascii_graphic() && b != b'"' && b != b'\\' {
            line.byte(b);
        }
    }
    line.text("\"}\n");
    line.append();
    // SAFETY: registering a handler that lives as long as the process.
    unsafe { on_exit(at_exit, std::ptr::null_mut()) };
}

extern "C" fn at_exit(status: c_int, _: *mut c_void) {
    record(status, ExitHow::Exit);
}

/// Records that this process ends with `status`, decided by `how`
/// (nothing if an end was recorded already, or outside `redio run`).
/// Async-signal-safe.
pub fn record(status: i32, how: ExitHow) {
    let Some(_) = PATH.get() else { return };
    // SAFETY: getpid has no preconditions. A child forked without exec
    // shares these statics but is not the process of this world rank.
    if unsafe { libc::getpid() } != PID.load(Ordering::Relaxed)
        || RECORDED.swap(true, Ordering::SeqCst)
    {
        return;
    }
    let mut line = Line::start("exit");
    line.text(",\"status\":");
    line.signed(i64::from(status));
    line.text(",\"how\":\"");
    line.text(how.key());
    line.text("\"}\n");
    line.append();
}

/// The event file of process `world_rank` in the run directory (its
/// `spawned` and `exit` lines among its events; see
/// [`redio_core::outcome::recorded_exit`]), or `None` outside `redio run`
/// or when it is out of sight (another node's process).
pub fn event_file_of(world_rank: u32) -> Option<String> {
    let dir = std::env::var(ENV_RUN_DIR).ok()?;
    // An event file holds a few lines per failure it saw; its exit is
    // within the first MiB.
    let mut text = vec![0u8; 1 << 20];
    let len = rawfs::read(&format!("{dir}/rank-{world_rank}.jsonl"), &mut text)?;
    text.truncate(len);
    Some(String::from_utf8_lossy(&text).into_owned())
}

/// `_exit`: records the application's exit (it skips `on_exit` handlers),
/// then ends the process.
///
/// # Safety
/// Called from C like the C library's `_exit`.
#[no_mangle]
pub unsafe extern "C" fn _exit(status: c_int) -> ! {
    record(status, ExitHow::Exit);
    libc::syscall(libc::SYS_exit_group, status);
    unreachable_end()
}

/// `_Exit`: the same as [`_exit`].
///
/// # Safety
/// Called from C like the C library's `_Exit`.
#[no_mangle]
pub unsafe extern "C" fn _Exit(status: c_int) -> ! {
    record(status, ExitHow::Exit);
    libc::syscall(libc::SYS_exit_group, status);
    unreachable_end()
}

/// `exit_group` does not return; should it ever, stop hard.
fn unreachable_end() -> ! {
    std::process::abort()
}

/// One JSON line, formatted on the stack.
struct Line {
    bytes: [u8; 512],
    len: usize,
}

impl Line {
    /// `{"time_us":…,"world_rank":…,"pid":…,"event":"<event>"`.
    fn start(event: &str) -> Line {
        let mut line = Line {
            bytes: [0; 512],
            len: 0,
        };
        let mut now: libc::timespec = unsafe { std::mem::zeroed() };
        // SAFETY: clock_gettime writes the struct it is given.
        unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut now) };
        line.text("{\"time_us\":");
        line.signed(now.tv_sec * 1_000_000 + now.tv_nsec / 1000);
        line.text(",\"world_rank\":");
        line.signed(i64::from(WORLD_RANK.load(Ordering::Relaxed)));
        line.text(",\"pid\":");
        line.signed(i64::from(PID.load(Ordering::Relaxed)));
        line.text(",\"event\":\"");
        line.text(event);
        line.byte(b'"');
        line
    }

    fn byte(&mut self, b: u8) {
        if self.len < self.bytes.len() {
            self.bytes[self.len] = b;
            self.len += 1;
        }
    }

    fn text(&mut self, text: &str) {
        text.bytes().for_each(|b| self.byte(b));
    }

    fn signed(&mut self, value: i64) {
        if value < 0 {
            self.byte(b'-');
        }
        let mut digits = [0u8; 20];
        let mut n = value.unsigned_abs();
        let mut i = digits.len();
        loop {
            i -= 1;
            digits[i] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        digits[i..].iter().for_each(|&b| self.byte(b));
    }

    /// Appends the line to the event file with one `write` (`O_APPEND`
    /// keeps it whole beside the process's other lines).
    fn append(&self) {
        let Some(path) = PATH.get() else { return };
        crate::sys::rawfs::write_with(path, libc::O_APPEND, &self.bytes[..self.len]);
    }
}

/// Ends the whole job with `errorcode`, after giving the launcher time to
/// forward what was just logged (it tears down its output forwarding as
/// soon as the abort reaches it).
///
/// The code is recorded as this process's exit status, even where the
/// launcher then kills it: it is the job's (the application's own
/// `MPI_Abort`, or redio's decision: 75 for a mismatch or divergence it
/// cannot return as an error, 76 for `on_replica_failure: abort`).
pub fn abort_job(errorcode: std::ffi::c_int) -> ! {
    let _inside = crate::sys::guard::InsideMpi::enter();
    record(errorcode, redio_core::outcome::ExitHow::Exit);
    std::thread::sleep(std::time::Duration::from_millis(200));
    // SAFETY: aborting on the real world communicator.
    unsafe { crate::comm::pmpi::PMPI_Abort(crate::state::world::real_world(), errorcode) };
    // PMPI_Abort does not return; if it ever does, do not go on.
    std::process::exit(errorcode)
}
