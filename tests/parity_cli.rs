//! `redio parity … --offline` end to end: the real binary on real files in
//! temporary directories.

use redio_parity::format::{Header, TRAILER_MAGIC};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

struct Tmp(PathBuf);
impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn tmp(tag: &str) -> Tmp {
    let d = std::env::temp_dir().join(format!("redio-parity-cli-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    Tmp(d)
}

fn redio(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_redio"))
        .args(args)
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

/// `n` rank directories with files of unequal sizes (one empty), modes and
/// mtimes with nanoseconds.
fn make_job(base: &Path, n: usize) -> Vec<PathBuf> {
    (0..n)
        .map(|r| {
            let dir = base.join(format!("node{r}"));
            std::fs::create_dir_all(dir.join("out")).unwrap();
            let a = dir.join(format!("out/rank{r}.dat"));
            let data: Vec<u8> = (0..(5000 + 777 * r))
                .map(|i| (i * 7 + r * 13) as u8)
                .collect();
            std::fs::write(&a, data).unwrap();
            std::fs::set_permissions(&a, std::fs::Permissions::from_mode(0o600 + r as u32))
                .unwrap();
            let t = std::time::UNIX_EPOCH
                + std::time::Duration::new(1_600_000_000 + r as u64, 123_456_789);
            std::fs::File::options()
                .write(true)
                .open(&a)
                .unwrap()
                .set_modified(t)
                .unwrap();
            std::fs::write(dir.join("empty.log"), b"").unwrap();
            dir
        })
        .collect()
}

fn args<'a>(head: &[&'a str], dirs: &'a [PathBuf]) -> Vec<&'a str> {
    let mut v: Vec<&str> = head.to_vec();
    v.extend(dirs.iter().map(|d| d.to_str().unwrap()));
    v
}

/// Every data file under the rank directories: name, bytes, mode, mtime.
type Snapshot = Vec<(String, Vec<u8>, u32, i64, i64)>;

fn snapshot(dirs: &[PathBuf]) -> Snapshot {
    let mut out = Vec::new();
    for d in dirs {
        for rel in ["out", ""] {
            for e in std::fs::read_dir(d.join(rel)).into_iter().flatten() {
                let p = e.unwrap().path();
                let m = std::fs::symlink_metadata(&p).unwrap();
                if m.is_file() && p.extension().is_none_or(|x| x != "rdp") {
                    out.push((
                        p.display().to_string(),
                        std::fs::read(&p).unwrap(),
                        m.mode(),
                        m.mtime(),
                        m.mtime_nsec(),
                    ));
                }
            }
        }
    }
    out.sort();
    out
}

fn rdp(dir: &Path) -> PathBuf {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "rdp"))
        .expect("a redundancy file")
}

#[test]
fn rs2_rebuilds_two_lost_nodes_and_refuses_three_writing_nothing() {
    let t = tmp("rs");
    let dirs = make_job(&t.0, 4);
    let o = redio(&args(
        &[
            "parity",
            "encode",
            "--offline",
            "--scheme",
            "rs:2",
            "--set-size",
            "4",
            "--piece",
            "1000",
        ],
        &dirs,
    ));
    assert!(o.status.success(), "{}", text(&o));
    let before = snapshot(&dirs);
    let o = redio(&args(&["parity", "verify", "--offline"], &dirs));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));

    std::fs::remove_dir_all(&dirs[1]).unwrap();
    std::fs::remove_dir_all(&dirs[2]).unwrap();
    let o = redio(&args(&["parity", "verify", "--offline"], &dirs));
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let o = redio(&args(&["parity", "rebuild", "--offline"], &dirs));
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        snapshot(&dirs),
        before,
        "contents, modes and mtimes restored"
    );
    let o = redio(&args(&["parity", "verify", "--offline"], &dirs));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));

    for d in &dirs[..3] {
        std::fs::remove_dir_all(d).unwrap();
    }
    let o = redio(&args(&["parity", "rebuild", "--offline"], &dirs));
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("nothing written"), "{}", text(&o));
    for d in &dirs[..3] {
        assert!(!d.exists(), "{} was written", d.display());
    }
    let leftovers: Vec<_> = std::fs::read_dir(&dirs[3])
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        leftovers
            .iter()
            .all(|n| !n.to_string_lossy().contains("redio-tmp")),
        "{leftovers:?}"
    );
}

#[test]
fn flipped_data_byte_is_reported_and_repaired() {
    let t = tmp("flip");
    let dirs = make_job(&t.0, 3);
    assert!(redio(&args(
        &["parity", "encode", "--offline", "--scheme", "xor"],
        &dirs
    ))
    .status
    .success());
    let before = snapshot(&dirs);
    let victim = dirs[1].join("out/rank1.dat");
    let mtime = std::fs::metadata(&victim).unwrap().modified().unwrap();
    let mut bytes = std::fs::read(&victim).unwrap();
    bytes[4321] ^= 0x01;
    std::fs::write(&victim, &bytes).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&victim)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    let o = redio(&args(&["parity", "verify", "--offline"], &dirs));
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("rank1.dat: CRC32"), "{}", text(&o));
    let o = redio(&args(&["parity", "rebuild", "--offline"], &dirs));
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(snapshot(&dirs), before);
}

#[test]
fn flipped_parity_byte_and_truncated_header_are_detected_with_clear_messages() {
    let t = tmp("hdr");
    let dirs = make_job(&t.0, 3);
    assert!(redio(&args(
        &["parity", "encode", "--offline", "--scheme", "xor"],
        &dirs
    ))
    .status
    .success());
    // A parity byte: the payload sits after header copy A.
    let r0 = rdp(&dirs[0]);
    let original = std::fs::read(&r0).unwrap();
    let hlen = Header::length_from_prefix(&original[..16]).unwrap() as usize;
    let mut b = original.clone();
    b[hlen + 10] ^= 0x80;
    std::fs::write(&r0, &b).unwrap();
    let o = redio(&args(&["parity", "verify", "--offline"], &dirs));
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("payload chunk 0: CRC32"), "{}", text(&o));
    assert!(redio(&args(&["parity", "rebuild", "--offline"], &dirs))
        .status
        .success());
    assert_eq!(
        std::fs::read(&r0).unwrap(),
        original,
        "parity rewritten identically"
    );

    // A byte of header copy A: inspect falls back to copy B and says so.
    let mut b = original.clone();
    b[hlen / 2] ^= 0x04;
    std::fs::write(&r0, &b).unwrap();
    let o = redio(&["parity", "inspect", r0.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("copy A is damaged"), "{}", text(&o));

    // A truncated header.
    std::fs::write(&r0, &original[..hlen / 2]).unwrap();
    let o = redio(&["parity", "inspect", r0.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(3));
    assert!(text(&o).contains("truncated"), "{}", text(&o));
    let o = redio(&args(&["parity", "verify", "--offline"], &dirs));
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("redundancy file damaged"), "{}", text(&o));
    assert!(redio(&args(&["parity", "rebuild", "--offline"], &dirs))
        .status
        .success());
    assert_eq!(std::fs::read(&r0).unwrap(), original);
}

#[test]
fn inspect_json_shows_the_header() {
    let t = tmp("json");
    let dirs = make_job(&t.0, 3);
    assert!(redio(&args(
        &["parity", "encode", "--offline", "--scheme", "partner:1"],
        &dirs
    ))
    .status
    .success());
    let o = redio(&[
        "parity",
        "inspect",
        "--json",
        rdp(&dirs[2]).to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["scheme"], "partner");
    assert_eq!(v["members"].as_array().unwrap().len(), 3);
    assert_eq!(v["members"][1]["files"][1]["path"], "out/rank1.dat");
}

/// Rewrites every redundancy file of the job with a header whose first
/// file path is `path` (CRCs valid, so only the path check can refuse it).
/// Rewrites every redundancy file under `dirs` with its header changed by
/// `edit` (both copies, CRC recomputed, payload kept): a forged but
/// self-consistent set.
fn forge(dirs: &[PathBuf], edit: impl Fn(&mut Header)) {
    for d in dirs {
        let f = rdp(d);
        let bytes = std::fs::read(&f).unwrap();
        let hlen = Header::length_from_prefix(&bytes[..16]).unwrap() as usize;
        let mut h = Header::decode(&bytes[..hlen]).unwrap();
        let payload = bytes[hlen..hlen + h.payload_len() as usize].to_vec();
        edit(&mut h);
        let hb = h.encode();
        let mut out = hb.clone();
        out.extend_from_slice(&payload);
        out.extend_from_slice(&hb);
        out.extend_from_slice(&(hb.len() as u64).to_le_bytes());
        out.extend_from_slice(TRAILER_MAGIC);
        std::fs::write(&f, out).unwrap();
    }
}

/// Member 0's first file recorded under `path` in every header.
fn poison(dirs: &[PathBuf], path: &str) {
    forge(dirs, |h| {
        h.members[0].files[0].path = path.as_bytes().to_vec()
    });
}

#[test]
fn path_traversal_in_a_header_is_refused() {
    let t = tmp("trav");
    let dirs = make_job(&t.0, 3);
    assert!(redio(&args(
        &["parity", "encode", "--offline", "--scheme", "xor"],
        &dirs
    ))
    .status
    .success());
    std::fs::remove_dir_all(dirs[0].join("out")).unwrap();
    for bad in ["../../escaped.dat", "/tmp/escaped.dat"] {
        poison(&dirs, bad);
        for cmd in ["verify", "rebuild"] {
            let o = redio(&args(&["parity", cmd, "--offline"], &dirs));
            assert_eq!(o.status.code(), Some(3), "{cmd} {bad}: {}", text(&o));
            assert!(text(&o).contains("unsafe path"), "{}", text(&o));
        }
    }
    assert!(!t.0.join("escaped.dat").exists());
    assert!(!t.0.parent().unwrap().join("escaped.dat").exists());
}

#[test]
fn symlink_escape_is_refused() {
    let t = tmp("sym");
    let dirs = make_job(&t.0, 3);
    assert!(redio(&args(
        &["parity", "encode", "--offline", "--scheme", "xor"],
        &dirs
    ))
    .status
    .success());
    let outside = t.0.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::remove_dir_all(dirs[0].join("out")).unwrap();
    std::os::unix::fs::symlink(&outside, dirs[0].join("out")).unwrap();
    let o = redio(&args(&["parity", "rebuild", "--offline"], &dirs));
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(text(&o).contains("symlink escape"), "{}", text(&o));
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
}

#[test]
fn without_offline_and_a_rank_count_the_commands_say_what_to_give() {
    // Without --offline the command is an MPI job: with one directory it
    // cannot guess the rank count, and says so before launching anything.
    let t = tmp("noopt");
    let o = redio(&["parity", "verify", t.0.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(text(&o).contains("-n N"), "{}", text(&o));
    assert!(text(&o).contains("--offline"), "{}", text(&o));
}

#[test]
fn wrong_directory_count_is_a_clear_error() {
    let t = tmp("count");
    let dirs = make_job(&t.0, 3);
    assert!(redio(&args(&["parity", "encode", "--offline"], &dirs))
        .status
        .success());
    let o = redio(&args(&["parity", "verify", "--offline"], &dirs[..2]));
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        text(&o).contains("one per logical rank (3)"),
        "{}",
        text(&o)
    );
}

#[test]
fn a_directory_in_place_of_a_file_is_refused_before_writing() {
    let t = tmp("dirclash");
    let dirs = make_job(&t.0, 3);
    assert!(redio(&args(&["parity", "encode", "--offline"], &dirs))
        .status
        .success());
    std::fs::remove_dir_all(&dirs[0]).unwrap();
    std::fs::create_dir_all(dirs[0].join("out/rank0.dat")).unwrap();
    let o = redio(&args(&["parity", "rebuild", "--offline"], &dirs));
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(text(&o).contains("is a directory"), "{}", text(&o));
    assert!(!dirs[0].join("empty.log").exists(), "nothing written");
}

/// `n` rank directories encoded with XOR, and a snapshot of them.
fn encoded_job(t: &Tmp, n: usize) -> (Vec<PathBuf>, Snapshot) {
    let dirs = make_job(&t.0, n);
    let o = redio(&args(
        &["parity", "encode", "--offline", "--scheme", "xor"],
        &dirs,
    ));
    assert!(o.status.success(), "{}", text(&o));
    let before = snapshot(&dirs);
    (dirs, before)
}

#[test]
fn a_directory_given_twice_is_refused_and_the_healthy_rank_keeps_its_files() {
    let t = tmp("twice");
    let (dirs, before) = encoded_job(&t, 4);
    let mistyped = [
        dirs[0].clone(),
        dirs[0].clone(),
        dirs[2].clone(),
        dirs[3].clone(),
    ];
    for cmd in ["verify", "rebuild"] {
        let o = redio(&args(&["parity", cmd, "--offline"], &mistyped));
        assert_eq!(o.status.code(), Some(3), "{cmd}: {}", text(&o));
        assert!(
            text(&o).contains("given for logical ranks 0 and 1"),
            "{}",
            text(&o)
        );
    }
    // The MPI job refuses the same list before launching (no launcher on
    // PATH: it could not start anyway).
    let o = Command::new(env!("CARGO_BIN_EXE_redio"))
        .args(args(&["parity", "rebuild"], &mistyped))
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        text(&o).contains("given for logical ranks 0 and 1"),
        "{}",
        text(&o)
    );
    assert_eq!(snapshot(&dirs), before, "nothing written");
}

#[test]
fn directories_in_the_wrong_order_are_refused_before_anything_is_written() {
    let t = tmp("order");
    let (dirs, before) = encoded_job(&t, 3);
    let swapped = [dirs[1].clone(), dirs[0].clone(), dirs[2].clone()];
    let o = redio(&args(&["parity", "rebuild", "--offline"], &swapped));
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        text(&o).contains("belongs to logical rank 1"),
        "{}",
        text(&o)
    );
    assert_eq!(snapshot(&dirs), before, "nothing written");
}

#[test]
fn forged_headers_where_two_members_claim_one_rank_are_refused() {
    let t = tmp("dup");
    let (dirs, before) = encoded_job(&t, 3);
    // Member 1 claims logical rank 0: its files would be "rebuilt" in
    // rank 0's directory, over rank 0's intact files.
    forge(&dirs, |h| h.members[1].logical_rank = 0);
    let o = redio(&args(&["parity", "rebuild", "--offline"], &dirs));
    assert_ne!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        text(&o).contains("both claim logical rank 0"),
        "{}",
        text(&o)
    );
    let after = snapshot(&dirs);
    assert_eq!(after, before, "rank 0's files untouched");
}

#[test]
fn a_header_path_naming_a_redundancy_file_is_refused() {
    let t = tmp("rdpname");
    let (dirs, _) = encoded_job(&t, 3);
    // Member 0's data file recorded as its own redundancy file's name: a
    // rebuild of member 0 would write over that redundancy file.
    let name = rdp(&dirs[0])
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    poison(&dirs, &name);
    let rdp_before = std::fs::read(rdp(&dirs[0])).unwrap();
    for cmd in ["verify", "rebuild"] {
        let o = redio(&args(&["parity", cmd, "--offline"], &dirs));
        assert_eq!(o.status.code(), Some(3), "{cmd}: {}", text(&o));
        assert!(
            text(&o).contains("name of a redundancy or temporary file"),
            "{}",
            text(&o)
        );
    }
    assert_eq!(std::fs::read(rdp(&dirs[0])).unwrap(), rdp_before);
}

#[test]
fn a_prefix_that_is_a_path_is_refused_and_nothing_is_written_outside() {
    let t = tmp("prefix");
    let base = t.0.join("a/b");
    let dirs = make_job(&base, 3);
    for prefix in ["../../x", "sub/x", ".hidden"] {
        let o = redio(&args(
            &["parity", "encode", "--offline", "--prefix", prefix],
            &dirs,
        ));
        assert_eq!(o.status.code(), Some(3), "{prefix}: {}", text(&o));
        assert!(text(&o).contains("not a path"), "{}", text(&o));
    }
    let escaped: Vec<_> = std::fs::read_dir(&t.0)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().ends_with(".rdp"))
        .collect();
    assert!(escaped.is_empty(), "{escaped:?}");
    assert!(!t.0.join("a/x.s0.m0.rdp").exists());
}

#[test]
fn a_file_rewritten_after_the_encode_is_not_reverted() {
    let t = tmp("newer");
    let (dirs, _) = encoded_job(&t, 3);
    // A newer, shorter file written on purpose (its mtime is now, the
    // recorded one is from 2020).
    let f = dirs[1].join("out/rank1.dat");
    std::fs::write(&f, b"the newer results").unwrap();
    let o = redio(&args(&["parity", "verify", "--offline"], &dirs));
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("modified after the encode"),
        "{}",
        text(&o)
    );
    let o = redio(&args(&["parity", "rebuild", "--offline"], &dirs));
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(text(&o).contains("would revert it"), "{}", text(&o));
    assert!(text(&o).contains("redio parity encode"), "{}", text(&o));
    assert_eq!(std::fs::read(&f).unwrap(), b"the newer results");
    // Moved away, the file is rebuilt.
    std::fs::rename(&f, t.0.join("newer.dat")).unwrap();
    let o = redio(&args(&["parity", "rebuild", "--offline"], &dirs));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(std::fs::metadata(&f).unwrap().len(), 5000 + 777);
}

#[test]
fn a_trailer_claiming_a_huge_header_is_refused_without_allocating_it() {
    let t = tmp("huge");
    let (dirs, _) = encoded_job(&t, 3);
    let f = rdp(&dirs[0]);
    // A sparse file of 1 TiB whose copy A is gone and whose trailer claims
    // a header of 1 TiB - 16 bytes.
    let size: u64 = 1 << 40;
    let file = std::fs::OpenOptions::new().write(true).open(&f).unwrap();
    file.set_len(0).unwrap();
    file.set_len(size).unwrap();
    let mut trailer = (size - 16).to_le_bytes().to_vec();
    trailer.extend_from_slice(TRAILER_MAGIC);
    std::os::unix::fs::FileExt::write_all_at(&file, &trailer, size - 16).unwrap();
    drop(file);
    let o = redio(&["parity", "inspect", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(text(&o).contains("trailer names a"), "{}", text(&o));
    assert!(text(&o).contains("damaged"), "{}", text(&o));
    let o = redio(&args(&["parity", "verify", "--offline"], &dirs));
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("trailer names a"), "{}", text(&o));
}

/// Runs `redio ARGS`, killed after `secs`: `None` if it had to be killed.
fn redio_within(args: &[&str], secs: u64) -> Option<Output> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_redio"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while std::time::Instant::now() < deadline {
        if child.try_wait().unwrap().is_some() {
            return Some(child.wait_with_output().unwrap());
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

#[test]
fn a_fifo_named_like_a_redundancy_file_does_not_hang() {
    let t = tmp("fifo");
    let (dirs, _) = encoded_job(&t, 3);
    let f = rdp(&dirs[0]);
    std::fs::remove_file(&f).unwrap();
    mkfifo(&f);
    let o = redio_within(&["parity", "inspect", f.to_str().unwrap()], 20)
        .expect("inspect of a FIFO hangs");
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(text(&o).contains("FIFO"), "{}", text(&o));
    let o = redio_within(&args(&["parity", "verify", "--offline"], &dirs), 20)
        .expect("verify with a FIFO hangs");
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("FIFO"), "{}", text(&o));
    for dev in ["/dev/zero", "/dev/urandom"] {
        let o = redio_within(&["parity", "inspect", dev], 20).expect("inspect of a device hangs");
        assert_eq!(o.status.code(), Some(3), "{}", text(&o));
        assert!(text(&o).contains("character device"), "{}", text(&o));
    }
}

#[test]
fn verify_refuses_a_rank_count_the_headers_contradict_before_launching() {
    let t = tmp("ranks");
    let (_dirs, _) = encoded_job(&t, 3);
    let root = format!("{}/node{{rank}}", t.0.display());
    // PATH without a launcher: if the check did not come first, the job
    // could not even start (and would not start 100,000 processes).
    let o = Command::new(env!("CARGO_BIN_EXE_redio"))
        .args(["parity", "verify", "-n", "100000", "--root", &root])
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        text(&o).contains("records a job of 3 logical rank(s): run with -n 3"),
        "{}",
        text(&o)
    );
}

/// Issue 44, item 7: file names are bytes. One name that is not UTF-8 made
/// the offline encode fail entirely ("No such file or directory").
#[test]
fn a_file_name_that_is_not_utf8_is_protected_and_rebuilt_byte_identical_offline() {
    use std::os::unix::ffi::OsStrExt;
    let t = tmp("bytes");
    let dirs = make_job(&t.0, 3);
    let name = std::ffi::OsStr::from_bytes(b"ckpt-\xff\xfe.dat");
    for (r, d) in dirs.iter().enumerate() {
        std::fs::write(d.join("out").join(name), vec![r as u8 ^ 0x5a; 3000 + r]).unwrap();
    }
    let head = ["parity", "encode", "--offline", "--scheme", "xor"];
    let o = redio(&args(&[&head[..], &["--set-size", "3"]].concat(), &dirs));
    assert!(o.status.success(), "{}", text(&o));
    let o = redio(&[
        "parity",
        "inspect",
        "--json",
        rdp(&dirs[0]).to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains(r#""path":"out/ckpt-\\xff\\xfe.dat""#),
        "{}",
        text(&o)
    );
    assert!(
        text(&o).contains(r#""path_hex":"6f75742f636b70742dfffe2e646174""#),
        "{}",
        text(&o)
    );
    let before = snapshot(&dirs);
    let lost = dirs[1].join("out").join(name);
    let want = std::fs::read(&lost).unwrap();
    std::fs::remove_dir_all(&dirs[1]).unwrap();
    let o = redio(&args(&["parity", "rebuild", "--offline"], &dirs));
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        std::fs::read(&lost).unwrap(),
        want,
        "rebuilt under its own name"
    );
    assert_eq!(
        snapshot(&dirs),
        before,
        "contents, modes and mtimes restored"
    );
    let o = redio(&args(&["parity", "verify", "--offline"], &dirs));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

/// Issue 44, item 9: with rank 0's directory lost or unreadable, `-n
/// 100000` launched 100,000 workers (98 s, then "Too many open files").
/// The next ranks' headers are read instead, and an `-n` this machine
/// cannot start is refused; both before launching.
#[test]
fn a_rank_count_neither_the_headers_nor_the_machine_back_is_refused_before_launching() {
    let t = tmp("ranks-lost0");
    let (dirs, _) = encoded_job(&t, 3);
    std::fs::remove_dir_all(&dirs[0]).unwrap();
    let root = format!("{}/node{{rank}}", t.0.display());
    // PATH without a launcher: a launch could not even start.
    let refused = |root: &str| {
        Command::new("/bin/sh")
            .args(["-c", "ulimit -n 1024 && exec \"$0\" \"$@\""])
            .arg(env!("CARGO_BIN_EXE_redio"))
            .args(["parity", "verify", "-n", "100000", "--root", root])
            .env("PATH", "/nonexistent")
            .output()
            .unwrap()
    };
    let o = refused(&root);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        text(&o).contains(
            "node1/redio-parity.s0.m1.rdp records a job of 3 logical rank(s): run with -n 3"
        ),
        "{}",
        text(&o)
    );
    // No header anywhere: the machine's limits decide.
    let nowhere = format!("{}/none/{{rank}}", t.0.display());
    let o = refused(&nowhere);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        text(&o).contains("-n 100000: all 100000 workers would start on this node"),
        "{}",
        text(&o)
    );
    assert!(text(&o).contains("`ulimit -n` allows 1024"), "{}", text(&o));
}

/// Waits until some process holds `path` under an exclusive `flock` (a
/// state, not a delay: bounded only against a holder that never starts).
fn wait_until_locked(path: &Path) {
    use std::os::fd::AsRawFd;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        if let Ok(f) = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
        {
            // SAFETY: a descriptor `f` owns.
            let rc = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
            if rc != 0 {
                return;
            }
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{} never locked",
            path.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Issue 44, item 8: temporary files of killed runs stayed for ever. The
/// next rebuild or encode removes those of dead runs and says so; one
/// that a live process holds (its lock) is left, until that process dies.
#[test]
fn stale_temporaries_of_dead_runs_are_removed_and_a_live_runs_are_left() {
    let t = tmp("stale");
    let (dirs, before) = encoded_job(&t, 3);
    // Written by processes that have exited: a redundancy file's and a
    // rebuilt data file's temporary.
    let dead = [
        dirs[0].join(".redio-parity.s0.m0.rdp.redio-tmp.4194303.0"),
        dirs[1].join("out/.rank1.dat.redio-tmp.4194303.1"),
    ];
    for p in &dead {
        let s = Command::new("/bin/sh")
            .args(["-c", "head -c 1000000 /dev/zero > \"$0\""])
            .arg(p)
            .status()
            .unwrap();
        assert!(s.success());
    }
    // Held by a running process, as a live run holds its temporaries.
    let live = dirs[2].join(".redio-parity.s0.m2.rdp.redio-tmp.4194302.0");
    // (One process: the shell locks, then becomes `sleep`, so killing it
    // ends the holder; no pipe of ours is inherited.)
    let mut holder = Command::new("/bin/sh")
        .args(["-c", "exec 9>>\"$0\" && flock -x 9 && exec sleep 600"])
        .arg(&live)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_until_locked(&live);
    let o = redio(&args(&["parity", "rebuild", "--offline"], &dirs));
    let _ = holder.kill().map(|_| holder.wait());
    assert!(o.status.success(), "{}", text(&o));
    for p in &dead {
        assert!(!p.exists(), "{} left", p.display());
        let said = format!(
            "redio parity rebuild: removed {} (1000000 bytes), a temporary file of a run that is \
             no longer running",
            p.display()
        );
        assert!(text(&o).contains(&said), "{}", text(&o));
    }
    assert!(live.exists(), "a live run's temporary was removed");
    assert!(!text(&o).contains(live.to_str().unwrap()), "{}", text(&o));
    // Its holder is dead now: the next encode removes it.
    let head = ["parity", "encode", "--offline", "--set-size", "3"];
    let o = redio(&args(&head, &dirs));
    assert!(o.status.success(), "{}", text(&o));
    assert!(!live.exists(), "a dead run's temporary was left");
    let said = format!("redio parity encode: removed {} (0 bytes)", live.display());
    assert!(text(&o).contains(&said), "{}", text(&o));
    assert_eq!(snapshot(&dirs), before, "the data files are untouched");
}
