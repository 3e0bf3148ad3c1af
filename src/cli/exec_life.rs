//! The life lines `redio exec` writes for an application process that
//! never reached libredio.so ([`crate::outcome::Life`]).
//!
//! libredio.so records `spawned` and `exit` itself once it is loaded. A
//! process that ends before (a program that cannot run: missing, a
//! directory, no execute bit; or one killed, or a static executable that
//! exits, before any library loads) left nothing, so `redio run` could not
//! tell it from a process still starting: Open MPI's launcher then exited
//! 0 for a program that never ran, and the survivors of a death before the
//! library loaded waited in `MPI_Init` forever. `redio exec` sees those
//! ends (it runs the program, or is its parent) and records them in the
//! same file, under the same world rank, so that `redio run`'s watch and
//! verdict treat them like any other (docs/fault-tolerance.md, "The
//! outcome").

use super::launcher_watch::host_name;
use crate::outcome::{ExitHow, Life, LifeEvent, ENV_RUN_DIR};
use std::path::PathBuf;
use std::process::ExitStatus;

/// The exit status of a program that cannot be started (missing, a
/// directory, no execute bit), as a shell gives it.
pub const CANNOT_RUN: u8 = 127;

/// Where this process's life lines go: the run directory of `redio run`
/// and the world rank the launcher gave it (`None` outside `redio run`).
pub struct Recorder {
    dir: PathBuf,
    world_rank: u32,
}

impl Recorder {
    /// The recorder of this process, from the launcher's environment.
    pub fn from_env() -> Option<Recorder> {
        let dir = PathBuf::from(std::env::var_os(ENV_RUN_DIR)?);
        let (world_rank, _) = super::output::launcher_rank_and_size()?;
        // Another node's processes cannot reach the run directory.
        dir.is_dir().then_some(Recorder { dir, world_rank })
    }

    /// The program could not be started: this process (`redio exec`)
    /// stands for it, exiting with `status`.
    pub fn cannot_run(&self, status: u8) {
        let pid = std::process::id() as i32;
        self.write(pid, Some(i32::from(status)));
    }

    /// The application process `pid` ended with `status`: recorded unless
    /// libredio.so recorded that process itself.
    pub fn ended(&self, pid: u32, status: ExitStatus) {
        let pid = pid as i32;
        let text = std::fs::read_to_string(self.file()).unwrap_or_default();
        let recorded = text
            .lines()
            .filter_map(|l| serde_json::from_str::<Life>(l).ok())
            .any(|l| l.pid == pid);
        if !recorded {
            // No `exit` line for a death by a signal: that is how a kill
            // reads (`end: killed`).
            self.write(pid, status.code());
        }
    }

    fn file(&self) -> PathBuf {
        self.dir.join(format!("rank-{}.jsonl", self.world_rank))
    }

    /// Writes `spawned` for `pid`, and `exit` with `status` if it exited.
    fn write(&self, pid: i32, status: Option<i32>) {
        let mut lines = vec![Life::now(
            self.world_rank,
            pid,
            LifeEvent::Spawned { host: host_name() },
        )];
        if let Some(status) = status {
            let how = ExitHow::Exit;
            lines.push(Life::now(
                self.world_rank,
                pid,
                LifeEvent::Exit { status, how },
            ));
        }
        for line in lines {
            if let Err(e) = line.append_to(&self.dir) {
                eprintln!(
                    "redio exec: cannot record the end of world rank {} in {}: {e}",
                    self.world_rank,
                    self.dir.display()
                );
                return;
            }
        }
    }
}
