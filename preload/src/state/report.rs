//! Tells `redio run` what happened to this process
//! ([`redio_core::outcome`]): one JSON line per event in `DIR/rank-W.jsonl`
//! when the run directory is set.

use crate::state::world;
use redio_core::outcome::{Bytes, Event, Process, Record, ENV_RUN_DIR};
use std::io::Write;

/// This process, once its placement is known.
pub fn me() -> Option<Process> {
    let identity = world::identity()?;
    Some(Process {
        world_rank: identity.world_rank,
        replica: identity.placement.replica,
        rank: identity.placement.rank,
    })
}

/// Appends `event` to this process's event file (nothing without a run
/// directory).
pub fn event(event: Event) {
    let (Some(dir), Some(process)) = (std::env::var_os(ENV_RUN_DIR), me()) else {
        return;
    };
    let (_, bytes_read, bytes_written) = crate::state::counters::snapshot();
    let line = Record {
        time: redio_core::outcome::now(),
        process,
        bytes: Bytes {
            bytes_read,
            bytes_written,
        },
        event,
    }
    .to_line();
    let path = std::path::Path::new(&dir).join(format!("rank-{}.jsonl", process.world_rank));
    // std's file calls must reach the real functions, not the hooks.
    crate::sys::guard::inside(|| {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path);
        if let Ok(mut file) = file {
            // One write per line: O_APPEND keeps lines whole.
            let _ = file.write_all(line.as_bytes());
        }
    });
}

/// Ends this process as a test asked (`REDIO_TEST_DIE`,
/// `REDIO_TEST_DIE_IN_FAILOVER`): records the planned death for `redio
/// run` (an injected death is not the application's failure), then raises
/// `signal`, or exits with status 1.
pub fn die_on_purpose(how: &str, seq: u64, signal: Option<i32>) -> ! {
    event(Event::Injected {
        how: how.into(),
        seq,
    });
    // SAFETY: ending this process on purpose.
    unsafe {
        if let Some(signal) = signal {
            libc::raise(signal);
        }
        libc::_exit(1)
    }
}
