//! The collective protect step: every rank of a replica world writes the
//! redundancy file of its own files, computed with its set's members over
//! MPI, in the format the offline tools read (`docs/formats.md`).
//!
//! 1. Failure groups are gathered and the sets built (the same on every
//!    rank: [`build_sets`] is deterministic).
//! 2. Each rank stats its files; the ranks agree that every one succeeded
//!    before any message of the set flows, so a bad path on one rank fails
//!    the step everywhere instead of hanging it.
//! 3. Members exchange their metadata (a one-member SINGLE header is the
//!    wire form: no second encoding to keep in step with the format).
//! 4. XOR / RS payloads come from the ring engine of `redio_parity::ring`
//!    over [`MpiTransport`]; PARTNER streams copies; SINGLE has none. The
//!    files' CRC32s are computed from the bytes the encode reads (files are
//!    read once), then exchanged, so that every header holds all of them.
//! 5. The file is written under a temporary name and fsynced; it is
//!    renamed into place only once every rank of the world has succeeded.

use crate::parity::collective::all_agree;

use crate::parity::collective::allgather_names;

use crate::parity::collective::rank_and_size;

use crate::comm::ffi;
use crate::parity::collective::OwnComm;
use crate::parity::reduce_scatter;
use crate::parity::transport::MpiTransport;
use redio_aligned::AlignedBuf;
use redio_parity::files::{self, AtomicFile};
use redio_parity::format::{self, Header, MemberMeta};
use redio_parity::gf::kernel::best;
use redio_parity::logical::LogicalReader;
use redio_parity::logical_crc::{crc_of_concatenation, crc_of_xor, LogicalCrc};
use redio_parity::partner;
use redio_parity::progress::Progress;
use redio_parity::ring::{self, Traffic, Transport};
use redio_parity::scheme::Scheme;
use redio_parity::sets::build_sets;
use redio_parity::stripe::StripeCode;
use redio_parity::{encode, redundancy_file};
use std::path::PathBuf;

/// What one rank protects, and how.
#[derive(Debug, Clone)]
pub struct Request {
    /// Set when this rank cannot take part (a bad file list): the step
    /// fails on every rank with this message here.
    pub refused: Option<String>,
    /// Scheme (the same on every rank).
    pub scheme: Scheme,
    /// Wanted members per set (the same on every rank).
    pub set_size: usize,
    /// Directory the files are relative to.
    pub root: PathBuf,
    /// Where the redundancy file goes (`parity.dir`, else `root`); created
    /// if missing.
    pub redundancy_dir: PathBuf,
    /// This rank's files, relative to `root`, in logical-file order (the
    /// file system's bytes).
    pub files: Vec<Vec<u8>>,
    /// This rank's failure group.
    pub group: String,
    /// This rank's host name.
    pub host: String,
    /// Rank in the real `MPI_COMM_WORLD`.
    pub world_rank: u32,
    /// Redundancy file name prefix.
    pub prefix: String,
    /// Pipeline piece size in bytes.
    pub piece: usize,
    /// XOR / RS engine (the same on every rank).
    pub engine: Engine,
    /// Print a progress line of this rank's encode at most this often
    /// (the `redio parity encode` job); None: silent.
    pub progress: Option<std::time::Duration>,
}

/// How XOR / RS parity travels: the configuration's `parity.engine`
/// (the ring of `redio_parity::ring`, or one `MPI_Ireduce_scatter_block`
/// per piece, as Gropp et al.).
pub use redio_core::config::ParityEngine as Engine;

/// What one rank did.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The redundancy file written.
    pub path: PathBuf,
    /// Bytes this rank's files hold.
    pub protected: u64,
    /// Bytes moved by this rank.
    pub traffic: Traffic,
    /// Seconds spent reading metadata and CRCs (with agreeing on them),
    /// encoding and writing, and agreeing and committing.
    pub phases: [f64; 3],
}

/// This rank's place: set id, set count, members (logical ranks), index.
type Place = (u32, u32, Vec<u32>, usize);

/// Runs the protect step, collective over `comm` (the replica world).
pub(crate) fn protect(comm: ffi::MPI_Comm, req: &Request) -> Result<Outcome, String> {
    let own = OwnComm::dup(comm)?;
    let (rank, size) = rank_and_size(own.0)?;
    let groups = allgather_names(own.0, &req.group)?;
    let started = std::time::Instant::now();
    let prepared = prepare(req, rank, &groups);
    if !all_agree(own.0, prepared.is_ok())? {
        return Err(match prepared {
            Err(e) => e,
            Ok(_) => "another rank could not prepare its files (see its message)".into(),
        });
    }
    let ((set_id, set_count, set, me), mine) = prepared?;
    let ranks: Vec<i32> = set.iter().map(|&r| r as i32).collect();
    let mut t = MpiTransport::new(own.0, ranks, me);
    let prepare_s = started.elapsed().as_secs_f64();
    let metas = exchange(&mut t, mine, size as u32)?;
    let set_comm = match (req.engine, req.scheme) {
        (Engine::ReduceScatter, Scheme::Xor | Scheme::Rs { .. }) => {
            Some(OwnComm::split(own.0, set_id as i32, me as i32)?)
        }
        _ => None,
    };
    let written = write_file(
        req,
        &mut t,
        set_comm.as_ref(),
        (set_id, set_count, size as u32),
        metas,
    );
    drop(set_comm);
    t.flush()?;
    drop(t);
    let encode_s = started.elapsed().as_secs_f64() - prepare_s;
    let ok = all_agree(own.0, written.is_ok())?;
    let (out, mut outcome) = written?;
    if !ok {
        // Dropping `out` removes the temporary file: no half-protected set.
        return Err("another rank failed to write its redundancy file (see its message)".into());
    }
    out.commit()
        .map_err(|e| format!("{}: {e}", outcome.path.display()))?;
    outcome.phases = [
        prepare_s,
        encode_s,
        started.elapsed().as_secs_f64() - prepare_s - encode_s,
    ];
    Ok(outcome)
}

/// Builds the sets, finds this rank's place and reads its files' metadata.
fn prepare(req: &Request, rank: usize, groups: &[String]) -> Result<(Place, MemberMeta), String> {
    if let Some(e) = &req.refused {
        return Err(e.clone());
    }
    let sets = build_sets(groups, req.set_size, req.scheme).map_err(|e| e.to_string())?;
    let (set_id, set) = sets
        .iter()
        .enumerate()
        .find(|(_, s)| s.contains(&(rank as u32)))
        .ok_or("this rank is in no set")?;
    req.scheme
        .validate(set.len())
        .map_err(|e| format!("set {set_id} has {} member(s): {e}", set.len()))?;
    let me = set.iter().position(|&r| r == rank as u32).unwrap_or(0);
    let mut metas = Vec::new();
    for rel in &req.files {
        let full = files::resolve_in_root(&req.root, rel).map_err(|e| e.to_string())?;
        metas.push(files::stat_meta(&full, rel).map_err(|e| format!("{}: {e}", full.display()))?);
    }
    let mine = MemberMeta {
        world_rank: req.world_rank,
        logical_rank: rank as u32,
        failure_group: req.group.clone(),
        host: req.host.clone(),
        files: metas,
    };
    Ok(((set_id as u32, sets.len() as u32, set.clone(), me), mine))
}

/// Every member's metadata, in set order.
fn exchange(
    t: &mut MpiTransport,
    mine: MemberMeta,
    logical_ranks: u32,
) -> Result<Vec<MemberMeta>, String> {
    let p = t.members();
    let wire = Header {
        scheme: Scheme::Single,
        set_id: 0,
        set_count: 1,
        logical_ranks,
        member: 0,
        chunk_size: 0,
        members: vec![mine.clone()],
        payload: Vec::new(),
    }
    .encode();
    let mut metas = Vec::with_capacity(p);
    for (from, message) in all_to_all(t, &wire)?.into_iter().enumerate() {
        match message {
            None => metas.push(mine.clone()),
            Some(buf) => {
                let h =
                    Header::decode(&buf).map_err(|e| format!("metadata of member {from}: {e}"))?;
                metas.extend(h.members);
            }
        }
    }
    Ok(metas)
}

/// Every member's file CRC32s, in set order (little-endian words).
fn exchange_crcs(t: &mut MpiTransport, mine: Vec<u32>) -> Result<Vec<Vec<u32>>, String> {
    let wire: Vec<u8> = mine.iter().flat_map(|c| c.to_le_bytes()).collect();
    let mut all = Vec::with_capacity(t.members());
    for (from, message) in all_to_all(t, &wire)?.into_iter().enumerate() {
        let Some(buf) = message else {
            all.push(mine.clone());
            continue;
        };
        let words = buf.chunks_exact(4);
        if !words.remainder().is_empty() {
            return Err(format!(
                "the file CRCs of member {from} are {} bytes long",
                buf.len()
            ));
        }
        all.push(
            words
                .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
                .collect(),
        );
    }
    Ok(all)
}

/// Sends `wire` to every other member and returns what each sent, in set
/// order (`None` in this member's place).
fn all_to_all(t: &mut MpiTransport, wire: &[u8]) -> Result<Vec<Option<AlignedBuf>>, String> {
    let (p, me) = (t.members(), t.member());
    for to in (0..p).filter(|&i| i != me) {
        t.send(to, wire)?;
    }
    (0..p)
        .map(|from| {
            if from == me {
                return Ok(None);
            }
            let mut buf = AlignedBuf::new();
            t.recv(from, &mut buf)?;
            Ok(Some(buf))
        })
        .collect()
}

/// Computes and writes this member's redundancy file (fsynced, not yet
/// committed).
/// `set_comm` (the set alone, member i at rank i) selects the
/// reduce-scatter engine; `ids` are the set id, set count and rank count.
fn write_file(
    req: &Request,
    t: &mut MpiTransport,
    set_comm: Option<&OwnComm>,
    ids: (u32, u32, u32),
    metas: Vec<MemberMeta>,
) -> Result<(AtomicFile, Outcome), String> {
    let (set_id, set_count, logical_ranks) = ids;
    let me = t.member();
    let p = metas.len();
    let template = encode::template_header(req.scheme, set_id, set_count, logical_ranks, metas);
    let mut header = encode::header_for(&template, me);
    let hlen = header.encode().len() as u64;
    let path = req
        .redundancy_dir
        .join(format::file_name(&req.prefix, set_id, me));
    let io = |e: std::io::Error| format!("{}: {e}", path.display());
    std::fs::create_dir_all(&req.redundancy_dir)
        .map_err(|e| format!("{}: {e}", req.redundancy_dir.display()))?;
    let out = AtomicFile::create(&path).map_err(io)?;
    let sources: Vec<(PathBuf, u64)> = template.members[me]
        .files
        .iter()
        .map(|f| (req.root.join(f.rel_path()), f.size))
        .collect();
    let reader = LogicalReader::open(&sources).map_err(|e| e.to_string())?;
    let sizes: Vec<u64> = sources.iter().map(|(_, size)| *size).collect();
    let chunk = match req.scheme {
        Scheme::Xor | Scheme::Rs { .. } => template.chunk_size,
        _ => 0,
    };
    let mut file_crcs = LogicalCrc::new(&sizes, chunk);
    let mut progress = Progress::new(
        format!("rank {}: encoding set {set_id}", req.world_rank),
        sizes.iter().sum(),
        req.progress,
    );
    let mut read_logical = |at: u64, buf: &mut [u8]| {
        reader.read_at(at, buf).map_err(|e| e.to_string())?;
        file_crcs.observe(at, buf);
        progress.add(buf.len() as u64);
        Ok::<_, String>(())
    };
    // RS parity is hashed as it is written; XOR parity's and PARTNER
    // copies' CRC32s follow from the data CRC32s the members exchange
    // below (`payload_crcs`), so those bytes are not hashed twice.
    let hashed = matches!(req.scheme, Scheme::Rs { .. });
    let mut hashers = vec![crc32fast::Hasher::new(); header.payload.len()];
    let piece = req.piece.max(1);
    let code = match req.scheme {
        Scheme::Xor | Scheme::Rs { .. } => {
            Some(StripeCode::new(req.scheme, p).map_err(|e| e.to_string())?)
        }
        _ => None,
    };
    let traffic = match (req.scheme, &code) {
        (Scheme::Xor | Scheme::Rs { .. }, Some(code)) => {
            let mut read =
                |d: usize, off: u64, buf: &mut [u8]| read_logical(d as u64 * chunk + off, buf);
            let mut write = |j: usize, off: u64, bytes: &[u8]| {
                if hashed {
                    hashers[j].update(bytes);
                }
                out.write_at(bytes, hlen + j as u64 * chunk + off)
                    .map_err(io)
            };
            match set_comm {
                None => ring::encode(code, best(), t, chunk, piece, &mut read, &mut write)?,
                Some(c) => {
                    reduce_scatter::encode(c.0, code, best(), chunk, piece, &mut read, &mut write)?
                }
            }
        }
        (Scheme::Partner { copies }, _) => partner_copies(
            &template,
            me,
            copies as usize,
            piece,
            t,
            &mut read_logical,
            |_, at, b| out.write_at(b, hlen + at).map_err(io),
        )?,
        _ => Traffic::default(),
    };
    // XOR: this member's padded data chunks, for the parity CRC32s.
    let chunks = match (req.scheme, &code) {
        (Scheme::Xor, Some(code)) => file_crcs
            .chunk_crcs(code.data_chunks())
            .ok_or("the encode did not read every byte of its data chunks")?,
        _ => Vec::new(),
    };
    let mine = match file_crcs.finish() {
        Some(crcs) => crcs,
        // SINGLE reads nothing: read the files for their CRCs.
        None => sources
            .iter()
            .map(|(path, _)| files::crc_file(path).map(|(_, crc)| crc).map_err(io))
            .collect::<Result<_, _>>()?,
    };
    let mut chunks_of = Vec::with_capacity(p);
    let exchanged = exchange_crcs(t, [mine, chunks].concat())?;
    for (member, crcs) in exchanged.into_iter().enumerate() {
        let files = &mut header.members[member].files;
        if crcs.len() < files.len() {
            return Err(format!(
                "member {member} sent {} CRC32s for its {} files",
                crcs.len(),
                files.len()
            ));
        }
        let (of_files, of_chunks) = crcs.split_at(files.len());
        for (file, &crc) in files.iter_mut().zip(of_files) {
            file.crc32 = crc;
        }
        chunks_of.push(of_chunks.to_vec());
    }
    let crcs = if hashed {
        hashers.into_iter().map(|h| h.finalize()).collect()
    } else {
        payload_crcs(&header, code.as_ref(), &chunks_of)?
    };
    redundancy_file::finish_file(&out, &mut header, crcs).map_err(io)?;
    let protected = template.members[me].logical_len();
    Ok((
        out,
        Outcome {
            path,
            protected,
            traffic,
            phases: [0.0; 3],
        },
    ))
}

/// The payload CRC32s of this member's redundancy file (`header`, every
/// file CRC32 filled in) from the members' data CRC32s: XOR parity from
/// the chunks of its row (`chunks_of[m]`: member m's padded data chunks),
/// a PARTNER copy from the files of the member it copies. The bytes are
/// the ones those CRC32s were computed over, so a piece damaged between
/// the members shows in a verify instead of being hashed as it arrived.
fn payload_crcs(
    header: &Header,
    code: Option<&StripeCode>,
    chunks_of: &[Vec<u32>],
) -> Result<Vec<u32>, String> {
    let me = header.member as usize;
    match (header.scheme, code) {
        (Scheme::Xor, Some(code)) => {
            let row = code.parity_row(me, 0);
            let crcs = code
                .data_members(row)
                .into_iter()
                .map(|m| {
                    code.data_chunk(m, row)
                        .and_then(|d| chunks_of.get(m)?.get(d).copied())
                        .ok_or_else(|| format!("member {m} sent no CRC32 of its data chunks"))
                })
                .collect::<Result<Vec<u32>, String>>()?;
            Ok(vec![crc_of_xor(&crcs, header.chunk_size)])
        }
        (Scheme::Partner { copies }, _) => {
            let p = header.members.len();
            Ok(partner::stored_by(me, p, copies as usize)
                .into_iter()
                .map(|x| {
                    let files = &header.members[x].files;
                    crc_of_concatenation(files.iter().map(|f| (f.crc32, f.size)))
                })
                .collect())
        }
        _ => Ok(Vec::new()),
    }
}

/// PARTNER: sends this member's logical file to its holders and stores the
/// copies it holds, piece by piece (every member loops over the longest
/// file so the exchanges stay in step). `write(slot, offset, bytes)` gets
/// copy `slot` at `offset` within the payload.
fn partner_copies(
    template: &Header,
    me: usize,
    copies: usize,
    piece: usize,
    t: &mut MpiTransport,
    read: &mut impl FnMut(u64, &mut [u8]) -> Result<(), String>,
    mut write: impl FnMut(usize, u64, &[u8]) -> Result<(), String>,
) -> Result<Traffic, String> {
    let p = template.members.len();
    let lens: Vec<u64> = template
        .members
        .iter()
        .map(MemberMeta::logical_len)
        .collect();
    let held = partner::stored_by(me, p, copies);
    let base: Vec<u64> = held
        .iter()
        .scan(0u64, |acc, &x| {
            let at = *acc;
            *acc += lens[x];
            Some(at)
        })
        .collect();
    let longest = lens.iter().copied().max().unwrap_or(0);
    let mut traffic = Traffic::default();
    // `mine` is read into and `buf` received into: both page-aligned,
    // neither zero-filled per piece.
    let (mut mine, mut buf) = (AlignedBuf::new(), AlignedBuf::new());
    let mut off = 0u64;
    while off < longest {
        if off < lens[me] {
            let len = (piece as u64).min(lens[me] - off) as usize;
            mine.resize_for_overwrite(len);
            read(off, &mut mine)?;
            traffic.read += len as u64;
            let holders = partner::holders_of(me, p, copies);
            for (i, &h) in holders.iter().enumerate() {
                traffic.sent += len as u64;
                if i + 1 < holders.len() {
                    t.send(h, &mine)?;
                } else {
                    // The last holder gets the buffer itself: no copy of
                    // the piece per message (issue 20).
                    mine = t.send_owned(h, std::mem::take(&mut mine))?;
                }
            }
        }
        for (slot, &x) in held.iter().enumerate() {
            if off < lens[x] {
                t.recv(x, &mut buf)?;
                traffic.received += buf.len() as u64;
                write(slot, base[slot] + off, &buf)?;
            }
        }
        off += piece as u64;
    }
    Ok(traffic)
}
