//! Single-process encode, verify and rebuild over files gathered in one
//! place (`redio parity … --offline`), streaming in bounded pieces.
//!
//! Member roots: with one directory, every member's paths are relative to
//! it; with one directory per logical rank, member `m`'s root is the
//! directory of its logical rank.
//!
//! Damage is found by existence, size and CRC32 of every data file, and by
//! the header and per-chunk CRC32s of every redundancy file. A rebuild
//! writes every repaired file to a temporary file, checks the rebuilt data
//! against the recorded CRC32s, fsyncs, and only then renames them all into
//! place; beyond the tolerance it writes nothing.

use crate::files::{self, AtomicFile, LogicalReader, UnsafePath};
use crate::format::{
    self, ChunkMeta, FileMeta, FormatError, Header, MemberMeta, TRAILER_LEN, TRAILER_MAGIC,
};
use crate::gf::kernel::{best, Kernel};
use crate::partner;
use crate::progress::Progress;
use crate::safe_fs::{self, Links};
use crate::scheme::Scheme;
use crate::sets::{build_sets, SetError};
use crate::stripe::{PieceBuffers, RowPlan, StripeCode};
use std::collections::BTreeMap;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// Default piece size: what one step of the pipeline holds per buffer.
pub const DEFAULT_PIECE: usize = 1 << 20;

/// Anything that stops an offline operation.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be read or written.
    #[error("{0}")]
    Io(#[from] io::Error),
    /// Bad arguments.
    #[error("{0}")]
    Usage(String),
    /// A header names a path that must not be used.
    #[error("refused: {0}")]
    Unsafe(#[from] UnsafePath),
    /// Sets could not be built.
    #[error("{0}")]
    Sets(#[from] SetError),
    /// More damage than the scheme tolerates: nothing was written.
    #[error("unrecoverable, nothing written:\n{0}")]
    Unrecoverable(String),
    /// The directories do not hold what the headers say (a directory given
    /// for the wrong rank, a file rewritten after the encode): nothing
    /// was written.
    #[error("refused, nothing written: {0}")]
    Refused(String),
}

/// One rank's input to an offline encode.
#[derive(Debug, Clone)]
pub struct MemberInput {
    /// Directory the file paths are relative to (redundancy file goes here).
    pub root: PathBuf,
    /// Files, relative to `root`, in logical-file order.
    pub files: Vec<String>,
    /// World rank.
    pub world_rank: u32,
    /// Logical rank.
    pub logical_rank: u32,
    /// Failure group.
    pub failure_group: String,
    /// Host.
    pub host: String,
}

/// Options shared by the offline operations.
#[derive(Debug, Clone)]
pub struct Options {
    /// Redundancy file name prefix.
    pub prefix: String,
    /// Piece size in bytes.
    pub piece: usize,
    /// Print a progress line on stderr at this interval (None: silent).
    pub progress: Option<std::time::Duration>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            prefix: "redio-parity".into(),
            piece: DEFAULT_PIECE,
            progress: None,
        }
    }
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
fn write_payloads(
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
            let mut bufs = vec![Vec::new(); p];
            let mut acc = Vec::new();
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
                    let mut buf = vec![0u8; piece];
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

/// Completes a redundancy file whose payload is written (at the encoded
/// header's length): records the payload CRCs in `header`, writes both
/// header copies and the trailer, and fsyncs. The file is not committed.
pub fn finish_file(
    out: &AtomicFile,
    header: &mut Header,
    crcs: impl IntoIterator<Item = u32>,
) -> io::Result<()> {
    for (c, crc) in header.payload.iter_mut().zip(crcs) {
        c.crc32 = crc;
    }
    let bytes = header.encode();
    let hlen = bytes.len() as u64;
    let tail = hlen + header.payload_len();
    out.write_at(&bytes, 0)?;
    out.write_at(&bytes, tail)?;
    let mut trailer = hlen.to_le_bytes().to_vec();
    trailer.extend_from_slice(TRAILER_MAGIC);
    out.write_at(&trailer, tail + hlen)?;
    out.sync()
}

/// Reads the data pieces of row `r` at `off` within the chunk into
/// `bufs[m][..len]` for every data member `m` (buffers are reused across
/// pieces: fresh allocations cost page faults at every step).
fn read_row(
    code: &StripeCode,
    readers: &[LogicalReader],
    r: usize,
    chunk: u64,
    off: u64,
    bufs: &mut [Vec<u8>],
    len: usize,
) -> io::Result<()> {
    for (m, buf) in bufs.iter_mut().enumerate() {
        if let Some(d) = code.data_chunk(m, r) {
            buf.resize(len, 0);
            readers[m].read_at(d as u64 * chunk + off, &mut buf[..len])?;
        }
    }
    Ok(())
}

/// A redundancy file read from disk.
#[derive(Debug, Clone)]
pub struct Parsed {
    /// The header (from copy A, or copy B if A is damaged).
    pub header: Header,
    /// Offset of the payload.
    pub payload_at: u64,
    /// Set when copy A was unusable (and why).
    pub copy_a_error: Option<FormatError>,
}

/// Opens a redundancy file for reading: a regular file only (a FIFO, a
/// device or a directory with a redundancy file's name is refused without
/// blocking), the message naming the path.
pub fn open_redundancy(path: &Path) -> io::Result<File> {
    safe_fs::open_regular(path, Links::Follow)
}

/// Reads and checks a redundancy file's header (copy A, else copy B) and
/// its overall length. Does not read the payload.
pub fn read_header(path: &Path) -> Result<Parsed, String> {
    let f = open_redundancy(path).map_err(|e| e.to_string())?;
    let bytes_len = f
        .metadata()
        .map_err(|e| format!("{}: {e}", path.display()))?
        .len();
    let read = |at: u64, n: u64| -> Result<Vec<u8>, String> {
        let mut b = vec![0u8; n as usize];
        f.read_exact_at(&mut b, at)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(b)
    };
    let copy_a = (|| -> Result<Header, FormatError> {
        let prefix = read(0, 16.min(bytes_len)).map_err(FormatError::Invalid)?;
        let len = Header::length_from_prefix(&prefix)? as u64;
        let bytes = read(0, len.min(bytes_len)).map_err(FormatError::Invalid)?;
        let h = Header::decode(&bytes)?;
        let want = 2 * len + h.payload_len() + TRAILER_LEN;
        if bytes_len != want {
            return Err(FormatError::Invalid(format!(
                "file is {bytes_len} bytes but its header describes {want} (truncated or extended)"
            )));
        }
        Ok(h)
    })();
    let a_err = match copy_a {
        Ok(h) => {
            let payload_at = h.encode().len() as u64;
            return Ok(Parsed {
                header: h,
                payload_at,
                copy_a_error: None,
            });
        }
        Err(e) => e,
    };
    let copy_b = (|| -> Result<(Header, u64), String> {
        if bytes_len < TRAILER_LEN {
            return Err(format!("file is only {bytes_len} bytes"));
        }
        let t = read(bytes_len - TRAILER_LEN, TRAILER_LEN)?;
        if &t[8..] != TRAILER_MAGIC {
            return Err("no trailer (file truncated?)".into());
        }
        let len = u64::from_le_bytes(t[..8].try_into().unwrap_or([0; 8]));
        if len > bytes_len - TRAILER_LEN || len > u64::from(format::MAX_HEADER_LEN) {
            return Err(format!(
                "trailer names a {len}-byte header in a {bytes_len}-byte file (a header has at \
                 most {} bytes): the trailer is damaged",
                format::MAX_HEADER_LEN
            ));
        }
        let bytes = read(bytes_len - TRAILER_LEN - len, len)?;
        let h = Header::decode(&bytes).map_err(|e| e.to_string())?;
        if bytes_len != 2 * len + h.payload_len() + TRAILER_LEN {
            return Err("length does not match header copy B".into());
        }
        Ok((h, len))
    })();
    match copy_b {
        Ok((header, len)) => Ok(Parsed {
            header,
            payload_at: len,
            copy_a_error: Some(a_err),
        }),
        Err(b) => Err(format!(
            "{}: header copy A: {a_err}; copy B: {b}",
            path.display()
        )),
    }
}

/// How bad things are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    /// Nothing damaged.
    Healthy,
    /// Damage within tolerance.
    Repairable,
    /// More damage than tolerated, or no usable header.
    Unrecoverable,
}

impl Verdict {
    /// The exit code of `redio parity verify`: 0, 1, 2.
    pub fn exit_code(self) -> u8 {
        match self {
            Verdict::Healthy => 0,
            Verdict::Repairable => 1,
            Verdict::Unrecoverable => 2,
        }
    }
}

/// The state of one set found on disk.
#[derive(Debug, Clone)]
pub struct SetState {
    /// Set id.
    pub set_id: u32,
    /// Reference header (from any good redundancy file of the set).
    pub header: Option<Header>,
    /// Root directory per member.
    pub roots: Vec<PathBuf>,
    /// Per member: good redundancy file (path, payload offset), if any.
    pub redundancy: Vec<Option<(PathBuf, u64)>>,
    /// Per member: is its logical file damaged, and which files.
    pub damaged_files: Vec<Vec<usize>>,
    /// Everything found, one line each.
    pub findings: Vec<String>,
    /// The verdict.
    pub verdict: Verdict,
}

/// All sets found under `dirs`, and the overall verdict.
#[derive(Debug, Clone)]
pub struct Assessment {
    /// Each set.
    pub sets: Vec<SetState>,
    /// Worst verdict.
    pub verdict: Verdict,
    /// Job-level findings (missing sets, unreadable files).
    pub findings: Vec<String>,
}

/// A redundancy file found on disk: member (from its name), path, header.
type Found = (usize, PathBuf, Result<Parsed, String>);

/// Parses `prefix.s<set>.m<member>.rdp` into set and member.
pub fn parse_name(name: &str, prefix: &str) -> Option<(u32, usize)> {
    let rest = name
        .strip_prefix(prefix)?
        .strip_prefix(".s")?
        .strip_suffix(".rdp")?;
    let (s, m) = rest.split_once(".m")?;
    Some((s.parse().ok()?, m.parse().ok()?))
}

/// Finds and checks every redundancy file and protected file under `dirs`.
/// Unsafe header paths are an error (nothing is read through them).
pub fn assess(dirs: &[PathBuf], opts: &Options) -> Result<Assessment, Error> {
    if dirs.is_empty() {
        return Err(Error::Usage("no directory given".into()));
    }
    files::check_prefix(&opts.prefix).map_err(Error::Usage)?;
    refuse_repeated_dirs(dirs)?;
    let mut unique: Vec<&PathBuf> = Vec::new();
    for d in dirs {
        if !unique.contains(&d) {
            unique.push(d);
        }
    }
    let mut findings = Vec::new();
    let mut by_set: BTreeMap<u32, Vec<Found>> = BTreeMap::new();
    for d in unique {
        let Ok(entries) = std::fs::read_dir(d) else {
            findings.push(format!("{}: directory missing or unreadable", d.display()));
            continue;
        };
        let mut names: Vec<String> = entries
            .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
            .collect();
        names.sort();
        for name in names {
            if let Some((set, member)) = parse_name(&name, &opts.prefix) {
                let path = d.join(&name);
                let parsed = read_header(&path);
                if let Ok(p) = &parsed {
                    check_dir_is_members(dirs, d, &path, &p.header)?;
                }
                by_set.entry(set).or_default().push((member, path, parsed));
            }
        }
    }
    let mut sets = Vec::new();
    let mut set_count = None;
    for (set_id, found) in by_set {
        let st = assess_set(set_id, found, dirs, &opts.prefix)?;
        if let Some(h) = &st.header {
            set_count = Some(h.set_count);
        }
        sets.push(st);
    }
    match set_count {
        None => findings.push(format!(
            "no readable redundancy file named {}.s*.m*.rdp in the given directories (are they \
             the directories the encode wrote to, and was it written with this --prefix?)",
            opts.prefix
        )),
        Some(n) => {
            for s in 0..n {
                if !sets.iter().any(|x| x.set_id == s) {
                    findings.push(format!(
                        "set {s}: no redundancy file found (every member lost?)"
                    ));
                }
            }
        }
    }
    let mut verdict = sets
        .iter()
        .map(|s| s.verdict)
        .max()
        .unwrap_or(Verdict::Unrecoverable);
    if !findings.is_empty() && set_count.is_none_or(|n| sets.len() < n as usize) {
        verdict = Verdict::Unrecoverable;
    }
    Ok(Assessment {
        sets,
        verdict,
        findings,
    })
}

/// Refuses a directory given for two logical ranks (`--offline a a c d`):
/// the second rank's files would be rebuilt over the first one's.
pub fn refuse_repeated_dirs(dirs: &[PathBuf]) -> Result<(), Error> {
    if dirs.len() < 2 {
        return Ok(());
    }
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    };
    for (j, b) in dirs.iter().enumerate() {
        if let Some(i) = dirs[..j].iter().position(|a| same(a, b)) {
            return Err(Error::Refused(format!(
                "{} is given for logical ranks {i} and {j}: give one directory for every rank, \
                 or one per logical rank in rank order, each once",
                b.display()
            )));
        }
    }
    Ok(())
}

/// With one directory per logical rank, checks that the redundancy file
/// `path` found in `dir` belongs to that directory's rank: a directory
/// given in the wrong place would otherwise be "repaired" with another
/// rank's data.
fn check_dir_is_members(
    dirs: &[PathBuf],
    dir: &Path,
    path: &Path,
    h: &Header,
) -> Result<(), Error> {
    if dirs.len() < 2 {
        return Ok(());
    }
    let Some(owner) = h.members.get(h.member as usize) else {
        return Ok(());
    };
    let given: Vec<usize> = (0..dirs.len()).filter(|&i| dirs[i] == dir).collect();
    if given.contains(&(owner.logical_rank as usize)) {
        return Ok(());
    }
    Err(Error::Refused(format!(
        "{} belongs to logical rank {} (set {}, member {}), but its directory {} is given for \
         logical rank {}: give the directories in rank order, one per rank",
        path.display(),
        owner.logical_rank,
        h.set_id,
        h.member,
        dir.display(),
        given.first().copied().unwrap_or_default()
    )))
}

fn assess_set(
    set_id: u32,
    found: Vec<(usize, PathBuf, Result<Parsed, String>)>,
    dirs: &[PathBuf],
    prefix: &str,
) -> Result<SetState, Error> {
    let mut findings = Vec::new();
    let reference = found
        .iter()
        .find_map(|(m, _, r)| r.as_ref().ok().filter(|p| p.header.member as usize == *m))
        .map(|p| p.header.clone());
    let Some(header) = reference else {
        for (_, path, r) in &found {
            if let Err(e) = r {
                findings.push(e.clone());
            } else {
                findings.push(format!(
                    "{}: header names another member than the file name",
                    path.display()
                ));
            }
        }
        findings.push(format!(
            "set {set_id}: no usable header; cannot check or rebuild"
        ));
        return Ok(SetState {
            set_id,
            header: None,
            roots: Vec::new(),
            redundancy: Vec::new(),
            damaged_files: Vec::new(),
            findings,
            verdict: Verdict::Unrecoverable,
        });
    };
    let p = header.members.len();
    let n = header.logical_ranks as usize;
    let roots: Vec<PathBuf> = if dirs.len() == 1 {
        vec![dirs[0].clone(); p]
    } else if dirs.len() == n {
        header
            .members
            .iter()
            .map(|m| dirs[m.logical_rank as usize].clone())
            .collect()
    } else {
        return Err(Error::Usage(format!(
            "give one directory, or one per logical rank ({n}); got {}",
            dirs.len()
        )));
    };
    // Security first: every path of every member, before reading anything.
    files::check_header_paths(&header, prefix, dirs.len() == 1)?;
    let mut redundancy: Vec<Option<(PathBuf, u64)>> = vec![None; p];
    for (m, path, parsed) in found {
        match parsed {
            Err(e) => findings.push(format!("member {m}: redundancy file damaged: {e}")),
            Ok(_) if m >= p => findings.push(format!(
                "{}: member {m} is not in a set of {p}",
                path.display()
            )),
            Ok(_) if path.parent() != Some(roots[m].as_path()) => findings.push(format!(
                "member {m}: {} is not in the member's directory {}",
                path.display(),
                roots[m].display()
            )),
            Ok(parsed) => match check_redundancy(&path, &parsed, m, &header) {
                Ok(at) => redundancy[m] = Some((path, at)),
                Err(e) => findings.push(format!("member {m}: {}: {e}", path.display())),
            },
        }
    }
    for (m, r) in redundancy.iter().enumerate() {
        if r.is_none()
            && !findings
                .iter()
                .any(|f| f.starts_with(&format!("member {m}:")))
        {
            findings.push(format!("member {m}: redundancy file missing"));
        }
    }
    let mut damaged_files = vec![Vec::new(); p];
    for (m, meta) in header.members.iter().enumerate() {
        for (i, full, why) in check_files(&roots[m], meta)? {
            findings.push(format!("member {m}: {}: {why}", full.display()));
            damaged_files[m].push(i);
        }
    }
    let lost_data: Vec<bool> = damaged_files.iter().map(|d| !d.is_empty()).collect();
    let lost_red: Vec<bool> = redundancy.iter().map(Option::is_none).collect();
    let damaged = lost_data.iter().zip(&lost_red).any(|(a, b)| *a || *b);
    let verdict = if !damaged {
        Verdict::Healthy
    } else {
        match recoverable(&header, &lost_data, &lost_red) {
            Ok(()) => Verdict::Repairable,
            Err(why) => {
                findings.push(format!("set {set_id}: {why}"));
                Verdict::Unrecoverable
            }
        }
    };
    Ok(SetState {
        set_id,
        header: Some(header),
        roots,
        redundancy,
        damaged_files,
        findings,
        verdict,
    })
}

/// Checks a member's files by existence, size and CRC32 against their
/// metadata: `(file index, path, what is wrong)` for each damaged one.
/// Refuses unsafe recorded paths before touching anything.
pub fn check_files(
    root: &Path,
    meta: &MemberMeta,
) -> Result<Vec<(usize, PathBuf, String)>, UnsafePath> {
    let mut out = Vec::new();
    for (i, f) in meta.files.iter().enumerate() {
        let full = files::resolve_in_root(root, &f.path)?;
        let problem = match std::fs::symlink_metadata(&full) {
            Err(_) => Some("missing".to_string()),
            Ok(md) if !md.is_file() => Some("not a regular file".to_string()),
            Ok(md) if md.len() != f.size => Some(format!(
                "size {} instead of {}{}",
                md.len(),
                f.size,
                if rewritten_after_encode(&md, f) {
                    " (modified after the encode)"
                } else {
                    ""
                }
            )),
            Ok(md) => match files::crc_file(&full) {
                Ok((_, crc)) if crc != f.crc32 => Some(format!(
                    "CRC32 {crc:08x} instead of {:08x} (content changed{})",
                    f.crc32,
                    if rewritten_after_encode(&md, f) {
                        "; modified after the encode"
                    } else {
                        ""
                    }
                )),
                Ok(_) => None,
                Err(e) => Some(format!("unreadable: {e}")),
            },
        };
        if let Some(why) = problem {
            out.push((i, full, why));
        }
    }
    Ok(out)
}

/// Whether the file `md` describes was modified after the encode that
/// recorded `f`: its modification time is later than the recorded one.
pub fn rewritten_after_encode(md: &std::fs::Metadata, f: &FileMeta) -> bool {
    use std::os::unix::fs::MetadataExt;
    (md.mtime(), md.mtime_nsec()) > (f.mtime_sec, i64::from(f.mtime_nsec))
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

/// Whether member `m`'s redundancy file (parsed from `path`) can be used
/// with the set's `reference` header: the offset of its payload, or why
/// not (it must then be rewritten).
pub fn check_redundancy(
    path: &Path,
    parsed: &Parsed,
    m: usize,
    reference: &Header,
) -> Result<u64, String> {
    if parsed.header.member as usize != m || !parsed.header.same_set(reference) {
        return Err("header disagrees with the set's other headers".into());
    }
    if let Some(e) = &parsed.copy_a_error {
        return Err(format!(
            "header copy A damaged ({e}); copy B used, file will be rewritten"
        ));
    }
    check_payload(path, parsed)?;
    Ok(parsed.payload_at)
}

/// Checks every payload chunk's CRC32.
pub fn check_payload(path: &Path, parsed: &Parsed) -> Result<(), String> {
    let f = open_redundancy(path).map_err(|e| e.to_string())?;
    let mut at = parsed.payload_at;
    let mut buf = vec![0u8; DEFAULT_PIECE];
    for (i, c) in parsed.header.payload.iter().enumerate() {
        let mut h = crc32fast::Hasher::new();
        let mut left = c.len;
        while left > 0 {
            let n = (left as usize).min(buf.len());
            f.read_exact_at(&mut buf[..n], at)
                .map_err(|e| e.to_string())?;
            h.update(&buf[..n]);
            at += n as u64;
            left -= n as u64;
        }
        let crc = h.finalize();
        if crc != c.crc32 {
            return Err(format!(
                "payload chunk {i}: CRC32 {crc:08x} instead of {:08x} (parity damaged)",
                c.crc32
            ));
        }
    }
    Ok(())
}

/// Whether the losses can be rebuilt, and if not, why.
pub fn recoverable(h: &Header, lost_data: &[bool], lost_red: &[bool]) -> Result<(), String> {
    let p = h.members.len();
    let members = |v: &[bool]| (0..p).filter(|&m| v[m]).collect::<Vec<_>>();
    match h.scheme {
        Scheme::Single => Err(format!(
            "SINGLE keeps no redundancy data; damaged members {:?} (data) / {:?} (metadata) cannot be rebuilt",
            members(lost_data),
            members(lost_red)
        )),
        Scheme::Partner { copies } => {
            for m in members(lost_data) {
                if partner::holders_of(m, p, copies as usize).iter().all(|&x| lost_red[x]) {
                    return Err(format!("member {m} lost its files and every copy of them"));
                }
            }
            Ok(())
        }
        Scheme::Xor | Scheme::Rs { .. } => {
            let code = StripeCode::new(h.scheme, p).map_err(|e| e.to_string())?;
            for r in 0..p {
                code.plan_row(r, lost_data, lost_red).map_err(|e| {
                    format!(
                        "{e}; damaged members: {:?} (data), {:?} (redundancy); {} tolerates {}",
                        members(lost_data),
                        members(lost_red),
                        h.scheme,
                        h.scheme.tolerance()
                    )
                })?;
            }
            Ok(())
        }
    }
}

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

/// Builds (uncommitted) replacements for the damaged files of one set.
fn rebuild_set(s: &SetState, opts: &Options) -> Result<Vec<AtomicFile>, Error> {
    let Some(h) = &s.header else {
        return Ok(Vec::new());
    };
    let p = h.members.len();
    let kernel = best();
    // 1. Temporary files for every damaged data file.
    let mut data_out: Vec<Vec<Option<AtomicFile>>> = Vec::new();
    for m in 0..p {
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
    // Readers of intact logical files; damaged ones are solved for.
    let intact: Vec<Option<LogicalReader>> = (0..p)
        .map(|m| {
            if s.damaged_files[m].is_empty() {
                member_reader(s, h, m, &data_out).map(Some)
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
    let piece = opts.piece.max(1);
    match h.scheme {
        Scheme::Xor | Scheme::Rs { .. } => {
            let code = StripeCode::new(h.scheme, p).map_err(|e| Error::Usage(e.to_string()))?;
            let lost_data: Vec<bool> = s.damaged_files.iter().map(|d| !d.is_empty()).collect();
            let lost_red: Vec<bool> = s.redundancy.iter().map(Option::is_none).collect();
            let plans: Vec<RowPlan> = (0..p)
                .map(|r| code.plan_row(r, &lost_data, &lost_red))
                .collect::<Result<_, _>>()
                .map_err(|e| Error::Unrecoverable(e.to_string()))?;
            let chunk = h.chunk_size;
            let mut data: Vec<Vec<u8>> = vec![Vec::new(); p];
            let mut par: Vec<Vec<u8>> = vec![Vec::new(); code.parity_count()];
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
                            data[m].resize(len, 0);
                            rd.read_at(d as u64 * chunk + off, &mut data[m][..len])?;
                            have_data[m] = true;
                        }
                    }
                    let mut have_par = vec![false; code.parity_count()];
                    for (j, b) in par.iter_mut().enumerate() {
                        let holder = code.parity_holder(r, j);
                        if let (Some(f), Some((_, at))) =
                            (&red_files[holder], &s.redundancy[holder])
                        {
                            b.resize(len, 0);
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
        }
        Scheme::Partner { copies } => {
            for (m, outs) in data_out.iter().enumerate() {
                if s.damaged_files[m].is_empty() {
                    continue;
                }
                let (holder, slot) = partner::holders_of(m, p, copies as usize)
                    .into_iter()
                    .find_map(|x| {
                        s.redundancy[x].as_ref()?;
                        partner::slot_of(m, x, p, copies as usize).map(|sl| (x, sl))
                    })
                    .ok_or_else(|| {
                        Error::Unrecoverable(format!("member {m}: no surviving copy"))
                    })?;
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
                let mut buf = vec![0u8; piece];
                while off < total {
                    let len = piece.min((total - off) as usize);
                    f.read_exact_at(&mut buf[..len], base + off)?;
                    write_logical(h, m, outs, off, &buf[..len])?;
                    off += len as u64;
                }
            }
        }
        Scheme::Single => {}
    }
    // 2. Check every rebuilt file against its recorded CRC32, then metadata.
    let mut out: Vec<AtomicFile> = Vec::new();
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
    // 3. Lost redundancy files, re-encoded from the (now complete) data.
    let lost: Vec<usize> = (0..p).filter(|&m| s.redundancy[m].is_none()).collect();
    if !lost.is_empty() {
        let readers: Vec<LogicalReader> = (0..p)
            .map(|m| member_reader(s, h, m, &data_out))
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

/// A reader of member `m`'s logical file, taking rebuilt files from their
/// temporary copies.
fn member_reader(
    s: &SetState,
    h: &Header,
    m: usize,
    data_out: &[Vec<Option<AtomicFile>>],
) -> Result<LogicalReader, Error> {
    logical_reader(&s.roots[m], &h.members[m], &data_out[m])
}

/// A reader of the logical file of the member whose files `meta` lists
/// under `root`, taking file `i` from `rebuilt[i]`'s temporary copy if set.
pub fn logical_reader(
    root: &Path,
    meta: &MemberMeta,
    rebuilt: &[Option<AtomicFile>],
) -> Result<LogicalReader, Error> {
    let files = meta
        .files
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let file = match rebuilt.get(i).and_then(Option::as_ref) {
                Some(a) => a.file().try_clone()?,
                None => {
                    let full = files::resolve_in_root(root, &f.path)?;
                    safe_fs::open_regular(&full, Links::Follow)?
                }
            };
            Ok((file, f.size))
        })
        .collect::<Result<Vec<_>, Error>>()?;
    Ok(LogicalReader::from_files(files))
}

/// Writes logical bytes `bytes` at `offset` of member `m` into the files
/// being rebuilt (intact files and padding are skipped).
pub fn write_logical(
    h: &Header,
    m: usize,
    outs: &[Option<AtomicFile>],
    offset: u64,
    bytes: &[u8],
) -> io::Result<()> {
    let mut start = 0u64;
    let end = offset + bytes.len() as u64;
    for (i, f) in h.members[m].files.iter().enumerate() {
        let (fs, fe) = (start, start + f.size);
        start = fe;
        let (lo, hi) = (offset.max(fs), end.min(fe));
        if lo >= hi {
            continue;
        }
        if let Some(out) = &outs[i] {
            out.write_at(
                &bytes[(lo - offset) as usize..(hi - offset) as usize],
                lo - fs,
            )?;
        }
    }
    Ok(())
}

/// Reads a redundancy file's header for `inspect`.
pub fn inspect(path: &Path) -> Result<Parsed, String> {
    read_header(path)
}

/// Recomputes the parity of a healthy XOR / RS set and lists every parity
/// chunk that does not match its data (verify's deep check).
pub fn recompute_mismatches(
    s: &SetState,
    kernel: &dyn Kernel,
    opts: &Options,
) -> Result<Vec<String>, Error> {
    let Some(h) = &s.header else {
        return Ok(Vec::new());
    };
    if !matches!(h.scheme, Scheme::Xor | Scheme::Rs { .. }) || s.verdict != Verdict::Healthy {
        return Ok(Vec::new());
    }
    let p = h.members.len();
    let code = StripeCode::new(h.scheme, p).map_err(|e| Error::Usage(e.to_string()))?;
    let none: Vec<Vec<Option<AtomicFile>>> = (0..p)
        .map(|m| h.members[m].files.iter().map(|_| None).collect())
        .collect();
    let readers: Vec<LogicalReader> = (0..p)
        .map(|m| member_reader(s, h, m, &none))
        .collect::<Result<_, _>>()?;
    let mut bad = Vec::new();
    let chunk = h.chunk_size;
    let piece = opts.piece.max(1);
    let mut bufs = vec![Vec::new(); p];
    for r in 0..p {
        let mut off = 0u64;
        while off < chunk {
            let len = piece.min((chunk - off) as usize);
            read_row(&code, &readers, r, chunk, off, &mut bufs, len)?;
            let mut parity = vec![vec![0u8; len]; code.parity_count()];
            let refs: Vec<&[u8]> = bufs
                .iter()
                .map(|b| if b.len() >= len { &b[..len] } else { &b[..] })
                .collect();
            code.encode_row(kernel, r, &refs, &mut parity);
            for (j, want) in parity.iter().enumerate() {
                let holder = code.parity_holder(r, j);
                if let Some((path, at)) = &s.redundancy[holder] {
                    let mut got = vec![0u8; len];
                    open_redundancy(path)?.read_exact_at(&mut got, at + j as u64 * chunk + off)?;
                    if &got != want {
                        bad.push(format!(
                            "member {holder}: {}: parity chunk {j} (row {r}) does not match the data at bytes {off}..{}",
                            path.display(),
                            off + len as u64
                        ));
                    }
                }
            }
            off += len as u64;
        }
    }
    Ok(bad)
}
