//! Private temporary directories for the jobs `redio` launches.
//!
//! Open MPI 5's launcher keeps its PMIx rendezvous files in
//! `<tmpdir base>/ompi.<launcher pid>/` and exits 213 ("The PMIx server's
//! listener thread failed to start") when that directory already holds
//! the files of an earlier launcher with the same pid, one that was killed
//! before it could remove them (benches/experiments/stale_launcher_dir.sh).
//! With `kernel.pid_max` at 32768 a busy machine reuses pids within
//! minutes, so every launch gets a base of its own
//! ([`super::flavour::launcher_command`]).

use std::path::{Path, PathBuf};

/// A fresh path `<temp dir>/redio-<kind>-<pid>-<nanoseconds>`, not yet
/// created: unique per invocation.
pub fn fresh_temp_path(kind: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    std::env::temp_dir().join(format!("redio-{kind}-{}-{nanos}", std::process::id()))
}

/// Creates the directory `path` (a [`fresh_temp_path`]), never its
/// parents: a temporary directory that does not exist
/// (`TMPDIR=/nonexistent/tmp`) is the user's mistake to report, not a
/// tree to create at the root of the file system.
pub fn create_dir(path: &Path) -> Result<(), String> {
    std::fs::create_dir(path).map_err(|e| {
        let parent = path.parent().unwrap_or(Path::new("/"));
        let hint = if parent.is_dir() {
            String::new()
        } else {
            format!(
                " (the temporary directory {} does not exist: set TMPDIR to an existing \
                 directory)",
                parent.display()
            )
        };
        format!("cannot create the directory {}: {e}{hint}", path.display())
    })
}

/// A fresh temporary directory that is removed, with whatever a launcher
/// left in it, when dropped.
pub struct Scratch {
    path: PathBuf,
}

impl Scratch {
    /// Creates `<temp dir>/redio-<kind>-…` ([`fresh_temp_path`]).
    pub fn create(kind: &str) -> Result<Scratch, String> {
        let path = fresh_temp_path(kind);
        create_dir(&path)?;
        Ok(Scratch { path })
    }

    /// The directory.
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}
