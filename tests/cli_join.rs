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
