//! `redio join`: the part files a Distributed Separate Write left behind
//! become the final file; a damaged index is refused and nothing is lost.

use redio::join::{index_path, part_path, Record};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::Command;

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-join-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes `pieces` (seq, bytes, offset) into replica `replica`'s part.
fn part(path: &Path, replica: u32, pieces: &[(u64, &[u8], u64)]) {
    let part = part_path(path, replica);
    let file = std::fs::File::create(&part).unwrap();
    let mut index = Vec::new();
    for &(seq, data, offset) in pieces {
        file.write_all_at(data, offset).unwrap();
        let len = data.len() as u64;
        index.extend_from_slice(&Record { seq, offset, len }.encode());
    }
    std::fs::write(index_path(&part), index).unwrap();
}

fn redio_join(paths: &[&Path]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_redio"))
        .arg("join")
        .args(paths)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn join_builds_the_file_from_three_parts_and_removes_them() {
    let dir = scratch("three");
    let path = dir.join("result.bin");
    // One write of 12 bytes cut in 4-byte pieces over three replicas, then
    // a second write (seq 8) over the middle.
    part(&path, 0, &[(3, b"AAAA", 0)]);
    part(&path, 1, &[(3, b"BBBB", 4), (8, b"xy", 5)]);
    part(&path, 2, &[(3, b"CCCC", 8)]);
    let (ok, stdout, stderr) = redio_join(&[&path]);
    assert!(ok, "{stdout}{stderr}");
    assert!(
        stdout.contains("joined 3 parts, 4 pieces, 14 bytes"),
        "{stdout}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), b"AAAABxyBCCCC");
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
    assert_eq!(left.len(), 1, "only the final file is left: {left:?}");
    // Nothing left to join.
    let (ok, stdout, _) = redio_join(&[&path]);
    assert!(ok && stdout.contains("nothing to join"), "{stdout}");
}

#[test]
fn a_torn_index_is_refused_and_the_file_and_parts_are_kept() {
    let dir = scratch("torn");
    let path = dir.join("result.bin");
    std::fs::write(&path, b"good data").unwrap();
    part(&path, 0, &[(1, b"zz", 0)]);
    let index = index_path(&part_path(&path, 0));
    let mut bytes = std::fs::read(&index).unwrap();
    bytes.truncate(bytes.len() - 5);
    std::fs::write(&index, bytes).unwrap();
    let (ok, _, stderr) = redio_join(&[&path]);
    assert!(!ok);
    assert!(
        stderr.contains("redio-part0.idx"),
        "names the file: {stderr}"
    );
    assert!(
        stderr.contains("torn write"),
        "says what is wrong: {stderr}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), b"good data");
    assert!(part_path(&path, 0).exists());
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// `redio join ARGS` killed after 20 s: `None` if it hung.
fn redio_join_within(args: &[&str]) -> Option<(bool, String)> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_redio"))
        .arg("join")
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while std::time::Instant::now() < deadline {
        if child.try_wait().unwrap().is_some() {
            let out = child.wait_with_output().unwrap();
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            return Some((out.status.success(), text));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

#[test]
fn a_part_or_index_that_is_a_symlink_is_refused_and_nothing_is_copied() {
    let dir = scratch("symlink-part");
    let secret = dir.join("secret.txt");
    std::fs::write(&secret, b"TOP SECRET").unwrap();
    let path = dir.join("out").join("result.bin");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    // The part is a link to the secret; the index copies its 10 bytes.
    let part0 = part_path(&path, 0);
    std::os::unix::fs::symlink(&secret, &part0).unwrap();
    let record = Record {
        seq: 1,
        offset: 0,
        len: 10,
    };
    std::fs::write(index_path(&part0), record.encode()).unwrap();
    let (ok, stdout, stderr) = redio_join(&[&path]);
    assert!(!ok, "{stdout}{stderr}");
    assert!(stderr.contains("symbolic link"), "{stderr}");
    assert!(stderr.contains("redio-part0"), "names the part: {stderr}");
    assert!(!path.exists(), "nothing written");
    // A real part whose index is a link to a forged index elsewhere.
    std::fs::remove_file(&part0).unwrap();
    std::fs::remove_file(index_path(&part0)).unwrap();
    part(&path, 0, &[(1, b"real", 0)]);
    let forged = dir.join("forged.idx");
    std::fs::rename(index_path(&part0), &forged).unwrap();
    std::os::unix::fs::symlink(&forged, index_path(&part0)).unwrap();
    let (ok, _, stderr) = redio_join(&[&path]);
    assert!(!ok);
    assert!(stderr.contains("symbolic link"), "{stderr}");
    assert!(stderr.contains(".idx"), "names the index: {stderr}");
    assert!(!path.exists(), "nothing written");
}

#[test]
fn a_symlinked_final_path_is_refused_and_its_target_untouched() {
    let dir = scratch("symlink-final");
    let outside = dir.join("outside.txt");
    std::fs::write(&outside, b"keep me").unwrap();
    let path = dir.join("result.bin");
    std::os::unix::fs::symlink(&outside, &path).unwrap();
    part(&path, 0, &[(1, b"overwrite", 0)]);
    let (ok, stdout, stderr) = redio_join(&[&path]);
    assert!(!ok, "{stdout}{stderr}");
    assert!(stderr.contains("a symbolic link"), "{stderr}");
    assert_eq!(std::fs::read(&outside).unwrap(), b"keep me");
    assert!(part_path(&path, 0).exists(), "parts kept");
}

#[test]
fn a_longer_existing_file_keeps_no_stale_tail_unless_asked() {
    let dir = scratch("tail");
    let path = dir.join("result.bin");
    std::fs::write(&path, b"0123456789OLDTAIL").unwrap();
    part(&path, 0, &[(1, b"new!", 0)]);
    part(&path, 1, &[(1, b"NEW!", 4)]);
    let (ok, stdout, stderr) = redio_join(&[&path]);
    assert!(ok, "{stdout}{stderr}");
    assert_eq!(std::fs::read(&path).unwrap(), b"new!NEW!");
    assert!(stdout.contains("dropped 9 byte(s)"), "{stdout}");
    // --keep-tail: the bytes past the last piece stay.
    std::fs::write(&path, b"0123456789OLDTAIL").unwrap();
    part(&path, 0, &[(1, b"new!", 0)]);
    let out = Command::new(env!("CARGO_BIN_EXE_redio"))
        .args(["join", "--keep-tail"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(std::fs::read(&path).unwrap(), b"new!456789OLDTAIL");
}

#[test]
fn an_index_that_is_a_fifo_or_a_device_does_not_hang() {
    let dir = scratch("fifo-index");
    let path = dir.join("result.bin");
    part(&path, 0, &[(1, b"data", 0)]);
    let index = index_path(&part_path(&path, 0));
    std::fs::remove_file(&index).unwrap();
    mkfifo(&index);
    let (ok, text) = redio_join_within(&[path.to_str().unwrap()]).expect("join hangs on a FIFO");
    assert!(!ok, "{text}");
    assert!(text.contains("FIFO"), "{text}");
    std::fs::remove_file(&index).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &index).unwrap();
    let (ok, text) = redio_join_within(&[path.to_str().unwrap()]).expect("join reads /dev/zero");
    assert!(!ok, "{text}");
    assert!(!path.exists(), "nothing written");
}
