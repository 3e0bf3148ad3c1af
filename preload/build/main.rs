//! Build script of libredio.so.
//!
//! 1. [`probe`] finds the MPI implementation to build against (`REDIO_MPI`,
//!    `MPICC`, or `mpicc` on the PATH) and its include directories.
//! 2. bindgen turns that implementation's own `mpi.h` into Rust declarations.
//! 3. [`wrappers`] reads those declarations back and writes the types and
//!    constants (`OUT_DIR/mpi_bindings.rs`), one `dlsym` stub per `PMPI_*`
//!    function (`OUT_DIR/mpi_pmpi.rs`) and one exported `MPI_*` wrapper for
//!    every `PMPI_*` function of the implementation
//!    (`OUT_DIR/mpi_wrappers.rs`): nothing is hand-picked; also one
//!    exported `PMPI_*` entry per wrapper, which Open MPI's Fortran bindings
//!    and MPICH's `mpi_f08` call (`OUT_DIR/mpi_fortran_entries.rs`).
//! 4. A tiny C shim, compiled with the same headers, exports the handle
//!    constants that are macros in `mpi.h` (`MPI_COMM_WORLD`, `MPI_BYTE`, …).
//!
//! libmpi is deliberately not linked and no `PMPI_*` symbol is referenced:
//! the application brings its own libmpi, and libredio.so must also load
//! into processes that are not MPI programs.

mod probe;
mod wrappers;

use std::path::PathBuf;

fn main() {
    let mpi = probe::find_mpi();
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));

    let mut builder = bindgen::Builder::default()
        .header("src/comm/shim.h")
        .allowlist_function("P?MPI_.*")
        .allowlist_type("MPI_.*")
        .allowlist_var("MPI_.*|redio_mpi_.*|redio_mpix_.*|redio_errhandler_.*")
        .layout_tests(false)
        .generate_comments(false)
        .parse_callbacks(Box::new(bindgen::CargoCallbacks::new()));
    for dir in &mpi.include_dirs {
        builder = builder.clang_arg(format!("-I{}", dir.display()));
    }
    let bindings = builder
        .generate()
        .unwrap_or_else(|e| panic!("bindgen failed on {}'s mpi.h: {e}", mpi.flavour.name()));
    let library_waits = matches!(mpi.flavour, probe::Flavour::Mpich);
    let generated = wrappers::generate(&bindings.to_string(), library_waits);
    for (file, text) in [
        ("mpi_bindings.rs", &generated.bindings),
        ("mpi_pmpi.rs", &generated.pmpi),
        ("mpi_wrappers.rs", &generated.wrappers),
        ("mpi_fortran_entries.rs", &generated.fortran_entries),
    ] {
        std::fs::write(out.join(file), text).expect("write generated source");
    }

    let mut shim = cc::Build::new();
    shim.file("src/comm/shim.c").warnings(true);
    for dir in &mpi.include_dirs {
        shim.include(dir);
    }
    shim.compile("redio_mpi_shim");

    println!("cargo:rustc-cfg=redio_mpi=\"{}\"", mpi.flavour.cfg());
    println!("cargo:rustc-check-cfg=cfg(redio_mpi, values(\"mpich\", \"openmpi\", \"openmpi5\"))");
    println!("cargo:rerun-if-changed=src/comm/shim.c");
    println!("cargo:rerun-if-changed=src/comm/shim.h");
    println!("cargo:rerun-if-changed=build");
}
