//! One member's side of the steps: its temporary files, answering the
//! requests of the steps it is a source of (zeros after a local error, so
//! the exchange goes on; the CRC32 checks of its own files fed by those
//! reads), and combining the pieces of the steps it rebuilds into its
//! files (their CRC32s computed as they are written, not read back).

use super::plan::{Output, Plan, Request, Step};
use super::{Damage, Local, Rebuilt};
use crate::encode::header_for;
use crate::files::{self, AtomicFile};
use crate::format::{self, Header};
use crate::gf::kernel::{best, linear_combination};
use crate::logical::{logical_reader, write_logical, LogicalReader};
use crate::logical_crc::LogicalCrc;
use crate::redundancy_file::open_redundancy;
use crate::scheme::Scheme;
use crate::stripe::{PieceBuffers, RowPieces, RowPlan};
use crate::survivors::SurvivorCheck;
use redio_aligned::{AlignedBuf, ByteBuf};
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
    /// The deferred CRC32 checks of this member's own files and payload,
    /// fed by what it reads to answer.
    pub(super) checks: Option<SurvivorCheck>,
    /// The CRC32s of what this member writes into its damaged files.
    pub(super) written: Option<LogicalCrc>,
    pub(super) out: Rebuilt,
}

impl Member<'_> {
    pub(super) fn fail(&mut self, e: impl std::fmt::Display) {
        self.out.errors.push(e.to_string());
    }

    /// Answers a request into `buf`: true when it was read, false when
    /// `buf` holds zeros after a local error (recorded).
    pub(super) fn serve<B: ByteBuf>(&mut self, req: Request, buf: &mut B) -> bool {
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
                            self.fail(e);
                            return false;
                        }
                    }
                }
                self.reader
                    .as_ref()
                    .map(|r| r.read_at(offset, &mut buf[..]))
            }
            Request::Payload { offset, .. } => {
                if self.payload.is_none() {
                    let Some((path, _)) = &l.redundancy else {
                        buf.fill(0);
                        self.fail("asked for a redundancy file it does not have");
                        return false;
                    };
                    match open_redundancy(path) {
                        Ok(f) => self.payload = Some(f),
                        Err(e) => {
                            buf.fill(0);
                            self.fail(e);
                            return false;
                        }
                    }
                }
                let at = l.redundancy.as_ref().map_or(0, |r| r.1);
                self.payload
                    .as_ref()
                    .map(|f| f.read_exact_at(&mut buf[..], at + offset))
            }
        };
        // Bytes of files, not the zeros past the end of the logical file.
        self.out.traffic.read += match req {
            Request::Data { offset, len } => {
                len.min(l.header.members[l.me].logical_len().saturating_sub(offset))
            }
            Request::Payload { len, .. } => len,
        };
        match res {
            Some(Err(e)) => {
                buf.fill(0);
                self.fail(e);
                false
            }
            _ => {
                if let Some(c) = &mut self.checks {
                    match req {
                        Request::Data { offset, .. } => c.data(offset, &buf[..]),
                        Request::Payload { offset, .. } => c.payload(offset, &buf[..]),
                    }
                }
                true
            }
        }
    }

    /// Creates the temporary files this member will fill.
    pub(super) fn open_outputs(&mut self, d: &Damage) {
        let l = self.local;
        let h = l.header;
        let files = &h.members[l.me].files;
        // XOR / RS read and write a logical file chunk by chunk, each chunk
        // in order; PARTNER from start to end.
        let chunk = match h.scheme {
            Scheme::Xor | Scheme::Rs { .. } => h.chunk_size,
            _ => 0,
        };
        if d.lost_data[l.me] {
            let sizes: Vec<u64> = files.iter().map(|f| f.size).collect();
            self.written = Some(LogicalCrc::new(&sizes, chunk));
        }
        if l.deferred {
            let payload = l
                .redundancy
                .as_ref()
                .map(|(path, at)| (path.as_path(), *at, l.payload));
            self.checks = Some(SurvivorCheck::new(
                l.me,
                l.root,
                &h.members[l.me],
                l.damaged,
                chunk,
                payload,
            ));
        }
        self.data_out = files.iter().map(|_| None).collect();
        for &i in l.damaged {
            let f = &files[i];
            let dirs = &mut self.out.made;
            let made = (|| -> Result<AtomicFile, String> {
                let full = files::resolve_in_root(l.root, &f.path).map_err(|e| e.to_string())?;
                if full.is_dir() {
                    return Err(format!(
                        "{} is a directory where the header records a file; move it away first",
                        full.display()
                    ));
                }
                let dir = full.parent().unwrap_or(l.root);
                dirs.create(l.root, dir).map_err(|e| e.to_string())?;
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
                self.out.made.create(l.root, l.root)
            } else {
                self.out.made.create_all(dir)
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

    /// Checks the rebuilt data files against their recorded CRC32 (from
    /// what was written; read back only if some byte was not seen), then
    /// sets their mode and mtime and fsyncs them (end of phase 1).
    pub(super) fn seal_data(&mut self) {
        let h = self.local.header;
        let me = self.local.me;
        let mut errors = Vec::new();
        let crcs = self
            .written
            .take()
            .map(LogicalCrc::file_crcs)
            .unwrap_or_default();
        for (i, f) in self.data_out.iter().enumerate() {
            let Some(f) = f else { continue };
            let meta = &h.members[me].files[i];
            let sized = match crcs.get(i).copied().flatten() {
                Some(crc) => f.file().metadata().map(|m| (m.len(), crc)),
                None => files::crc_of(f.file()),
            };
            let checked = sized.and_then(|(size, crc)| {
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

/// The pieces the survivors of a row sent, by data member and by parity
/// equation (`None`: not sent), as [`RowPieces`] takes them.
type SentPieces<'g> = (Vec<Option<&'g [u8]>>, Vec<Option<&'g [u8]>>);

/// Sorts the pieces the survivors of a row sent (`got`, in the order of
/// `srcs`, each cut to `len`) by data member and by parity equation.
fn sent_pieces<'g, B: std::ops::Deref<Target = [u8]>>(
    code: &crate::stripe::StripeCode,
    rp: &RowPlan,
    p: usize,
    srcs: &[(usize, Request)],
    got: &'g [B],
    len: usize,
) -> SentPieces<'g> {
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
    (data, parity)
}

/// The XOR of the first `n` pieces of `got` (each cut to `len`): under
/// XOR every coefficient and every inverse is 1, so a lost data piece (the
/// parity plus the row's other data) and a parity piece (the row's data)
/// are both the sum of what the sources sent. One piece (2 members) is
/// used as it came; more are summed onto a copy of the first: no zero-fill
/// and no solve, passes over every byte the rebuilder would otherwise
/// make on its critical path (issue 20).
fn xor_of<'a, B: std::ops::Deref<Target = [u8]>>(
    got: &'a [B],
    n: usize,
    len: usize,
    acc: &'a mut AlignedBuf,
) -> &'a [u8] {
    if n == 1 {
        return &got[0][..len];
    }
    acc.clear();
    acc.resize_for_overwrite(len);
    acc.copy_from_slice(&got[0][..len]);
    for g in &got[1..n] {
        best().xor_acc(&g[..len], acc);
    }
    acc
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
    let xor = h.scheme == Scheme::Xor;
    match (step.out, &plan.code) {
        (Output::Data { row, chunk }, Some(code)) => {
            let Some(rp) = &plan.rows[row] else {
                return Ok(());
            };
            let at = chunk as u64 * h.chunk_size + off;
            let bytes = if xor && !srcs.is_empty() && rp.lost_data == [me] {
                xor_of(got, srcs.len(), len, acc)
            } else {
                let (data, parity) = sent_pieces(code, rp, p, srcs, got, len);
                let l = rp
                    .lost_data
                    .iter()
                    .position(|&x| x == me)
                    .ok_or("not lost")?;
                let row = RowPieces {
                    plan: rp,
                    data: &data,
                    parity: &parity,
                    len,
                };
                // This member's data alone: the row's other lost members
                // rebuild their own.
                code.solve_data_piece_into(best(), row, l, bufs)
            };
            if let Some(w) = &mut m.written {
                w.observe(at, bytes);
            }
            write_logical(h, me, &m.data_out, at, bytes).map_err(io)
        }
        (Output::Parity { j }, Some(code)) => {
            let row = code.parity_row(me, j);
            let Some(rp) = &plan.rows[row] else {
                return Ok(());
            };
            let bytes: &[u8] = if xor && !srcs.is_empty() && rp.lost_data.is_empty() {
                xor_of(got, srcs.len(), len, acc)
            } else if rp.lost_data.is_empty() {
                // Every data member of the row answered: sum them.
                acc.clear();
                acc.resize_for_overwrite(len);
                let terms = srcs
                    .iter()
                    .zip(got)
                    .map(|(&(src, _), g)| (code.coefficient(j, src), &g[..len]));
                linear_combination(best(), terms, acc);
                acc
            } else {
                // The row's survivors answered: solve its lost data, then
                // encode this equation from the whole row.
                let (data, parity) = sent_pieces(code, rp, p, srcs, got, len);
                let row = RowPieces {
                    plan: rp,
                    data: &data,
                    parity: &parity,
                    len,
                };
                code.solve_piece_into(best(), row, true, bufs);
                let e = rp
                    .lost_parity
                    .iter()
                    .position(|&x| x == j)
                    .ok_or("a lost parity chunk the row plan does not re-encode")?;
                &bufs.parity[e][..len]
            };
            let Some((out, _, hlen, hashers)) = &mut m.red_out else {
                return Ok(());
            };
            hashers[j].update(bytes);
            out.write_at(bytes, *hlen + j as u64 * h.chunk_size + off)
                .map_err(io)
        }
        (Output::Copy { .. }, _) => {
            if let Some(w) = &mut m.written {
                w.observe(off, &got[0][..len]);
            }
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
