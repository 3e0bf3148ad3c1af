//! Coordinated operations that survive the death of a replica.
//!
//! [`run`] runs one coordinated operation. When a wait inside it finds a
//! member of the replica set dead, the survivors agree on the new set
//! ([`membership::recover`]) and run the operation again, with the first
//! survivor as the new leader or master. Every operation is idempotent at
//! its recorded offset (`pread`/`pwrite` at the offset fixed before the
//! first attempt, never an append), so running it again cannot write
//! anything twice with different data. A survivor that is one operation
//! behind the others (they completed it before the death was seen) runs it
//! alone. docs/fault-tolerance.md explains why that is enough.

use crate::comm::io_progress;
use crate::coord::link::SetLink;
use crate::ft::membership;
use crate::ft::watchdog;
use crate::state::report;
use crate::state::settings;
use crate::sys::guard::InsideMpiIo;
use redio_core::config::OnReplicaFailure;
use redio_core::outcome::Event;
use redio_protocols::{Errno, LinkError, OpError, Operation};
use std::cell::Cell;

/// Why an attempt stopped.
pub enum Stop {
    /// The operation's agreed result is this errno: hand it back.
    Errno(Errno),
    /// The link to another replica failed: a candidate for fail-over.
    Link(LinkError),
}

impl From<OpError> for Stop {
    fn from(error: OpError) -> Self {
        match error {
            OpError::Link(e) => Stop::Link(e),
            other => Stop::Errno(other.errno()),
        }
    }
}

impl From<LinkError> for Stop {
    fn from(error: LinkError) -> Self {
        Stop::Link(error)
    }
}

thread_local! {
    static REDOING: Cell<bool> = const { Cell::new(false) };
}

/// True while an operation runs again after a fail-over: calls that are
/// not idempotent (`O_EXCL`, `unlink`, `rename`) relax their checks.
pub fn redoing() -> bool {
    REDOING.with(Cell::get)
}

/// Runs operation `seq` (`op`) with `attempt`, failing over as often as
/// members die. `report_link` turns a link failure nobody can fail over
/// from into the errno to return (and logs it).
pub fn run<T>(
    seq: u64,
    op: &Operation,
    report_link: impl Fn(&LinkError) -> Errno,
    mut attempt: impl FnMut(&mut SetLink) -> Result<T, Stop>,
) -> Result<T, Errno> {
    // Called by OMPIO's own progress (its lock release, its next batch of
    // asynchronous I/O), this round must not run that progress again.
    let _no_ompio_progress = InsideMpiIo::active().then(io_progress::pause);
    let mut link = SetLink::current().ok_or(libc::EIO)?;
    let mut redone = false;
    loop {
        REDOING.with(|r| r.set(redone));
        let result = attempt(&mut link);
        REDOING.with(|r| r.set(false));
        let error = match result {
            Ok(value) => return Ok(value),
            Err(Stop::Errno(errno)) => return Err(errno),
            Err(Stop::Link(error)) => error,
        };
        if settings::get().is_some_and(|c| c.faults.on_replica_failure == OnReplicaFailure::Abort)
            && membership::any_member_dead()
        {
            crate::log!(
                Error,
                "a replica failed during {} {}; faults.on_replica_failure is abort: ending \
                 the job",
                op.kind,
                op.path
            );
            crate::state::exits::abort_job(EXIT_REPLICA_FAILED);
        }
        let Some(recovered) = membership::recover(seq) else {
            return Err(report_link(&error));
        };
        redone = true;
        record(seq, op, &recovered);
        link = if recovered.behind {
            SetLink::alone()
        } else {
            SetLink::current().ok_or(libc::EIO)?
        };
    }
}

/// Exit code of a job ended by `faults.on_replica_failure: abort`.
pub const EXIT_REPLICA_FAILED: i32 = 76;

/// Logs and records a fail-over.
fn record(seq: u64, op: &Operation, recovered: &membership::Recovered) {
    let failed: Vec<_> = recovered
        .dead
        .iter()
        .map(|&w| watchdog::process(w))
        .collect();
    let names: Vec<String> = failed
        .iter()
        .map(|p| format!("world rank {} (replica {})", p.world_rank, p.replica))
        .collect();
    let voting = match recovered.degree {
        1 => "; one replica left: no voting from now on",
        2 => "; two replicas left: voting detects mismatches but cannot correct them",
        _ => "",
    };
    crate::log!(
        Warn,
        "{} failed during operation {seq} ({} {}); {} replica(s) go on{}{voting}",
        names.join(", "),
        op.kind,
        op.path,
        recovered.degree,
        if recovered.behind {
            ", this one completes the operation alone"
        } else {
            ", running the operation again"
        }
    );
    report::event(Event::FailOver {
        failed,
        seq,
        operation: op.kind.clone(),
        path: op.path.clone(),
        redone: true,
        degree: recovered.degree as u32,
        recovery_seconds: recovered.started.elapsed().as_secs_f64(),
    });
}
