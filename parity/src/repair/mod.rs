//! The collective rebuild of one set, run by every member of the set at
//! once over a [`Transport`] (MPI in the preload, memory in the tests).
//!
//! Every member derives the same list of steps (`plan`) from the set's header
//! and the damage all members reported: each damaged member's data (XOR /
//! RS rows it holds a data chunk of; a PARTNER copy) and each lost
//! redundancy file (its parity rows; the copies it holds), all from
//! survivors: parity of a row with lost data is computed by solving the
//! row first, a copy of a lost member comes from its surviving copy. A
//! step has one rebuilder (the damaged member itself, possibly on a new
//! node) and a few sources.
//!
//! Receiver-driven and bounded: the rebuilder asks each source for one
//! piece at a time (a 17-byte request: kind, offset, length), keeping at
//! most two requests outstanding per source, so a source never holds more
//! than two pieces in flight and the rebuilder `(sources + 1) × 2` pieces.
//! A local failure (an unreadable file) does not break the exchange: the
//! member answers with zeros, records the error, and its caller refuses to
//! commit on every rank.
//!
//! Several damaged members rebuild at once (issue 20): all members walk the
//! same positions (`Plan::positions`: piece by piece across all steps), a
//! source serving each rebuilder in turn. A member may rebuild and serve
//! (RS: a member that lost only its data still serves its parity), so its
//! messages to a peer mix requests and answers; a request asked ahead is
//! held back until every answer due earlier in the walk to the same peer
//! has gone, which keeps each pair's messages in the walk's order.
//!
//! Each byte is read once: a member whose files were not CRC-checked yet
//! (`Local::deferred`) checks them from the reads that answer requests and
//! reads only the rest at the end ([`crate::survivors`]); a damaged one is
//! reported in [`Rebuilt::survivor_damage`], and the caller renames
//! nothing. What a rebuilder writes is checked against the header as it is
//! written.

use crate::files::{AtomicFile, MadeDirs};
use crate::format::{ChunkMeta, Header};
use crate::progress::Progress;
use crate::redundancy_file::finish_file;
use crate::ring::{Traffic, Transport};
use crate::stripe::PieceBuffers;
use member::{combine, Member};
use plan::{plan, Position, Request};
use redio_aligned::{AlignedBuf, ByteBuf};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};

// The plan is the same on every member; the member side is this process's.
mod member;
mod plan;

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
    /// The payload chunks (length, CRC32) that redundancy file's own
    /// header records (empty without one).
    pub payload: &'a [ChunkMeta],
    /// This member's intact-looking files and payload were checked by
    /// existence, size and header only: check their CRC32s while serving
    /// (and read what is not served at the end).
    pub deferred: bool,
    /// Redundancy file name prefix.
    pub prefix: &'a str,
    /// Piece size in bytes.
    pub piece: usize,
    /// Print a progress line of what this member rebuilds at most this
    /// often (batch jobs); None: silent.
    pub progress: Option<std::time::Duration>,
}

/// What this member produced: files to commit once every rank agrees, the
/// errors it met (the step must then be refused everywhere), and traffic.
#[derive(Default)]
pub struct Rebuilt {
    /// Complete, checked, fsynced files, not yet renamed into place.
    pub files: Vec<AtomicFile>,
    /// Local errors (the exchange went on with zeros).
    pub errors: Vec<String>,
    /// This member's own files or payload whose CRC32 turned out wrong
    /// while it served (with [`Local::deferred`]): the rebuild used damaged
    /// data and must be refused, and the damage checked again in full.
    pub survivor_damage: Vec<String>,
    /// Bytes sent, received and read by this member.
    pub traffic: Traffic,
    /// Directories made for `files`: those left empty go when this is
    /// dropped (after `files`, so a discarded rebuild leaves none).
    made: MadeDirs,
}

/// Runs this member's part of the collective rebuild of its set. Every
/// member of the set calls it with the same `damage`; `t` connects the
/// set's members (member i of the transport is member i of the set).
pub fn rebuild_member<B: ByteBuf>(
    local: &Local<'_>,
    damage: &Damage,
    t: &mut dyn Transport<B>,
) -> Rebuilt {
    let h = local.header;
    let me = local.me;
    let mut m = Member {
        local,
        data_out: Vec::new(),
        red_out: None,
        reader: None,
        payload: None,
        checks: None,
        written: None,
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
        .filter(|s| s.to == me)
        .map(|s| s.len)
        .sum();
    let mut progress = Progress::new(
        format!("set {}, member {}: rebuilding", h.set_id, me),
        mine,
        local.progress.filter(|_| mine > 0),
    );
    let positions = plan.positions(local.piece.max(1) as u64);
    let own: Vec<usize> = (0..positions.len())
        .filter(|&i| plan.steps[positions[i].step].to == me)
        .collect();
    let mut asker = Asker::new(&plan, h, &positions, me);
    let mut bufs = PieceBuffers::default();
    // Received pieces are the transport's buffers; what this member reads
    // or sums is page-aligned.
    let (mut got, mut req, mut answer) = (Vec::<B>::new(), B::default(), B::default());
    let mut acc = AlignedBuf::new();
    // For each answer this member gives, in the walk's order: whether the
    // next one is the same request (two rebuilders of a row ask for the
    // same piece): that answer is sent and kept by the transport, to be
    // sent again unread (from the same buffer where the transport can);
    // every other is handed to the transport (no copy).
    let again = answered_again(&plan, h, &positions, me);
    let mut answers = 0;
    // The request whose answer the transport keeps.
    let mut kept: Option<Request> = None;
    // Two pieces requested ahead: the first now, each next one on arrival
    // at the one before.
    if let Some(&first) = own.first() {
        asker.queue(&plan, h, &positions, first);
    }
    let mut next_own = 1;
    for pos in &positions {
        let step = &plan.steps[pos.step];
        if step.to != me {
            // Source (or idle): answer the rebuilder's request, in order.
            for (src, want) in plan.sources(h, step, pos.off, pos.len) {
                if src != me {
                    continue;
                }
                if let Err(e) = t.recv(step.to, &mut req) {
                    m.fail(e);
                    return m.out;
                }
                let asked = Request::decode(&req).unwrap_or(want);
                m.out.traffic.sent += asked.len();
                let sent = if kept.take() == Some(asked) {
                    // The second rebuilder of the row: sent again, unread.
                    t.send_kept(step.to, std::mem::take(&mut answer))
                } else {
                    let read = m.serve(asked, &mut answer);
                    if read && again.get(answers).copied().unwrap_or(false) {
                        kept = Some(asked);
                        t.send_and_keep(step.to, std::mem::take(&mut answer))
                    } else {
                        t.send_owned(step.to, std::mem::take(&mut answer))
                    }
                };
                let sent = sent.map(|next| answer = next);
                answers += 1;
                if let Err(e) = sent {
                    m.fail(e);
                    return m.out;
                }
                asker.answered(step.to);
            }
            if let Err(e) = asker.flush(t) {
                m.fail(e);
                return m.out;
            }
            continue;
        }
        // Rebuilder.
        if let Some(&ahead) = own.get(next_own) {
            asker.queue(&plan, h, &positions, ahead);
        }
        next_own += 1;
        if let Err(e) = asker.flush(t) {
            m.fail(e);
            return m.out;
        }
        let srcs = plan.sources(h, step, pos.off, pos.len);
        got.resize_with(srcs.len().max(got.len()), B::default);
        for (n, &(src, _)) in srcs.iter().enumerate() {
            if let Err(e) = t.recv(src, &mut got[n]) {
                m.fail(e);
                return m.out;
            }
            m.out.traffic.received += got[n].len() as u64;
        }
        let n = pos.len as usize;
        let result = combine(
            &mut m, &plan, step, &srcs, &got, pos.off, n, &mut bufs, &mut acc,
        );
        if let Err(e) = result {
            m.fail(e);
        }
        progress.add(pos.len);
    }
    if damage.lost_data[me] {
        m.seal_data();
    }
    if let Some(checks) = m.checks.take() {
        let v = checks.finish(local.piece);
        m.out.traffic.read += v.read;
        m.out.survivor_damage = v.damaged;
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

/// For each answer member `me` gives, in the order of the walk, whether
/// the answer after it asks for the same bytes.
/// One byte per answer: the requests themselves are not kept.
fn answered_again(plan: &plan::Plan, h: &Header, positions: &[Position], me: usize) -> Vec<bool> {
    let mut again = Vec::new();
    let mut last: Option<Request> = None;
    let mine = positions
        .iter()
        .filter(|pos| plan.steps[pos.step].to != me)
        .flat_map(|pos| plan.sources(h, &plan.steps[pos.step], pos.off, pos.len))
        .filter(|&(src, _)| src == me);
    for (_, req) in mine {
        if let Some(prev) = last.replace(req) {
            again.push(prev == req);
        }
    }
    if last.is_some() {
        again.push(false);
    }
    again
}

/// The requests a rebuilder has yet to send, and when it may.
///
/// Messages from one member to another must go in the order the receiver
/// takes them, which is the order of the walk. A request asked ahead (for
/// a later position) may not overtake an answer this member owes the same
/// peer at an earlier position: it waits until that answer has gone.
struct Asker {
    /// For each peer, the positions where this member answers it, ascending.
    answers_to: Vec<Vec<usize>>,
    /// Answers sent to each peer so far.
    answered: Vec<usize>,
    /// Requests not sent yet: (position, source, request), in order.
    waiting: VecDeque<(usize, usize, Request)>,
}

impl Asker {
    fn new(plan: &plan::Plan, h: &Header, positions: &[Position], me: usize) -> Self {
        let p = h.members.len();
        let mut answers_to = vec![Vec::new(); p];
        for (i, pos) in positions.iter().enumerate() {
            let step = &plan.steps[pos.step];
            if step.to == me {
                continue;
            }
            for (src, _) in plan.sources(h, step, pos.off, pos.len) {
                if src == me {
                    answers_to[step.to].push(i);
                }
            }
        }
        Asker {
            answers_to,
            answered: vec![0; p],
            waiting: VecDeque::new(),
        }
    }

    /// Queues the requests of this member's position `at`.
    fn queue(&mut self, plan: &plan::Plan, h: &Header, positions: &[Position], at: usize) {
        let pos = positions[at];
        let step = &plan.steps[pos.step];
        for (src, req) in plan.sources(h, step, pos.off, pos.len) {
            self.waiting.push_back((at, src, req));
        }
    }

    /// One more answer went to `peer`.
    fn answered(&mut self, peer: usize) {
        self.answered[peer] += 1;
    }

    /// Sends every queued request that no owed answer precedes (per peer
    /// in order: once one waits, the later ones to that peer wait too).
    fn flush<B: ByteBuf>(&mut self, t: &mut dyn Transport<B>) -> Result<(), String> {
        let mut keep = VecDeque::new();
        while let Some((at, src, req)) = self.waiting.pop_front() {
            let owed = self.answers_to[src].partition_point(|&i| i < at);
            if owed <= self.answered[src] {
                t.send(src, &req.encode())?;
            } else {
                keep.push_back((at, src, req));
            }
        }
        self.waiting = keep;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assess::{assess_with, Depth};
    use crate::encode::{encode_job, MemberInput};
    use crate::options::Options;
    use crate::ring::memory_transports;
    use crate::scheme::Scheme;
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
        for r in rebuild_with(dirs, piece, Depth::Full) {
            assert!(r.errors.is_empty(), "{:?}", r.errors);
            for f in r.files {
                f.commit().unwrap();
            }
        }
    }

    /// Every member's part, each on its own thread, after an assessment to
    /// `depth` (quick: survivors check their CRC32s while serving).
    fn rebuild_with(dirs: &[PathBuf], piece: usize, depth: Depth) -> Vec<Rebuilt> {
        let a = assess_with(dirs, &Options::default(), depth).unwrap();
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
                            payload: &s.payload[me],
                            deferred: s.deferred,
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
        results
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
                for depth in [Depth::Full, Depth::Quick] {
                    let dirs = job(name, scheme, p);
                    let before = snapshot(&dirs);
                    for (m, d) in dirs.iter().enumerate() {
                        if lost & (1 << m) != 0 {
                            std::fs::remove_dir_all(d).unwrap();
                        }
                    }
                    let results = rebuild_with(&dirs, 500, depth);
                    let read: Vec<u64> = results.iter().map(|r| r.traffic.read).collect();
                    for r in results {
                        assert!(r.errors.is_empty(), "{:?}", r.errors);
                        assert!(r.survivor_damage.is_empty(), "{:?}", r.survivor_damage);
                        for f in r.files {
                            f.commit().unwrap();
                        }
                    }
                    assert_eq!(snapshot(&dirs), before, "{name}: lost {lost:b} {depth:?}");
                    if depth == Depth::Quick {
                        // Each surviving byte read once: a survivor reads
                        // every byte of its data files and payload (to
                        // serve, or at the end to check), nothing twice.
                        for (m, d) in dirs.iter().enumerate() {
                            if lost & (1 << m) != 0 {
                                continue;
                            }
                            let own: u64 = before
                                .iter()
                                .filter(|(path, _)| path.starts_with(d))
                                .map(|(path, bytes)| survivor_bytes(path, bytes))
                                .sum();
                            assert_eq!(read[m], own, "{name}: lost {lost:b}, member {m}");
                        }
                    }
                    let _ = std::fs::remove_dir_all(dirs[0].parent().unwrap());
                }
            }
        }
    }

    /// The bytes of one surviving file a rebuild must read: a data file
    /// whole, a redundancy file's payload (without its two header copies
    /// and trailer).
    fn survivor_bytes(path: &Path, bytes: &[u8]) -> u64 {
        if path.extension().is_some_and(|x| x == "rdp") {
            let h = crate::format::Header::decode(
                &bytes[..crate::format::Header::length_from_prefix(&bytes[..16]).unwrap() as usize],
            )
            .unwrap();
            h.payload_len()
        } else {
            bytes.len() as u64
        }
    }

    #[test]
    fn a_survivor_damaged_in_place_is_reported_by_the_rebuild_that_read_it() {
        // Member 0 lost; a byte of member 1's data flipped in place (same
        // size: a quick assessment cannot see it).
        let dirs = job("silent", Scheme::Rs { k: 2 }, 4);
        std::fs::remove_dir_all(&dirs[0]).unwrap();
        let a = dirs[1].join("a.dat");
        let mut bytes = std::fs::read(&a).unwrap();
        bytes[1234] ^= 1;
        std::fs::write(&a, bytes).unwrap();
        let results = rebuild_with(&dirs, 500, Depth::Quick);
        let damage: Vec<&String> = results.iter().flat_map(|r| &r.survivor_damage).collect();
        assert_eq!(damage.len(), 1, "{damage:?}");
        assert!(damage[0].starts_with("member 1: ") && damage[0].contains("a.dat: CRC32"));
        let _ = std::fs::remove_dir_all(dirs[0].parent().unwrap());
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
