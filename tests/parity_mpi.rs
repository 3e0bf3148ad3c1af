//! Lazy parity computed inside real MPI jobs: a C application writes
//! node-local checkpoint files under `redio run`; the preload computes the
//! redundancy files at `MPI_Finalize` (or in `redio_protect`) over MPI;
//! then the files of lost ranks are deleted and rebuilt with
//! `redio parity rebuild --offline`, and checked byte for byte with their
//! mode and mtime. Every job runs under `timeout` (see `common`).

mod common;

use common::{compile, fresh_dir, redio_bin, Launch, Mpi};
use redio_parity::format::Header;
use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Size of rank 0's first file; others grow by 7919 bytes per rank.
const SIZE: u32 = 150_000;

/// One parity job: scheme as the config spells it.
struct Case {
    mpi: Mpi,
    scheme: &'static str,
    rs_parity: u32,
    ranks: u32,
    degree: u32,
    set_size: u32,
    protect_call: bool,
    /// `parity.engine`, when set.
    engine: Option<&'static str>,
}

impl Case {
    fn new(scheme: &'static str, ranks: u32, set_size: u32) -> Self {
        Case {
            mpi: Mpi::Mpich,
            scheme,
            rs_parity: 2,
            ranks,
            degree: 1,
            set_size,
            protect_call: false,
            engine: None,
        }
    }

    fn tolerance(&self) -> usize {
        match self.scheme {
            "xor" | "partner" => 1,
            "rs" => self.rs_parity as usize,
            _ => 0,
        }
    }

    fn name(&self) -> String {
        format!(
            "pm-{}-{}-n{}-r{}-s{}{}{}",
            self.mpi.key(),
            self.scheme,
            self.ranks,
            self.degree,
            self.set_size,
            if self.protect_call { "-api" } else { "" },
            self.engine.map(|e| format!("-{e}")).unwrap_or_default()
        )
    }

    /// Runs the application; returns the base directory.
    fn run(&self) -> PathBuf {
        // Non-RS cases give no rs_parity: its default (2) must not be
        // checked against a set size of 2 (it once was, at start-up).
        let rs_parity = if self.scheme == "rs" {
            format!("rs_parity: {}\n  ", self.rs_parity)
        } else {
            String::new()
        };
        let base = fresh_dir(&self.name());
        let data = base.join("data");
        std::fs::create_dir_all(&data).unwrap();
        let config = base.join("redio.yaml");
        let d = data.display();
        std::fs::write(
            &config,
            format!(
                "version: 1\nlocal:\n  paths: [\"{d}\"]\nparity:\n  scheme: {}\n  set_size: {}\n  \
                 {}when: {}\n  failure_group: \"node{{rank}}\"\n  files:\n    - \
                 \"{d}/r{{replica}}/rank{{rank}}/*.dat\"\n    - \
                 \"{d}/r{{replica}}/rank{{rank}}/sub/*\"\n  engine: {}\nlog:\n  level: info\n",
                self.scheme,
                self.set_size,
                rs_parity,
                if self.protect_call {
                    "manual"
                } else {
                    "finalize"
                },
                self.engine.unwrap_or("ring"),
            ),
        )
        .unwrap();
        let exe = compile(self.mpi, "parity_ckpt");
        let mut args = vec![data.display().to_string(), SIZE.to_string()];
        if self.protect_call {
            args.push("protect".into());
        }
        let launch = Launch::redio(self.mpi, self.ranks, self.degree, "block", &exe)
            .config(&config)
            .args(args)
            .timeout(60);
        let job = launch.run();
        job.assert_success();
        data
    }
}

/// The directory of logical rank `rank` of replica `replica`.
fn rank_dir(data: &Path, replica: u32, rank: u32) -> PathBuf {
    data.join(format!("r{replica}/rank{rank}"))
}

fn rank_dirs(data: &Path, replica: u32, ranks: u32) -> Vec<PathBuf> {
    (0..ranks).map(|r| rank_dir(data, replica, r)).collect()
}

fn redio(head: &[&str], dirs: &[PathBuf]) -> Output {
    Command::new(redio_bin())
        .args(head)
        .args(dirs)
        .output()
        .expect("run redio")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Every file under `dirs` (redundancy files included): bytes, mode, mtime.
type Snapshot = BTreeMap<PathBuf, (Vec<u8>, u32, i64, i64)>;

fn snapshot(dirs: &[PathBuf]) -> Snapshot {
    fn walk(d: &Path, out: &mut Snapshot) {
        for e in std::fs::read_dir(d).into_iter().flatten() {
            let p = e.unwrap().path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            if m.is_dir() {
                walk(&p, out);
            } else {
                let v = (
                    std::fs::read(&p).unwrap(),
                    m.mode(),
                    m.mtime(),
                    m.mtime_nsec(),
                );
                out.insert(p, v);
            }
        }
    }
    let mut out = BTreeMap::new();
    for d in dirs {
        walk(d, &mut out);
    }
    out
}

/// The data files of a snapshot (without redundancy files, whose mtime is
/// not restored).
fn data_only(s: &Snapshot) -> Snapshot {
    s.iter()
        .filter(|(p, _)| p.extension().is_none_or(|x| x != "rdp"))
        .map(|(p, v)| (p.clone(), v.clone()))
        .collect()
}

fn contents(s: &Snapshot) -> BTreeMap<PathBuf, Vec<u8>> {
    s.iter().map(|(p, v)| (p.clone(), v.0.clone())).collect()
}

/// The header of the redundancy file in `dir`.
fn header(dir: &Path) -> Header {
    let f = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "rdp"))
        .unwrap_or_else(|| panic!("no redundancy file in {}", dir.display()));
    let bytes = std::fs::read(&f).unwrap();
    let n = Header::length_from_prefix(&bytes[..16]).unwrap() as usize;
    Header::decode(&bytes[..n]).unwrap()
}

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
    let data = case.run();
    for replica in 0..case.degree {
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
    for (ranks, set) in [(2, 2), (3, 3), (6, 4), (8, 8)] {
        check(&Case::new("partner", ranks, set));
    }
}

#[test]
fn single_records_metadata_and_refuses_any_loss() {
    for (ranks, set) in [(2, 2), (4, 4)] {
        check(&Case::new("single", ranks, set));
    }
}

#[test]
fn two_replicas_each_protect_their_own_files() {
    for scheme in ["xor", "rs"] {
        let mut case = Case::new(scheme, if scheme == "rs" { 3 } else { 4 }, 4);
        case.degree = 2;
        check(&case);
    }
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
fn a_bad_files_pattern_fails_every_rank_alike_without_hanging() {
    // A pattern that is not absolute: every rank refuses it the same way,
    // the job still finishes, and no redundancy file appears.
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
    job.assert_success();
    assert!(
        job.stderr
            .contains("parity.files: \"relative/*.dat\" is not an absolute path"),
        "{}",
        job.stderr
    );
    let rdps = snapshot(std::slice::from_ref(&base))
        .keys()
        .filter(|p| p.extension().is_some_and(|x| x == "rdp"))
        .count();
    assert_eq!(rdps, 0);
}
