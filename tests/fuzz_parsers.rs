//! Fuzz targets for every parser of untrusted input: the redundancy file
//! (header copies A and B, trailer), the join index, the configuration and
//! the replica map file. Each runs the seed corpus of `tests/fuzz/corpus/`
//! and then mutants for `REDIO_FUZZ_SECONDS` (default 5 s; see
//! `tests/fuzz/mod.rs`), and checks that nothing panics or hangs and that
//! what is accepted is consistent. Results: docs/security.md.

mod fuzz;

use redio::config::{check_str, Config};
use redio::join::{self, index_path, parse_index, part_path, Tail, RECORD_LEN};
use redio::topology::Topology;
use redio_parity::files::check_header_paths;
use redio_parity::format::Header;
use redio_parity::redundancy_file::{check_payload, read_header};
use std::path::PathBuf;

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("fuzz-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `bytes` with the CRC of the header at its start recomputed (when its
/// length field fits): a forged but self-consistent header, so that the
/// checks after the CRC are reached.
fn with_header_crc(bytes: &[u8]) -> Vec<u8> {
    let mut b = bytes.to_vec();
    if let Ok(len) = Header::length_from_prefix(&b[..16.min(b.len())]) {
        let len = len as usize;
        if len <= b.len() {
            let crc = crc32fast::hash(&b[..len - 4]);
            b[len - 4..len].copy_from_slice(&crc.to_le_bytes());
        }
    }
    b
}

#[test]
fn fuzz_redundancy_file_header_and_trailer() {
    let dir = scratch("redundancy");
    let path = dir.join("redio-parity.s0.m0.rdp");
    let tally = fuzz::run("redundancy", &[], 0x5eed_0001, |input| {
        for bytes in [input.to_vec(), with_header_crc(input)] {
            if let Ok(h) = Header::decode(&bytes) {
                assert_eq!(h.encode(), bytes[..h.encode().len()], "decode/encode");
                let _ = check_header_paths(&h, "redio-parity", true);
                let _ = h.describe();
            }
        }
        let bytes = if input.len() % 2 == 0 {
            input.to_vec()
        } else {
            with_header_crc(input)
        };
        std::fs::write(&path, &bytes).unwrap();
        match read_header(&path) {
            Ok(parsed) => {
                assert!(parsed.header.validate().is_ok());
                assert!(parsed.payload_at + parsed.header.payload_len() <= bytes.len() as u64);
                let _ = check_payload(&path, &parsed);
                true
            }
            Err(e) => {
                assert!(e.contains("redio-parity.s0.m0.rdp"), "names the file: {e}");
                false
            }
        }
    });
    assert!(tally.tried > 5);
}

#[test]
fn fuzz_join_index() {
    let dir = scratch("join");
    let path = dir.join("out.bin");
    let data: Vec<u8> = (0..4096u32).map(|i| (i * 7) as u8).collect();
    let tally = fuzz::run("join_index", &[], 0x5eed_0002, |input| {
        for part_len in [0, RECORD_LEN as u64, 4096, u64::MAX] {
            if let Ok(records) = parse_index(input, part_len) {
                assert_eq!(records.len() * RECORD_LEN, input.len());
                assert!(records.iter().all(|r| r.offset + r.len <= part_len));
            }
        }
        // The whole join on real files: a 4 KiB part and the input as index.
        let _ = std::fs::remove_file(&path);
        let part = part_path(&path, 0);
        std::fs::write(&part, &data).unwrap();
        std::fs::write(index_path(&part), input).unwrap();
        let joined = join::join(&path, Tail::Drop);
        let _ = std::fs::remove_file(&part);
        let _ = std::fs::remove_file(index_path(&part));
        match joined {
            Ok(j) => {
                let len = std::fs::metadata(&path).map_or(0, |m| m.len());
                assert!(len <= 4096, "a joined file longer than its part: {len}");
                assert_eq!(j.records * RECORD_LEN, input.len());
                true
            }
            Err(e) => {
                assert!(e.to_string().contains("out.bin"), "names the file: {e}");
                false
            }
        }
    });
    assert!(tally.tried > 4);
}

#[test]
fn fuzz_configuration() {
    let env = |_: &str| None;
    let tally = fuzz::run("config", &["configs"], 0x5eed_0003, |input| {
        let text = String::from_utf8_lossy(input);
        let diagnostics = check_str(&text, "fuzz.yaml", &env);
        assert!(diagnostics
            .iter()
            .all(|d| !d.message.is_empty() && d.file == "fuzz.yaml"));
        if diagnostics.is_empty() {
            let config = Config::from_yaml_str(&text, "fuzz.yaml", &env).unwrap();
            let back = Config::from_yaml_str(&config.to_yaml(), "wire", &env);
            assert_eq!(back, Ok(config), "{text}");
        }
        diagnostics.is_empty()
    });
    assert!(tally.tried > 4);
}

#[test]
fn fuzz_map_file() {
    let tally = fuzz::run("map", &[], 0x5eed_0004, |input| {
        let text = String::from_utf8_lossy(input);
        let mut accepted = false;
        for (world, degree) in [(4, 2), (6, 3), (8, 2), (3, 1), (2, 2)] {
            if let Ok(t) = Topology::from_map_text(&text, world, degree) {
                accepted = true;
                for w in 0..world {
                    assert_eq!(t.world_rank_of(t.place(w)), Some(w), "{text}");
                }
            }
        }
        accepted
    });
    assert!(tally.tried > 3);
}
