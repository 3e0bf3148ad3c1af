//! Which MPI implementation to launch with, and where its libredio.so is.

use std::path::{Path, PathBuf};

/// The MPI implementations redio ships a `libredio.so` for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Flavour {
    /// MPICH (Debian: `mpich`, launcher `mpiexec.mpich`).
    Mpich,
    /// Open MPI (Debian: `openmpi-bin`, launcher `mpirun.openmpi`).
    Openmpi,
}

impl Flavour {
    /// The name used on the command line, in `REDIO_MPI` and in paths.
    pub fn key(self) -> &'static str {
        match self {
            Flavour::Mpich => "mpich",
            Flavour::Openmpi => "openmpi",
        }
    }

    /// Parses [`Flavour::key`].
    pub fn from_key(key: &str) -> Option<Self> {
        match key {
            "mpich" => Some(Flavour::Mpich),
            "openmpi" => Some(Flavour::Openmpi),
            _ => None,
        }
    }

    /// The launcher program of this implementation.
    pub fn launcher(self) -> &'static str {
        match self {
            Flavour::Mpich => "mpiexec.mpich",
            Flavour::Openmpi => "mpirun.openmpi",
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
            return Flavour::from_key(&key)
                .ok_or_else(|| format!("REDIO_MPI={key}: expected `mpich` or `openmpi`"));
        }
        if std::env::var_os("OMPI_COMM_WORLD_RANK").is_some() {
            return Ok(Flavour::Openmpi);
        }
        Ok(Flavour::Mpich)
    }
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
