//! PnetCDF (Debian's 1.12, built against Open MPI 4.1):
//! `tests/programs/stacks/pnetcdf_write.c` defines a record variable and a
//! fixed one, writes slabs collectively and with a nonblocking put, and
//! reads them back.

use crate::common::{compile_linked, Mpi};
use crate::stacks::like_plain_and_written_once;

#[test]
fn pnetcdf_files_are_the_plain_runs_and_written_once_openmpi() {
    let exe = compile_linked(Mpi::OpenMpi, "stacks/pnetcdf_write.c", &["pnetcdf"]);
    like_plain_and_written_once(Mpi::OpenMpi, &exe, "pnetcdf-openmpi", &[2, 3], &[]);
}
