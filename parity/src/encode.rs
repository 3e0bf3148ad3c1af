//! Applying a scheme: builds the sets and writes every member's
//! redundancy file from the members' logical files, streaming in bounded
//! pieces, committing a set's files only once all of them are complete.
//!
//! The header built here ([`template_header`], [`header_for`]) is also the
//! one the MPI protect step writes, so both produce the same files.

use crate::error::Error;
use crate::files::{self, AtomicFile};
use crate::format::{self, ChunkMeta, Header, MemberMeta};
use crate::gf::kernel::best;
use crate::logical::LogicalReader;
use crate::options::Options;
use crate::partner;
use crate::progress::Progress;
use crate::redundancy_file::finish_file;
use crate::scheme::Scheme;
use crate::sets::build_sets;
use crate::stripe::StripeCode;
use redio_aligned::AlignedBuf;
use std::io;
use std::path::PathBuf;

/// One rank's input to an encode in one process (`--offline`).
#[derive(Debug, Clone)]
pub struct MemberInput {
    /// Directory the file paths are relative to (redundancy file goes here).
    pub root: PathBuf,
    /// Files, relative to `root`, in logical-file order (the file
    /// system's bytes).
    pub files: Vec<Vec<u8>>,
    /// World rank.
    pub world_rank: u32,
    /// Logical rank.
    pub logical_rank: u32,
    /// Failure group.
    pub failure_group: String,
    /// Host.
    pub host: String,
}

/// Encodes a whole job: builds the sets from the ranks' failure groups and
/// writes every member's redundancy file. `ranks[i]` is logical rank i.
/// Returns the sets (logical ranks).
pub fn encode_job(
    scheme: Scheme,
    set_size: usize,
    ranks: &[MemberInput],
    opts: &Options,
) -> Result<Vec<Vec<u32>>, Error> {
    let groups: Vec<String> = ranks.iter().map(|r| r.failure_group.clone()).collect();
    let sets = build_sets(&groups, set_size, scheme)?;
    for (id, set) in sets.iter().enumerate() {
        let members: Vec<MemberInput> = set.iter().map(|&r| ranks[r as usize].clone()).collect();
        encode_set(
            scheme,
            id as u32,
            sets.len() as u32,
            ranks.len() as u32,
            &members,
            opts,
        )?;
    }
    Ok(sets)
}

/// Writes the redundancy files of one set. All of them are committed only
/// once all are complete.
pub fn encode_set(
    scheme: Scheme,
    set_id: u32,
    set_count: u32,
    logical_ranks: u32,
    members: &[MemberInput],
    opts: &Options,
) -> Result<(), Error> {
    scheme
        .validate(members.len())
        .map_err(|e| Error::Usage(e.to_string()))?;
    let mut metas = Vec::new();
    let mut sources = Vec::new();
    for m in members {
        let mut files = Vec::new();
        let mut paths = Vec::new();
        for rel in &m.files {
            let full = files::resolve_in_root(&m.root, rel)?;
            let meta = files::file_meta(&full, rel)
                .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", full.display())))?;
            paths.push((full, meta.size));
            files.push(meta);
        }
        metas.push(MemberMeta {
            world_rank: m.world_rank,
            logical_rank: m.logical_rank,
            failure_group: m.failure_group.clone(),
            host: m.host.clone(),
            files,
        });
        sources.push(paths);
    }
    let readers: Vec<LogicalReader> = sources
        .iter()
        .map(|s| LogicalReader::open(s))
        .collect::<io::Result<_>>()?;
    let template = template_header(scheme, set_id, set_count, logical_ranks, metas);
    let dests: Vec<PathBuf> = members
        .iter()
        .enumerate()
        .map(|(i, m)| m.root.join(format::file_name(&opts.prefix, set_id, i)))
        .collect();
    let outs = write_payloads(
        &template,
        &readers,
        &(0..members.len()).collect::<Vec<_>>(),
        &dests,
        opts,
    )?;
    for o in outs {
        o.commit()?;
    }
    Ok(())
}

/// The set's header with member 0 and payload CRCs still zero (the MPI
/// protect step builds the same header from the metadata its members
/// exchange).
pub fn template_header(
    scheme: Scheme,
    set_id: u32,
    set_count: u32,
    logical_ranks: u32,
    members: Vec<MemberMeta>,
) -> Header {
    let p = members.len();
    let (chunk_size, payload) = match scheme {
        Scheme::Xor | Scheme::Rs { .. } => {
            let k = scheme.tolerance();
            let max = members
                .iter()
                .map(MemberMeta::logical_len)
                .max()
                .unwrap_or(0);
            let chunk = max.div_ceil((p - k) as u64);
            (
                chunk,
                vec![
                    ChunkMeta {
                        len: chunk,
                        crc32: 0
                    };
                    k
                ],
            )
        }
        _ => (0, Vec::new()),
    };
    Header {
        scheme,
        set_id,
        set_count,
        logical_ranks,
        member: 0,
        chunk_size,
        members,
        payload,
    }
}

/// The header of member `m`, with payload lengths for PARTNER.
pub fn header_for(template: &Header, m: usize) -> Header {
    let mut h = template.clone();
    h.member = m as u16;
    if let Scheme::Partner { copies } = h.scheme {
        h.payload = partner::stored_by(m, h.members.len(), copies as usize)
            .into_iter()
            .map(|x| ChunkMeta {
                len: h.members[x].logical_len(),
                crc32: 0,
            })
            .collect();
    }
    h
}

/// Computes the payload of the redundancy files of members `which` from the
/// logical files `readers` (all members), and writes complete, fsynced but
/// uncommitted files to `dests[i]` for `which[i]`.
pub(crate) fn write_payloads(
    template: &Header,
    readers: &[LogicalReader],
    which: &[usize],
    dests: &[PathBuf],
    opts: &Options,
) -> Result<Vec<AtomicFile>, Error> {
    let kernel = best();
    let p = template.members.len();
    let mut headers: Vec<Header> = which.iter().map(|&m| header_for(template, m)).collect();
    let hlen: Vec<u64> = headers.iter().map(|h| h.encode().len() as u64).collect();
    let mut outs: Vec<AtomicFile> = Vec::new();
    for d in dests {
        if let Some(dir) = d.parent() {
            std::fs::create_dir_all(dir)?;
        }
        outs.push(AtomicFile::create(d)?);
    }
    let mut hashers: Vec<Vec<crc32fast::Hasher>> = headers
        .iter()
        .map(|h| vec![crc32fast::Hasher::new(); h.payload.len()])
        .collect();
    let piece = opts.piece.max(1);
    let total = headers.iter().map(Header::payload_len).sum();
    let mut progress = Progress::new(
        format!(
            "set {}: writing {} redundancy file(s)",
            template.set_id,
            which.len()
        ),
        total,
        opts.progress,
    );
    match template.scheme {
        Scheme::Xor | Scheme::Rs { .. } => {
            let code =
                StripeCode::new(template.scheme, p).map_err(|e| Error::Usage(e.to_string()))?;
            let chunk = template.chunk_size;
            let mut bufs = vec![AlignedBuf::new(); p];
            let mut acc = AlignedBuf::new();
            let mut off = 0u64;
            while off < chunk {
                let len = piece.min((chunk - off) as usize);
                for r in 0..p {
                    // Only rows whose parity one of `which` holds.
                    let targets: Vec<(usize, usize)> = (0..code.parity_count())
                        .filter_map(|j| {
                            let h = code.parity_holder(r, j);
                            which.iter().position(|&w| w == h).map(|i| (i, j))
                        })
                        .collect();
                    if targets.is_empty() {
                        continue;
                    }
                    read_row(&code, readers, r, chunk, off, &mut bufs, len)?;
                    for (i, j) in targets {
                        acc.clear();
                        acc.resize(len, 0);
                        for m in code.data_members(r) {
                            code.contribute(kernel, j, m, &bufs[m][..len], &mut acc);
                        }
                        outs[i].write_at(&acc, hlen[i] + j as u64 * chunk + off)?;
                        hashers[i][j].update(&acc);
                        progress.add(len as u64);
                    }
                }
                off += len as u64;
            }
        }
        Scheme::Partner { copies } => {
            for (i, &m) in which.iter().enumerate() {
                let mut at = hlen[i];
                for (slot, x) in partner::stored_by(m, p, copies as usize)
                    .into_iter()
                    .enumerate()
                {
                    let total = template.members[x].logical_len();
                    let mut off = 0u64;
                    let mut buf = AlignedBuf::for_overwrite(piece);
                    while off < total {
                        let len = piece.min((total - off) as usize);
                        readers[x].read_at(off, &mut buf[..len])?;
                        outs[i].write_at(&buf[..len], at)?;
                        hashers[i][slot].update(&buf[..len]);
                        progress.add(len as u64);
                        off += len as u64;
                        at += len as u64;
                    }
                }
            }
        }
        Scheme::Single => {}
    }
    for (i, h) in headers.iter_mut().enumerate() {
        let crcs = std::mem::take(&mut hashers[i])
            .into_iter()
            .map(|hs| hs.finalize());
        finish_file(&outs[i], h, crcs)?;
    }
    Ok(outs)
}

/// Reads the data pieces of row `r` at `off` within the chunk into
/// `bufs[m][..len]` for every data member `m` (buffers are reused across
/// pieces: fresh allocations cost page faults at every step, and are
/// page-aligned: reads into misaligned buffers are slower).
pub(crate) fn read_row(
    code: &StripeCode,
    readers: &[LogicalReader],
    r: usize,
    chunk: u64,
    off: u64,
    bufs: &mut [AlignedBuf],
    len: usize,
) -> io::Result<()> {
    for (m, buf) in bufs.iter_mut().enumerate() {
        if let Some(d) = code.data_chunk(m, r) {
            buf.resize_for_overwrite(len);
            readers[m].read_at(d as u64 * chunk + off, &mut buf[..len])?;
        }
    }
    Ok(())
}
