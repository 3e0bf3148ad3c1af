//! Rebuilding the damaged members of every set in one process, from the
//! [`assess`] of the directories.
//!
//! Every repaired file is written to a temporary file, checked against its
//! recorded CRC32, given its mode and mtime and fsynced; only then are they
//! all renamed into place. Beyond the tolerance, or when a directory does
//! not hold what the headers say ([`check_before_rebuild`]), nothing is
//! written.

use crate::assess::{assess, rewritten_after_encode, Assessment, SetState, Verdict};
use crate::encode::{header_for, write_payloads};
use crate::error::Error;
use crate::files::{self, AtomicFile};
use crate::format::{self, Header};
use crate::gf::kernel::best;
use crate::logical::{logical_reader, write_logical, LogicalReader};
use crate::options::Options;
use crate::partner;
use crate::progress::Progress;
use crate::redundancy_file::open_redundancy;
use crate::scheme::Scheme;
use crate::stripe::{PieceBuffers, RowPlan, StripeCode};
use redio_aligned::AlignedBuf;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// What a rebuild did.
#[derive(Debug, Clone, Default)]
pub struct RebuildReport {
    /// Files rewritten (data and redundancy files).
    pub written: Vec<PathBuf>,
}

/// Rebuilds every damaged file under `dirs`. Refuses, writing nothing, if
/// any set is unrecoverable or a header path is unsafe.
pub fn rebuild(dirs: &[PathBuf], opts: &Options) -> Result<(Assessment, RebuildReport), Error> {
    let a = assess(dirs, opts)?;
    if a.verdict == Verdict::Unrecoverable {
        let mut lines = a.findings.clone();
        for s in &a.sets {
            lines.extend(s.findings.iter().cloned());
        }
        return Err(Error::Unrecoverable(lines.join("\n")));
    }
    for s in &a.sets {
        if let (Some(h), Verdict::Repairable) = (&s.header, s.verdict) {
            for (m, d) in s.damaged_files.iter().enumerate() {
                check_before_rebuild(h, m, &s.roots[m], d).map_err(Error::Refused)?;
            }
        }
    }
    let mut pending: Vec<AtomicFile> = Vec::new();
    for s in &a.sets {
        if s.verdict == Verdict::Repairable {
            pending.extend(rebuild_set(s, opts)?);
        }
    }
    let mut report = RebuildReport::default();
    for f in pending {
        report.written.push(f.dest().to_path_buf());
        f.commit()?;
    }
    Ok((a, report))
}

/// Refuses to rebuild member `m`'s damaged files (indices `damaged`)
/// under `root` when what is there is not lost data of this member:
///
/// - a file equal (path, size, CRC32) to another member's recorded file:
///   the directory belongs to another rank (a `--root` without `{rank}`,
///   a directory given twice), and rebuilding would overwrite its healthy
///   data;
/// - a file modified after the encode (a later modification time than
///   recorded): it was rewritten on purpose, and a rebuild would silently
///   revert it to the protected version.
///
/// Missing files and files damaged in place (same modification time) are
/// rebuilt. Checked before anything is written.
pub fn check_before_rebuild(
    h: &Header,
    m: usize,
    root: &Path,
    damaged: &[usize],
) -> Result<(), String> {
    let me = &h.members[m];
    for &i in damaged {
        let Some(f) = me.files.get(i) else { continue };
        let full = files::resolve_in_root(root, &f.path).map_err(|e| e.to_string())?;
        let Ok(md) = std::fs::symlink_metadata(&full) else {
            continue;
        };
        if !md.is_file() {
            continue;
        }
        let (size, crc) = files::crc_file(&full).map_err(|e| e.to_string())?;
        let other = h.members.iter().enumerate().find(|(o, meta)| {
            *o != m
                && meta
                    .files
                    .iter()
                    .any(|g| g.path == f.path && g.size == size && g.crc32 == crc)
        });
        if let Some((o, meta)) = other {
            return Err(format!(
                "{} is logical rank {}'s intact file (member {o}), not rank {}'s: {} belongs to \
                 another rank (a --root without {{rank}}, or a directory given twice?); give each \
                 rank its own directory",
                full.display(),
                meta.logical_rank,
                me.logical_rank,
                root.display()
            ));
        }
        if rewritten_after_encode(&md, f) {
            return Err(format!(
                "{} was modified after the encode (its modification time is later than the one \
                 recorded); a rebuild would revert it to the protected version. If the new \
                 content is right, protect it again (`redio parity encode`); if it is wrong, move \
                 it away and run the rebuild again",
                full.display()
            ));
        }
    }
    Ok(())
}

/// Builds (uncommitted) replacements for the damaged files of one set.
fn rebuild_set(s: &SetState, opts: &Options) -> Result<Vec<AtomicFile>, Error> {
    let Some(h) = &s.header else {
        return Ok(Vec::new());
    };
    let p = h.members.len();
    // 1. Temporary files for every damaged data file, filled from the
    // survivors.
    let data_out = open_data_outputs(s, h)?;
    // Readers of intact logical files; damaged ones are solved for.
    let intact: Vec<Option<LogicalReader>> = (0..p)
        .map(|m| {
            if s.damaged_files[m].is_empty() {
                logical_reader(&s.roots[m], &h.members[m], &data_out[m]).map(Some)
            } else {
                Ok(None)
            }
        })
        .collect::<Result<_, Error>>()?;
    let red_files: Vec<Option<File>> = s
        .redundancy
        .iter()
        .map(|r| r.as_ref().map(|(p, _)| open_redundancy(p)).transpose())
        .collect::<io::Result<_>>()?;
    match h.scheme {
        Scheme::Xor | Scheme::Rs { .. } => {
            solve_rows(s, h, &intact, &red_files, &data_out, opts)?;
        }
        Scheme::Partner { copies } => {
            copy_back(s, h, copies as usize, &red_files, &data_out, opts.piece)?;
        }
        Scheme::Single => {}
    }
    // 2. Check every rebuilt file against its recorded CRC32, then metadata.
    seal_data(h, &data_out)?;
    // 3. Lost redundancy files, re-encoded from the (now complete) data.
    let mut out: Vec<AtomicFile> = Vec::new();
    let lost: Vec<usize> = (0..p).filter(|&m| s.redundancy[m].is_none()).collect();
    if !lost.is_empty() {
        // Rebuilt data files are read from their temporary copies.
        let readers: Vec<LogicalReader> = (0..p)
            .map(|m| logical_reader(&s.roots[m], &h.members[m], &data_out[m]))
            .collect::<Result<_, _>>()?;
        let dests: Vec<PathBuf> = lost
            .iter()
            .map(|&m| s.roots[m].join(format::file_name(&opts.prefix, s.set_id, m)))
            .collect();
        out.extend(write_payloads(h, &readers, &lost, &dests, opts)?);
    }
    for row in data_out {
        out.extend(row.into_iter().flatten());
    }
    Ok(out)
}

/// A temporary file, of the recorded size, beside every damaged data file
/// of the set (`[member][file]`, None for intact files).
fn open_data_outputs(s: &SetState, h: &Header) -> Result<Vec<Vec<Option<AtomicFile>>>, Error> {
    let mut data_out: Vec<Vec<Option<AtomicFile>>> = Vec::new();
    for m in 0..h.members.len() {
        let mut row = Vec::new();
        for (i, f) in h.members[m].files.iter().enumerate() {
            if s.damaged_files[m].contains(&i) {
                let full = files::resolve_in_root(&s.roots[m], &f.path)?;
                // A directory in the way would make a rename fail after
                // other files were committed: refuse before writing.
                if full.is_dir() {
                    return Err(Error::Usage(format!(
                        "{} is a directory where the header records a file; move it away first",
                        full.display()
                    )));
                }
                if let Some(dir) = full.parent() {
                    files::create_dirs_in_root(&s.roots[m], dir)?;
                }
                let out = AtomicFile::create(&full)?;
                out.set_len(f.size)?;
                row.push(Some(out));
            } else {
                row.push(None);
            }
        }
        data_out.push(row);
    }
    Ok(data_out)
}

/// XOR / RS: solves every row with lost data, piece by piece, from the
/// intact data and the surviving parity, into the temporary files.
fn solve_rows(
    s: &SetState,
    h: &Header,
    intact: &[Option<LogicalReader>],
    red_files: &[Option<File>],
    data_out: &[Vec<Option<AtomicFile>>],
    opts: &Options,
) -> Result<(), Error> {
    let p = h.members.len();
    let kernel = best();
    let piece = opts.piece.max(1);
    let code = StripeCode::new(h.scheme, p).map_err(|e| Error::Usage(e.to_string()))?;
    let lost_data: Vec<bool> = s.damaged_files.iter().map(|d| !d.is_empty()).collect();
    let lost_red: Vec<bool> = s.redundancy.iter().map(Option::is_none).collect();
    let plans: Vec<RowPlan> = (0..p)
        .map(|r| code.plan_row(r, &lost_data, &lost_red))
        .collect::<Result<_, _>>()
        .map_err(|e| Error::Unrecoverable(e.to_string()))?;
    let chunk = h.chunk_size;
    let mut data = vec![AlignedBuf::new(); p];
    let mut par = vec![AlignedBuf::new(); code.parity_count()];
    let mut bufs = PieceBuffers::default();
    let rows = plans.iter().filter(|pl| !pl.lost_data.is_empty()).count() as u64;
    let mut progress = Progress::new(
        format!("set {}: rebuilding data", s.set_id),
        rows * chunk,
        opts.progress,
    );
    let mut off = 0u64;
    while off < chunk {
        let len = piece.min((chunk - off) as usize);
        for plan in plans.iter().filter(|pl| !pl.lost_data.is_empty()) {
            let r = plan.row;
            let mut have_data = vec![false; p];
            for m in code.data_members(r) {
                if let (Some(rd), Some(d)) = (&intact[m], code.data_chunk(m, r)) {
                    data[m].resize_for_overwrite(len);
                    rd.read_at(d as u64 * chunk + off, &mut data[m][..len])?;
                    have_data[m] = true;
                }
            }
            let mut have_par = vec![false; code.parity_count()];
            for (j, b) in par.iter_mut().enumerate() {
                let holder = code.parity_holder(r, j);
                if let (Some(f), Some((_, at))) = (&red_files[holder], &s.redundancy[holder]) {
                    b.resize_for_overwrite(len);
                    f.read_exact_at(&mut b[..len], at + j as u64 * chunk + off)?;
                    have_par[j] = true;
                }
            }
            let drefs: Vec<Option<&[u8]>> = (0..p)
                .map(|m| have_data[m].then(|| &data[m][..len]))
                .collect();
            let prefs: Vec<Option<&[u8]>> = (0..code.parity_count())
                .map(|j| have_par[j].then(|| &par[j][..len]))
                .collect();
            // Lost parity is re-encoded later, from the whole data.
            code.solve_piece_into(kernel, plan, &drefs, &prefs, len, false, &mut bufs);
            for (&m, bytes) in plan.lost_data.iter().zip(&bufs.solved) {
                let d = code.data_chunk(m, r).unwrap_or(0) as u64;
                write_logical(h, m, &data_out[m], d * chunk + off, &bytes[..len])?;
            }
            progress.add(len as u64);
        }
        off += len as u64;
    }
    Ok(())
}

/// PARTNER: copies each damaged member's logical file back from the first
/// surviving holder of a copy, into the temporary files.
fn copy_back(
    s: &SetState,
    h: &Header,
    copies: usize,
    red_files: &[Option<File>],
    data_out: &[Vec<Option<AtomicFile>>],
    piece: usize,
) -> Result<(), Error> {
    let p = h.members.len();
    let piece = piece.max(1);
    for (m, outs) in data_out.iter().enumerate() {
        if s.damaged_files[m].is_empty() {
            continue;
        }
        let (holder, slot) = partner::holders_of(m, p, copies)
            .into_iter()
            .find_map(|x| {
                s.redundancy[x].as_ref()?;
                partner::slot_of(m, x, p, copies).map(|sl| (x, sl))
            })
            .ok_or_else(|| Error::Unrecoverable(format!("member {m}: no surviving copy")))?;
        let (_, at) = s.redundancy[holder]
            .as_ref()
            .ok_or_else(|| Error::Unrecoverable("copy vanished".into()))?;
        let f = red_files[holder]
            .as_ref()
            .ok_or_else(|| Error::Unrecoverable("copy vanished".into()))?;
        let rh = header_for(h, holder);
        let base = at + rh.payload_offset(slot);
        let total = h.members[m].logical_len();
        let mut off = 0u64;
        let mut buf = AlignedBuf::for_overwrite(piece);
        while off < total {
            let len = piece.min((total - off) as usize);
            f.read_exact_at(&mut buf[..len], base + off)?;
            write_logical(h, m, outs, off, &buf[..len])?;
            off += len as u64;
        }
    }
    Ok(())
}

/// Checks every rebuilt data file against its recorded size and CRC32
/// (inconsistent survivors must not be committed), then gives it its mode
/// and mtime and fsyncs it.
fn seal_data(h: &Header, data_out: &[Vec<Option<AtomicFile>>]) -> Result<(), Error> {
    for (m, row) in data_out.iter().enumerate() {
        for (i, f) in row.iter().enumerate() {
            if let Some(f) = f {
                let meta = &h.members[m].files[i];
                let (size, crc) = files::crc_of(f.file())?;
                if size != meta.size || crc != meta.crc32 {
                    return Err(Error::Unrecoverable(format!(
                        "rebuilt {} has CRC32 {crc:08x}, header records {:08x}: the surviving data or parity is inconsistent",
                        f.dest().display(),
                        meta.crc32
                    )));
                }
                f.set_meta(meta.mode, meta.mtime_sec, meta.mtime_nsec)?;
                f.sync()?;
            }
        }
    }
    Ok(())
}
