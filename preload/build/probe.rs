//! Finds the MPI implementation libredio.so is built against.

use std::path::PathBuf;
use std::process::Command;

/// The MPI implementations redio supports.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Flavour {
    Mpich,
    OpenMpi,
}

impl Flavour {
    pub fn name(self) -> &'static str {
        match self {
            Flavour::Mpich => "MPICH",
            Flavour::OpenMpi => "Open MPI",
        }
    }

    pub fn cfg(self) -> &'static str {
        match self {
            Flavour::Mpich => "mpich",
            Flavour::OpenMpi => "openmpi",
        }
    }
}

/// What the build needs to know about the chosen MPI.
pub struct Mpi {
    pub flavour: Flavour,
    pub include_dirs: Vec<PathBuf>,
}

/// Picks the compiler wrapper: `MPICC`, else the one named by `REDIO_MPI`
/// (`mpich` → `mpicc.mpich`, `openmpi` → `mpicc.openmpi`), else `mpicc`.
fn compiler_wrapper() -> String {
    if let Ok(mpicc) = std::env::var("MPICC") {
        return mpicc;
    }
    match std::env::var("REDIO_MPI").as_deref() {
        Ok("mpich") => "mpicc.mpich".into(),
        Ok("openmpi") => "mpicc.openmpi".into(),
        Ok(other) => panic!("REDIO_MPI={other:?}: expected `mpich` or `openmpi`"),
        Err(_) => "mpicc".into(),
    }
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
        Flavour::OpenMpi
    } else if text.contains("MPICH_VERSION") {
        Flavour::Mpich
    } else {
        panic!("{} is neither MPICH's nor Open MPI's", header.display())
    };
    println!("cargo:rerun-if-changed={}", header.display());
    Mpi {
        flavour,
        include_dirs,
    }
}
