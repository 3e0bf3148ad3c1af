//! Deciding what is lost: finds every redundancy file under the given
//! directories, checks it and every protected file, and gives each set a
//! [`Verdict`]; plus verify's deep check, which recomputes the parity of
//! healthy sets. Reads only: nothing here writes.
//!
//! Member roots: with one directory, every member's paths are relative to
//! it; with one directory per logical rank, member `m`'s root is the
//! directory of its logical rank.
//!
//! Damage is found by existence, size and CRC32 of every data file, and by
//! the header and per-chunk CRC32s of every redundancy file. The checks of
//! one member ([`check_files`], [`check_redundancy`], [`recoverable`]) are
//! also what each rank of the collective job runs on its own files.

use crate::encode::read_row;
use crate::error::Error;
use crate::files::{self, UnsafePath};
use crate::format::{ChunkMeta, FileMeta, Header, MemberMeta};
use crate::gf::kernel::Kernel;
use crate::logical::{logical_reader, LogicalReader};
use crate::options::Options;
use crate::partner;
use crate::redundancy_file::{check_payload, open_redundancy, parse_name, read_header, Parsed};
use crate::scheme::Scheme;
use crate::stripe::StripeCode;
use redio_aligned::AlignedBuf;
use std::collections::BTreeMap;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

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
    /// Per member: the payload chunks (length, CRC32) its good redundancy
    /// file's own header records (empty without one).
    pub payload: Vec<Vec<ChunkMeta>>,
    /// Per member: is its logical file damaged, and which files.
    pub damaged_files: Vec<Vec<usize>>,
    /// Everything found, one line each.
    pub findings: Vec<String>,
    /// The verdict.
    pub verdict: Verdict,
    /// The CRC32s of the intact-looking data files and redundancy payloads
    /// were not read yet ([`assess_quick`]): damage is existence, size
    /// and headers only until [`check_deferred`] or a rebuild that checks
    /// them while it reads them.
    pub deferred: bool,
}

/// How deep an assessment looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Depth {
    /// Existence, size and CRC32 of every file, headers and payload CRC32s.
    Full,
    /// Existence, size and headers; no file is read beyond its header (a
    /// rebuild checks the CRC32s while it reads the files anyway).
    Quick,
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

/// Finds and checks every redundancy file and protected file under `dirs`.
/// Unsafe header paths are an error (nothing is read through them).
pub fn assess(dirs: &[PathBuf], opts: &Options) -> Result<Assessment, Error> {
    assess_with(dirs, opts, Depth::Full)
}

/// [`assess`] without reading any file beyond its header: what is lost by
/// existence, size and headers, the CRC32s left for later (every set's
/// [`SetState::deferred`] is set).
pub fn assess_quick(dirs: &[PathBuf], opts: &Options) -> Result<Assessment, Error> {
    assess_with(dirs, opts, Depth::Quick)
}

/// [`assess`] to the given depth.
pub fn assess_with(dirs: &[PathBuf], opts: &Options, depth: Depth) -> Result<Assessment, Error> {
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
        let st = assess_set(set_id, found, dirs, &opts.prefix, depth)?;
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
    depth: Depth,
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
            payload: Vec::new(),
            damaged_files: Vec::new(),
            findings,
            verdict: Verdict::Unrecoverable,
            deferred: false,
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
    let mut payload = vec![Vec::new(); p];
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
            Ok(parsed) => match check_redundancy_to(&path, &parsed, m, &header, depth) {
                Ok(at) => {
                    redundancy[m] = Some((path, at));
                    payload[m] = parsed.header.payload;
                }
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
        for (i, full, why) in check_files_to(&roots[m], meta, depth)? {
            findings.push(format!("member {m}: {}: {why}", full.display()));
            damaged_files[m].push(i);
        }
    }
    let mut st = SetState {
        set_id,
        header: Some(header),
        roots,
        redundancy,
        payload,
        damaged_files,
        findings,
        verdict: Verdict::Healthy,
        deferred: depth == Depth::Quick,
    };
    judge(&mut st);
    Ok(st)
}

/// Sets `s.verdict` from its damage (a set with a header).
fn judge(s: &mut SetState) {
    let Some(header) = &s.header else {
        return;
    };
    let lost_data: Vec<bool> = s.damaged_files.iter().map(|d| !d.is_empty()).collect();
    let lost_red: Vec<bool> = s.redundancy.iter().map(Option::is_none).collect();
    let damaged = lost_data.iter().zip(&lost_red).any(|(a, b)| *a || *b);
    s.verdict = if !damaged {
        Verdict::Healthy
    } else {
        match recoverable(header, &lost_data, &lost_red) {
            Ok(()) => Verdict::Repairable,
            Err(why) => {
                s.findings.push(format!("set {}: {why}", s.set_id));
                Verdict::Unrecoverable
            }
        }
    };
}

/// Runs the CRC32 checks a quick assessment left out (every intact-looking
/// data file, every usable redundancy payload) and judges the set again;
/// nothing when they were done. Reads each of those bytes once.
pub fn check_deferred(s: &mut SetState) -> Result<(), Error> {
    let Some(header) = s.header.clone().filter(|_| s.deferred) else {
        return Ok(());
    };
    s.deferred = false;
    // The finding of an unrecoverable verdict is judged again below.
    let verdict_line = format!("set {}: ", s.set_id);
    s.findings.retain(|f| !f.starts_with(&verdict_line));
    for (m, meta) in header.members.iter().enumerate() {
        for (i, full, why) in check_files_to(&s.roots[m], meta, Depth::Full)? {
            if !s.damaged_files[m].contains(&i) {
                s.findings
                    .push(format!("member {m}: {}: {why}", full.display()));
                s.damaged_files[m].push(i);
                s.damaged_files[m].sort_unstable();
            }
        }
        if let Some((path, at)) = s.redundancy[m].clone() {
            let mut own = header.clone();
            own.payload = s.payload[m].clone();
            let parsed = Parsed {
                header: own,
                payload_at: at,
                copy_a_error: None,
            };
            if let Err(e) = check_payload(&path, &parsed) {
                s.findings
                    .push(format!("member {m}: {}: {e}", path.display()));
                s.redundancy[m] = None;
                s.payload[m].clear();
            }
        }
    }
    judge(s);
    Ok(())
}

/// Checks a member's files by existence, size and CRC32 against their
/// metadata: `(file index, path, what is wrong)` for each damaged one.
/// Refuses unsafe recorded paths before touching anything.
pub fn check_files(
    root: &Path,
    meta: &MemberMeta,
) -> Result<Vec<(usize, PathBuf, String)>, UnsafePath> {
    check_files_to(root, meta, Depth::Full)
}

/// [`check_files`] to the given depth: [`Depth::Quick`] leaves out the
/// CRC32 (no file is read).
pub fn check_files_to(
    root: &Path,
    meta: &MemberMeta,
    depth: Depth,
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
            Ok(_) if depth == Depth::Quick => None,
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

/// Whether member `m`'s redundancy file (parsed from `path`) can be used
/// with the set's `reference` header: the offset of its payload, or why
/// not (it must then be rewritten).
pub fn check_redundancy(
    path: &Path,
    parsed: &Parsed,
    m: usize,
    reference: &Header,
) -> Result<u64, String> {
    check_redundancy_to(path, parsed, m, reference, Depth::Full)
}

/// [`check_redundancy`] to the given depth: [`Depth::Quick`] checks the
/// headers and the length, not the payload CRC32s.
pub fn check_redundancy_to(
    path: &Path,
    parsed: &Parsed,
    m: usize,
    reference: &Header,
    depth: Depth,
) -> Result<u64, String> {
    if parsed.header.member as usize != m || !parsed.header.same_set(reference) {
        return Err("header disagrees with the set's other headers".into());
    }
    if let Some(e) = &parsed.copy_a_error {
        return Err(format!(
            "header copy A damaged ({e}); copy B used, file will be rewritten"
        ));
    }
    if depth == Depth::Full {
        check_payload(path, parsed)?;
    }
    Ok(parsed.payload_at)
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
    // Nothing is being rebuilt: every file is read where it is.
    let readers: Vec<LogicalReader> = (0..p)
        .map(|m| logical_reader(&s.roots[m], &h.members[m], &[]))
        .collect::<Result<_, _>>()?;
    let mut bad = Vec::new();
    let chunk = h.chunk_size;
    let piece = opts.piece.max(1);
    let mut bufs = vec![AlignedBuf::new(); p];
    let mut parity = vec![AlignedBuf::new(); code.parity_count()];
    let mut got = AlignedBuf::new();
    for r in 0..p {
        let mut off = 0u64;
        while off < chunk {
            let len = piece.min((chunk - off) as usize);
            read_row(&code, &readers, r, chunk, off, &mut bufs, len)?;
            // encode_row zero-fills each before summing.
            for b in &mut parity {
                b.resize_for_overwrite(len);
            }
            let refs: Vec<&[u8]> = bufs
                .iter()
                .map(|b| if b.len() >= len { &b[..len] } else { &b[..] })
                .collect();
            code.encode_row(kernel, r, &refs, &mut parity);
            for (j, want) in parity.iter().enumerate() {
                let holder = code.parity_holder(r, j);
                if let Some((path, at)) = &s.redundancy[holder] {
                    got.resize_for_overwrite(len);
                    open_redundancy(path)?.read_exact_at(&mut got, at + j as u64 * chunk + off)?;
                    if got != *want {
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
