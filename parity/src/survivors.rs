//! Checking a survivor while it serves a rebuild, so that each of its
//! bytes is read once (issue 20): a rebuild used to check the CRC32 of
//! every surviving data file and redundancy payload in a pass of its own,
//! then read them again to serve the pieces.
//!
//! A [`SurvivorCheck`] takes every byte the rebuild reads of one member
//! (its logical file, its redundancy payload), hashes it on the way, reads
//! at the end whatever the rebuild did not need, and compares each CRC32
//! with what the header records. A mismatch means the rebuild used (or
//! would have trusted) damaged data: its caller refuses to rename anything
//! and checks again from the start, with that damage known. Nothing has
//! been renamed by then: every output is a temporary file.

use crate::files;
use crate::format::{ChunkMeta, MemberMeta};
use crate::logical_crc::LogicalCrc;
use crate::redundancy_file::open_redundancy;
use crate::safe_fs::{self, Links};
use redio_aligned::AlignedBuf;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// The deferred CRC32 checks of one member's surviving files and payload.
pub struct SurvivorCheck {
    member: usize,
    root: PathBuf,
    meta: MemberMeta,
    /// Files to check: the intact-looking ones (damaged files are rebuilt).
    check: Vec<bool>,
    data: LogicalCrc,
    payload: Option<PayloadCheck>,
}

/// A redundancy file's payload under check.
struct PayloadCheck {
    path: PathBuf,
    /// Offset of the payload in the file.
    at: u64,
    /// Over the payload chunks as "files", in order.
    crc: LogicalCrc,
    chunks: Vec<ChunkMeta>,
}

/// What the checks found, and what they read beyond the rebuild's reads.
#[derive(Debug, Default)]
pub struct Verdict {
    /// One line per damaged file or payload chunk, in the words of
    /// `check_files` and `check_payload` ("member M: PATH: …").
    pub damaged: Vec<String>,
    /// Bytes read to complete the checks.
    pub read: u64,
}

impl SurvivorCheck {
    /// Member `member`'s files `meta` under `root`, all but `damaged`, read
    /// by the rebuild in chunks of `chunk` bytes (0: sequentially), and its
    /// redundancy file's payload at `(path, payload offset, chunks)` when
    /// it has a usable one.
    pub fn new(
        member: usize,
        root: &Path,
        meta: &MemberMeta,
        damaged: &[usize],
        chunk: u64,
        payload: Option<(&Path, u64, &[ChunkMeta])>,
    ) -> Self {
        let sizes: Vec<u64> = meta.files.iter().map(|f| f.size).collect();
        let payload = payload.map(|(path, at, chunks)| {
            let lens: Vec<u64> = chunks.iter().map(|c| c.len).collect();
            PayloadCheck {
                path: path.to_path_buf(),
                at,
                crc: LogicalCrc::new(&lens, 0),
                chunks: chunks.to_vec(),
            }
        });
        SurvivorCheck {
            member,
            root: root.to_path_buf(),
            meta: meta.clone(),
            check: (0..meta.files.len())
                .map(|i| !damaged.contains(&i))
                .collect(),
            data: LogicalCrc::new(&sizes, chunk),
            payload,
        }
    }

    /// Bytes of the member's logical file read at `offset`.
    pub fn data(&mut self, offset: u64, bytes: &[u8]) {
        self.data.observe(offset, bytes);
    }

    /// Bytes of the member's redundancy payload read at `offset` (from the
    /// payload's start).
    pub fn payload(&mut self, offset: u64, bytes: &[u8]) {
        if let Some(p) = &mut self.payload {
            p.crc.observe(offset, bytes);
        }
    }

    /// Reads what the rebuild left unread, in pieces of `piece` bytes, and
    /// compares every CRC32 with the header.
    pub fn finish(mut self, piece: usize) -> Verdict {
        let mut v = Verdict::default();
        let mut buf = AlignedBuf::new();
        let piece = piece.max(1) as u64;
        let m = self.member;
        // The data files: what was not served, file by file.
        let starts: Vec<u64> = self
            .meta
            .files
            .iter()
            .scan(0u64, |at, f| {
                let start = *at;
                *at += f.size;
                Some(start)
            })
            .collect();
        let mut unreadable = vec![None; self.meta.files.len()];
        let mut open: Option<(usize, File)> = None;
        for (i, at, len) in self.data.missing() {
            if !self.check[i] || unreadable[i].is_some() {
                continue;
            }
            if open.as_ref().is_none_or(|(o, _)| *o != i) {
                let f = &self.meta.files[i];
                match files::resolve_in_root(&self.root, &f.path)
                    .map_err(|e| e.to_string())
                    .and_then(|full| {
                        safe_fs::open_regular(&full, Links::Follow).map_err(|e| e.to_string())
                    }) {
                    Ok(file) => open = Some((i, file)),
                    Err(e) => {
                        unreadable[i] = Some(e);
                        continue;
                    }
                }
            }
            let Some((_, file)) = &open else { continue };
            let mut done = 0;
            while done < len {
                let n = piece.min(len - done);
                buf.resize_for_overwrite(n as usize);
                if let Err(e) = file.read_exact_at(&mut buf, at + done) {
                    unreadable[i] = Some(e.to_string());
                    break;
                }
                v.read += n;
                self.data.observe(starts[i] + at + done, &buf);
                done += n;
            }
        }
        for (i, crc) in self.data.file_crcs().into_iter().enumerate() {
            if !self.check[i] {
                continue;
            }
            let f = &self.meta.files[i];
            let full = self.root.join(f.rel_path());
            match (crc, unreadable[i].take()) {
                (_, Some(e)) => v
                    .damaged
                    .push(format!("member {m}: {}: unreadable: {e}", full.display())),
                (Some(crc), None) if crc != f.crc32 => v.damaged.push(format!(
                    "member {m}: {}: CRC32 {crc:08x} instead of {:08x} (content changed)",
                    full.display(),
                    f.crc32
                )),
                _ => {}
            }
        }
        // The payload: what was not served, then each chunk's CRC32.
        let Some(mut p) = self.payload else {
            return v;
        };
        let starts: Vec<u64> = p
            .chunks
            .iter()
            .scan(0u64, |at, c| {
                let start = *at;
                *at += c.len;
                Some(start)
            })
            .collect();
        let missing = p.crc.missing();
        let mut failed = None;
        if !missing.is_empty() {
            match open_redundancy(&p.path) {
                Ok(file) => {
                    'ranges: for (j, at, len) in missing {
                        let mut done = 0;
                        while done < len {
                            let n = piece.min(len - done);
                            buf.resize_for_overwrite(n as usize);
                            let from = p.at + starts[j] + at + done;
                            if let Err(e) = file.read_exact_at(&mut buf, from) {
                                failed = Some(e.to_string());
                                break 'ranges;
                            }
                            v.read += n;
                            p.crc.observe(starts[j] + at + done, &buf);
                            done += n;
                        }
                    }
                }
                Err(e) => failed = Some(e.to_string()),
            }
        }
        let path = p.path.display();
        if let Some(e) = failed {
            v.damaged
                .push(format!("member {m}: {path}: unreadable: {e}"));
            return v;
        }
        for (j, (crc, c)) in p.crc.file_crcs().into_iter().zip(&p.chunks).enumerate() {
            if let Some(crc) = crc.filter(|&crc| crc != c.crc32) {
                v.damaged.push(format!(
                    "member {m}: {path}: payload chunk {j}: CRC32 {crc:08x} instead of {:08x} \
                     (parity damaged)",
                    c.crc32
                ));
            }
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::FileMeta;

    fn meta(files: &[(&str, &[u8])]) -> MemberMeta {
        MemberMeta {
            world_rank: 0,
            logical_rank: 0,
            failure_group: "g".into(),
            host: "h".into(),
            files: files
                .iter()
                .map(|(name, bytes)| FileMeta {
                    path: name.as_bytes().to_vec(),
                    size: bytes.len() as u64,
                    mode: 0o644,
                    mtime_sec: 0,
                    mtime_nsec: 0,
                    crc32: crc32fast::hash(bytes),
                })
                .collect(),
        }
    }

    #[test]
    fn served_bytes_are_not_read_again_and_damage_is_found() {
        let dir = std::env::temp_dir().join(format!("redio-survivors-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let a: Vec<u8> = (0..5000u32).map(|i| (i * 7) as u8).collect();
        let b: Vec<u8> = (0..300u32).map(|i| (i * 3 + 1) as u8).collect();
        std::fs::write(dir.join("a"), &a).unwrap();
        std::fs::write(dir.join("b"), &b).unwrap();
        let payload: Vec<u8> = (0..2000u32).map(|i| (i * 11) as u8).collect();
        let mut rdp = vec![9u8; 100];
        rdp.extend_from_slice(&payload);
        std::fs::write(dir.join("p.rdp"), &rdp).unwrap();
        let chunks = [
            ChunkMeta {
                len: 1000,
                crc32: crc32fast::hash(&payload[..1000]),
            },
            ChunkMeta {
                len: 1000,
                crc32: crc32fast::hash(&payload[1000..]),
            },
        ];
        let m = meta(&[("a", &a), ("b", &b)]);
        let logical = [a.clone(), b.clone()].concat();
        let rdp_path = dir.join("p.rdp");
        let fresh = || SurvivorCheck::new(1, &dir, &m, &[], 1024, Some((&rdp_path, 100, &chunks)));
        // The rebuild served chunk 0 of the data and payload chunk 1.
        let mut c = fresh();
        c.data(0, &logical[..1024]);
        c.payload(1000, &payload[1000..]);
        let v = c.finish(333);
        assert!(v.damaged.is_empty(), "{:?}", v.damaged);
        assert_eq!(v.read, (logical.len() - 1024 + 1000) as u64);
        // Everything served: nothing more to read.
        let mut c = fresh();
        c.data(0, &logical);
        c.payload(0, &payload);
        assert_eq!(c.finish(333).read, 0);
        // Damage in what was served, and in what was not.
        let mut c = fresh();
        let mut served = logical.clone();
        served[10] ^= 1;
        c.data(0, &served[..2048]);
        let mut bad = rdp.clone();
        bad[100 + 1500] ^= 4;
        std::fs::write(&rdp_path, &bad).unwrap();
        let v = c.finish(4096);
        assert_eq!(v.damaged.len(), 2, "{:?}", v.damaged);
        assert!(v.damaged[0].contains("a: CRC32"), "{:?}", v.damaged);
        assert!(
            v.damaged[1].contains("payload chunk 1: CRC32"),
            "{:?}",
            v.damaged
        );
        // A damaged (rebuilt) file is not checked; a vanished one is named.
        std::fs::remove_file(dir.join("b")).unwrap();
        let c = SurvivorCheck::new(1, &dir, &m, &[0], 1024, None);
        let v = c.finish(4096);
        assert_eq!(v.damaged.len(), 1, "{:?}", v.damaged);
        assert!(v.damaged[0].contains("b: unreadable"), "{:?}", v.damaged);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
