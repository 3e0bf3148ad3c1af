//! Logging through the raw `write(2)` system call.
//!
//! `std` I/O would go through the process's (hooked) `write`, and `stderr`
//! may be gone while exit handlers run, so every message is formatted into a
//! buffer and written with `syscall(SYS_write)` in as few calls as possible.

use std::fmt;
use std::sync::atomic::{AtomicI64, AtomicU8, Ordering};

/// Severity of a message, most severe first.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
#[repr(u8)]
pub enum Level {
    /// Something failed.
    Error = 1,
    /// Something is suspicious but the job goes on.
    Warn = 2,
    /// What redio did, once per job or per file.
    Info = 3,
    /// Decisions per call: why a call passed through, which protocol ran.
    Debug = 4,
    /// Everything.
    Trace = 5,
}

static THRESHOLD: AtomicU8 = AtomicU8::new(Level::Warn as u8);
/// World rank, or -1 before `MPI_Init`.
static WORLD_RANK: AtomicI64 = AtomicI64::new(-1);
/// Replica and logical rank packed as `replica << 32 | rank`, or -1.
static PLACEMENT: AtomicI64 = AtomicI64::new(-1);

/// Sets the most verbose level that is still written.
pub fn set_threshold(level: Level) {
    THRESHOLD.store(level as u8, Ordering::Relaxed);
}

/// True when messages of `level` are written.
#[inline]
pub fn enabled(level: Level) -> bool {
    level as u8 <= THRESHOLD.load(Ordering::Relaxed)
}

/// Records who this process is, for the prefix of every message.
pub fn set_identity(world_rank: u32, placement: Option<(u32, u32)>) {
    WORLD_RANK.store(i64::from(world_rank), Ordering::Relaxed);
    if let Some((replica, rank)) = placement {
        PLACEMENT.store(
            i64::from(replica) << 32 | i64::from(rank),
            Ordering::Relaxed,
        );
    }
}

/// Writes one message at `level` if that level is enabled.
pub fn write(level: Level, args: fmt::Arguments<'_>) {
    if enabled(level) {
        let tag = match level {
            Level::Error => "error",
            Level::Warn => "warning",
            Level::Info => "info",
            Level::Debug => "debug",
            Level::Trace => "trace",
        };
        emit(&format!("{}{tag}: {args}\n", prefix()));
    }
}

/// Writes a message unconditionally, with the process prefix.
pub fn announce(args: fmt::Arguments<'_>) {
    emit(&format!("{}{args}\n", prefix()));
}

/// The exit status of a process that redio stops because it cannot go on
/// (no MPI to reach, the wrong MPI): the status `redio run` reports.
pub const EXIT_REFUSED: i32 = 3;

/// Announces `args` (an `error: …` with its remedy) and stops the process
/// at once with [`EXIT_REFUSED`], running no exit handler: nothing
/// sensible can follow.
pub fn refuse(args: fmt::Arguments<'_>) -> ! {
    announce(args);
    // SAFETY: leaving at once; nothing is called after this.
    unsafe { libc::_exit(EXIT_REFUSED) }
}

/// `redio[world 3, rank 1 replica 0]: ` or `redio: ` before `MPI_Init`.
fn prefix() -> String {
    let world = WORLD_RANK.load(Ordering::Relaxed);
    let placement = PLACEMENT.load(Ordering::Relaxed);
    match (world, placement) {
        (-1, _) => "redio: ".into(),
        (w, -1) => format!("redio[world {w}]: "),
        (w, p) => format!(
            "redio[world {w}, rank {} replica {}]: ",
            p & 0xffff_ffff,
            p >> 32
        ),
    }
}

/// Writes all of `text` to stderr with the raw system call.
pub fn emit(text: &str) {
    let mut bytes = text.as_bytes();
    while !bytes.is_empty() {
        // SAFETY: a plain write(2) of a valid buffer to fd 2.
        let n = unsafe { libc::syscall(libc::SYS_write, 2, bytes.as_ptr(), bytes.len()) };
        if n <= 0 {
            // EINTR: retry; anything else: stderr is gone, drop the message.
            if n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return;
        }
        bytes = &bytes[n as usize..];
    }
}

/// Logs at a level: `log!(Info, "{} files", n)`.
#[macro_export]
macro_rules! log {
    ($level:ident, $($arg:tt)+) => {
        $crate::sys::log::write($crate::sys::log::Level::$level, format_args!($($arg)+))
    };
}
