//! Offline encode / assess / rebuild on real files in temporary directories,
//! for every scheme over 2, 3, 4, 6 and 8 ranks (with remainder sets).

use redio_parity::offline::{self, assess, encode_job, rebuild, MemberInput, Options, Verdict};
use redio_parity::scheme::Scheme;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

struct Tmp(PathBuf);
impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn tmp(tag: &str) -> Tmp {
    let d = std::env::temp_dir().join(format!("redio-parity-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    Tmp(d)
}

/// One directory per rank with 0 to 2 files of unequal (and zero) sizes.
fn job(base: &Path, n: usize) -> (Vec<PathBuf>, Vec<MemberInput>) {
    let mut dirs = Vec::new();
    let mut ranks = Vec::new();
    for r in 0..n {
        let dir = base.join(format!("node{r}"));
        std::fs::create_dir_all(dir.join("ckpt")).unwrap();
        let mut files = Vec::new();
        for f in 0..(r % 3).max(1) {
            let rel = format!("ckpt/r{r}.f{f}");
            let len = 1000 * r + 37 * f + (r * 7919) % 100;
            let data: Vec<u8> = (0..len).map(|i| (i * 31 + r * 17 + f) as u8).collect();
            std::fs::write(dir.join(&rel), data).unwrap();
            std::fs::set_permissions(dir.join(&rel), std::fs::Permissions::from_mode(0o640))
                .unwrap();
            files.push(rel.into_bytes());
        }
        ranks.push(MemberInput {
            root: dir.clone(),
            files,
            world_rank: r as u32,
            logical_rank: r as u32,
            failure_group: format!("node{r}"),
            host: format!("node{r}"),
        });
        dirs.push(dir);
    }
    (dirs, ranks)
}

fn snapshot(dirs: &[PathBuf]) -> Vec<(PathBuf, Vec<u8>, u32, i64)> {
    let mut out = Vec::new();
    for d in dirs {
        for e in std::fs::read_dir(d.join("ckpt")).into_iter().flatten() {
            let p = e.unwrap().path();
            let m = std::fs::metadata(&p).unwrap();
            out.push((p.clone(), std::fs::read(&p).unwrap(), m.mode(), m.mtime()));
        }
    }
    out.sort();
    out
}

#[test]
fn every_scheme_rebuilds_up_to_its_tolerance_and_refuses_beyond() {
    let opts = Options {
        piece: 333,
        ..Options::default()
    };
    for n in [2usize, 3, 4, 6, 8] {
        for scheme in [
            Scheme::Xor,
            Scheme::Rs { k: 2 },
            Scheme::Partner { copies: 1 },
        ] {
            let set_size = if n == 8 { 3 } else { n }; // 8 ranks: sets of 3, 3, 2
            if scheme.validate(set_size.min(n)).is_err()
                || (n == 8 && scheme == (Scheme::Rs { k: 2 }))
            {
                continue;
            }
            let t = tmp(&format!("{n}-{}", scheme.code()));
            let (dirs, ranks) = job(&t.0, n);
            let sets = encode_job(scheme, set_size, &ranks, &opts).unwrap();
            let before = snapshot(&dirs);
            assert_eq!(assess(&dirs, &opts).unwrap().verdict, Verdict::Healthy);
            // Lose `tolerance` whole nodes of the first set.
            let victims: Vec<usize> = sets[0]
                .iter()
                .take(scheme.tolerance())
                .map(|&r| r as usize)
                .collect();
            for &v in &victims {
                std::fs::remove_dir_all(&dirs[v]).unwrap();
            }
            let a = assess(&dirs, &opts).unwrap();
            assert_eq!(
                a.verdict,
                Verdict::Repairable,
                "{n} {scheme}: {:?}",
                a.sets[0].findings
            );
            rebuild(&dirs, &opts).unwrap();
            assert_eq!(snapshot(&dirs), before, "{n} ranks {scheme}");
            assert_eq!(assess(&dirs, &opts).unwrap().verdict, Verdict::Healthy);
            // One more than tolerated: refused, nothing written.
            for &r in sets[0].iter().take(scheme.tolerance() + 1) {
                std::fs::remove_dir_all(&dirs[r as usize]).unwrap();
            }
            let e = rebuild(&dirs, &opts).unwrap_err();
            assert!(matches!(e, offline::Error::Unrecoverable(_)), "{e}");
            for &r in sets[0].iter().take(scheme.tolerance() + 1) {
                assert!(
                    !dirs[r as usize].exists(),
                    "rebuild wrote into {}",
                    dirs[r as usize].display()
                );
            }
        }
    }
}

#[test]
fn single_detects_damage_but_cannot_repair_it() {
    let opts = Options::default();
    let t = tmp("single");
    let (dirs, ranks) = job(&t.0, 3);
    let sets = encode_job(Scheme::Single, 4, &ranks, &opts).unwrap();
    assert_eq!(sets.len(), 3, "SINGLE: one set per rank");
    assert_eq!(assess(&dirs, &opts).unwrap().verdict, Verdict::Healthy);
    let victim = dirs[2].join("ckpt/r2.f1");
    let mut b = std::fs::read(&victim).unwrap();
    b[0] ^= 1;
    std::fs::write(&victim, &b).unwrap();
    let a = assess(&dirs, &opts).unwrap();
    assert_eq!(a.verdict, Verdict::Unrecoverable);
    assert!(
        a.sets[2].findings.iter().any(|f| f.contains("CRC32")),
        "{:?}",
        a.sets[2].findings
    );
    assert!(rebuild(&dirs, &opts).is_err());
    assert_eq!(std::fs::read(&victim).unwrap(), b, "nothing rewritten");
}

#[test]
fn one_shared_directory_holds_every_member() {
    // All ranks write into one directory (one node, distinct file names).
    let opts = Options::default();
    let t = tmp("shared");
    let root = t.0.join("all");
    std::fs::create_dir_all(&root).unwrap();
    let ranks: Vec<MemberInput> = (0..5u32)
        .map(|r| {
            let rel = format!("rank{r}.bin");
            std::fs::write(root.join(&rel), vec![r as u8 + 1; 100 * r as usize + 1]).unwrap();
            MemberInput {
                root: root.clone(),
                files: vec![rel.into_bytes()],
                world_rank: r,
                logical_rank: r,
                failure_group: format!("g{r}"),
                host: "one".into(),
            }
        })
        .collect();
    let sets = encode_job(Scheme::Rs { k: 2 }, 5, &ranks, &opts).unwrap();
    assert_eq!(sets, vec![vec![0, 1, 2, 3, 4]]);
    let want = std::fs::read(root.join("rank3.bin")).unwrap();
    std::fs::remove_file(root.join("rank3.bin")).unwrap();
    std::fs::remove_file(root.join("redio-parity.s0.m0.rdp")).unwrap();
    let dirs = vec![root.clone()];
    assert_eq!(assess(&dirs, &opts).unwrap().verdict, Verdict::Repairable);
    rebuild(&dirs, &opts).unwrap();
    assert_eq!(std::fs::read(root.join("rank3.bin")).unwrap(), want);
    assert!(root.join("redio-parity.s0.m0.rdp").exists());
    assert_eq!(assess(&dirs, &opts).unwrap().verdict, Verdict::Healthy);
}

#[test]
fn a_rebuild_into_a_directory_holding_another_members_files_is_refused() {
    // Two ranks writing the same relative name; member 1's directory is
    // mistaken for member 0's (a root without {rank}).
    let t = tmp("identity");
    let mut ranks = Vec::new();
    let mut dirs = Vec::new();
    for r in 0..3u32 {
        let dir = t.0.join(format!("node{r}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("ckpt.dat"), vec![r as u8 + 1; 1000]).unwrap();
        ranks.push(MemberInput {
            root: dir.clone(),
            files: vec!["ckpt.dat".into()],
            world_rank: r,
            logical_rank: r,
            failure_group: format!("node{r}"),
            host: format!("node{r}"),
        });
        dirs.push(dir);
    }
    encode_job(Scheme::Xor, 3, &ranks, &Options::default()).unwrap();
    let a = assess(&dirs, &Options::default()).unwrap();
    let h = a.sets[0].header.clone().unwrap();
    let e = offline::check_before_rebuild(&h, 1, &dirs[0], &[0]).unwrap_err();
    assert!(e.contains("is logical rank 0's intact file"), "{e}");
    // Its own directory, damaged in place (same mtime): rebuilt.
    let f = dirs[1].join("ckpt.dat");
    let mtime = std::fs::metadata(&f).unwrap().modified().unwrap();
    std::fs::write(&f, vec![9u8; 1000]).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&f)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    assert!(offline::check_before_rebuild(&h, 1, &dirs[1], &[0]).is_ok());
}

/// Flips one bit of `path` at `at`, keeping its modification time (damage
/// in place, not a rewrite).
fn flip(path: &Path, at: usize) {
    let mtime = std::fs::metadata(path).unwrap().modified().unwrap();
    let mut bytes = std::fs::read(path).unwrap();
    bytes[at] ^= 0x10;
    std::fs::write(path, bytes).unwrap();
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
}

/// Every path under `dir`, recursively.
fn every_path(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(every_path(&p));
        }
        out.push(p);
    }
    out
}

#[test]
fn a_survivor_damaged_in_place_is_found_by_the_rebuilds_own_reads() {
    // The rebuild assesses by existence and size, and checks the
    // survivors' CRC32s while reading them: a flipped byte shows up only
    // then. Within the tolerance (RS(2): node 0 lost, a byte of node 1's
    // data flipped) both are rebuilt.
    let opts = Options {
        piece: 333,
        ..Options::default()
    };
    let t = tmp("silent-rs");
    let (dirs, ranks) = job(&t.0, 4);
    encode_job(Scheme::Rs { k: 2 }, 4, &ranks, &opts).unwrap();
    let before = snapshot(&dirs);
    flip(&dirs[1].join("ckpt/r1.f0"), 10);
    std::fs::remove_dir_all(&dirs[0]).unwrap();
    let (a, report) = rebuild(&dirs, &opts).unwrap();
    assert!(
        a.sets[0]
            .findings
            .iter()
            .any(|f| f.contains("r1.f0: CRC32")),
        "{:?}",
        a.sets[0].findings
    );
    assert!(report.written.iter().any(|w| w.ends_with("ckpt/r1.f0")));
    assert_eq!(snapshot(&dirs), before);
    assert_eq!(assess(&dirs, &opts).unwrap().verdict, Verdict::Healthy);

    // Beyond it (XOR: node 0 lost, a byte of node 1's data flipped): refused,
    // with the damage named, no temporary file left and node 0's directory
    // not made again.
    let t = tmp("silent-xor");
    let (dirs, ranks) = job(&t.0, 3);
    encode_job(Scheme::Xor, 3, &ranks, &opts).unwrap();
    flip(&dirs[1].join("ckpt/r1.f0"), 10);
    std::fs::remove_dir_all(&dirs[0]).unwrap();
    let e = rebuild(&dirs, &opts).unwrap_err();
    assert!(matches!(e, offline::Error::Unrecoverable(_)), "{e}");
    assert!(e.to_string().contains("r1.f0: CRC32"), "{e}");
    assert!(!dirs[0].exists(), "node 0's directory was made again");
    for d in &dirs[1..] {
        for p in every_path(d) {
            assert!(
                !p.to_string_lossy().contains("redio-tmp"),
                "{}",
                p.display()
            );
        }
    }

    // A damaged parity chunk that the rebuild reads (XOR: node 0 lost,
    // node 1's payload flipped) is beyond the tolerance too.
    let t = tmp("silent-parity");
    let (dirs, ranks) = job(&t.0, 3);
    encode_job(Scheme::Xor, 3, &ranks, &opts).unwrap();
    let rdp = std::fs::read_dir(&dirs[1])
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "rdp"))
        .unwrap();
    let len = std::fs::metadata(&rdp).unwrap().len() as usize;
    flip(&rdp, len / 2);
    std::fs::remove_dir_all(&dirs[0]).unwrap();
    let e = rebuild(&dirs, &opts).unwrap_err();
    assert!(e.to_string().contains("payload chunk 0: CRC32"), "{e}");
    assert!(!dirs[0].exists());
}
