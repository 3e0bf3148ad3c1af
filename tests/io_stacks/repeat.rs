//! The MPI-IO cases again and again: 50 replicated runs in a row, cycling
//! through every program and MPI of this suite at r=2 and r=3, each
//! compared with its plain run (stdout of every process, shared files byte
//! for byte). Races between replicas inside MPI-IO (a shared-pointer file,
//! a lock, the order of an aggregator's writes) show up here, not in a
//! single run.

use crate::common::{compile_flavour, compile_linked, repo, Flavour, Launch, Mpi};
use crate::support::{assert_like_plain, check_success, replicated, Area, Reference, RANKS};
use redio::topology::LayoutKind;
use std::path::Path;

/// Replicated runs in all (`REDIO_IO_STACKS_RUNS` overrides).
const RUNS: usize = 50;

/// Seconds before a run counts as hung.
const TIMEOUT: u32 = 120;

/// One program: its MPI and its command (before the area's arguments).
struct Case {
    name: &'static str,
    mpi: Mpi,
    command: Vec<String>,
}

fn cases() -> Vec<Case> {
    let exe = |path: &Path| vec![path.display().to_string()];
    let surface = "io/mpiio_surface.c";
    let hdf5 = "stacks/h5_parallel.c";
    let python = repo().join("tests/programs/stacks/mpi4py_mpiio.py");
    vec![
        Case {
            name: "surface-mpich",
            mpi: Mpi::Mpich,
            command: exe(&compile_flavour(Mpi::Mpich, surface, Flavour::Fortify)),
        },
        Case {
            name: "surface-openmpi",
            mpi: Mpi::OpenMpi,
            command: exe(&compile_flavour(Mpi::OpenMpi, surface, Flavour::Fortify)),
        },
        Case {
            name: "surface-openmpi5",
            mpi: Mpi::OpenMpi5,
            command: exe(&compile_flavour(Mpi::OpenMpi5, surface, Flavour::Fortify)),
        },
        Case {
            name: "hdf5-mpich",
            mpi: Mpi::Mpich,
            command: exe(&compile_linked(Mpi::Mpich, hdf5, &["hdf5-mpich"])),
        },
        Case {
            name: "hdf5-openmpi",
            mpi: Mpi::OpenMpi,
            command: exe(&compile_linked(Mpi::OpenMpi, hdf5, &["hdf5-openmpi"])),
        },
        Case {
            name: "pnetcdf-openmpi",
            mpi: Mpi::OpenMpi,
            command: exe(&compile_linked(
                Mpi::OpenMpi,
                "stacks/pnetcdf_write.c",
                &["pnetcdf"],
            )),
        },
        Case {
            name: "mpi4py-openmpi",
            mpi: Mpi::OpenMpi,
            command: vec!["/usr/bin/python3".into(), python.display().to_string()],
        },
    ]
}

fn plain(case: &Case) -> Reference {
    let area = Area::new(&format!("repeat-{}-plain", case.name), false);
    let mut command = vec!["-n".to_string(), RANKS.to_string()];
    command.extend(case.command.iter().cloned());
    command.extend(area.args());
    let job = Launch::launcher(case.mpi, command).timeout(TIMEOUT).run();
    check_success(&job, &format!("plain run of {}", case.name));
    Reference { job, area }
}

#[test]
fn fifty_replicated_runs_of_the_mpi_io_cases_match_their_plain_runs() {
    let runs = std::env::var("REDIO_IO_STACKS_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(RUNS);
    let cases = cases();
    let references: Vec<Reference> = cases.iter().map(plain).collect();
    for run in 0..runs {
        let (case, reference) = (&cases[run % cases.len()], &references[run % cases.len()]);
        // Both degrees for every case: the cycle of 6 cases shifts by one
        // degree every round.
        let degree = 2 + ((run + run / cases.len()) % 2) as u32;
        let what = format!("run {} of {runs}: {} r={degree}", run + 1, case.name);
        let area = Area::new(&format!("repeat-{}-{run}", case.name), true);
        let job = replicated(
            case.mpi,
            Path::new(&case.command[0]),
            &area,
            (degree, "block"),
            &case.command[1..],
            &[],
        );
        check_success(&job, &what);
        assert_like_plain(reference, &job, &area, degree, LayoutKind::Block, &what);
        // Keep the scratch space small: 50 areas of a few MiB each.
        let _ = std::fs::remove_dir_all(&area.root);
    }
}
