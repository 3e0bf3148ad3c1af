//! The outcome of a replicated run with failures: the events processes
//! record, and the verdict `redio run` draws from them.
//!
//! The launchers cannot tell whether a job with a dead replica completed
//! (Open MPI's returns 0 even when ranks died; MPICH's returns the victim's
//! exit code even when the survivors finished). So every process of a job
//! started by `redio run` appends one [`Record`] per event, as a JSON line,
//! to `DIR/rank-W.jsonl` in the run directory, and `redio run` reads them
//! back ([`read_dir`]) and computes a [`Summary`] when the launcher returns.
//!
//! Besides those events, every process started through `redio exec` writes
//! two [`Life`] lines to the same file, from outside MPI: `spawned` when
//! libredio.so is loaded (its process id and host) and `exit` when it ends
//! (its exit status, and whether the exit was the application's or one of
//! redio's own). A process that leaves no `exit` line was killed by a
//! signal. `redio exec` writes them itself for a process that ended before
//! the library was loaded. [`judge`] draws the exit code of `redio run` from both
//! (docs/fault-tolerance.md, "The outcome").
//!
//! - [`records`]: the events and life lines, on disk as JSON lines;
//! - [`judge`](mod@judge): the verdict and the summary drawn from them.

mod judge;
mod records;

pub use judge::*;
pub use records::*;

#[cfg(test)]
mod tests;
