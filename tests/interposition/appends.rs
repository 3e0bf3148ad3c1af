//! Appends from several ranks to one shared file (issue 18): `io_appends.c`
//! has every rank append 150 lines to one log through an `O_APPEND`
//! descriptor and 150 to another through an `fopen("a")` stream, with no
//! barrier in between. As in a plain run, each file must hold every line
//! of every rank exactly once, and each line must end where the
//! descriptor's offset said after its write, on every replica.
//!
//! Before Append Write (`protocols/src/write/append.rs`) redio placed an
//! append at the file size its leader had seen one operation earlier, so
//! two ranks' lines could land at one offset: the same run lost lines
//! ("… 2xx of 300 present exactly once").

use crate::common::{compile_flavour, Flavour, Mpi};
use crate::support::{assert_stdout_matches, check_success, reference, replicated, Area};
use redio::topology::LayoutKind;

const APPENDS: &str = "io/io_appends.c";

/// `io_appends` under redio at each of `degrees` and `write` protocol,
/// against its plain run: every process prints the plain run's lines
/// (which include rank 0's count of lines present once) and the files have
/// the plain run's sizes.
fn appends_like_plain(mpi: Mpi, degrees: &[u32], write: &str) {
    let plain = reference(mpi, APPENDS, Flavour::O0, &[]);
    let summary = "300 of 300 present exactly once";
    assert!(
        plain
            .job
            .ranks
            .get(&0)
            .is_some_and(|out| out.contains(summary)),
        "the plain run must keep every line:\n{:#?}",
        plain.job
    );
    let exe = compile_flavour(mpi, APPENDS, Flavour::O0);
    for &degree in degrees {
        let what = format!("io_appends under {mpi:?}, r={degree}, write {write}");
        let area = Area::new(&format!("{}-appends-{write}-r{degree}", mpi.key()), true);
        let yaml = std::fs::read_to_string(&area.config)
            .unwrap()
            .replace("write: simple", &format!("write: {write}"));
        std::fs::write(&area.config, yaml).unwrap();
        let job = replicated(mpi, &exe, &area, (degree, "block"), &[], &[]);
        check_success(&job, &what);
        assert_stdout_matches(&plain.job, &job, degree, LayoutKind::Block, &what, |out| {
            out.to_string()
        });
        for name in ["appends.log", "appends.txt"] {
            let size = |dir: &std::path::Path| std::fs::metadata(dir.join(name)).unwrap().len();
            assert_eq!(
                size(&area.shared),
                size(&plain.area.shared),
                "{what}: {name} must hold every line once"
            );
        }
    }
}

#[test]
fn appends_of_every_rank_to_one_file_are_all_kept_mpich() {
    appends_like_plain(Mpi::Mpich, &[2, 3], "simple");
}

#[test]
fn appends_are_kept_under_distributed_write_openmpi() {
    // Append Write whatever the file's write protocol.
    appends_like_plain(Mpi::OpenMpi, &[3], "distributed");
}
