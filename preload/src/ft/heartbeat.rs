//! Cross-node liveness: beat files in `faults.heartbeat_dir`.
//!
//! Process ids tell the dead only on the same node ([`liveness`]). With
//! `faults.heartbeat_dir`, a directory every node sees, the watchdog of
//! every process rewrites `<dir>/<job>/beat.<world rank>` with a counter
//! every `faults.heartbeat` ([`beat`]). A process judges a peer on another
//! node dead when that counter has not changed for `faults.timeout`,
//! measured by its own clock, so the nodes' clocks need not agree
//! ([`alive`]). Each beat is written and closed, and each look opens the
//! file afresh: NFS's close-to-open consistency makes the new value
//! visible on other nodes.
//!
//! [`liveness`]: crate::ft::liveness

use crate::sys::rawfs;
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The beats of this job, once [`start`]ed.
struct Beats {
    /// `<heartbeat_dir>/<job>/`.
    dir: String,
    /// This process's world rank.
    me: u32,
    period: Duration,
    timeout: Duration,
    count: AtomicU64,
    /// What this process last saw of each peer it looked at.
    seen: Mutex<HashMap<u32, Seen>>,
}

/// One peer's beat as last seen.
struct Seen {
    value: Option<u64>,
    /// When `value` last changed (or the first look).
    changed: Instant,
    checked: Instant,
}

static BEATS: OnceLock<Beats> = OnceLock::new();

/// Starts beating in `<dir>/<job>/` as world rank `me`: every `period`
/// ([`beat`]); peers are dead after `timeout` without a beat.
pub fn start(dir: &Path, job: &str, me: u32, period: Duration, timeout: Duration) {
    let base = dir.display().to_string();
    rawfs::mkdir(&base);
    let dir = format!("{base}/{job}/");
    rawfs::mkdir(&dir);
    let beats = Beats {
        dir,
        me,
        period,
        timeout,
        count: AtomicU64::new(0),
        seen: Mutex::new(HashMap::new()),
    };
    if BEATS.set(beats).is_ok() {
        beat();
    }
}

/// Writes this process's next beat (called by the watchdog every period).
pub fn beat() {
    let Some(beats) = BEATS.get() else { return };
    let count = beats.count.fetch_add(1, Ordering::Relaxed) + 1;
    let path = format!("{}beat.{}", beats.dir, beats.me);
    if !rawfs::write(&path, &count.to_le_bytes()) {
        crate::log!(Debug, "heartbeat: cannot write {path}");
    }
}

/// Whether `world_rank` (a process on another node) still beats. True
/// when beats are off: deadlines then bound the waits.
pub fn alive(world_rank: u32) -> bool {
    let Some(beats) = BEATS.get() else {
        return true;
    };
    let now = Instant::now();
    let mut seen = beats.seen.lock().unwrap_or_else(|e| e.into_inner());
    let entry = seen.entry(world_rank).or_insert(Seen {
        value: None,
        changed: now,
        // Look at once (an Instant cannot go before the clock's start).
        checked: now.checked_sub(beats.period).unwrap_or(now),
    });
    // Waits poll every few milliseconds: look at the file twice a period.
    if now.duration_since(entry.checked) >= beats.period / 2 {
        entry.checked = now;
        let mut buf = [0u8; 8];
        let path = format!("{}beat.{world_rank}", beats.dir);
        let value = rawfs::read(&path, &mut buf)
            .filter(|&n| n == buf.len())
            .map(|_| u64::from_le_bytes(buf));
        if value.is_some() && value != entry.value {
            entry.value = value;
            entry.changed = now;
        }
    }
    now.duration_since(entry.changed) <= beats.timeout
}

/// Whether beats are on (`faults.heartbeat_dir`): peers on other nodes can
/// be seen alive, dead or finished.
pub fn on() -> bool {
    BEATS.get().is_some()
}

/// Leaves `world_rank`'s finished marker in the beat directory.
pub fn mark_finished(world_rank: u32) {
    if let Some(beats) = BEATS.get() {
        rawfs::write(&format!("{}finished.{world_rank}", beats.dir), b"");
    }
}

/// Whether `world_rank` left a finished marker in the beat directory.
pub fn finished(world_rank: u32) -> bool {
    BEATS
        .get()
        .is_some_and(|beats| rawfs::exists(&format!("{}finished.{world_rank}", beats.dir)))
}
