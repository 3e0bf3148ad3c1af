//! The collective rebuild of one set, run by every member of the set at
//! once over a [`Transport`] (MPI in the preload, memory in the tests).
//!
//! Every member derives the same list of steps (`plan`) from the set's header
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

use crate::files::AtomicFile;
use crate::format::Header;
use crate::progress::Progress;
use crate::redundancy_file::finish_file;
use crate::ring::{Traffic, Transport};
use crate::stripe::PieceBuffers;
use member::{combine, Member};
use plan::{plan, Request};
use redio_aligned::{AlignedBuf, ByteBuf};
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
    /// Bytes sent, received and read by this member.
    pub traffic: Traffic,
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
    // Received pieces are the transport's buffers; what this member reads
    // or sums is page-aligned.
    let (mut got, mut req) = (Vec::<B>::new(), B::default());
    let (mut acc, mut answer) = (AlignedBuf::new(), AlignedBuf::new());
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
        let ask = |t: &mut dyn Transport<B>, i: usize| -> Result<(), String> {
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
            got.resize_with(srcs.len().max(got.len()), B::default);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assess::assess;
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
