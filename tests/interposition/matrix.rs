//! The main matrix: every program, in every flavour, plain against
//! replicated (degrees, layouts, MPI implementations), file by file; and
//! every read and write protocol against the plain run.

use crate::common::{compile_flavour, Flavour, Mpi};
use crate::support::{
    assert_like_plain, assert_local_copies, assert_same_files, check_success, first_difference,
    no_skip, reference, replicated, stem, Area, FSTREAM, PAIRS, POSIX, STDIO,
};
use redio::topology::LayoutKind;

/// Replicated runs of the main programs under MPICH (one cyclic run is added
/// for `io_posix -O0`).
const MPICH_RUNS: [(u32, &str, LayoutKind); 3] = [
    (1, "block", LayoutKind::Block),
    (2, "block", LayoutKind::Block),
    (3, "block", LayoutKind::Block),
];

/// Under Open MPI, a representative subset.
const OPENMPI_RUNS: [(u32, &str, LayoutKind); 1] = [(2, "block", LayoutKind::Block)];

/// Every read and write protocol name the configuration accepts.
const READ_PROTOCOLS: [&str; 8] = [
    "none",
    "simple",
    "extended-simple",
    "read-distribute",
    "chained",
    "chunked-chained",
    "distributed-chunked",
    "auto",
];
const WRITE_PROTOCOLS: [&str; 5] = [
    "none",
    "simple",
    "distributed",
    "distributed-separate",
    "auto",
];

pub(crate) fn replicas_match_plain(
    mpi: Mpi,
    source: &str,
    flavour: Flavour,
    runs: &[(u32, &str, LayoutKind)],
) {
    let exe = compile_flavour(mpi, source, flavour);
    let plain = reference(mpi, source, flavour, &[]);
    for &(degree, layout, kind) in runs {
        let what = format!("{source} ({flavour:?}) under {mpi:?}, r={degree} {layout}");
        let area = Area::new(
            &format!(
                "{}-{}-{}-r{degree}-{layout}",
                mpi.key(),
                stem(source),
                flavour.key()
            ),
            true,
        );
        let job = replicated(mpi, &exe, &area, (degree, layout), &[], &[]);
        check_success(&job, &what);
        assert_like_plain(&plain, &job, &area, degree, kind, &what);
        assert_local_copies(&plain.area, &area, degree, &what, &no_skip);
    }
}

#[test]
fn posix_o0_mpich() {
    let mut runs = MPICH_RUNS.to_vec();
    runs.push((2, "cyclic", LayoutKind::Cyclic));
    replicas_match_plain(Mpi::Mpich, POSIX, Flavour::O0, &runs);
}

#[test]
fn posix_fortify_mpich() {
    replicas_match_plain(Mpi::Mpich, POSIX, Flavour::Fortify, &MPICH_RUNS);
}

#[test]
fn posix_fortify64_mpich() {
    replicas_match_plain(Mpi::Mpich, POSIX, Flavour::Fortify64, &MPICH_RUNS);
}

#[test]
fn stdio_o0_mpich() {
    replicas_match_plain(Mpi::Mpich, STDIO, Flavour::O0, &MPICH_RUNS);
}

#[test]
fn stdio_fortify_mpich() {
    replicas_match_plain(Mpi::Mpich, STDIO, Flavour::Fortify, &MPICH_RUNS);
}

#[test]
fn stdio_fortify64_mpich() {
    replicas_match_plain(Mpi::Mpich, STDIO, Flavour::Fortify64, &MPICH_RUNS);
}

#[test]
fn fstream_mpich() {
    replicas_match_plain(Mpi::Mpich, FSTREAM, Flavour::Cxx, &MPICH_RUNS);
}

#[test]
fn posix_fortify_openmpi() {
    replicas_match_plain(Mpi::OpenMpi, POSIX, Flavour::Fortify, &OPENMPI_RUNS);
}

#[test]
fn fstream_openmpi() {
    replicas_match_plain(Mpi::OpenMpi, FSTREAM, Flavour::Cxx, &OPENMPI_RUNS);
}

#[test]
fn posix_fortify_openmpi5() {
    replicas_match_plain(Mpi::OpenMpi5, POSIX, Flavour::Fortify, &OPENMPI_RUNS);
}

/// Plain runs only: the C flavours of a program do the same thing, so the
/// flavour matrix tests entry points, not different programs.
#[test]
fn c_flavours_behave_alike_in_plain_runs() {
    for source in [POSIX, STDIO] {
        let o0 = reference(Mpi::Mpich, source, Flavour::O0, &[]);
        for flavour in [Flavour::Fortify, Flavour::Fortify64] {
            let other = reference(Mpi::Mpich, source, flavour, &[]);
            let what = format!("plain {source}: {flavour:?} against O0");
            for (rank, out) in &o0.job.ranks {
                assert!(
                    other.job.ranks[rank] == *out,
                    "{what}: rank {rank}: {}",
                    first_difference(out, &other.job.ranks[rank])
                );
            }
            assert_same_files(&o0.area.shared, &other.area.shared, &what, &no_skip);
            assert_same_files(&o0.area.local, &other.area.local, &what, &no_skip);
        }
    }
}

/// Every read and write protocol gives the plain run's results: the programs
/// read back what they wrote, seek, stat and append under each pair, with a
/// small chunk so that the chunked protocols really cut buffers.
#[test]
fn every_protocol_matches_plain_mpich() {
    let mpi = Mpi::Mpich;
    let pairs = [
        ("extended-simple", "distributed"),
        ("read-distribute", "simple"),
        ("chained", "distributed"),
        ("chunked-chained", "simple"),
        ("distributed-chunked", "distributed"),
        ("auto", "distributed-separate"),
        ("simple", "auto"),
    ];
    for (source, flavour) in [(POSIX, Flavour::Fortify64), (STDIO, Flavour::O0)] {
        let exe = compile_flavour(mpi, source, flavour);
        let plain = reference(mpi, source, flavour, &[]);
        for (read, write) in pairs {
            for degree in [2, 3] {
                let what = format!("{source} ({flavour:?}) r={degree}, read {read}, write {write}");
                let area = Area::new(
                    &format!("protocols-{}-{read}-{write}-r{degree}", stem(source)),
                    true,
                );
                let env = [
                    ("REDIO_IO_READ", read),
                    ("REDIO_IO_WRITE", write),
                    ("REDIO_IO_CHUNK_SIZE", "64"),
                ];
                let job = replicated(mpi, &exe, &area, (degree, "block"), &[], &env);
                check_success(&job, &what);
                assert!(
                    !job.stderr.contains("not implemented"),
                    "{what}: fell back to another protocol:\n{}",
                    job.stderr
                );
                assert_like_plain(&plain, &job, &area, degree, LayoutKind::Block, &what);
            }
        }
    }
}

/// An application reads back its own data under every read/write protocol
/// pair: one job per degree, one file per pair, each file sent through its
/// pair by a rule. The program compares what it reads with what it wrote.
#[test]
fn every_pair_reads_back_what_it_wrote_mpich() {
    let mpi = Mpi::Mpich;
    let exe = compile_flavour(mpi, PAIRS, Flavour::O0);
    let mut pairs = Vec::new();
    for read in READ_PROTOCOLS {
        for write in WRITE_PROTOCOLS {
            // none/none passes the file through entirely: the replicas
            // truncate and write one file each on their own, a race by
            // design (as in io_rules), so reading back is not defined.
            if (read, write) != ("none", "none") {
                pairs.push((read, write));
            }
        }
    }
    for degree in [2, 3] {
        let area = Area::new(&format!("pairs-r{degree}"), true);
        let mut yaml = format!(
            "version: 1\nshared:\n  paths: [\"{}\"]\nio:\n  chunk_size: 4096\n  rules:\n",
            area.shared.display()
        );
        for (i, (read, write)) in pairs.iter().enumerate() {
            yaml += &format!("    - {{path: \"pair.*.{i}.dat\", read: {read}, write: {write}}}\n");
        }
        std::fs::write(&area.config, yaml).unwrap();
        let count = pairs.len().to_string();
        let job = replicated(
            mpi,
            &exe,
            &area,
            (degree, "block"),
            &[],
            &[("IO_PAIRS", &count)],
        );
        check_success(&job, &format!("io_pairs r={degree}"));
        for (world, out) in &job.ranks {
            for (i, (read, write)) in pairs.iter().enumerate() {
                for how in ["pread", "read in steps 75001 bytes,"] {
                    assert!(
                        out.lines()
                            .any(|l| l.contains(&format!("pair {i}: {how}"))
                                && l.ends_with("matches")),
                        "r={degree} world rank {world}, read {read} write {write}: {how} \
                         must read back what was written:\n{out}"
                    );
                }
            }
        }
        let leftovers: Vec<_> = std::fs::read_dir(&area.shared)
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| name.contains(".redio-part"))
            .collect();
        assert!(
            leftovers.is_empty(),
            "r={degree}: part files left behind: {leftovers:?}"
        );
    }
}
