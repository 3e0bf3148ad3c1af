//! MPI-IO from Python: Debian's mpi4py (built against Open MPI 4.1) writes
//! through `MPI.File` (`tests/programs/stacks/mpi4py_mpiio.py`). The
//! interpreter is `/usr/bin/python3` (a `python3` earlier on the PATH may
//! have no mpi4py).

use crate::common::{repo, Mpi};
use crate::stacks::command_like_plain_and_written_once;

#[test]
fn mpi4py_mpi_io_is_coordinated_and_written_once_openmpi() {
    let script = repo().join("tests/programs/stacks/mpi4py_mpiio.py");
    let command = ["/usr/bin/python3".to_string(), script.display().to_string()];
    command_like_plain_and_written_once(Mpi::OpenMpi, &command, "mpi4py-openmpi", &[2, 3], &[]);
}
