//! One member's side of the steps: its temporary files, answering the
//! requests of the steps it is a source of (zeros after a local error, so
//! the exchange goes on), and combining the pieces of the steps it
//! rebuilds into its files.

use super::plan::{Output, Plan, Request, Step};
use super::{Damage, Local, Rebuilt};
use crate::encode::header_for;
use crate::files::{self, AtomicFile};
use crate::format::{self, Header};
use crate::gf::kernel::best;
use crate::logical::{logical_reader, write_logical, LogicalReader};
use crate::redundancy_file::open_redundancy;
use crate::stripe::PieceBuffers;
use redio_aligned::AlignedBuf;
use std::fs::File;
use std::os::unix::fs::FileExt;

/// This member's state while the steps run.
pub(super) struct Member<'a> {
    pub(super) local: &'a Local<'a>,
    /// Temporary files of this member's damaged data files, by file index.
    pub(super) data_out: Vec<Option<AtomicFile>>,
    /// This member's new redundancy file, its header and payload CRCs.
    pub(super) red_out: Option<(AtomicFile, Header, u64, Vec<crc32fast::Hasher>)>,
    pub(super) reader: Option<LogicalReader>,
    pub(super) payload: Option<File>,
    pub(super) out: Rebuilt,
}

impl Member<'_> {
    pub(super) fn fail(&mut self, e: impl std::fmt::Display) {
        self.out.errors.push(e.to_string());
    }

    /// Answers a request into `buf` (zeros after a local error).
    pub(super) fn serve(&mut self, req: Request, buf: &mut AlignedBuf) {
        buf.clear();
        // Every byte is read, or zeroed on an error.
        buf.resize_for_overwrite(req.len() as usize);
        let l = self.local;
        let res = match req {
            Request::Data { offset, .. } => {
                if self.reader.is_none() {
                    match logical_reader(l.root, &l.header.members[l.me], &self.data_out) {
                        Ok(r) => self.reader = Some(r),
                        Err(e) => {
                            buf.fill(0);
                            return self.fail(e);
                        }
                    }
                }
                self.reader.as_ref().map(|r| r.read_at(offset, buf))
            }
            Request::Payload { offset, .. } => {
                if self.payload.is_none() {
                    let Some((path, _)) = &l.redundancy else {
                        buf.fill(0);
                        return self.fail("asked for a redundancy file it does not have");
                    };
                    match open_redundancy(path) {
                        Ok(f) => self.payload = Some(f),
                        Err(e) => {
                            buf.fill(0);
                            return self.fail(e);
                        }
                    }
                }
                let at = l.redundancy.as_ref().map_or(0, |r| r.1);
                self.payload
                    .as_ref()
                    .map(|f| f.read_exact_at(buf, at + offset))
            }
        };
        self.out.traffic.read += buf.len() as u64;
        if let Some(Err(e)) = res {
            buf.fill(0);
            self.fail(e);
        }
    }

    /// Creates the temporary files this member will fill.
    pub(super) fn open_outputs(&mut self, d: &Damage) {
        let l = self.local;
        let h = l.header;
        let files = &h.members[l.me].files;
        self.data_out = files.iter().map(|_| None).collect();
        for &i in l.damaged {
            let f = &files[i];
            let made = (|| -> Result<AtomicFile, String> {
                let full = files::resolve_in_root(l.root, &f.path).map_err(|e| e.to_string())?;
                if full.is_dir() {
                    return Err(format!(
                        "{} is a directory where the header records a file; move it away first",
                        full.display()
                    ));
                }
                let dir = full.parent().unwrap_or(l.root);
                files::create_dirs_in_root(l.root, dir).map_err(|e| e.to_string())?;
                let out = AtomicFile::create(&full).map_err(|e| e.to_string())?;
                out.set_len(f.size).map_err(|e| e.to_string())?;
                Ok(out)
            })();
            match made {
                Ok(o) => self.data_out[i] = Some(o),
                Err(e) => self.fail(e),
            }
        }
        if d.lost_red[l.me] {
            let header = header_for(h, l.me);
            let hlen = header.encode().len() as u64;
            let dir = l.redundancy_dir;
            let path = dir.join(format::file_name(l.prefix, h.set_id, l.me));
            // A directory apart from the data was named by the user, not by
            // a header: no escape to guard against.
            let made = if dir == l.root {
                files::create_dirs_in_root(l.root, l.root)
            } else {
                std::fs::create_dir_all(dir)
            };
            let made = made.and_then(|()| AtomicFile::create(&path));
            match made {
                Ok(o) => {
                    let n = header.payload.len();
                    self.red_out = Some((o, header, hlen, vec![crc32fast::Hasher::new(); n]));
                }
                Err(e) => self.fail(format!("{}: {e}", path.display())),
            }
        }
    }

    /// Checks the rebuilt data files against their recorded CRC32, then
    /// sets their mode and mtime and fsyncs them (end of phase 1).
    pub(super) fn seal_data(&mut self) {
        let h = self.local.header;
        let me = self.local.me;
        let mut errors = Vec::new();
        for (i, f) in self.data_out.iter().enumerate() {
            let Some(f) = f else { continue };
            let meta = &h.members[me].files[i];
            let checked = files::crc_of(f.file()).and_then(|(size, crc)| {
                if size != meta.size || crc != meta.crc32 {
                    return Err(std::io::Error::other(format!(
                        "rebuilt {} has CRC32 {crc:08x}, the header records {:08x}: the \
                         surviving data or parity is inconsistent",
                        f.dest().display(),
                        meta.crc32
                    )));
                }
                f.set_meta(meta.mode, meta.mtime_sec, meta.mtime_nsec)?;
                f.sync()
            });
            if let Err(e) = checked {
                errors.push(e.to_string());
            }
        }
        self.out.errors.extend(errors);
        // Phase-2 sources read the rebuilt data: reopen over it.
        self.reader = None;
    }
}

/// Combines the pieces a rebuilder received for one step and writes the
/// result into its temporary files.
#[allow(clippy::too_many_arguments)]
pub(super) fn combine<B: std::ops::Deref<Target = [u8]>>(
    m: &mut Member<'_>,
    plan: &Plan,
    step: &Step,
    srcs: &[(usize, Request)],
    got: &[B],
    off: u64,
    len: usize,
    bufs: &mut PieceBuffers,
    acc: &mut AlignedBuf,
) -> Result<(), String> {
    let h = m.local.header;
    let me = m.local.me;
    let p = h.members.len();
    let io = |e: std::io::Error| e.to_string();
    match (step.out, &plan.code) {
        (Output::Data { row, chunk }, Some(code)) => {
            let Some(rp) = &plan.rows[row] else {
                return Ok(());
            };
            let mut data: Vec<Option<&[u8]>> = vec![None; p];
            let mut parity: Vec<Option<&[u8]>> = vec![None; code.parity_count()];
            let mut eq = rp.equations.iter();
            for (n, &(src, req)) in srcs.iter().enumerate() {
                match req {
                    Request::Data { .. } => data[src] = Some(&got[n][..len]),
                    Request::Payload { .. } => {
                        if let Some(&j) = eq.next() {
                            parity[j] = Some(&got[n][..len]);
                        }
                    }
                }
            }
            code.solve_piece_into(best(), rp, &data, &parity, len, false, bufs);
            let l = rp
                .lost_data
                .iter()
                .position(|&x| x == me)
                .ok_or("not lost")?;
            let at = chunk as u64 * h.chunk_size + off;
            write_logical(h, me, &m.data_out, at, &bufs.solved[l][..len]).map_err(io)
        }
        (Output::Parity { j }, Some(code)) => {
            acc.clear();
            acc.resize(len, 0);
            for (n, &(src, _)) in srcs.iter().enumerate() {
                code.contribute(best(), j, src, &got[n][..len], acc);
            }
            let Some((out, _, hlen, hashers)) = &mut m.red_out else {
                return Ok(());
            };
            hashers[j].update(acc);
            out.write_at(acc, *hlen + j as u64 * h.chunk_size + off)
                .map_err(io)
        }
        (Output::Copy { .. }, _) => {
            write_logical(h, me, &m.data_out, off, &got[0][..len]).map_err(io)
        }
        (Output::Hold { slot, .. }, _) => {
            let Some((out, header, hlen, hashers)) = &mut m.red_out else {
                return Ok(());
            };
            hashers[slot].update(&got[0][..len]);
            let at = *hlen + header.payload_offset(slot) + off;
            out.write_at(&got[0][..len], at).map_err(io)
        }
        _ => Ok(()),
    }
}
