//! Periodic progress lines for long offline operations (batch jobs have no
//! terminal to draw a bar on): bytes done, total and MB/s, on stderr.
//!
//! A program with a terminal can install a [`Reporter`] instead (the CLI
//! draws an indicatif bar); it then gets every update and the lines stop.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Seconds between progress lines: `0` prints one per piece, `off` none.
pub const INTERVAL_ENV: &str = "REDIO_PARITY_PROGRESS";

/// Progress lines come this often unless [`INTERVAL_ENV`] says otherwise.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(2);

/// The interval between progress lines from [`INTERVAL_ENV`] (default
/// [`DEFAULT_INTERVAL`]); None: no lines. A value that is neither a number
/// of seconds nor `off` is reported and the default used.
pub fn interval() -> Option<Duration> {
    let Ok(text) = std::env::var(INTERVAL_ENV) else {
        return Some(DEFAULT_INTERVAL);
    };
    if text.trim() == "off" {
        return None;
    }
    match text.trim().parse::<f64>() {
        Ok(seconds) if seconds.is_finite() && seconds >= 0.0 => {
            Some(Duration::from_secs_f64(seconds))
        }
        _ => {
            eprintln!(
                "redio parity: {INTERVAL_ENV}={text:?} is not a number of seconds or `off`; \
                 progress every {} s",
                DEFAULT_INTERVAL.as_secs()
            );
            Some(DEFAULT_INTERVAL)
        }
    }
}

/// Receives every progress update: what, bytes done, bytes in all.
pub type Reporter = Box<dyn Fn(&str, u64, u64) + Send + Sync>;

static REPORTER: OnceLock<Reporter> = OnceLock::new();

/// Sends all later progress to `reporter` instead of printing lines (set
/// once per process; later calls are ignored).
pub fn set_reporter(reporter: Reporter) {
    let _ = REPORTER.set(reporter);
}

/// Counts bytes and prints a line at most every `every`.
pub struct Progress {
    what: String,
    total: u64,
    done: u64,
    start: Instant,
    last: Instant,
    every: Option<Duration>,
}

impl Progress {
    /// A reporter for `what` over `total` bytes; silent when `every` is None.
    pub fn new(what: impl Into<String>, total: u64, every: Option<Duration>) -> Self {
        let now = Instant::now();
        Progress {
            what: what.into(),
            total,
            done: 0,
            start: now,
            last: now,
            every,
        }
    }

    /// Adds `n` bytes done, printing a line if the interval has passed.
    pub fn add(&mut self, n: u64) {
        self.done += n;
        if let Some(report) = REPORTER.get() {
            if self.every.is_some() {
                report(&self.what, self.done, self.total);
            }
            return;
        }
        if let Some(every) = self.every {
            if self.last.elapsed() >= every {
                self.last = Instant::now();
                eprintln!("{}", self.line());
            }
        }
    }

    /// The progress line: `what: done of total MiB (pct%), MB/s`.
    pub fn line(&self) -> String {
        let secs = self.start.elapsed().as_secs_f64().max(1e-9);
        format!(
            "redio parity: {}: {:.1} of {:.1} MiB ({:.0}%), {:.0} MB/s",
            self.what,
            self.done as f64 / 1048576.0,
            self.total as f64 / 1048576.0,
            100.0 * self.done as f64 / self.total.max(1) as f64,
            self.done as f64 / secs / 1e6
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_reports_bytes_and_percentage() {
        let mut p = Progress::new("encode set 0", 4 << 20, None);
        p.add(1 << 20);
        let l = p.line();
        assert!(l.contains("encode set 0: 1.0 of 4.0 MiB (25%)"), "{l}");
    }
}
