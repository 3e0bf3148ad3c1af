//! The collective rebuild of one set, run by every member of the set at
//! once over a [`Transport`] (MPI in the preload, memory in the tests).
//!
//! Every member derives the same list of [`Step`]s from the set's header
//! and the damage all members reported: first each damaged member's data
//! (XOR / RS rows it holds a data chunk of; a PARTNER copy), then each lost
//! redundancy file (its parity rows; the copies it holds), so that phase-2
//! sources already have their own rebuilt data. A step has one rebuilder
//! (the damaged member itself, possibly on a new node) and a few sources.
//!
//! Receiver-driven and bounded: the rebuilder asks each source for one
//! piece at a time (a 17-byte request: kind, offset, length), keeping at
//! most two requests outstanding per source, so a source never holds more
//! than two pieces in flight and the rebuilder `(sources + 1) × 2` pieces.
//! A local failure (an unreadable file) does not break the exchange: the
//! member answers with zeros, records the error, and its caller refuses to
//! commit on every rank.

use crate::encode::header_for;
use crate::files::{self, AtomicFile};
use crate::format::{self, Header};
use crate::gf::kernel::best;
use crate::logical::{logical_reader, write_logical, LogicalReader};
use crate::partner;
use crate::progress::Progress;
use crate::redundancy_file::{finish_file, open_redundancy};
use crate::ring::{Traffic, Transport};
use crate::scheme::Scheme;
use crate::stripe::{PieceBuffers, RowPlan, StripeCode};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// Which members of the set lost what (the same on every member).
#[derive(Debug, Clone)]
pub struct Damage {
    /// Member's data files damaged (any one of them).
    pub lost_data: Vec<bool>,
    /// Member's redundancy file missing or damaged.
    pub lost_red: Vec<bool>,
}

/// This member's view of its set.
pub struct Local<'a> {
    /// The set's reference header (any good member's).
    pub header: &'a Header,
    /// This member's index in the set.
    pub me: usize,
    /// This member's root directory.
    pub root: &'a Path,
    /// Where this member's redundancy file goes (its root, unless the run
    /// kept redundancy files apart).
    pub redundancy_dir: &'a Path,
    /// Indices of this member's damaged files.
    pub damaged: &'a [usize],
    /// This member's usable redundancy file and its payload offset.
    pub redundancy: Option<(PathBuf, u64)>,
    /// Redundancy file name prefix.
    pub prefix: &'a str,
    /// Piece size in bytes.
    pub piece: usize,
    /// Print a progress line of what this member rebuilds at most this
    /// often (batch jobs); None: silent.
    pub progress: Option<std::time::Duration>,
}

/// What one step rebuilds at its rebuilder.
#[derive(Debug, Clone, Copy)]
enum Output {
    /// XOR / RS: the rebuilder's data chunk `chunk`, in row `row`.
    Data { row: usize, chunk: usize },
    /// XOR / RS: the rebuilder's parity chunk `j`.
    Parity { j: usize },
    /// PARTNER: the rebuilder's data, from copy `slot` of `holder`.
    Copy { holder: usize, slot: usize },
    /// PARTNER: copy `slot` of the rebuilder's redundancy file, the data of `of`.
    Hold { slot: usize, of: usize },
}

/// One step: who rebuilds what, over how many bytes.
#[derive(Debug, Clone, Copy)]
struct Step {
    to: usize,
    out: Output,
    len: u64,
}

/// A piece a source is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Request {
    /// Bytes of the source's logical file.
    Data { offset: u64, len: u64 },
    /// Bytes of the source's redundancy payload.
    Payload { offset: u64, len: u64 },
}

impl Request {
    fn encode(self) -> [u8; 17] {
        let (kind, offset, len) = match self {
            Request::Data { offset, len } => (0u8, offset, len),
            Request::Payload { offset, len } => (1u8, offset, len),
        };
        let mut b = [0u8; 17];
        b[0] = kind;
        b[1..9].copy_from_slice(&offset.to_le_bytes());
        b[9..].copy_from_slice(&len.to_le_bytes());
        b
    }

    fn decode(b: &[u8]) -> Result<Self, String> {
        if b.len() != 17 {
            return Err(format!("a rebuild request of {} bytes", b.len()));
        }
        let word =
            |r: std::ops::Range<usize>| u64::from_le_bytes(b[r].try_into().unwrap_or([0; 8]));
        let (offset, len) = (word(1..9), word(9..17));
        match b[0] {
            0 => Ok(Request::Data { offset, len }),
            1 => Ok(Request::Payload { offset, len }),
            k => Err(format!("a rebuild request of unknown kind {k}")),
        }
    }

    fn len(self) -> u64 {
        match self {
            Request::Data { len, .. } | Request::Payload { len, .. } => len,
        }
    }
}

/// The plan of a set: the code (XOR / RS), each row's plan, and the steps.
struct Plan {
    code: Option<StripeCode>,
    rows: Vec<Option<RowPlan>>,
    steps: Vec<Step>,
    /// Index of the first phase-2 step.
    phase2: usize,
}

fn plan(h: &Header, d: &Damage) -> Result<Plan, String> {
    let p = h.members.len();
    let lost = |v: &[bool]| (0..p).filter(|&m| v[m]).collect::<Vec<_>>();
    let mut steps = Vec::new();
    match h.scheme {
        Scheme::Xor | Scheme::Rs { .. } => {
            let code = StripeCode::new(h.scheme, p).map_err(|e| e.to_string())?;
            let rows = (0..p)
                .map(|r| {
                    code.plan_row(r, &d.lost_data, &d.lost_red)
                        .map(Some)
                        .map_err(|e| e.to_string())
                })
                .collect::<Result<Vec<_>, _>>()?;
            for l in lost(&d.lost_data) {
                for chunk in 0..code.data_chunks() {
                    let row = code.data_row(l, chunk);
                    let out = Output::Data { row, chunk };
                    steps.push(Step {
                        to: l,
                        out,
                        len: h.chunk_size,
                    });
                }
            }
            let phase2 = steps.len();
            for l in lost(&d.lost_red) {
                for j in 0..code.parity_count() {
                    let out = Output::Parity { j };
                    steps.push(Step {
                        to: l,
                        out,
                        len: h.chunk_size,
                    });
                }
            }
            Ok(Plan {
                code: Some(code),
                rows,
                steps,
                phase2,
            })
        }
        Scheme::Partner { copies } => {
            let c = copies as usize;
            for l in lost(&d.lost_data) {
                let (holder, slot) = partner::holders_of(l, p, c)
                    .into_iter()
                    .find(|&x| !d.lost_red[x])
                    .and_then(|x| partner::slot_of(l, x, p, c).map(|s| (x, s)))
                    .ok_or_else(|| format!("member {l} lost its files and every copy of them"))?;
                let len = h.members[l].logical_len();
                steps.push(Step {
                    to: l,
                    out: Output::Copy { holder, slot },
                    len,
                });
            }
            let phase2 = steps.len();
            for l in lost(&d.lost_red) {
                for (slot, of) in partner::stored_by(l, p, c).into_iter().enumerate() {
                    let len = h.members[of].logical_len();
                    steps.push(Step {
                        to: l,
                        out: Output::Hold { slot, of },
                        len,
                    });
                }
            }
            Ok(Plan {
                code: None,
                rows: Vec::new(),
                steps,
                phase2,
            })
        }
        Scheme::Single => Err("SINGLE keeps no redundancy data: nothing can be rebuilt".into()),
    }
}

/// The requests for the data pieces of row `row` at `off` within the chunk,
/// one per data member of the row.
fn data_requests(
    code: &StripeCode,
    row: usize,
    chunk: u64,
    off: u64,
    len: u64,
) -> impl Iterator<Item = (usize, Request)> + '_ {
    code.data_members(row).into_iter().filter_map(move |i| {
        let offset = code.data_chunk(i, row)? as u64 * chunk + off;
        Some((i, Request::Data { offset, len }))
    })
}

impl Plan {
    /// The sources of a step's piece at `off`, `len` bytes, in a fixed order.
    fn sources(&self, h: &Header, s: &Step, off: u64, len: u64) -> Vec<(usize, Request)> {
        let chunk = h.chunk_size;
        match (s.out, &self.code) {
            (Output::Data { row, .. }, Some(code)) => {
                let Some(rp) = &self.rows[row] else {
                    return Vec::new();
                };
                let mut v: Vec<(usize, Request)> = data_requests(code, row, chunk, off, len)
                    .filter(|(i, _)| !rp.lost_data.contains(i))
                    .collect();
                for &j in &rp.equations {
                    let holder = code.parity_holder(row, j);
                    let offset = j as u64 * chunk + off;
                    v.push((holder, Request::Payload { offset, len }));
                }
                v
            }
            (Output::Parity { j }, Some(code)) => {
                let row = code.parity_row(s.to, j);
                data_requests(code, row, chunk, off, len).collect()
            }
            (Output::Copy { holder, slot }, _) => {
                let at = header_for(h, holder).payload_offset(slot);
                vec![(
                    holder,
                    Request::Payload {
                        offset: at + off,
                        len,
                    },
                )]
            }
            (Output::Hold { of, .. }, _) => vec![(of, Request::Data { offset: off, len })],
            _ => Vec::new(),
        }
    }
}

/// What this member produced: files to commit once every rank agrees, the
/// errors it met (the step must then be refused everywhere), and traffic.
#[derive(Default)]
pub struct Rebuilt {
    /// Complete, checked, fsynced files, not yet renamed into place.
    pub files: Vec<AtomicFile>,
    /// Local errors (the exchange went on with zeros).
    pub errors: Vec<String>,
    /// Bytes sent, received and read by this member.
    pub traffic: Traffic,
}

/// This member's state while the steps run.
struct Member<'a> {
    local: &'a Local<'a>,
    /// Temporary files of this member's damaged data files, by file index.
    data_out: Vec<Option<AtomicFile>>,
    /// This member's new redundancy file, its header and payload CRCs.
    red_out: Option<(AtomicFile, Header, u64, Vec<crc32fast::Hasher>)>,
    reader: Option<LogicalReader>,
    payload: Option<File>,
    out: Rebuilt,
}

impl Member<'_> {
    fn fail(&mut self, e: impl std::fmt::Display) {
        self.out.errors.push(e.to_string());
    }

    /// Answers a request into `buf` (zeros after a local error).
    fn serve(&mut self, req: Request, buf: &mut Vec<u8>) {
        buf.clear();
        buf.resize(req.len() as usize, 0);
        let l = self.local;
        let res = match req {
            Request::Data { offset, .. } => {
                if self.reader.is_none() {
                    match logical_reader(l.root, &l.header.members[l.me], &self.data_out) {
                        Ok(r) => self.reader = Some(r),
                        Err(e) => return self.fail(e),
                    }
                }
                self.reader.as_ref().map(|r| r.read_at(offset, buf))
            }
            Request::Payload { offset, .. } => {
                if self.payload.is_none() {
                    let Some((path, _)) = &l.redundancy else {
                        return self.fail("asked for a redundancy file it does not have");
                    };
                    match open_redundancy(path) {
                        Ok(f) => self.payload = Some(f),
                        Err(e) => return self.fail(e),
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
    fn open_outputs(&mut self, d: &Damage) {
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
    fn seal_data(&mut self) {
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

/// Runs this member's part of the collective rebuild of its set. Every
/// member of the set calls it with the same `damage`; `t` connects the
/// set's members (member i of the transport is member i of the set).
pub fn rebuild_member(local: &Local<'_>, damage: &Damage, t: &mut dyn Transport) -> Rebuilt {
    let h = local.header;
    let mut m = Member {
        local,
        data_out: Vec::new(),
        red_out: None,
        reader: None,
        payload: None,
        out: Rebuilt::default(),
    };
    let plan = match plan(h, damage) {
        Ok(p) => p,
        Err(e) => {
            m.fail(e);
            return m.out;
        }
    };
    m.open_outputs(damage);
    let mine: u64 = plan
        .steps
        .iter()
        .filter(|s| s.to == local.me)
        .map(|s| s.len)
        .sum();
    let mut progress = Progress::new(
        format!("set {}, member {}: rebuilding", h.set_id, local.me),
        mine,
        local.progress.filter(|_| mine > 0),
    );
    let piece = local.piece.max(1) as u64;
    let mut bufs = PieceBuffers::default();
    let (mut got, mut acc, mut answer) = (Vec::<Vec<u8>>::new(), Vec::new(), Vec::new());
    for (index, step) in plan.steps.iter().enumerate() {
        if index == plan.phase2 && damage.lost_data[local.me] {
            m.seal_data();
        }
        let pieces: Vec<(u64, u64)> = (0..step.len.div_ceil(piece))
            .map(|i| (i * piece, piece.min(step.len - i * piece)))
            .collect();
        if step.to != local.me {
            // Source (or idle): answer the rebuilder's requests, in order.
            for &(off, len) in &pieces {
                for (src, want) in plan.sources(h, step, off, len) {
                    if src != local.me {
                        continue;
                    }
                    let mut req = Vec::new();
                    if let Err(e) = t.recv(step.to, &mut req) {
                        m.fail(e);
                        return m.out;
                    }
                    let asked = Request::decode(&req).unwrap_or(want);
                    m.serve(asked, &mut answer);
                    if let Err(e) = t.send(step.to, &answer) {
                        m.fail(e);
                        return m.out;
                    }
                    m.out.traffic.sent += answer.len() as u64;
                }
            }
            continue;
        }
        // Rebuilder: keep two pieces requested ahead.
        let ask = |t: &mut dyn Transport, i: usize| -> Result<(), String> {
            let (off, len) = pieces[i];
            for (src, req) in plan.sources(h, step, off, len) {
                t.send(src, &req.encode())?;
            }
            Ok(())
        };
        if !pieces.is_empty() {
            if let Err(e) = ask(t, 0) {
                m.fail(e);
                return m.out;
            }
        }
        for (i, &(off, len)) in pieces.iter().enumerate() {
            if i + 1 < pieces.len() {
                if let Err(e) = ask(t, i + 1) {
                    m.fail(e);
                    return m.out;
                }
            }
            let srcs = plan.sources(h, step, off, len);
            got.resize_with(srcs.len().max(got.len()), Vec::new);
            for (n, &(src, _)) in srcs.iter().enumerate() {
                if let Err(e) = t.recv(src, &mut got[n]) {
                    m.fail(e);
                    return m.out;
                }
                m.out.traffic.received += got[n].len() as u64;
            }
            let n = len as usize;
            let result = combine(
                &mut m, &plan, step, &srcs, &got, off, n, &mut bufs, &mut acc,
            );
            if let Err(e) = result {
                m.fail(e);
            }
            progress.add(len);
        }
    }
    if plan.phase2 == plan.steps.len() && damage.lost_data[local.me] {
        m.seal_data();
    }
    if let Some((out, mut header, _, hashers)) = m.red_out.take() {
        let crcs = hashers.into_iter().map(|hs| hs.finalize());
        match finish_file(&out, &mut header, crcs) {
            Ok(()) => m.out.files.push(out),
            Err(e) => m.fail(format!("{}: {e}", out.dest().display())),
        }
    }
    let data: Vec<AtomicFile> = m.data_out.drain(..).flatten().collect();
    m.out.files.extend(data);
    m.out
}

/// Combines the pieces a rebuilder received for one step and writes the
/// result into its temporary files.
#[allow(clippy::too_many_arguments)]
fn combine(
    m: &mut Member<'_>,
    plan: &Plan,
    step: &Step,
    srcs: &[(usize, Request)],
    got: &[Vec<u8>],
    off: u64,
    len: usize,
    bufs: &mut PieceBuffers,
    acc: &mut Vec<u8>,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assess::assess;
    use crate::encode::{encode_job, MemberInput};
    use crate::options::Options;
    use crate::ring::memory_transports;
    use std::collections::BTreeMap;

    /// Every file under `dirs` with its bytes.
    fn snapshot(dirs: &[PathBuf]) -> BTreeMap<PathBuf, Vec<u8>> {
        fn walk(d: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
            for e in std::fs::read_dir(d).into_iter().flatten() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    walk(&p, out);
                } else {
                    out.insert(p.clone(), std::fs::read(&p).unwrap());
                }
            }
        }
        let mut out = BTreeMap::new();
        for d in dirs {
            walk(d, &mut out);
        }
        out
    }

    /// A protected job of `p` ranks in one set under a fresh directory.
    fn job(name: &str, scheme: Scheme, p: usize) -> Vec<PathBuf> {
        let base = std::env::temp_dir().join(format!("redio-repair-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let mut inputs = Vec::new();
        for r in 0..p {
            let root = base.join(format!("rank{r}"));
            std::fs::create_dir_all(root.join("b")).unwrap();
            let a: Vec<u8> = (0..3000 + 977 * r)
                .map(|i| (i * 31 + r * 7) as u8)
                .collect();
            std::fs::write(root.join("a.dat"), a).unwrap();
            // Rank 0's second file is empty: a logical file may end anywhere.
            std::fs::write(root.join("b/c.dat"), vec![r as u8 + 1; r * 100]).unwrap();
            inputs.push(MemberInput {
                root,
                files: vec!["a.dat".into(), "b/c.dat".into()],
                world_rank: r as u32,
                logical_rank: r as u32,
                failure_group: format!("g{r}"),
                host: "h".into(),
            });
        }
        let opts = Options {
            piece: 700,
            ..Options::default()
        };
        encode_job(scheme, p, &inputs, &opts).unwrap();
        inputs.into_iter().map(|i| i.root).collect()
    }

    /// Runs every member's part on its own thread and commits the results.
    fn rebuild_all(dirs: &[PathBuf], piece: usize) {
        let a = assess(dirs, &Options::default()).unwrap();
        let s = &a.sets[0];
        let h = s.header.clone().unwrap();
        let damage = Damage {
            lost_data: s.damaged_files.iter().map(|d| !d.is_empty()).collect(),
            lost_red: s.redundancy.iter().map(Option::is_none).collect(),
        };
        let results: Vec<Rebuilt> = std::thread::scope(|scope| {
            let handles: Vec<_> = memory_transports(dirs.len())
                .into_iter()
                .map(|mut t| {
                    let (h, damage, s) = (&h, &damage, s);
                    scope.spawn(move || {
                        let me = t.member();
                        let local = Local {
                            header: h,
                            me,
                            root: &s.roots[me],
                            redundancy_dir: &s.roots[me],
                            damaged: &s.damaged_files[me],
                            redundancy: s.redundancy[me].clone(),
                            prefix: "redio-parity",
                            piece,
                            progress: None,
                        };
                        rebuild_member(&local, damage, &mut t)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for r in results {
            assert!(r.errors.is_empty(), "{:?}", r.errors);
            for f in r.files {
                f.commit().unwrap();
            }
        }
    }

    #[test]
    fn every_tolerated_loss_is_rebuilt_byte_for_byte() {
        for (name, scheme, p) in [
            ("xor", Scheme::Xor, 4),
            ("rs", Scheme::Rs { k: 2 }, 5),
            ("partner", Scheme::Partner { copies: 1 }, 3),
            ("partner2", Scheme::Partner { copies: 2 }, 4),
        ] {
            let k = scheme.tolerance();
            for lost in 0u32..(1 << p) {
                if lost == 0 || lost.count_ones() as usize > k {
                    continue;
                }
                let dirs = job(name, scheme, p);
                let before = snapshot(&dirs);
                for (m, d) in dirs.iter().enumerate() {
                    if lost & (1 << m) != 0 {
                        std::fs::remove_dir_all(d).unwrap();
                    }
                }
                rebuild_all(&dirs, 500);
                assert_eq!(snapshot(&dirs), before, "{name}: lost {lost:b}");
                let _ = std::fs::remove_dir_all(dirs[0].parent().unwrap());
            }
        }
    }

    #[test]
    fn a_flipped_byte_and_a_damaged_redundancy_file_are_repaired() {
        let dirs = job("flip", Scheme::Rs { k: 2 }, 4);
        let before = snapshot(&dirs);
        let a = dirs[1].join("a.dat");
        let mut bytes = std::fs::read(&a).unwrap();
        bytes[2000] ^= 1;
        std::fs::write(&a, bytes).unwrap();
        let rdp = dirs[3].join("redio-parity.s0.m3.rdp");
        let mut bytes = std::fs::read(&rdp).unwrap();
        let n = bytes.len();
        bytes[n / 2] ^= 1;
        std::fs::write(&rdp, bytes).unwrap();
        rebuild_all(&dirs, 333);
        assert_eq!(snapshot(&dirs), before);
        let _ = std::fs::remove_dir_all(dirs[0].parent().unwrap());
    }
}
