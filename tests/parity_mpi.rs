//! Lazy parity computed inside real MPI jobs: a C application writes
//! node-local checkpoint files under `redio run`; the preload computes the
//! redundancy files at `MPI_Finalize` (or in `redio_protect`) over MPI;
//! then the files of lost ranks are deleted and rebuilt with
//! `redio parity rebuild --offline`, and checked byte for byte with their
//! mode and mtime. Every job runs under `timeout` (see `common`).

mod common;

use common::parity::{
    contents, data_only, header, rank_dir, rank_dirs, redio, snapshot, text, Case,
};
use common::{compile, fresh_dir, Launch, Mpi};
use redio_parity::format::Header;
use std::collections::BTreeMap;
use std::path::Path;

/// Deletes everything of the logical ranks `lost` (their whole directory).
fn lose(data: &Path, replica: u32, lost: &[u32]) {
    for &r in lost {
        let d = rank_dir(data, replica, r);
        std::fs::remove_dir_all(&d).unwrap();
        std::fs::create_dir_all(&d).unwrap();
    }
}

/// The full check of one case: redundancy files left by the job, a healthy
/// verify, the loss of `tolerance` members of the first set rebuilt
/// byte-identical with metadata, one more refused with nothing written.
fn check(case: &Case) {
    check_data(case, &case.run());
}

/// [`check`] on the files the job of `case` left under `data`.
fn check_data(case: &Case, data: &Path) {
    for replica in 0..case.degree {
        check_replica(case, data, replica);
    }
}

/// [`check`] on the files of one replica of the job of `case`.
fn check_replica(case: &Case, data: &Path, replica: u32) {
    let data = data.to_path_buf();
    let dirs = rank_dirs(&data, replica, case.ranks);
    let sets: BTreeMap<u32, Vec<u32>> = dirs
        .iter()
        .map(|d| {
            let h = header(d);
            (h.set_id, h.members.iter().map(|m| m.logical_rank).collect())
        })
        .collect();
    let o = redio(&["parity", "verify", "--offline"], &dirs);
    assert_eq!(o.status.code(), Some(0), "{}: {}", case.name(), text(&o));
    let before = snapshot(&dirs);
    let first = &sets[&0];
    let k = case.tolerance();
    if k > 0 {
        lose(&data, replica, &first[..k]);
        let o = redio(&["parity", "rebuild", "--offline"], &dirs);
        assert_eq!(o.status.code(), Some(0), "{}: {}", case.name(), text(&o));
        let after = snapshot(&dirs);
        assert_eq!(
            data_only(&after),
            data_only(&before),
            "{}: files, modes, mtimes",
            case.name()
        );
        assert_eq!(contents(&after), contents(&before), "{}", case.name());
    }
    if k < first.len() {
        lose(&data, replica, &first[..k + 1]);
        let o = redio(&["parity", "rebuild", "--offline"], &dirs);
        assert_eq!(o.status.code(), Some(2), "{}: {}", case.name(), text(&o));
        assert!(
            text(&o).contains("nothing written"),
            "{}: {}",
            case.name(),
            text(&o)
        );
        for &r in &first[..k + 1] {
            let d = rank_dir(&data, replica, r);
            assert_eq!(std::fs::read_dir(&d).unwrap().count(), 0, "{}", d.display());
        }
    }
}

#[test]
fn xor_rebuilds_one_lost_rank_per_set_and_refuses_two() {
    // 2, 3 and 4 ranks in one set; 6 ranks in sets of 4 leave two sets of
    // 3; 8 ranks in sets of 3 leave sets of 3, 3 and 2 (remainder sets).
    for (ranks, set) in [(2, 2), (3, 3), (4, 4), (6, 4), (8, 3)] {
        check(&Case::new("xor", ranks, set));
    }
}

#[test]
fn rs2_rebuilds_two_lost_ranks_per_set_and_refuses_three() {
    for (ranks, set) in [(3, 3), (4, 4), (6, 4), (8, 4)] {
        check(&Case::new("rs", ranks, set));
    }
}

#[test]
fn partner_rebuilds_one_lost_rank_and_refuses_two() {
    for (ranks, set) in [(2, 2), (3, 3), (4, 4), (6, 4), (8, 3)] {
        check(&Case::new("partner", ranks, set));
    }
}

#[test]
fn single_records_metadata_and_refuses_any_loss() {
    for (ranks, set) in [(2, 2), (3, 3), (4, 4), (6, 4), (8, 3)] {
        check(&Case::new("single", ranks, set));
    }
}

#[test]
fn two_replicas_each_protect_their_own_files() {
    // Every scheme at r = 2, with a remainder set where the scheme allows.
    for (scheme, ranks, set) in [
        ("xor", 4, 4),
        ("xor", 6, 4),
        ("rs", 3, 4),
        ("partner", 6, 4),
        ("single", 2, 2),
    ] {
        let mut case = Case::new(scheme, ranks, set);
        case.degree = 2;
        check(&case);
    }
}

#[test]
fn when_close_protects_at_the_barrier_after_the_files_are_closed() {
    let mut case = Case::new("xor", 4, 4);
    case.at_barriers = true;
    let (data, out) = case.run_job();
    // Each rank found its redundancy file right after the first barrier,
    // long before MPI_Finalize.
    assert_eq!(out.matches("after-barrier 1").count(), 4, "{out}");
    // The first file was rewritten and closed, then came a second barrier:
    // a healthy verify shows the parity was computed again for the new
    // contents (the old header's CRC would not match them).
    check_data(&case, &data);
}

#[test]
fn reduce_scatter_engine_gives_parity_that_verifies_and_rebuilds() {
    // verify recomputes the parity, so a wrong byte from this engine fails.
    for (scheme, ranks, set) in [("xor", 2, 2), ("xor", 6, 4), ("rs", 4, 4), ("rs", 8, 4)] {
        let mut case = Case::new(scheme, ranks, set);
        case.engine = Some("reduce_scatter");
        check(&case);
    }
}

/// The parity code's own switches in the job's environment: the job
/// starts (they once were refused as unknown `parity` keys), and the
/// scalar kernel's parity verifies against the fastest kernel's.
#[test]
fn the_scalar_kernel_forced_by_environment_gives_the_same_parity() {
    let mut case = Case::new("rs", 4, 4);
    case.scalar_kernel = true;
    check(&case);
}

#[test]
fn redio_protect_called_by_the_application() {
    let mut case = Case::new("rs", 4, 4);
    case.protect_call = true;
    check(&case);
}

#[test]
fn redio_protect_with_a_bad_path_on_one_rank_fails_on_every_rank() {
    let base = fresh_dir("pm-protect-bad");
    let config = base.join("redio.yaml");
    let d = base.display();
    std::fs::write(
        &config,
        format!(
            "version: 1\nlocal:\n  paths: [\"{d}\"]\nparity:\n  scheme: xor\n  set_size: 3\n  \
             when: manual\n  failure_group: \"n{{rank}}\"\n"
        ),
    )
    .unwrap();
    let exe = compile(Mpi::Mpich, "parity_ckpt");
    let job = Launch::redio(Mpi::Mpich, 3, 1, "block", &exe)
        .config(&config)
        .args([d.to_string(), "5000".into(), "protect-bad".into()])
        .timeout(60)
        .run();
    assert!(!job.timed_out(), "{job:#?}");
    for r in 0..3 {
        assert_eq!(
            job.ranks.get(&r).map(String::as_str),
            Some("protect -1\n"),
            "{job:#?}"
        );
    }
    assert!(
        job.stderr.contains("relative.dat: not an absolute path"),
        "{}",
        job.stderr
    );
    let rdps = snapshot(std::slice::from_ref(&base))
        .keys()
        .filter(|p| p.to_string_lossy().contains(".rdp"))
        .count();
    assert_eq!(rdps, 0, "nothing committed");
}

#[test]
fn open_mpi_computes_the_same_parity() {
    let mut case = Case::new("xor", 4, 4);
    case.mpi = Mpi::OpenMpi;
    check(&case);
}

#[test]
fn flipped_data_byte_is_reported_by_verify_and_repaired_by_rebuild() {
    let data = Case::new("xor", 4, 4).run();
    let dirs = rank_dirs(&data, 0, 4);
    let before = snapshot(&dirs);
    let victim = rank_dir(&data, 0, 2).join("ckpt.dat");
    let mut bytes = std::fs::read(&victim).unwrap();
    bytes[1234] ^= 0x10;
    let mtime = std::fs::metadata(&victim).unwrap().modified().unwrap();
    std::fs::write(&victim, &bytes).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&victim)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    let o = redio(&["parity", "verify", "--offline"], &dirs);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("ckpt.dat"), "{}", text(&o));
    assert!(text(&o).to_lowercase().contains("crc"), "{}", text(&o));
    let o = redio(&["parity", "rebuild", "--offline"], &dirs);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(contents(&snapshot(&dirs)), contents(&before));
}

#[test]
fn damaged_redundancy_files_are_detected_with_clear_messages() {
    let data = Case::new("rs", 4, 4).run();
    let dirs = rank_dirs(&data, 0, 4);
    let rdp = |r: u32| {
        std::fs::read_dir(rank_dir(&data, 0, r))
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|x| x == "rdp"))
            .unwrap()
    };
    // A payload byte of member 1's parity.
    let f1 = rdp(1);
    let original = std::fs::read(&f1).unwrap();
    let hlen = Header::length_from_prefix(&original[..16]).unwrap() as usize;
    let mut b = original.clone();
    b[hlen + 5] ^= 0x01;
    std::fs::write(&f1, &b).unwrap();
    let o = redio(&["parity", "verify", "--offline"], &dirs);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("CRC32"), "{}", text(&o));
    // And a truncated header on member 3.
    let f3 = rdp(3);
    let b3 = std::fs::read(&f3).unwrap();
    std::fs::write(&f3, &b3[..hlen / 3]).unwrap();
    let o = redio(&["parity", "verify", "--offline"], &dirs);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("redundancy file damaged"), "{}", text(&o));
    let o = redio(&["parity", "rebuild", "--offline"], &dirs);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(std::fs::read(&f1).unwrap(), original);
    assert_eq!(std::fs::read(&f3).unwrap(), b3);
}

#[test]
fn a_relative_files_pattern_is_refused_before_the_job_starts() {
    // A pattern that is not absolute would be refused by every rank at run
    // time, leaving the job without redundancy although it exits 0: the
    // configuration check refuses it first, at its line and column, and
    // nothing runs (issue 19).
    let base = fresh_dir("pm-bad-pattern");
    let config = base.join("redio.yaml");
    std::fs::write(
        &config,
        format!(
            "version: 1\nlocal:\n  paths: [\"{}\"]\nparity:\n  scheme: xor\n  set_size: 2\n  \
             failure_group: \"n{{rank}}\"\n  files: [\"relative/*.dat\"]\n",
            base.display()
        ),
    )
    .unwrap();
    let exe = compile(Mpi::Mpich, "parity_ckpt");
    let job = Launch::redio(Mpi::Mpich, 2, 1, "block", &exe)
        .config(&config)
        .args([base.display().to_string(), "1000".into()])
        .timeout(60)
        .run();
    assert_eq!(job.code, Some(2), "{}", job.stderr);
    assert!(
        job.stderr.contains(
            "redio.yaml:8:11: parity.files[0]: \"relative/*.dat\" is not an absolute path"
        ),
        "{}",
        job.stderr
    );
    let rdps = snapshot(std::slice::from_ref(&base))
        .keys()
        .filter(|p| p.extension().is_some_and(|x| x == "rdp"))
        .count();
    assert_eq!(rdps, 0);
}

/// Whether `dir` holds a redundancy file.
fn has_redundancy(dir: &Path) -> bool {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .any(|e| e.file_name().to_string_lossy().ends_with(".rdp"))
}

/// `parity.when: finalize` in a job that survived a replica's death: the
/// surviving replica still protects its checkpoint at `MPI_Finalize`, and
/// one lost rank of it rebuilds byte-identical; stderr names the replica
/// whose files are left unprotected. Killed: a process of
/// replica 0, then one of replica 1 (block layout, N=4: world ranks 0-3
/// are replica 0), in its second shared write (coordinated operation
/// 9), after its checkpoint files.
fn a_replica_death_still_leaves_the_survivors_files_protected(mpi: Mpi) {
    for (die, victim, survivor) in [("1:9:kill", 1, 1), ("6:9:kill", 6, 0)] {
        let mut case = Case::new("xor", 4, 4);
        case.mpi = mpi;
        case.degree = 2;
        case.die = Some(die);
        let (data, job) = case.launch();
        // The victim wrote no redundancy file: it did die before the end.
        let lost = rank_dir(&data, 1 - survivor, victim % 4);
        assert!(
            !has_redundancy(&lost),
            "{}: {}",
            case.name(),
            lost.display()
        );
        // The user is told which replica's files are unprotected.
        let told = format!(
            "parity: replica(s) {} lost a process: their files got no redundancy file",
            1 - survivor
        );
        assert!(
            job.stderr.contains(&told),
            "{}: {}",
            case.name(),
            job.stderr
        );
        check_replica(&case, &data, survivor);
    }
}

#[test]
fn a_replica_death_still_leaves_the_survivors_files_protected_mpich() {
    a_replica_death_still_leaves_the_survivors_files_protected(Mpi::Mpich);
}

#[test]
fn a_replica_death_still_leaves_the_survivors_files_protected_openmpi() {
    a_replica_death_still_leaves_the_survivors_files_protected(Mpi::OpenMpi);
}

#[test]
fn a_replica_death_still_leaves_the_survivors_files_protected_openmpi5() {
    a_replica_death_still_leaves_the_survivors_files_protected(Mpi::OpenMpi5);
}

/// Issue 44, item 8, in the job: a replica killed in the protect step
/// left its redundancy temporary (~12 MB) in every rank's directory. The
/// next protect step removes such files (held by nobody) and still
/// writes its redundancy.
#[test]
fn the_protect_step_removes_redundancy_temporaries_that_nobody_holds() {
    let mut case = Case::new("xor", 3, 3);
    case.stale_tmp = true;
    let data = case.run();
    for r in 0..3 {
        let dir = rank_dir(&data, 0, r);
        let stale = dir.join(format!(".redio-parity.s9.m{r}.rdp.redio-tmp.4194303.0"));
        assert!(!stale.exists(), "{} left", stale.display());
        assert_eq!(header(&dir).members.len(), 3);
    }
}
