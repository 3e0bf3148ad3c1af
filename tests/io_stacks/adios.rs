//! ADIOS 1 (Debian's 1.13, `libadios-mpich-dev` and `libadios-openmpi-dev`;
//! Debian 12 has no ADIOS2): `tests/programs/stacks/adios_write.c` writes a
//! checkpoint of scalars and a global array decomposed by rank with the
//! "MPI" method (MPI-IO), two steps, the second appended, and reads it back
//! with the BP read API.

use crate::common::{compile_with_flags, pkg_config, Mpi};
use crate::stacks::like_plain_and_written_once;
use std::path::PathBuf;

const PROGRAM: &str = "stacks/adios_write.c";

/// The program built against Debian's ADIOS for `mpi`. Debian's
/// `adios-<mpi>.pc` does not link as it stands: `libadios.a` is in
/// `<libdir>/adios/<mpi>/`, which it does not name; it asks for a parallel
/// NetCDF, which Debian builds only against Open MPI (the program stands in
/// for the entry points of ADIOS's NetCDF-4 method, never used), and for
/// GLib, which nothing linked here references. `--wrap=gettimeofday` gives
/// ADIOS the program's fixed clock (see the program).
fn build(mpi: Mpi) -> PathBuf {
    let package = format!("adios-{}", mpi.key());
    let libdir = pkg_config(&["--variable=libdir", &package]);
    let mut flags = vec![format!("-L{libdir}/adios/{}", mpi.key())];
    flags.extend(
        pkg_config(&["--cflags", "--libs", &package])
            .split_whitespace()
            .filter(|flag| !flag.contains("netcdf") && !flag.contains("glib"))
            .map(str::to_string),
    );
    flags.push("-Wl,--wrap=gettimeofday".into());
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    compile_with_flags(mpi, PROGRAM, &flags)
}

#[test]
fn adios_files_are_the_plain_runs_and_written_once_mpich() {
    let exe = build(Mpi::Mpich);
    like_plain_and_written_once(Mpi::Mpich, &exe, "adios-mpich", &[2, 3], &[]);
}

#[test]
fn adios_files_are_the_plain_runs_and_written_once_openmpi() {
    let exe = build(Mpi::OpenMpi);
    like_plain_and_written_once(Mpi::OpenMpi, &exe, "adios-openmpi", &[2, 3], &[]);
}
