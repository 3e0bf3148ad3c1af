//! Rebuilding the damaged members of every set in one process.
//!
//! Each byte is read once (issue 20). The directories are first assessed
//! by existence, sizes and headers only ([`assess_quick`]); then one pass
//! per damaged set reads what the rebuild needs, solving the lost data and
//! re-encoding the lost parity together, while every survivor's CRC32s are
//! computed from those very reads ([`SurvivorCheck`]: what the pass did
//! not need is read at its end, for the check alone) and every rebuilt file
//! is checked against its recorded CRC32 as it is written. A survivor whose
//! CRC32 turns out wrong means the pass trusted damaged data: its outputs
//! are discarded (temporary files, never renamed), the set is checked in
//! full ([`check_deferred`]) and rebuilt again with that damage known, or
//! refused beyond the tolerance. Sets that look healthy are checked in full,
//! their only read.
//!
//! Every repaired file is written to a temporary file, checked against its
//! recorded CRC32, given its mode and mtime and fsynced; only then are they
//! all renamed into place. Beyond the tolerance, or when a directory does
//! not hold what the headers say ([`check_before_rebuild`]), nothing is
//! renamed, and the directories made for lost files are removed again.

use crate::assess::{
    assess, assess_quick, check_deferred, rewritten_after_encode, Assessment, SetState, Verdict,
};
use crate::encode::header_for;
use crate::error::Error;
use crate::files::{self, AtomicFile, MadeDirs};
use crate::format::{self, Header};
use crate::gf::kernel::best;
use crate::logical::{logical_reader, write_logical, LogicalReader};
use crate::logical_crc::LogicalCrc;
use crate::options::Options;
use crate::partner;
use crate::progress::Progress;
use crate::redundancy_file::{finish_file, open_redundancy};
use crate::scheme::Scheme;
use crate::stripe::{PieceBuffers, RowPieces, RowPlan, StripeCode};
use crate::survivors::SurvivorCheck;
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

/// Rebuilds every damaged file under `dirs`. Refuses, renaming nothing, if
/// any set is unrecoverable or a header path is unsafe.
pub fn rebuild(dirs: &[PathBuf], opts: &Options) -> Result<(Assessment, RebuildReport), Error> {
    let mut a = assess_quick(dirs, opts)?;
    if a.verdict == Verdict::Unrecoverable {
        // Refused before anything is written; the message names all that
        // a full check finds.
        return Err(unrecoverable(&assess(dirs, opts)?));
    }
    // What looks healthy may hide damage only its CRC32s show.
    for s in &mut a.sets {
        if s.verdict == Verdict::Healthy {
            check_deferred(s)?;
        }
    }
    judge_all(&mut a)?;
    for s in &a.sets {
        refuse_foreign(s)?;
    }
    // Declared before the outputs, so dropped after them: a failure
    // removes the temporary files, then the directories made for them.
    let mut made = MadeDirs::default();
    let mut pending: Vec<AtomicFile> = Vec::new();
    for i in 0..a.sets.len() {
        while a.sets[i].verdict == Verdict::Repairable {
            match rebuild_set(&a.sets[i], opts, &mut made)? {
                Pass::Done(files) => {
                    pending.extend(files);
                    break;
                }
                Pass::SurvivorsDamaged => {
                    // The pass trusted damaged data: check everything, and
                    // rebuild with that damage known (or refuse).
                    check_deferred(&mut a.sets[i])?;
                    judge_all(&mut a)?;
                    refuse_foreign(&a.sets[i])?;
                }
            }
        }
    }
    let mut report = RebuildReport::default();
    for f in pending {
        report.written.push(f.dest().to_path_buf());
        f.commit()?;
    }
    made.keep();
    Ok((a, report))
}

/// The overall verdict again; unrecoverable is a refusal naming every
/// finding.
fn judge_all(a: &mut Assessment) -> Result<(), Error> {
    let worst = a.sets.iter().map(|s| s.verdict).max();
    a.verdict = a.verdict.max(worst.unwrap_or(Verdict::Unrecoverable));
    if a.verdict == Verdict::Unrecoverable {
        return Err(unrecoverable(a));
    }
    Ok(())
}

/// The refusal of an unrecoverable assessment, with its findings.
fn unrecoverable(a: &Assessment) -> Error {
    let mut lines = a.findings.clone();
    for s in &a.sets {
        lines.extend(s.findings.iter().cloned());
    }
    Error::Unrecoverable(lines.join("\n"))
}

/// [`check_before_rebuild`] for every damaged member of a repairable set.
fn refuse_foreign(s: &SetState) -> Result<(), Error> {
    if let (Some(h), Verdict::Repairable) = (&s.header, s.verdict) {
        for (m, d) in s.damaged_files.iter().enumerate() {
            check_before_rebuild(h, m, &s.roots[m], d).map_err(Error::Refused)?;
        }
    }
    Ok(())
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

/// How one pass over a set ended.
enum Pass {
    /// Its complete, checked, fsynced files, not yet renamed.
    Done(Vec<AtomicFile>),
    /// A survivor's CRC32 was wrong: the outputs are discarded.
    SurvivorsDamaged,
}

/// A lost redundancy file being written: the file, its header, the
/// header's length (where the payload starts) and the payload's hashers.
struct RedOut {
    file: AtomicFile,
    header: Header,
    hlen: u64,
    hashers: Vec<crc32fast::Hasher>,
}

impl RedOut {
    /// Writes payload chunk `j`'s bytes at `off` within the chunk, which
    /// starts at `at` within the payload (pieces of a chunk in order).
    fn write(&mut self, j: usize, at: u64, off: u64, bytes: &[u8]) -> io::Result<()> {
        self.hashers[j].update(bytes);
        self.file.write_at(bytes, self.hlen + at + off)
    }
}

/// What one pass reads and writes besides the solved bytes' destinations.
struct Streams {
    /// Survivors' CRC32 checks, when the assessment deferred them.
    checks: Vec<Option<SurvivorCheck>>,
    /// The CRC32s of what is written to each damaged member's files.
    written: Vec<Option<LogicalCrc>>,
    /// Lost redundancy files, by member.
    red: Vec<Option<RedOut>>,
}

/// One pass over a damaged set: builds (uncommitted) replacements for its
/// damaged files and lost redundancy files.
fn rebuild_set(s: &SetState, opts: &Options, made: &mut MadeDirs) -> Result<Pass, Error> {
    let Some(h) = &s.header else {
        return Ok(Pass::Done(Vec::new()));
    };
    let p = h.members.len();
    let data_out = open_data_outputs(s, h, made)?;
    let chunk = match h.scheme {
        Scheme::Xor | Scheme::Rs { .. } => h.chunk_size,
        _ => 0,
    };
    let mut io = Streams {
        checks: (0..p)
            .map(|m| {
                s.deferred.then(|| {
                    let payload = s.redundancy[m]
                        .as_ref()
                        .map(|(path, at)| (path.as_path(), *at, &s.payload[m][..]));
                    SurvivorCheck::new(
                        m,
                        &s.roots[m],
                        &h.members[m],
                        &s.damaged_files[m],
                        chunk,
                        payload,
                    )
                })
            })
            .collect(),
        written: (0..p)
            .map(|m| {
                let sizes: Vec<u64> = h.members[m].files.iter().map(|f| f.size).collect();
                (!s.damaged_files[m].is_empty()).then(|| LogicalCrc::new(&sizes, chunk))
            })
            .collect(),
        red: open_redundancy_outputs(s, h, opts, made)?,
    };
    match h.scheme {
        Scheme::Xor | Scheme::Rs { .. } => solve_rows(s, h, opts, &data_out, &mut io)?,
        Scheme::Partner { copies } => copy_back(s, h, copies as usize, opts, &data_out, &mut io)?,
        Scheme::Single => {}
    }
    // Survivors first: a wrong CRC32 there explains a wrong result.
    let mut survivors_damaged = false;
    for c in io.checks.into_iter().flatten() {
        survivors_damaged |= !c.finish(opts.piece).damaged.is_empty();
    }
    if survivors_damaged {
        return Ok(Pass::SurvivorsDamaged);
    }
    seal_data(h, &data_out, io.written)?;
    let mut out: Vec<AtomicFile> = Vec::new();
    for r in io.red.into_iter().flatten() {
        let RedOut {
            file,
            mut header,
            hashers,
            ..
        } = r;
        finish_file(
            &file,
            &mut header,
            hashers.into_iter().map(|h| h.finalize()),
        )?;
        out.push(file);
    }
    for row in data_out {
        out.extend(row.into_iter().flatten());
    }
    Ok(Pass::Done(out))
}

/// A temporary file, of the recorded size, beside every damaged data file
/// of the set (`[member][file]`, None for intact files).
fn open_data_outputs(
    s: &SetState,
    h: &Header,
    made: &mut MadeDirs,
) -> Result<Vec<Vec<Option<AtomicFile>>>, Error> {
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
                    made.create(&s.roots[m], dir)?;
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

/// A temporary redundancy file for every member whose redundancy file is
/// lost, its payload to be written by the pass.
fn open_redundancy_outputs(
    s: &SetState,
    h: &Header,
    opts: &Options,
    made: &mut MadeDirs,
) -> Result<Vec<Option<RedOut>>, Error> {
    (0..h.members.len())
        .map(|m| {
            if s.redundancy[m].is_some() {
                return Ok(None);
            }
            let root = &s.roots[m];
            made.create(root, root)?;
            let header = header_for(h, m);
            let file =
                AtomicFile::create(&root.join(format::file_name(&opts.prefix, s.set_id, m)))?;
            Ok(Some(RedOut {
                hlen: header.encode().len() as u64,
                hashers: vec![crc32fast::Hasher::new(); header.payload.len()],
                header,
                file,
            }))
        })
        .collect()
}

/// XOR / RS: solves every row with lost data and re-encodes every lost
/// parity chunk, piece by piece, in one pass: each survivor's piece is
/// read once, for all the rows and outputs that need it.
fn solve_rows(
    s: &SetState,
    h: &Header,
    opts: &Options,
    data_out: &[Vec<Option<AtomicFile>>],
    io: &mut Streams,
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
    let work: Vec<&RowPlan> = plans
        .iter()
        .filter(|pl| !pl.lost_data.is_empty() || !pl.lost_parity.is_empty())
        .collect();
    // Readers of intact logical files; damaged ones are solved for.
    let readers: Vec<Option<LogicalReader>> = (0..p)
        .map(|m| {
            (!lost_data[m])
                .then(|| logical_reader(&s.roots[m], &h.members[m], &[]))
                .transpose()
        })
        .collect::<Result<_, Error>>()?;
    let red_files: Vec<Option<File>> = s
        .redundancy
        .iter()
        .map(|r| r.as_ref().map(|(p, _)| open_redundancy(p)).transpose())
        .collect::<io::Result<_>>()?;
    let chunk = h.chunk_size;
    let mut data = vec![AlignedBuf::new(); p];
    let mut par = vec![AlignedBuf::new(); code.parity_count()];
    let mut bufs = PieceBuffers::default();
    let mut progress = Progress::new(
        format!("set {}: rebuilding", s.set_id),
        work.len() as u64 * chunk,
        opts.progress,
    );
    let mut off = 0u64;
    while off < chunk {
        let len = piece.min((chunk - off) as usize);
        for plan in &work {
            let r = plan.row;
            let mut have_data = vec![false; p];
            for m in code.data_members(r) {
                if let (Some(rd), Some(d)) = (&readers[m], code.data_chunk(m, r)) {
                    let at = d as u64 * chunk + off;
                    data[m].resize_for_overwrite(len);
                    rd.read_at(at, &mut data[m])?;
                    if let Some(c) = &mut io.checks[m] {
                        c.data(at, &data[m]);
                    }
                    have_data[m] = true;
                }
            }
            // Only the equations that solve the row are read.
            let mut have_par = vec![false; code.parity_count()];
            for &j in &plan.equations {
                let holder = code.parity_holder(r, j);
                if let (Some(f), Some((_, at))) = (&red_files[holder], &s.redundancy[holder]) {
                    let within = j as u64 * chunk + off;
                    par[j].resize_for_overwrite(len);
                    f.read_exact_at(&mut par[j], at + within)?;
                    if let Some(c) = &mut io.checks[holder] {
                        c.payload(within, &par[j]);
                    }
                    have_par[j] = true;
                }
            }
            let drefs: Vec<Option<&[u8]>> = (0..p)
                .map(|m| have_data[m].then(|| &data[m][..len]))
                .collect();
            let prefs: Vec<Option<&[u8]>> = (0..code.parity_count())
                .map(|j| have_par[j].then(|| &par[j][..len]))
                .collect();
            let reencode = !plan.lost_parity.is_empty();
            let row = RowPieces {
                plan,
                data: &drefs,
                parity: &prefs,
                len,
            };
            code.solve_piece_into(kernel, row, reencode, &mut bufs);
            for (&m, bytes) in plan.lost_data.iter().zip(&bufs.solved) {
                let at = code.data_chunk(m, r).unwrap_or(0) as u64 * chunk + off;
                write_logical(h, m, &data_out[m], at, &bytes[..len])?;
                if let Some(w) = &mut io.written[m] {
                    w.observe(at, &bytes[..len]);
                }
            }
            for (&j, bytes) in plan.lost_parity.iter().zip(&bufs.parity) {
                if let Some(o) = &mut io.red[code.parity_holder(r, j)] {
                    o.write(j, j as u64 * chunk, off, &bytes[..len])?;
                }
            }
            progress.add(len as u64);
        }
        off += len as u64;
    }
    Ok(())
}

/// PARTNER: copies each damaged member's logical file back from the first
/// surviving holder of a copy (and into every lost redundancy file that
/// keeps a copy of it), then the intact members' files into the lost
/// redundancy files that keep copies of them: one read each.
fn copy_back(
    s: &SetState,
    h: &Header,
    copies: usize,
    opts: &Options,
    data_out: &[Vec<Option<AtomicFile>>],
    io: &mut Streams,
) -> Result<(), Error> {
    let p = h.members.len();
    let piece = opts.piece.max(1) as u64;
    let lost_data: Vec<bool> = s.damaged_files.iter().map(|d| !d.is_empty()).collect();
    // The lost redundancy files that keep a copy of `m`: (holder, slot,
    // the slot's offset within the payload).
    let keepers = |m: usize, red: &[Option<RedOut>]| -> Vec<(usize, usize, u64)> {
        partner::holders_of(m, p, copies)
            .into_iter()
            .filter_map(|x| {
                let o = red[x].as_ref()?;
                let slot = partner::slot_of(m, x, p, copies)?;
                Some((x, slot, o.header.payload_offset(slot)))
            })
            .collect()
    };
    let total: u64 = (0..p)
        .filter(|&m| lost_data[m] || !keepers(m, &io.red).is_empty())
        .map(|m| h.members[m].logical_len())
        .sum();
    let mut progress = Progress::new(
        format!("set {}: rebuilding", s.set_id),
        total,
        opts.progress,
    );
    let mut buf = AlignedBuf::new();
    for m in 0..p {
        let targets = keepers(m, &io.red);
        let len_m = h.members[m].logical_len();
        if lost_data[m] {
            let (holder, slot) = partner::holders_of(m, p, copies)
                .into_iter()
                .find_map(|x| {
                    s.redundancy[x].as_ref()?;
                    partner::slot_of(m, x, p, copies).map(|sl| (x, sl))
                })
                .ok_or_else(|| Error::Unrecoverable(format!("member {m}: no surviving copy")))?;
            let (path, at) = s.redundancy[holder]
                .as_ref()
                .ok_or_else(|| Error::Unrecoverable("copy vanished".into()))?;
            let f = open_redundancy(path)?;
            let base = header_for(h, holder).payload_offset(slot);
            let mut off = 0u64;
            while off < len_m {
                let len = piece.min(len_m - off) as usize;
                buf.resize_for_overwrite(len);
                f.read_exact_at(&mut buf, at + base + off)?;
                if let Some(c) = &mut io.checks[holder] {
                    c.payload(base + off, &buf);
                }
                write_logical(h, m, &data_out[m], off, &buf)?;
                if let Some(w) = &mut io.written[m] {
                    w.observe(off, &buf);
                }
                for &(x, slot, at) in &targets {
                    if let Some(o) = &mut io.red[x] {
                        o.write(slot, at, off, &buf)?;
                    }
                }
                progress.add(len as u64);
                off += len as u64;
            }
        } else if !targets.is_empty() {
            let reader = logical_reader(&s.roots[m], &h.members[m], &[])?;
            let mut off = 0u64;
            while off < len_m {
                let len = piece.min(len_m - off) as usize;
                buf.resize_for_overwrite(len);
                reader.read_at(off, &mut buf)?;
                if let Some(c) = &mut io.checks[m] {
                    c.data(off, &buf);
                }
                for &(x, slot, at) in &targets {
                    if let Some(o) = &mut io.red[x] {
                        o.write(slot, at, off, &buf)?;
                    }
                }
                progress.add(len as u64);
                off += len as u64;
            }
        }
    }
    Ok(())
}

/// Checks every rebuilt data file against its recorded size and CRC32
/// (inconsistent survivors must not be committed), from the CRC32s of what
/// was written (read back only if some byte was not seen), then gives it
/// its mode and mtime and fsyncs it.
fn seal_data(
    h: &Header,
    data_out: &[Vec<Option<AtomicFile>>],
    written: Vec<Option<LogicalCrc>>,
) -> Result<(), Error> {
    for ((m, row), w) in data_out.iter().enumerate().zip(written) {
        let crcs = w.map(LogicalCrc::file_crcs).unwrap_or_default();
        for (i, f) in row.iter().enumerate() {
            if let Some(f) = f {
                let meta = &h.members[m].files[i];
                let (size, crc) = match crcs.get(i).copied().flatten() {
                    Some(crc) => (f.file().metadata()?.len(), crc),
                    None => files::crc_of(f.file())?,
                };
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
