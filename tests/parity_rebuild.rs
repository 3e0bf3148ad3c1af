//! The collective `redio parity verify | rebuild` (an MPI job of one
//! process per logical rank): a C application writes node-local checkpoint
//! files under `redio run` with `parity.when: finalize`; then whole rank
//! directories ("nodes") are deleted, data and redundancy bytes flipped,
//! headers truncated or made unsafe, and the collective commands must
//! rebuild byte-identical files with mode and mtime, or refuse with a clear
//! message and write nothing. Every command runs under `timeout`.

mod common;

use common::parity::{
    contents, data_only, header, parity_dir, rank_dir, rank_dirs, snapshot, text, Case,
};
use common::{fresh_dir, launch_lock, redio_bin, Mpi};
use redio_parity::format::{Header, TRAILER_MAGIC};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs `redio ARGS` under `timeout`, one MPI job on the machine at a time.
fn redio_job(args: &[String]) -> Output {
    let _machine = launch_lock();
    Command::new("timeout")
        .args(["-k", "5", "90"])
        .arg(redio_bin())
        .args(args)
        .output()
        .expect("run redio")
}

/// [`redio_job`] with `REDIO_PARITY_PROGRESS` set to `interval`.
fn redio_job_with_progress(args: &[String], interval: &str) -> Output {
    let _machine = launch_lock();
    Command::new("timeout")
        .args(["-k", "5", "90"])
        .arg(redio_bin())
        .args(args)
        .env("REDIO_PARITY_PROGRESS", interval)
        .output()
        .expect("run redio")
}

/// Runs `redio parity OP` as an MPI job of `ranks` ranks on the rank
/// directories of `replica` under `data` (`--root …/rank{rank}`).
fn collective(op: &str, mpi: Mpi, data: &Path, replica: u32, ranks: u32) -> Output {
    let root = format!("{}/r{replica}/rank{{rank}}", data.display());
    let args = ["parity", op, "--mpi", mpi.key(), "-n", &ranks.to_string()];
    let args: Vec<String> = args
        .into_iter()
        .chain(["--root", &root, "--piece", "65536"])
        .map(String::from)
        .collect();
    redio_job(&args)
}

/// Every entry under `dirs` with its size, not following symlinks (what a
/// refusal must leave unchanged).
fn listing(dirs: &[PathBuf]) -> Vec<(PathBuf, u64)> {
    fn walk(d: &Path, out: &mut Vec<(PathBuf, u64)>) {
        for e in std::fs::read_dir(d).into_iter().flatten() {
            let p = e.unwrap().path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            out.push((p.clone(), m.len()));
            if m.is_dir() {
                walk(&p, out);
            }
        }
    }
    let mut out = Vec::new();
    for d in dirs {
        walk(d, &mut out);
    }
    out.sort();
    out
}

/// Deletes the whole directory of each rank of `lost` (a lost node: the
/// rebuild runs its rank on a "new node" whose directory does not exist).
fn lose(data: &Path, replica: u32, lost: &[u32]) {
    for &r in lost {
        std::fs::remove_dir_all(rank_dir(data, replica, r)).unwrap();
    }
}

/// Sets of the job: set id → logical ranks.
fn sets(dirs: &[PathBuf]) -> BTreeMap<u32, Vec<u32>> {
    dirs.iter()
        .map(|d| {
            let h = header(d);
            (h.set_id, h.members.iter().map(|m| m.logical_rank).collect())
        })
        .collect()
}

/// Healthy verify; lose `tolerance` members of the last set (a remainder
/// set when there is one) and rebuild them byte-identical with metadata;
/// lose one more and see a refusal that writes nothing.
fn check(case: &Case) {
    let data = case.run();
    let name = case.name();
    for replica in 0..case.degree {
        let dirs = rank_dirs(&data, replica, case.ranks);
        let o = collective("verify", case.mpi, &data, replica, case.ranks);
        assert_eq!(o.status.code(), Some(0), "{name}: {}", text(&o));
        assert!(
            text(&o).contains("verdict: healthy"),
            "{name}: {}",
            text(&o)
        );
        let before = snapshot(&dirs);
        let all = sets(&dirs);
        let (_, last) = all.iter().next_back().unwrap();
        let k = case.tolerance();
        lose(&data, replica, &last[..k]);
        let o = collective("verify", case.mpi, &data, replica, case.ranks);
        assert_eq!(o.status.code(), Some(1), "{name}: {}", text(&o));
        for r in &last[..k] {
            assert!(
                text(&o).contains(&format!("rank {r} (set")),
                "{name}: {}",
                text(&o)
            );
        }
        let o = collective("rebuild", case.mpi, &data, replica, case.ranks);
        assert_eq!(o.status.code(), Some(0), "{name}: {}", text(&o));
        let after = snapshot(&dirs);
        assert_eq!(
            data_only(&after),
            data_only(&before),
            "{name}: files, modes, mtimes"
        );
        assert_eq!(
            contents(&after),
            contents(&before),
            "{name}: redundancy files too"
        );
        if k < last.len() {
            lose(&data, replica, &last[..k + 1]);
            let listed = listing(&dirs);
            let o = collective("rebuild", case.mpi, &data, replica, case.ranks);
            assert_eq!(o.status.code(), Some(2), "{name}: {}", text(&o));
            assert!(
                text(&o).contains("refused, nothing written"),
                "{name}: {}",
                text(&o)
            );
            assert!(text(&o).contains("tolerates"), "{name}: {}", text(&o));
            assert_eq!(listing(&dirs), listed, "{name}: nothing written");
            for &r in &last[..k + 1] {
                assert!(!rank_dir(&data, replica, r).exists(), "{name}: rank {r}");
            }
        }
    }
}

/// [`check`] for `scheme` with each (ranks, set size) of `shapes`.
fn check_shapes(scheme: &'static str, shapes: &[(u32, u32)]) {
    for &(ranks, set) in shapes {
        let mut case = Case::new(scheme, ranks, set);
        case.prefix = "pr";
        check(&case);
    }
}

#[test]
fn xor_collective_rebuild_one_loss_and_refusal_of_two() {
    // 2 ranks: the smallest set; 8 ranks in sets of 3: sets of 3, 3 and 2.
    check_shapes("xor", &[(2, 2), (8, 3)]);
}

#[test]
fn rs2_collective_rebuild_two_losses_and_refusal_of_three() {
    // 4 ranks: one set of 4; 6 ranks in sets of 4: two sets of 3.
    check_shapes("rs", &[(4, 4), (6, 4)]);
}

#[test]
fn partner_collective_rebuild_one_loss_and_refusal_of_two() {
    check_shapes("partner", &[(3, 3), (6, 4)]);
}

#[test]
fn two_replicas_rebuild_each_replica_world_on_its_own() {
    let mut case = Case::new("rs", 3, 3);
    case.prefix = "pr";
    case.degree = 2;
    check(&case);
}

#[test]
fn open_mpi_collective_rebuild() {
    let mut case = Case::new("xor", 4, 4);
    case.prefix = "pr";
    case.mpi = Mpi::OpenMpi;
    check(&case);
}

/// Flips one byte of `path` in place, keeping its size and mtime.
fn flip(path: &Path, at: usize) {
    let mtime = std::fs::metadata(path).unwrap().modified().unwrap();
    let mut bytes = std::fs::read(path).unwrap();
    bytes[at] ^= 0x10;
    std::fs::write(path, &bytes).unwrap();
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
}

fn rdp(dir: &Path) -> PathBuf {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "rdp"))
        .unwrap()
}

#[test]
fn flipped_data_byte_is_reported_and_repaired_collectively() {
    let mut case = Case::new("xor", 4, 4);
    case.prefix = "pr-flip";
    let data = case.run();
    let dirs = rank_dirs(&data, 0, 4);
    let before = snapshot(&dirs);
    let victim = rank_dir(&data, 0, 2).join("ckpt.dat");
    flip(&victim, 4321);
    let o = collective("verify", Mpi::Mpich, &data, 0, 4);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let report = text(&o);
    assert!(report.contains("rank 2 (set 0, member"), "{report}");
    assert!(
        report.contains(&format!("{}: CRC32", victim.display())),
        "{report}"
    );
    let o = collective("rebuild", Mpi::Mpich, &data, 0, 4);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains(&format!("rank 2: rebuilt {}", victim.display())));
    assert_eq!(data_only(&snapshot(&dirs)), data_only(&before));
    let o = collective("verify", Mpi::Mpich, &data, 0, 4);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

/// A rebuild checks the survivors' CRC32s from the reads that serve it
/// (each byte read once): a byte flipped in place on a survivor, invisible
/// to existence and size, shows up only then. Nothing is renamed; every
/// rank checks everything and the rebuild starts over with that damage
/// known: both rebuilt within the tolerance (RS(2)), refused beyond it
/// (XOR), with no temporary file or new directory left behind.
#[test]
fn a_survivor_damaged_in_place_is_found_while_rebuilding_and_repaired_or_refused() {
    let mut case = Case::new("rs", 4, 4);
    case.prefix = "pr-silent";
    let data = case.run();
    let dirs = rank_dirs(&data, 0, 4);
    let before = snapshot(&dirs);
    let victim = rank_dir(&data, 0, 2).join("ckpt.dat");
    flip(&victim, 4321);
    lose(&data, 0, &[0]);
    let o = collective("rebuild", Mpi::Mpich, &data, 0, 4);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let report = text(&o);
    assert!(report.contains("found while rebuilding"), "{report}");
    assert!(
        report.contains(&format!("rank 2: rebuilt {}", victim.display())),
        "{report}"
    );
    assert_eq!(data_only(&snapshot(&dirs)), data_only(&before));

    let mut case = Case::new("xor", 3, 3);
    case.prefix = "pr-silent-xor";
    let data = case.run();
    let dirs = rank_dirs(&data, 0, 3);
    flip(&rank_dir(&data, 0, 1).join("ckpt.dat"), 4321);
    lose(&data, 0, &[0]);
    let listed = listing(&dirs);
    let o = collective("rebuild", Mpi::Mpich, &data, 0, 3);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let report = text(&o);
    assert!(report.contains("found while rebuilding"), "{report}");
    assert!(report.contains("refused, nothing written"), "{report}");
    assert!(report.contains("tolerates"), "{report}");
    assert_eq!(listing(&dirs), listed, "nothing written, no directory made");
    assert!(!rank_dir(&data, 0, 0).exists());
}

#[test]
fn damaged_redundancy_files_are_detected_and_rewritten_collectively() {
    let mut case = Case::new("rs", 4, 4);
    case.prefix = "pr-red";
    let data = case.run();
    let dirs = rank_dirs(&data, 0, 4);
    let (f1, f3) = (rdp(&rank_dir(&data, 0, 1)), rdp(&rank_dir(&data, 0, 3)));
    let (b1, b3) = (std::fs::read(&f1).unwrap(), std::fs::read(&f3).unwrap());
    let hlen = Header::length_from_prefix(&b1[..16]).unwrap() as usize;
    flip(&f1, hlen + 5);
    std::fs::write(&f3, &b3[..hlen / 3]).unwrap();
    let o = collective("verify", Mpi::Mpich, &data, 0, 4);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let report = text(&o);
    assert!(report.contains("rank 1 (set 0, member 1)"), "{report}");
    assert!(report.contains("payload chunk 0: CRC32"), "{report}");
    assert!(
        report.contains(&format!("{}: redundancy file damaged", f3.display())),
        "{report}"
    );
    assert!(
        report.contains("truncated") || report.contains("no trailer"),
        "{report}"
    );
    let o = collective("rebuild", Mpi::Mpich, &data, 0, 4);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(std::fs::read(&f1).unwrap(), b1);
    assert_eq!(std::fs::read(&f3).unwrap(), b3);
    assert!(listing(&dirs)
        .iter()
        .all(|(p, _)| !p.to_string_lossy().contains("redio-tmp")));
}

/// Rewrites the redundancy file at `path` with its header and payload
/// changed by `edit` (both header copies and the trailer, so the file itself
/// is well-formed).
fn rewrite(path: &Path, edit: impl Fn(&mut Header, &mut Vec<u8>)) {
    let bytes = std::fs::read(path).unwrap();
    let hlen = Header::length_from_prefix(&bytes[..16]).unwrap() as usize;
    let mut h = Header::decode(&bytes[..hlen]).unwrap();
    let mut payload = bytes[hlen..hlen + h.payload_len() as usize].to_vec();
    edit(&mut h, &mut payload);
    let enc = h.encode();
    let mut out = enc.clone();
    out.extend(&payload);
    out.extend(&enc);
    out.extend((enc.len() as u64).to_le_bytes());
    out.extend(TRAILER_MAGIC);
    std::fs::write(path, out).unwrap();
}

#[test]
fn unsafe_header_paths_are_refused_collectively_and_nothing_is_written() {
    let mut case = Case::new("xor", 3, 3);
    case.prefix = "pr-unsafe";
    let data = case.run();
    let dirs = rank_dirs(&data, 0, 3);
    // Every member's header names `../escape.dat` for member 1; member 1
    // lost its files, so a careless rebuild would write outside its root.
    for d in &dirs {
        rewrite(&rdp(d), |h, _| {
            h.members[1].files[0].path = b"../escape.dat".to_vec()
        });
    }
    std::fs::remove_file(rank_dir(&data, 0, 1).join("ckpt.dat")).unwrap();
    let listed = listing(&dirs);
    for op in ["verify", "rebuild"] {
        let o = collective(op, Mpi::Mpich, &data, 0, 3);
        assert_eq!(o.status.code(), Some(3), "{op}: {}", text(&o));
        let report = text(&o);
        assert!(
            report.contains("refused: unsafe path `../escape.dat`"),
            "{report}"
        );
        assert!(report.contains("contains `..`"), "{report}");
        assert!(report.contains("nothing written"), "{report}");
    }
    assert_eq!(listing(&dirs), listed);
    assert!(!data.join("r0/escape.dat").exists());

    // A symlink that leads out of rank 2's root: refused the same way.
    let mut case = Case::new("xor", 3, 3);
    case.prefix = "pr-symlink";
    let data = case.run();
    let dirs = rank_dirs(&data, 0, 3);
    let sub = rank_dir(&data, 0, 2).join("sub");
    let outside = data.join("outside");
    std::fs::rename(&sub, &outside).unwrap();
    std::os::unix::fs::symlink(&outside, &sub).unwrap();
    let listed = listing(&dirs);
    let o = collective("rebuild", Mpi::Mpich, &data, 0, 3);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(text(&o).contains("rank 2 (set 0, member"), "{}", text(&o));
    assert!(
        text(&o).contains("refused: unsafe path `sub/"),
        "{}",
        text(&o)
    );
    assert_eq!(listing(&dirs), listed);
}

#[test]
fn collective_encode_writes_what_offline_verify_accepts_and_wrong_rank_counts_are_refused() {
    let data = fresh_dir("pr-encode");
    let dirs = rank_dirs(&data, 0, 3);
    for (r, d) in dirs.iter().enumerate() {
        std::fs::create_dir_all(d.join("sub")).unwrap();
        let bytes: Vec<u8> = (0..20_000 + 3_001 * r).map(|i| (i * 7 + r) as u8).collect();
        std::fs::write(d.join("ckpt.dat"), bytes).unwrap();
        std::fs::write(d.join("sub/meta"), format!("rank {r}")).unwrap();
    }
    let root = format!("{}/r0/rank{{rank}}", data.display());
    let words = [
        "parity", "encode", "-n", "3", "--root", &root, "--scheme", "rs:2",
    ];
    let args: Vec<String> = words
        .into_iter()
        .chain(["--set-size", "3", "--groups", "node{rank}"])
        .map(String::from)
        .collect();
    let o = redio_job(&args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("rank 2: wrote"), "{}", text(&o));
    let h = header(&dirs[1]);
    assert_eq!(h.members.len(), 3);
    assert_eq!(h.members[1].failure_group, "node1");
    let offline = Command::new(redio_bin())
        .args(["parity", "verify", "--offline"])
        .args(&dirs)
        .output()
        .unwrap();
    assert_eq!(offline.status.code(), Some(0), "{}", text(&offline));
    let o = collective("verify", Mpi::Mpich, &data, 0, 4);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    // Refused before launching, from rank 0's redundancy file (issue 19);
    // the job itself checks again where the CLI cannot read the headers.
    assert!(
        text(&o).contains("records a job of 3 logical rank(s): run with -n 3"),
        "{}",
        text(&o)
    );
}

#[test]
fn verify_recomputes_the_parity_and_names_a_wrong_chunk_whose_crc_was_forged() {
    // Member 1's parity byte changed with its CRC32 recomputed: only the
    // recomputation of the parity from the data can see it.
    let mut case = Case::new("xor", 3, 3);
    case.prefix = "pr-forged";
    let data = case.run();
    let f1 = rdp(&rank_dir(&data, 0, 1));
    rewrite(&f1, |h, payload| {
        payload[100] ^= 0x40;
        h.payload[0].crc32 = redio_parity::format::crc32(payload);
    });
    let o = collective("verify", Mpi::Mpich, &data, 0, 3);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let report = text(&o);
    assert!(report.contains("rank 1 (set 0, member 1)"), "{report}");
    assert!(report.contains("protect the files again"), "{report}");
    assert!(
        report.contains(&format!(
            "{}: parity chunk 0 does not match the data at bytes 0..",
            f1.display()
        )),
        "{report}"
    );
}

#[test]
fn one_directory_shared_by_every_rank_is_verified_and_rebuilt() {
    // Ranks writing distinct names into one directory (a single node):
    // encoded with one directory per rank, then gathered into one.
    let base = fresh_dir("pr-shared");
    let dirs: Vec<PathBuf> = (0..4).map(|r| base.join(format!("d{r}"))).collect();
    for (r, d) in dirs.iter().enumerate() {
        std::fs::create_dir_all(d).unwrap();
        let bytes: Vec<u8> = (0..10_000 + 1_234 * r)
            .map(|i| (i * 13 + r) as u8)
            .collect();
        std::fs::write(d.join(format!("rank{r}.dat")), bytes).unwrap();
    }
    let o = Command::new(redio_bin())
        .args([
            "parity",
            "encode",
            "--offline",
            "--scheme",
            "rs:2",
            "--set-size",
            "4",
        ])
        .args(&dirs)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let shared = base.join("shared");
    std::fs::create_dir_all(&shared).unwrap();
    for d in &dirs {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            std::fs::rename(&p, shared.join(p.file_name().unwrap())).unwrap();
        }
    }
    let before = snapshot(std::slice::from_ref(&shared));
    std::fs::remove_file(shared.join("rank1.dat")).unwrap();
    std::fs::remove_file(shared.join("redio-parity.s0.m3.rdp")).unwrap();
    let root = shared.display().to_string();
    let args = |op: &str| -> Vec<String> {
        ["parity", op, "-n", "4", "--root", &root]
            .into_iter()
            .map(String::from)
            .collect()
    };
    let o = redio_job(&args("verify"));
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let report = text(&o);
    assert!(report.contains("rank 1 (set 0, member 1)"), "{report}");
    assert!(report.contains("rank1.dat: missing"), "{report}");
    assert_eq!(report.matches("rank1.dat: missing").count(), 1, "{report}");
    let o = redio_job(&args("rebuild"));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(
        contents(&snapshot(std::slice::from_ref(&shared))),
        contents(&before)
    );
}

#[test]
fn a_directory_in_place_of_a_lost_file_is_refused_before_anything_is_written() {
    let mut case = Case::new("xor", 3, 3);
    case.prefix = "pr-dirclash";
    let data = case.run();
    let dirs = rank_dirs(&data, 0, 3);
    // Rank 1 lost everything; a directory now stands where its file goes.
    lose(&data, 0, &[1]);
    std::fs::create_dir_all(rank_dir(&data, 0, 1).join("ckpt.dat")).unwrap();
    let listed = listing(&dirs);
    let o = collective("rebuild", Mpi::Mpich, &data, 0, 3);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let report = text(&o);
    assert!(report.contains("rank 1 (set 0, member 1)"), "{report}");
    let why = "ckpt.dat is a directory where the header records a file";
    assert!(report.contains(why), "{report}");
    assert!(report.contains("refused, nothing written"), "{report}");
    assert_eq!(listing(&dirs), listed, "nothing created or renamed");
}

/// A long collective job tells a batch user how far it got: rank 0's
/// encode and the lost member's rebuild print progress lines (bytes, %,
/// MB/s) through the launcher; with `off`, none.
#[test]
fn the_collective_job_prints_progress_of_encode_and_rebuild() {
    let data = fresh_dir("pr-progress");
    let dirs = rank_dirs(&data, 0, 2);
    for (r, d) in dirs.iter().enumerate() {
        std::fs::create_dir_all(d).unwrap();
        let bytes: Vec<u8> = (0..1usize << 20).map(|i| (i * 13 + r) as u8).collect();
        std::fs::write(d.join("ckpt.dat"), bytes).unwrap();
    }
    let root = format!("{}/r0/rank{{rank}}", data.display());
    let job = |op: &str, extra: &[&str]| -> Vec<String> {
        ["parity", op, "-n", "2", "--root", &root, "--piece", "65536"]
            .iter()
            .chain(extra)
            .map(|s| s.to_string())
            .collect()
    };
    let encode = job("encode", &["--scheme", "xor", "--groups", "node{rank}"]);
    let o = redio_job_with_progress(&encode, "0");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        text(&o).contains("redio parity: rank 0: encoding set 0: 1.0 of 1.0 MiB (100%)"),
        "rank 0 should report its encode to the end:\n{}",
        text(&o)
    );
    assert!(
        !text(&o).contains("rank 1: encoding"),
        "one rank's lines are enough:\n{}",
        text(&o)
    );
    let before = snapshot(&dirs);
    lose(&data, 0, &[1]);
    let o = redio_job_with_progress(&job("rebuild", &[]), "0");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        text(&o).contains("redio parity: set 0, member 1: rebuilding:")
            && text(&o).contains("(100%)"),
        "the rebuilding member should report its progress:\n{}",
        text(&o)
    );
    assert_eq!(data_only(&snapshot(&dirs)), data_only(&before));
    let o = redio_job_with_progress(&encode, "off");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        !text(&o).contains("encoding set"),
        "REDIO_PARITY_PROGRESS=off prints no progress:\n{}",
        text(&o)
    );
}

/// `parity.dir` keeps the redundancy files apart from the data: the run
/// writes them there and nowhere else, and after a node loses both its
/// data and its redundancy directory, `--parity-dir` lets the collective
/// rebuild find the survivors' files and restore both.
#[test]
fn parity_dir_keeps_redundancy_files_apart_and_the_rebuild_restores_both() {
    let mut case = Case::new("xor", 4, 4);
    case.prefix = "pr";
    case.parity_apart = true;
    let data = case.run();
    let dirs = rank_dirs(&data, 0, 4);
    let apart: Vec<PathBuf> = (0..4).map(|r| parity_dir(&data, 0, r)).collect();
    for (r, d) in dirs.iter().enumerate() {
        let beside: Vec<_> = std::fs::read_dir(d)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".rdp"))
            .collect();
        assert!(
            beside.is_empty(),
            "rank {r}: a redundancy file beside the data"
        );
        assert_eq!(
            header(&apart[r]).members.len(),
            4,
            "rank {r}: {}",
            apart[r].display()
        );
    }
    let job = |op: &str, with_dir: bool| {
        let root = format!("{}/r0/rank{{rank}}", data.display());
        let red = format!("{}/parity/r0/rank{{rank}}", data.display());
        let mut args: Vec<String> = ["parity", op, "-n", "4", "--root", &root]
            .into_iter()
            .map(String::from)
            .collect();
        if with_dir {
            args.extend(["--parity-dir".to_string(), red]);
        }
        redio_job(&args)
    };
    let o = job("verify", true);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // Without the directory the job finds no redundancy file: not healthy.
    let o = job("verify", false);
    assert_ne!(o.status.code(), Some(0), "{}", text(&o));
    let before = snapshot(&dirs);
    let before_red = snapshot(&apart);
    lose(&data, 0, &[2]);
    std::fs::remove_dir_all(&apart[2]).unwrap();
    let o = job("rebuild", true);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(
        data_only(&snapshot(&dirs)),
        data_only(&before),
        "data, modes, mtimes"
    );
    assert_eq!(
        contents(&snapshot(&apart)),
        contents(&before_red),
        "redundancy files"
    );
    let o = job("verify", true);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

/// Open MPI 5 (ULFM): the protect step at `MPI_Finalize` and the
/// collective verify and rebuild jobs, as with the other MPIs.
#[test]
fn open_mpi5_parity_at_finalize_and_collective_rebuild() {
    let mut case = Case::new("xor", 4, 4);
    case.prefix = "pr";
    case.mpi = Mpi::OpenMpi5;
    check(&case);
}

#[test]
fn a_root_without_rank_is_refused_and_rank_0_keeps_its_files() {
    // `--root …/rank0` instead of `…/rank{rank}`: every rank works in rank
    // 0's directory, and rank 1 would "rebuild" its files over rank 0's.
    let mut case = Case::new("xor", 2, 2);
    case.prefix = "pr-norank";
    let data = case.run();
    let dirs = rank_dirs(&data, 0, 2);
    let before = snapshot(&dirs);
    let root = rank_dir(&data, 0, 0).display().to_string();
    let args: Vec<String> = [
        "parity", "rebuild", "--mpi", "mpich", "-n", "2", "--root", &root,
    ]
    .into_iter()
    .map(String::from)
    .collect();
    let o = redio_job(&args);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let report = text(&o);
    assert!(report.contains("a --root without {rank}?"), "{report}");
    assert!(report.contains("refused, nothing written"), "{report}");
    assert_eq!(snapshot(&dirs), before, "rank 0's files untouched");
}

#[test]
fn a_huge_trailer_and_a_fifo_do_not_stop_the_collective_verify() {
    // Rank 1's redundancy file: a sparse 1 TiB file whose trailer claims a
    // 1 TiB header; rank 2's: a FIFO. The workers read neither without
    // bound nor block: the job reports both and finishes (the data is
    // intact, so the set is repairable: both files can be encoded again).
    let mut case = Case::new("xor", 3, 3);
    case.prefix = "pr-hostile";
    let data = case.run();
    let f1 = rdp(&rank_dir(&data, 0, 1));
    let size: u64 = 1 << 40;
    let file = std::fs::OpenOptions::new().write(true).open(&f1).unwrap();
    file.set_len(0).unwrap();
    file.set_len(size).unwrap();
    let mut trailer = (size - 16).to_le_bytes().to_vec();
    trailer.extend_from_slice(TRAILER_MAGIC);
    std::os::unix::fs::FileExt::write_all_at(&file, &trailer, size - 16).unwrap();
    drop(file);
    let f2 = rdp(&rank_dir(&data, 0, 2));
    std::fs::remove_file(&f2).unwrap();
    let c = std::ffi::CString::new(f2.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let o = collective("verify", Mpi::Mpich, &data, 0, 3);
    let report = text(&o);
    assert_eq!(o.status.code(), Some(1), "{report}");
    assert!(report.contains("trailer names a"), "{report}");
    assert!(report.contains("FIFO"), "{report}");
}

/// Issue 44, item 7: file names are bytes. A name that is not UTF-8 once
/// made the protect step of the job write no redundancy file for any rank
/// (the job still exited 0), and the collective encode fail entirely.
#[test]
fn a_file_name_that_is_not_utf8_is_protected_in_the_job_and_rebuilt_collectively() {
    use std::os::unix::ffi::OsStrExt;
    let mut case = Case::new("xor", 3, 3);
    case.prefix = "pr";
    case.bytes_name = true;
    let data = case.run();
    let dirs = rank_dirs(&data, 0, 3);
    let rel: &[u8] = b"sub/name-\xff\xfe.bin";
    for d in &dirs {
        let h = header(d);
        for m in &h.members {
            assert!(
                m.files
                    .iter()
                    .any(|f| AsRef::<[u8]>::as_ref(&f.path) == rel),
                "member {} records its name as it is: {h:?}",
                m.logical_rank
            );
        }
    }
    let before = snapshot(&dirs);
    lose(&data, 0, &[1]);
    let o = collective("rebuild", Mpi::Mpich, &data, 0, 3);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let lost = dirs[1].join(std::ffi::OsStr::from_bytes(rel));
    assert!(
        lost.is_file(),
        "{} rebuilt under its own name",
        lost.display()
    );
    let after = snapshot(&dirs);
    // (assert!, not assert_eq!: the snapshots hold every byte.)
    assert!(
        data_only(&after) == data_only(&before),
        "data files byte-identical, with mode and mtime"
    );
    assert!(
        contents(&after) == contents(&before),
        "redundancy files too"
    );

    // The collective encode protects the same name.
    for d in &dirs {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "rdp") {
                std::fs::remove_file(p).unwrap();
            }
        }
    }
    let root = format!("{}/r0/rank{{rank}}", data.display());
    let words = ["parity", "encode", "-n", "3", "--root", &root, "--scheme"];
    let args: Vec<String> = words
        .into_iter()
        .chain(["xor", "--set-size", "3", "--groups", "node{rank}"])
        .map(String::from)
        .collect();
    let o = redio_job(&args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(header(&dirs[2]).members[0]
        .files
        .iter()
        .any(|f| AsRef::<[u8]>::as_ref(&f.path) == rel));
    lose(&data, 0, &[0]);
    let o = collective("rebuild", Mpi::Mpich, &data, 0, 3);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        data_only(&snapshot(&dirs)) == data_only(&before),
        "rebuilt from the collective encode"
    );
}

/// Issue 44, item 8, collectively: a killed worker's or replica's
/// temporary files (written by a process that has exited) are removed by
/// the next collective rebuild, which says so; the rebuild itself is
/// unchanged.
#[test]
fn the_collective_rebuild_removes_temporaries_of_dead_runs() {
    let mut case = Case::new("xor", 3, 3);
    case.prefix = "pr";
    let data = case.run();
    let dirs = rank_dirs(&data, 0, 3);
    let before = snapshot(&dirs);
    let dead = [
        dirs[1].join(".redio-parity.s0.m1.rdp.redio-tmp.4194303.0"),
        dirs[0].join("sub/.part.bin.redio-tmp.4194303.2"),
    ];
    for p in &dead {
        let s = Command::new("/bin/sh")
            .args(["-c", "head -c 12345 /dev/zero > \"$0\""])
            .arg(p)
            .status()
            .unwrap();
        assert!(s.success());
    }
    lose(&data, 0, &[2]);
    let o = collective("rebuild", Mpi::Mpich, &data, 0, 3);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    for (p, rank) in dead.iter().zip([1, 0]) {
        assert!(!p.exists(), "{} left", p.display());
        let said = format!(
            "redio parity rebuild: rank {rank}: removed {} (12345 bytes), a temporary file",
            p.display()
        );
        assert!(text(&o).contains(&said), "{}", text(&o));
    }
    let after = snapshot(&dirs);
    assert!(data_only(&after) == data_only(&before), "rebuilt as before");
}
