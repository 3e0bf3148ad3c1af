//! The MPI-IO surface HDF5, PnetCDF and checkpoint libraries use
//! (`tests/programs/io/mpiio_surface.c`): views over derived datatypes,
//! explicit offsets, individual and shared file pointers, collective,
//! split-collective and nonblocking transfers, size changes, the open
//! modes and their errors, delete.

use crate::common::{compile_flavour, Flavour, Launch, Mpi};
use crate::stacks::like_plain_and_written_once;
use crate::support::{check_success, Area, RANKS};

const SURFACE: &str = "io/mpiio_surface.c";

#[test]
fn the_mpi_io_surface_is_coordinated_and_written_once_mpich() {
    let exe = compile_flavour(Mpi::Mpich, SURFACE, Flavour::Fortify);
    like_plain_and_written_once(Mpi::Mpich, &exe, "mpiio-mpich", &[2, 3], &[]);
}

#[test]
fn the_mpi_io_surface_is_coordinated_and_written_once_openmpi() {
    let exe = compile_flavour(Mpi::OpenMpi, SURFACE, Flavour::Fortify);
    like_plain_and_written_once(Mpi::OpenMpi, &exe, "mpiio-openmpi", &[2, 3], &[]);
}

/// Open MPI 5's OMPIO completes nonblocking requests inside its progress
/// engine, where it also releases its region locks and posts the pieces
/// beyond 2048: redio must coordinate those calls without running that
/// progress again (`comm::io_progress`).
#[test]
fn the_mpi_io_surface_is_coordinated_and_written_once_openmpi5() {
    let exe = compile_flavour(Mpi::OpenMpi5, SURFACE, Flavour::Fortify);
    like_plain_and_written_once(Mpi::OpenMpi5, &exe, "mpiio-openmpi5", &[2, 3], &[]);
}

/// ROMIO's own waits inside an MPI-IO call are polled, not spun, under
/// redundancy (`comm::library_waits`): rank 0 enters a collective write 2 s
/// before the others (`mpiio_wait.c`). Spinning, it would use about a CPU-
/// second per second it gets a core; polled, a few hundredths in all. The
/// bound (a quarter of the wait) leaves room for a loaded machine, where
/// the polled wait's tests are late but no more numerous.
#[test]
fn romio_waits_inside_mpi_io_sleep_instead_of_spinning_mpich() {
    let exe = compile_flavour(Mpi::Mpich, "io/mpiio_wait.c", Flavour::Fortify);
    for degree in [2, 3] {
        let area = Area::new(&format!("mpiio-wait-r{degree}"), true);
        let job = Launch::redio(Mpi::Mpich, RANKS, degree, "block", &exe)
            .config(&area.config)
            .args(area.args())
            .output("all")
            .timeout(120)
            .run();
        let what = format!("mpiio_wait.c, MPICH r={degree}");
        check_success(&job, &what);
        let leaders: Vec<&String> = job
            .ranks
            .values()
            .filter(|out| out.starts_with("waited "))
            .collect();
        assert_eq!(
            leaders.len(),
            degree as usize,
            "{what}: one line from rank 0 of each replica expected:\n{:?}",
            job.ranks
        );
        for line in leaders {
            let words: Vec<f64> = line
                .split_whitespace()
                .filter_map(|w| w.parse().ok())
                .collect();
            let [waited, cpu] = words[..] else {
                panic!("{what}: unexpected line {line:?}");
            };
            assert!(
                waited >= 1.5,
                "{what}: rank 0 waited only {waited} s, so the test did not test a wait: {line:?}"
            );
            assert!(
                cpu < waited / 4.0,
                "{what}: rank 0 used {cpu} CPU-seconds while it waited {waited} s inside \
                 MPI_File_write_at_all: ROMIO's wait spun"
            );
        }
    }
}
