//! The collective `redio parity encode | verify | rebuild` job: one MPI
//! process per logical rank, each working on its own root directory (on
//! its own node, possibly a new one), started by the `redio` CLI.
//!
//! Verify and rebuild:
//! 1. each rank reads the redundancy files in its root that belong to it,
//!    and all ranks gather their headers: any surviving header of a set
//!    tells every member what it must have, even a member that lost all;
//! 2. each rank checks its own files (existence, size, CRC32) and its own
//!    redundancy file (header copies, payload CRC32s), refusing unsafe
//!    header paths before touching anything;
//! 3. all ranks gather every rank's status and findings, and compute the
//!    same verdict per set (`redio_parity::assess::recoverable`);
//! 4. verify recomputes the parity of healthy XOR / RS sets with the ring
//!    engine, comparing instead of writing; rebuild runs
//!    `redio_parity::repair` on every damaged set over [`MpiTransport`],
//!    then renames the files into place only if every rank succeeded.
//!
//! Encode is the in-job protect step ([`protect::protect`]) over the files
//! under each root. Rank 0 returns the report; every rank the exit code.

use crate::parity::collective::all_agree;

use crate::parity::collective::allgather_bytes;

use crate::parity::collective::rank_and_size;

use crate::comm::ffi;
use crate::parity::collective::OwnComm;
use crate::parity::protect;
use crate::parity::transport::MpiTransport;
use redio_aligned::AlignedBuf;
use redio_parity::assess::{check_files_to, check_redundancy_to, recoverable, Depth, Verdict};
use redio_parity::files::{check_header_paths, list_protectable};
use redio_parity::format::ChunkMeta;
use redio_parity::format::{file_name, Header};
use redio_parity::gf::kernel::best;
use redio_parity::rebuild::check_before_rebuild;
use redio_parity::redundancy_file::check_payload;
use redio_parity::redundancy_file::{open_redundancy, parse_name, read_header, Parsed};
use redio_parity::repair::{self, Damage, Local};
use redio_parity::ring;
use redio_parity::scheme::Scheme;
use redio_parity::stale::sweep;
use redio_parity::stripe::StripeCode;
use redio_parity::worker_args::{JobSpec, Operation, RANK_PLACEHOLDER};
use std::collections::BTreeMap;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// Exit code of an error (I/O, bad arguments, an unsafe header path).
pub const EXIT_ERROR: u8 = 3;

/// The outcome: the exit code (the same on every rank) and, on rank 0,
/// the report lines.
pub struct Report {
    /// Exit code of the `redio parity` command.
    pub code: u8,
    /// What to print (rank 0 only; empty elsewhere).
    pub lines: Vec<String>,
}

/// Runs the job, collective over `comm` (the whole job's world).
pub fn run(comm: ffi::MPI_Comm, spec: &JobSpec) -> Result<Report, String> {
    let own = OwnComm::dup(comm)?;
    let (rank, size) = rank_and_size(own.0)?;
    let root = spec.root_of(rank as u32, size as u32);
    // Fails only when the root does (then unused).
    let red_dir = spec
        .redundancy_dir_of(rank as u32, size as u32)
        .unwrap_or_default();
    if spec.op != Operation::Verify {
        // Temporary files of dead runs (issue 44); a live run's stay.
        let mut stale = root.as_ref().map_or(Vec::new(), |r| sweep(r, true));
        if root.as_ref().is_ok_and(|r| !red_dir.starts_with(r)) {
            stale.extend(sweep(&red_dir, false));
        }
        for r in stale {
            eprintln!("redio parity {}: rank {rank}: {r}", spec.op.name());
        }
    }
    match spec.op {
        Operation::Encode => encode(&own, spec, root, &red_dir, rank),
        Operation::Verify | Operation::Rebuild => check(&own, spec, root, &red_dir, rank, size),
    }
}

/// Every rank's lines, gathered; kept on rank 0 only.
fn gather_lines(comm: &OwnComm, rank: usize, lines: &[String]) -> Result<Vec<String>, String> {
    let all = allgather_bytes(comm.0, lines.join("\n").as_bytes())?;
    if rank != 0 {
        return Ok(Vec::new());
    }
    Ok(all
        .iter()
        .flat_map(|b| {
            String::from_utf8_lossy(b)
                .lines()
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect())
}

fn encode(
    comm: &OwnComm,
    spec: &JobSpec,
    root: Result<PathBuf, String>,
    red_dir: &Path,
    rank: usize,
) -> Result<Report, String> {
    let scheme = Scheme::parse(&spec.scheme).map_err(|e| e.to_string());
    let files = root
        .clone()
        .and_then(|r| list_protectable(&r, &spec.prefix).map_err(|e| format!("rank {rank}: {e}")));
    let refused = match (&scheme, &files) {
        (Err(e), _) | (_, Err(e)) => Some(e.clone()),
        _ => None,
    };
    let host = crate::parity::host_name();
    let group = if spec.group.is_empty() {
        host.clone()
    } else {
        spec.group.replace(RANK_PLACEHOLDER, &rank.to_string())
    };
    let req = protect::Request {
        refused,
        scheme: scheme.unwrap_or(Scheme::Single),
        set_size: spec.set_size,
        root: root.unwrap_or_default(),
        redundancy_dir: red_dir.to_path_buf(),
        files: files.unwrap_or_default(),
        group,
        host,
        world_rank: rank as u32,
        prefix: spec.prefix.clone(),
        piece: spec.piece,
        engine: protect::Engine::Ring,
        // The ranks move in step: rank 0's lines tell the user enough.
        progress: redio_parity::progress::interval().filter(|_| rank == 0),
    };
    let (line, good) = match protect::protect(comm.0, &req) {
        Ok(o) => (
            format!(
                "rank {rank}: wrote {} ({} file(s), {} bytes protected)",
                o.path.display(),
                req.files.len(),
                o.protected
            ),
            true,
        ),
        Err(e) => (
            format!("rank {rank}: {e}; no redundancy file written"),
            false,
        ),
    };
    let all_good = all_agree(comm.0, good)?;
    let lines = gather_lines(comm, rank, &[line])?;
    Ok(Report {
        code: if all_good { 0 } else { EXIT_ERROR },
        lines,
    })
}

/// A redundancy file of this rank: (set, member) from its name, path, and
/// its header or why it is unreadable.
type Found = (u32, usize, PathBuf, Result<Parsed, String>);

/// The redundancy files in `dir` (every one, whatever its owner).
fn found_in(dir: &Path, prefix: &str) -> Vec<Found> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect();
    names.sort();
    names
        .into_iter()
        .filter_map(|n| {
            let (set, member) = parse_name(&n, prefix)?;
            let path = dir.join(&n);
            let parsed = read_header(&path);
            Some((set, member, path, parsed))
        })
        .collect()
}

/// What one rank found about itself, as every rank learns it.
#[derive(Clone, Copy, Debug, Default)]
struct Status {
    /// Set id, or `u32::MAX` when no header names this rank.
    set: u32,
    member: u32,
    lost_data: bool,
    lost_red: bool,
    /// A refusal (unsafe path, bad arguments): the command exits 3.
    error: bool,
}

impl Status {
    fn encode(self) -> Vec<u8> {
        let mut v = self.set.to_le_bytes().to_vec();
        v.extend(self.member.to_le_bytes());
        v.extend([
            u8::from(self.lost_data),
            u8::from(self.lost_red),
            u8::from(self.error),
        ]);
        v
    }

    fn decode(b: &[u8]) -> Status {
        if b.len() != 11 {
            return Status {
                set: u32::MAX,
                error: true,
                ..Status::default()
            };
        }
        let word = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap_or([0; 4]));
        Status {
            set: word(0),
            member: word(4),
            lost_data: b[8] != 0,
            lost_red: b[9] != 0,
            error: b[10] != 0,
        }
    }
}

/// This rank's own assessment.
struct Mine {
    status: Status,
    findings: Vec<String>,
    /// This rank's set, when a header names it.
    set: Option<MySet>,
}

/// This rank's place in its set, as found on disk.
struct MySet {
    /// The set's reference header.
    header: Header,
    /// This rank's member index in the set.
    me: usize,
    /// Indices of this rank's damaged files.
    damaged: Vec<usize>,
    /// This rank's usable redundancy file and its payload offset.
    usable: Option<(PathBuf, u64)>,
    /// The payload chunks (length, CRC32) of that file's own header.
    payload: Vec<ChunkMeta>,
    /// The CRC32s of this rank's intact-looking files and payload are not
    /// checked yet (a quick check): the rebuild checks them as it reads.
    deferred: bool,
}

/// Steps 1 and 2: gathers the headers and checks this rank's files, to
/// `depth` (quick: existence, sizes and headers, the CRC32s deferred).
fn assess_mine(
    comm: &OwnComm,
    spec: &JobSpec,
    root: &Result<PathBuf, String>,
    red_dir: &Path,
    rank: usize,
    size: usize,
    depth: Depth,
) -> Result<(Mine, BTreeMap<u32, Header>), String> {
    let found = match root {
        Ok(_) => found_in(red_dir, &spec.prefix),
        Err(_) => Vec::new(),
    };
    // This rank's own headers only: in a directory shared by all ranks,
    // every rank sees every file.
    let own = |p: &Parsed| {
        p.header
            .members
            .get(p.header.member as usize)
            .is_some_and(|m| m.logical_rank as usize == rank)
    };
    let contribution = found
        .iter()
        .find_map(|(_, _, _, p)| p.as_ref().ok().filter(|p| own(p)))
        .map(|p| p.header.encode())
        .unwrap_or_default();
    let gathered = allgather_bytes(comm.0, &contribution)?;
    let mut refs: BTreeMap<u32, Header> = BTreeMap::new();
    for bytes in gathered.iter().filter(|b| !b.is_empty()) {
        if let Ok(h) = Header::decode(bytes) {
            refs.entry(h.set_id).or_insert(h);
        }
    }
    let mut mine = Mine {
        status: Status {
            set: u32::MAX,
            ..Status::default()
        },
        findings: Vec::new(),
        set: None,
    };
    let root = match root {
        Ok(r) => r,
        Err(e) => {
            mine.findings.push(format!("rank {rank}: {e}"));
            mine.status.error = true;
            return Ok((mine, refs));
        }
    };
    if let Some(h) = refs.values().find(|h| h.logical_ranks as usize != size) {
        mine.findings.push(format!(
            "rank {rank}: the redundancy files were written by a job of {} ranks; run with -n {}",
            h.logical_ranks, h.logical_ranks
        ));
        mine.status.error = true;
        return Ok((mine, refs));
    }
    let place = refs.values().find_map(|h| {
        let me = h
            .members
            .iter()
            .position(|m| m.logical_rank as usize == rank)?;
        Some((h.clone(), me))
    });
    let Some((h, me)) = place else {
        mine.findings.push(format!(
            "rank {rank}: {}: no surviving redundancy file names this rank (its set lost every \
             redundancy file?)",
            red_dir.display()
        ));
        return Ok((mine, refs));
    };
    let who = format!("rank {rank} (set {}, member {me})", h.set_id);
    mine.status.set = h.set_id;
    mine.status.member = me as u32;
    // Security first: every path of the set, before reading anything.
    let shared = spec.roots.len() == 1 && !spec.roots[0].contains(RANK_PLACEHOLDER);
    if let Err(e) = check_header_paths(&h, &spec.prefix, shared) {
        mine.findings.push(format!("{who}: refused: {e}"));
        mine.status.error = true;
        return Ok((mine, refs));
    }
    let damaged = match check_files_to(root, &h.members[me], depth) {
        Ok(d) => d,
        Err(e) => {
            mine.findings.push(format!("{who}: refused: {e}"));
            mine.status.error = true;
            return Ok((mine, refs));
        }
    };
    for (_, full, why) in &damaged {
        mine.findings
            .push(format!("{who}: {}: {why}", full.display()));
        // Refused here, before any rank creates a directory or a file: the
        // rename would fail after other files were in place.
        if spec.op == Operation::Rebuild && full.is_dir() {
            mine.findings.push(format!(
                "{who}: {} is a directory where the header records a file; move it away first",
                full.display()
            ));
            mine.status.error = true;
        }
    }
    // What is there must be this rank's damaged data, not another rank's
    // intact files or a file rewritten after the encode.
    let indices: Vec<usize> = damaged.iter().map(|d| d.0).collect();
    if let Err(e) = check_before_rebuild(&h, me, root, &indices) {
        if spec.op == Operation::Rebuild {
            mine.findings.push(format!("{who}: refused: {e}"));
            mine.status.error = true;
        } else {
            mine.findings.push(format!("{who}: {e}"));
        }
    }
    let want = red_dir.join(file_name(&spec.prefix, h.set_id, me));
    let mut usable = None;
    let mut payload = Vec::new();
    match found.iter().find(|(s, m, _, _)| *s == h.set_id && *m == me) {
        None => mine.findings.push(format!(
            "{who}: {}: redundancy file missing",
            want.display()
        )),
        Some((_, _, path, Err(e))) => mine.findings.push(format!(
            "{who}: {}: redundancy file damaged: {e}",
            path.display()
        )),
        Some((_, _, path, Ok(parsed))) => match check_redundancy_to(path, parsed, me, &h, depth) {
            Ok(at) => {
                usable = Some((path.clone(), at));
                payload = parsed.header.payload.clone();
            }
            Err(e) => mine
                .findings
                .push(format!("{who}: {}: {e}", path.display())),
        },
    }
    mine.status.lost_data = !damaged.is_empty();
    mine.status.lost_red = usable.is_none();
    mine.set = Some(MySet {
        header: h,
        me,
        damaged: damaged.iter().map(|d| d.0).collect(),
        usable,
        payload,
        deferred: depth == Depth::Quick,
    });
    Ok((mine, refs))
}

/// The CRC32 checks a quick [`assess_mine`] left out, for this rank's
/// intact-looking files and usable redundancy payload: findings, damage
/// and status as a full check would have given them.
fn deepen(mine: &mut Mine, spec: &JobSpec, root: &Path, rank: usize) {
    let Some(set) = mine.set.as_mut().filter(|s| s.deferred) else {
        return;
    };
    set.deferred = false;
    let (h, me) = (&set.header, set.me);
    let who = format!("rank {rank} (set {}, member {me})", h.set_id);
    let mut newly = Vec::new();
    match check_files_to(root, &h.members[me], Depth::Full) {
        Ok(damaged) => {
            for (i, full, why) in damaged {
                if !set.damaged.contains(&i) {
                    mine.findings
                        .push(format!("{who}: {}: {why}", full.display()));
                    newly.push(i);
                }
            }
        }
        Err(e) => {
            mine.findings.push(format!("{who}: refused: {e}"));
            mine.status.error = true;
        }
    }
    if !newly.is_empty() {
        if let Err(e) = check_before_rebuild(h, me, root, &newly) {
            let refused = spec.op == Operation::Rebuild;
            mine.findings.push(if refused {
                format!("{who}: refused: {e}")
            } else {
                format!("{who}: {e}")
            });
            mine.status.error |= refused;
        }
        set.damaged.extend(newly);
        set.damaged.sort_unstable();
    }
    if let Some((path, at)) = set.usable.clone() {
        let mut own = h.clone();
        own.payload = set.payload.clone();
        let parsed = Parsed {
            header: own,
            payload_at: at,
            copy_a_error: None,
        };
        if let Err(e) = check_payload(&path, &parsed) {
            mine.findings
                .push(format!("{who}: {}: {e}", path.display()));
            set.usable = None;
            set.payload.clear();
        }
    }
    mine.status.lost_data = !set.damaged.is_empty();
    mine.status.lost_red = set.usable.is_none();
}

/// The damage of each set, from every rank's status, and the verdict.
fn verdicts(
    refs: &BTreeMap<u32, Header>,
    statuses: &[Status],
    lines: &mut Vec<String>,
) -> (BTreeMap<u32, (Damage, Verdict)>, Verdict) {
    let mut worst = Verdict::Healthy;
    let mut out = BTreeMap::new();
    // A rank no header names said why; nothing can rebuild it.
    if statuses.iter().any(|s| s.set == u32::MAX && !s.error) {
        worst = Verdict::Unrecoverable;
    }
    if let Some(h) = refs.values().next() {
        for s in 0..h.set_count {
            if !refs.contains_key(&s) {
                lines.push(format!(
                    "set {s}: no redundancy file survives (every member lost?)"
                ));
                worst = Verdict::Unrecoverable;
            }
        }
    } else {
        lines.push("no readable redundancy file in any rank's root".into());
        worst = Verdict::Unrecoverable;
    }
    for (&id, h) in refs {
        let p = h.members.len();
        let mut d = Damage {
            lost_data: vec![true; p],
            lost_red: vec![true; p],
        };
        for (m, meta) in h.members.iter().enumerate() {
            let st = statuses.get(meta.logical_rank as usize);
            if let Some(st) = st.filter(|st| st.set == id && st.member as usize == m) {
                d.lost_data[m] = st.lost_data;
                d.lost_red[m] = st.lost_red;
            }
        }
        let damaged = d.lost_data.iter().chain(&d.lost_red).any(|&x| x);
        let verdict = if !damaged {
            Verdict::Healthy
        } else {
            match recoverable(h, &d.lost_data, &d.lost_red) {
                Ok(()) => Verdict::Repairable,
                Err(why) => {
                    lines.push(format!("set {id}: {why}"));
                    Verdict::Unrecoverable
                }
            }
        };
        lines.push(format!("set {id}: {} {verdict:?}", h.scheme));
        worst = worst.max(verdict);
        out.insert(id, (d, verdict));
    }
    (out, worst)
}

fn check(
    comm: &OwnComm,
    spec: &JobSpec,
    root: Result<PathBuf, String>,
    red_dir: &Path,
    rank: usize,
    size: usize,
) -> Result<Report, String> {
    // A rebuild reads each byte once: it checks the CRC32s of what it
    // reads as it reads it. Verify checks everything first.
    let depth = match spec.op {
        Operation::Rebuild => Depth::Quick,
        _ => Depth::Full,
    };
    check_to(comm, spec, &root, red_dir, rank, size, depth, Vec::new())
}

/// [`check`] after an assessment to `depth`; `earlier` are report lines
/// of a previous round (rank 0).
#[allow(clippy::too_many_arguments)]
fn check_to(
    comm: &OwnComm,
    spec: &JobSpec,
    root: &Result<PathBuf, String>,
    red_dir: &Path,
    rank: usize,
    size: usize,
    depth: Depth,
    earlier: Vec<String>,
) -> Result<Report, String> {
    let (mut mine, refs) = assess_mine(comm, spec, root, red_dir, rank, size, depth)?;
    let mut statuses: Vec<Status> = allgather_bytes(comm.0, &mine.status.encode())?
        .iter()
        .map(|b| Status::decode(b))
        .collect();
    if depth == Depth::Quick && !statuses.iter().any(|s| s.error) {
        // Damage that only CRC32s show: the ranks of sets that look
        // healthy check theirs now (their only read), and so does every
        // rank of a job beyond repair (for the report). Damaged sets'
        // ranks check as their rebuild reads.
        let (quick, worst) = verdicts(&refs, &statuses, &mut Vec::new());
        let looks_healthy = mine
            .set
            .as_ref()
            .and_then(|s| quick.get(&s.header.set_id))
            .is_none_or(|s| s.1 == Verdict::Healthy);
        if let (true, Ok(root)) = (looks_healthy || worst == Verdict::Unrecoverable, root) {
            deepen(&mut mine, spec, root, rank);
        }
        statuses = allgather_bytes(comm.0, &mine.status.encode())?
            .iter()
            .map(|b| Status::decode(b))
            .collect();
    }
    let mut lines = earlier;
    lines.extend(gather_lines(comm, rank, &mine.findings)?);
    dedup(&mut lines);
    if statuses.iter().any(|s| s.error) {
        lines.push(format!(
            "refused, nothing written: {} rank(s) could not check their files (see above)",
            statuses.iter().filter(|s| s.error).count()
        ));
        return Ok(Report {
            code: EXIT_ERROR,
            lines: only_on_zero(rank, lines),
        });
    }
    let (sets, mut verdict) = verdicts(&refs, &statuses, &mut lines);
    let mine_set = mine.set.as_ref();
    let set_of =
        |h: &Header| -> Vec<i32> { h.members.iter().map(|m| m.logical_rank as i32).collect() };
    if spec.op == Operation::Verify {
        // Deep check: recompute the parity of healthy XOR / RS sets.
        let mut bad = Vec::new();
        if let Some(MySet {
            header: h,
            usable: Some((path, at)),
            ..
        }) = mine_set
        {
            let healthy = sets.get(&h.set_id).is_some_and(|s| s.1 == Verdict::Healthy);
            if healthy && matches!(h.scheme, Scheme::Xor | Scheme::Rs { .. }) {
                let me = mine.status.member as usize;
                let mut t = MpiTransport::new(comm.0, set_of(h), me);
                let root = root.as_ref().map_err(String::clone)?;
                bad = compare_parity(h, me, root, path, *at, spec.piece, &mut t)
                    .unwrap_or_else(|e| vec![format!("recomputing the parity: {e}")]);
                t.flush()?;
                let who = format!("rank {rank} (set {}, member {me})", h.set_id);
                for b in &mut bad {
                    *b = format!("{who}: {b}");
                }
            }
        }
        let any_bad = !all_agree(comm.0, bad.is_empty())?;
        lines.extend(gather_lines(comm, rank, &bad)?);
        if any_bad {
            // The files match their CRC32s, so the stored parity is what is
            // wrong; rebuild repairs only what the CRC32s show.
            lines.push(
                "parity that differs from the data is not rewritten by `redio parity rebuild`: \
                 protect the files again (`redio parity encode` or the job)"
                    .into(),
            );
            verdict = verdict.max(Verdict::Repairable);
        }
        lines.push(format!(
            "verdict: {}",
            match verdict {
                Verdict::Healthy => "healthy",
                Verdict::Repairable => "repairable (run `redio parity rebuild`)",
                Verdict::Unrecoverable => "unrecoverable",
            }
        ));
        return Ok(Report {
            code: verdict.exit_code(),
            lines: only_on_zero(rank, lines),
        });
    }
    if verdict == Verdict::Unrecoverable {
        lines.push(
            "redio parity rebuild: refused, nothing written: more damage than the scheme \
             tolerates"
                .into(),
        );
        return Ok(Report {
            code: Verdict::Unrecoverable.exit_code(),
            lines: only_on_zero(rank, lines),
        });
    }
    let mut rebuilt = repair::Rebuilt::default();
    if let (
        Some(MySet {
            header: h,
            damaged,
            usable,
            payload,
            deferred,
            ..
        }),
        Ok(root),
    ) = (mine_set, root)
    {
        if let Some((d, Verdict::Repairable)) = sets.get(&h.set_id) {
            let me = mine.status.member as usize;
            let local = Local {
                header: h,
                me,
                root,
                redundancy_dir: red_dir,
                damaged,
                redundancy: usable.clone(),
                payload,
                deferred: *deferred,
                prefix: &spec.prefix,
                piece: spec.piece,
                // Lines on stderr, through the launcher; only the members
                // that rebuild have something to report.
                progress: redio_parity::progress::interval(),
            };
            let mut t = MpiTransport::new(comm.0, set_of(h), me);
            rebuilt = repair::rebuild_member(&local, d, &mut t);
            t.flush()?;
        }
    }
    if !all_agree(comm.0, rebuilt.survivor_damage.is_empty())? {
        // A survivor's CRC32 failed while it served: the rebuild used
        // damaged data. Nothing is renamed (the temporary files go with
        // `rebuilt`); every rank checks everything and starts over.
        let notes: Vec<String> = rebuilt
            .survivor_damage
            .iter()
            .map(|d| {
                format!(
                    "rank {rank}: {d}: found while rebuilding; nothing renamed, every file \
                     checked again"
                )
            })
            .collect();
        drop(rebuilt);
        let notes = gather_lines(comm, rank, &notes)?;
        return check_to(comm, spec, root, red_dir, rank, size, Depth::Full, notes);
    }
    let who = format!("rank {rank}");
    let mut mine_lines: Vec<String> = rebuilt
        .errors
        .iter()
        .map(|e| format!("{who}: rebuild failed: {e}"))
        .collect();
    let good = all_agree(comm.0, rebuilt.errors.is_empty())?;
    let mut renamed = true;
    if good {
        let t = rebuilt.traffic;
        if t.sent + t.received > 0 {
            mine_lines.push(format!(
                "{who}: sent {} received {} read {} bytes",
                t.sent, t.received, t.read
            ));
        }
        for f in rebuilt.files {
            let dest = f.dest().display().to_string();
            match f.commit() {
                Ok(()) => mine_lines.push(format!("{who}: rebuilt {dest}")),
                Err(e) => {
                    renamed = false;
                    mine_lines.push(format!("{who}: {dest}: {e}"));
                }
            }
        }
    }
    let all_renamed = all_agree(comm.0, renamed)?;
    lines.extend(gather_lines(comm, rank, &mine_lines)?);
    let code = if !good {
        lines.push("redio parity rebuild: failed, nothing renamed into place".into());
        EXIT_ERROR
    } else if !all_renamed {
        lines.push("redio parity rebuild: a rename failed (see above)".into());
        EXIT_ERROR
    } else {
        0
    };
    Ok(Report {
        code,
        lines: only_on_zero(rank, lines),
    })
}

fn only_on_zero(rank: usize, lines: Vec<String>) -> Vec<String> {
    if rank == 0 {
        lines
    } else {
        Vec::new()
    }
}

/// Drops repeated lines (ranks sharing one directory see the same files).
fn dedup(lines: &mut Vec<String>) {
    let mut seen = std::collections::BTreeSet::new();
    lines.retain(|l| seen.insert(l.clone()));
}

/// Recomputes this member's parity chunks with the ring engine and lists
/// every piece that differs from its redundancy file. A local read error
/// is listed too, but the member still takes part with zeros: leaving the
/// ring would leave its neighbours waiting.
fn compare_parity(
    h: &Header,
    me: usize,
    root: &Path,
    path: &Path,
    payload_at: u64,
    piece: usize,
    t: &mut MpiTransport,
) -> Result<Vec<String>, String> {
    let code = StripeCode::new(h.scheme, h.members.len()).map_err(|e| e.to_string())?;
    let chunk = h.chunk_size;
    let mut bad = Vec::new();
    let reader = redio_parity::logical::logical_reader(root, &h.members[me], &[])
        .map_err(|e| bad.push(format!("reading the data: {e}")))
        .ok();
    let stored = open_redundancy(path)
        .map_err(|e| bad.push(e.to_string()))
        .ok();
    let mut read_failed = None;
    let mut got = AlignedBuf::new();
    let mut read = |d: usize, off: u64, buf: &mut [u8]| {
        buf.fill(0);
        if let Some(Err(e)) = reader
            .as_ref()
            .map(|r| r.read_at(d as u64 * chunk + off, buf))
        {
            read_failed.get_or_insert(format!("reading the data: {e}"));
        }
        Ok(())
    };
    let mut write = |j: usize, off: u64, want: &[u8]| {
        got.resize_for_overwrite(want.len());
        let at = payload_at + j as u64 * chunk + off;
        let same = stored
            .as_ref()
            .is_some_and(|f| f.read_exact_at(&mut got, at).is_ok() && got == *want);
        if !same {
            bad.push(format!(
                "{}: parity chunk {j} does not match the data at bytes {off}..{}",
                path.display(),
                off + want.len() as u64
            ));
        }
        Ok(())
    };
    ring::encode(&code, best(), t, chunk, piece, &mut read, &mut write)?;
    bad.extend(read_failed);
    Ok(bad)
}
