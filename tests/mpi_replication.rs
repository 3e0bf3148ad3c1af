//! Replicated MPI programs: under redio with `r` replicas, every replica
//! prints exactly what a plain `N`-rank run prints.
//!
//! The jobs run with `--output all` (the harness's default), so that each
//! replica's stdout reaches its own file, every line prefixed with the
//! replica that printed it; tests/output.rs checks the default, each line
//! once.
//!
//! Each C program in `tests/programs/` runs plain with `N` ranks, then under
//! `redio run` with r=1, 2 and 3 in block and cyclic layouts. MPICH runs the
//! full set, Open MPI 4.1 and Open MPI 5 (with `--with-ft ulfm`) a
//! representative subset.

mod common;

use common::{compile, Launch, Mpi};
use redio::topology::{LayoutKind, Topology};

/// Logical ranks of every test job: odd, so that rings and halves are not
/// symmetric by accident.
const RANKS: u32 = 3;

const CONFIGURATIONS: [(u32, &str, LayoutKind); 5] = [
    (1, "block", LayoutKind::Block),
    (2, "block", LayoutKind::Block),
    (2, "cyclic", LayoutKind::Cyclic),
    (3, "block", LayoutKind::Block),
    (3, "cyclic", LayoutKind::Cyclic),
];

fn replicas_match_plain_run(mpi: Mpi, program: &str) {
    let exe = compile(mpi, program);
    let plain = Launch::plain(mpi, RANKS, &exe).run();
    plain.assert_success();
    assert_eq!(
        plain.ranks.len() as u32,
        RANKS,
        "plain run output: {plain:#?}"
    );
    assert!(
        plain.ranks.values().all(|out| !out.is_empty()),
        "plain run printed nothing: {plain:#?}"
    );

    for (degree, layout, kind) in CONFIGURATIONS {
        let job = Launch::redio(mpi, RANKS, degree, layout, &exe).run();
        job.assert_success();
        let topology = Topology::regular(RANKS * degree, degree, kind).unwrap();
        assert_eq!(
            job.ranks.len() as u32,
            RANKS * degree,
            "{program} r={degree} {layout}"
        );
        for (world, output) in &job.ranks {
            let placement = topology.place(*world);
            assert_eq!(
                output, &plain.ranks[&placement.rank],
                "{program} under {mpi:?} r={degree} {layout}: world rank {world} \
                 (replica {}, rank {}) differs from plain rank {}",
                placement.replica, placement.rank, placement.rank
            );
            // `--output all`: every line came from the replica it names.
            assert_eq!(
                job.replicas.get(world),
                Some(&placement.replica),
                "{program} under {mpi:?} r={degree} {layout}: world rank {world}'s lines \
                 must carry the prefix [replica {}]",
                placement.replica
            );
        }
        let startup = format!(
            "redio: {} processes = {RANKS} ranks x {degree} replica",
            RANKS * degree
        );
        assert_eq!(
            job.stderr.matches(&startup).count(),
            1,
            "start-up line must come once, from world rank 0:\n{}",
            job.stderr
        );
        assert!(
            job.stderr.contains(&format!("({layout})")),
            "{}",
            job.stderr
        );
    }
}

#[test]
fn point_to_point_mpich() {
    replicas_match_plain_run(Mpi::Mpich, "p2p");
}

#[test]
fn collectives_mpich() {
    replicas_match_plain_run(Mpi::Mpich, "collectives");
}

#[test]
fn communicator_management_mpich() {
    replicas_match_plain_run(Mpi::Mpich, "comms");
}

#[test]
fn one_sided_mpich() {
    replicas_match_plain_run(Mpi::Mpich, "onesided");
}

#[test]
fn point_to_point_openmpi() {
    replicas_match_plain_run(Mpi::OpenMpi, "p2p");
}

#[test]
fn collectives_openmpi() {
    replicas_match_plain_run(Mpi::OpenMpi, "collectives");
}

#[test]
fn communicator_management_openmpi() {
    replicas_match_plain_run(Mpi::OpenMpi, "comms");
}

#[test]
fn point_to_point_openmpi5() {
    replicas_match_plain_run(Mpi::OpenMpi5, "p2p");
}

#[test]
fn collectives_openmpi5() {
    replicas_match_plain_run(Mpi::OpenMpi5, "collectives");
}
