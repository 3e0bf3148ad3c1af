//! The pipelined ring encode of one set, over any [`Transport`]: what each
//! rank runs at protect time (the MPI transport lives in the preload; the
//! in-memory one here is for tests).
//!
//! Row `r`'s partial sums travel one path through the ring, one hop per
//! stage, always from a member to its right neighbour:
//!
//! ```text
//! r+k -> r+k+1 -> … -> r+p-1 -> r -> r+1 -> … -> r+k-1
//! ```
//!
//! The first `p - k` members on the path are the row's data members: each
//! adds `E[j][m]·d_m` for every equation j to a `k`-piece message. The last
//! `k` are the holders: holder of equation j keeps piece j and forwards the
//! rest. At stage `u` member `m` works on row `m - k - u`, so every member
//! is busy at every stage, sends `p - 1` messages per piece, reads each of
//! its data chunks once and receives only from its left neighbour
//! (receiver-driven: it knows what comes next and from whom). Memory is
//! bounded by two `k`-piece buffers plus one data piece, whatever the file
//! size. For XOR (`k = 1`) this is the reduce-scatter of Gropp et al.

use crate::gf::kernel::{linear_combination, Kernel};
use crate::stripe::StripeCode;
use redio_aligned::{AlignedBuf, ByteBuf};
use std::sync::mpsc::{channel, Receiver, Sender};

/// Point-to-point messages among the members of one set, delivered in
/// order per sender, in buffers of type `B`.
///
/// `B` is the buffer a transport hands over and fills: [`AlignedBuf`] for
/// the in-memory transport, so that the ring reads file data straight into
/// page-aligned messages; `Vec<u8>` (the default) for transports not yet
/// moved over to it (the MPI one), which the ring serves the same way.
pub trait Transport<B: ByteBuf = Vec<u8>> {
    /// This member's index in the set.
    fn member(&self) -> usize;
    /// Set size.
    fn members(&self) -> usize;
    /// Sends `data` to member `to` (may return before it is delivered).
    fn send(&mut self, to: usize, data: &[u8]) -> Result<(), String>;
    /// Sends `data` like [`send`](Self::send), handing its buffer over, and
    /// returns an empty buffer for the caller's next message: a transport
    /// that keeps buffers until delivery saves a copy per message.
    fn send_owned(&mut self, to: usize, data: B) -> Result<B, String> {
        self.send(to, &data)?;
        let mut data = data;
        data.clear();
        Ok(data)
    }
    /// Sends `data` like [`send_owned`](Self::send_owned) and keeps it for
    /// one [`send_kept`](Self::send_kept) to another member; returns the
    /// buffer to hand to that `send_kept`, unchanged (possibly empty: a
    /// transport that keeps buffers until delivery sends both messages
    /// from one buffer; by default, a copy went and `data` comes back).
    fn send_and_keep(&mut self, to: usize, data: B) -> Result<B, String> {
        self.send(to, &data)?;
        Ok(data)
    }
    /// Sends what the last [`send_and_keep`](Self::send_and_keep) kept to
    /// `to`; `data` is the buffer it returned. Returns an empty buffer for
    /// the caller's next message.
    fn send_kept(&mut self, to: usize, data: B) -> Result<B, String> {
        self.send_owned(to, data)
    }
    /// Receives the next message from member `from` into `buf` (resized).
    fn recv(&mut self, from: usize, buf: &mut B) -> Result<(), String>;
}

/// Reads this member's data chunk `d` at an offset into a buffer.
pub type ReadChunk<'a> = dyn FnMut(usize, u64, &mut [u8]) -> Result<(), String> + 'a;
/// Takes a piece of this member's parity chunk `j` at an offset.
pub type WriteParity<'a> = dyn FnMut(usize, u64, &[u8]) -> Result<(), String> + 'a;

/// Bytes moved by one member, for the cost model.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Traffic {
    /// Bytes sent.
    pub sent: u64,
    /// Bytes received.
    pub received: u64,
    /// Bytes of its own logical file read.
    pub read: u64,
}

/// Runs this member's part of the ring encode. `read(d, off, buf)` fills
/// `buf` with this member's data chunk `d` at `off` (zero-padded);
/// `write(j, off, bytes)` receives its parity chunk `j` at `off`, pieces in
/// increasing `off`.
pub fn encode<B: ByteBuf>(
    code: &StripeCode,
    kernel: &dyn Kernel,
    t: &mut dyn Transport<B>,
    chunk: u64,
    piece: usize,
    read: &mut ReadChunk<'_>,
    write: &mut WriteParity<'_>,
) -> Result<Traffic, String> {
    let (p, k) = (code.members(), code.parity_count());
    let m = t.member();
    if t.members() != p {
        return Err(format!("transport has {} members, code {p}", t.members()));
    }
    let (left, right) = ((m + p - 1) % p, (m + 1) % p);
    let piece = piece.max(1);
    let mut traffic = Traffic::default();
    let mut msg = B::default();
    // The data piece of rows whose first hop is not a plain copy.
    let mut data = AlignedBuf::new();
    // The first hop of an XOR row: the message is the data itself, read
    // straight into it (no XOR onto zeros).
    let copies_first = k == 1 && code.coefficient(0, m) == 1;
    let mut off = 0u64;
    while off < chunk {
        let len = piece.min((chunk - off) as usize);
        for u in 0..p {
            let r = (m + 2 * p - k - u) % p;
            if u == 0 {
                msg.clear();
                if copies_first {
                    // Overwritten by the read below: no zero-fill.
                    msg.resize_for_overwrite(len);
                } else {
                    msg.resize(k * len, 0);
                }
            } else {
                t.recv(left, &mut msg)?;
                traffic.received += msg.len() as u64;
            }
            if u < p - k {
                // A data member of row r: add its contribution to every equation.
                let d = code
                    .data_chunk(m, r)
                    .ok_or_else(|| format!("member {m} has no data in row {r}"))?;
                traffic.read += len as u64;
                if u == 0 && copies_first {
                    read(d, off, &mut msg)?;
                } else {
                    data.resize_for_overwrite(len);
                    read(d, off, &mut data)?;
                    for j in 0..k {
                        code.contribute(kernel, j, m, &data, &mut msg[j * len..(j + 1) * len]);
                    }
                }
                if u + 1 < p {
                    traffic.sent += msg.len() as u64;
                    msg = t.send_owned(right, std::mem::take(&mut msg))?;
                }
            } else {
                // Holder of equation j: the first piece left is ours.
                let j = u - (p - k);
                write(j, off, &msg[..len])?;
                let rest = &msg[len..];
                if !rest.is_empty() {
                    t.send(right, rest)?;
                    traffic.sent += rest.len() as u64;
                }
            }
        }
        off += len as u64;
    }
    Ok(traffic)
}

/// Runs this member's part of the ring rebuild of the data chunks that
/// `lost_data` marks as lost (every member, survivors and replacements,
/// calls it with the same `lost_data` and `lost_parity`).
///
/// For each row with lost data, the row's survivors (its intact data
/// members, and the holders of the parity equations the plan uses) form a
/// path in ring order; each adds its known terms (`E[j][i]·d_i`, or its
/// parity chunk) to one piece per equation and passes them on; the last one
/// solves `x = A^-1 b` and sends each lost member its piece. Rows are done
/// in the same order everywhere and messages between two members arrive in
/// order, so nobody waits on a message that depends on its own.
/// `read_data(d, off, buf)` / `read_parity(j, off, buf)` read this
/// member's intact chunks; `write_data(d, off, bytes)` gets a replacement
/// member's rebuilt data chunk `d`. Lost parity is re-encoded afterwards
/// with [`encode`].
#[allow(clippy::too_many_arguments)]
pub fn rebuild<B: ByteBuf>(
    code: &StripeCode,
    kernel: &dyn Kernel,
    t: &mut dyn Transport<B>,
    lost_data: &[bool],
    lost_parity: &[bool],
    chunk: u64,
    piece: usize,
    read_data: &mut ReadChunk<'_>,
    read_parity: &mut ReadChunk<'_>,
    write_data: &mut WriteParity<'_>,
) -> Result<Traffic, String> {
    let p = code.members();
    let m = t.member();
    let plans = (0..p)
        .map(|r| code.plan_row(r, lost_data, lost_parity))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    let piece = piece.max(1);
    let mut traffic = Traffic::default();
    let mut msg = B::default();
    // This member's data or parity piece, then (at the path's end) a
    // solved piece; `incoming` is a lost member's solved piece.
    let (mut mine, mut incoming) = (AlignedBuf::new(), B::default());
    let mut off = 0u64;
    while off < chunk {
        let len = piece.min((chunk - off) as usize);
        for plan in plans.iter().filter(|pl| !pl.lost_data.is_empty()) {
            let r = plan.row;
            let n = plan.equations.len();
            let holds = |i: usize| {
                plan.equations
                    .iter()
                    .position(|&j| code.parity_holder(r, j) == i)
            };
            let mut path: Vec<usize> = (0..p)
                .filter(|&i| {
                    (code.data_chunk(i, r).is_some() && !lost_data[i]) || holds(i).is_some()
                })
                .collect();
            path.sort_by_key(|&i| (i + p - r - 1) % p);
            let last = *path.last().ok_or("a row with no survivors")?;
            if let Some(q) = path.iter().position(|&i| i == m) {
                if q == 0 {
                    msg.clear();
                    msg.resize(n * len, 0);
                } else {
                    t.recv(path[q - 1], &mut msg)?;
                    traffic.received += msg.len() as u64;
                }
                mine.resize_for_overwrite(len);
                if let Some(d) = code.data_chunk(m, r).filter(|_| !lost_data[m]) {
                    read_data(d, off, &mut mine)?;
                    traffic.read += len as u64;
                    for (e, &j) in plan.equations.iter().enumerate() {
                        code.contribute(kernel, j, m, &mine, &mut msg[e * len..(e + 1) * len]);
                    }
                }
                if let Some(e) = holds(m) {
                    read_parity(plan.equations[e], off, &mut mine)?;
                    traffic.read += len as u64;
                    kernel.xor_acc(&mine, &mut msg[e * len..(e + 1) * len]);
                }
                if m == last {
                    for (l, &lost) in plan.lost_data.iter().enumerate() {
                        mine.clear();
                        mine.resize_for_overwrite(len);
                        let terms =
                            (0..n).map(|e| (plan.inverse.get(l, e), &msg[e * len..(e + 1) * len]));
                        linear_combination(kernel, terms, &mut mine);
                        t.send(lost, &mine)?;
                        traffic.sent += len as u64;
                    }
                } else {
                    t.send(path[q + 1], &msg)?;
                    traffic.sent += msg.len() as u64;
                }
            }
            if plan.lost_data.contains(&m) {
                t.recv(last, &mut incoming)?;
                traffic.received += incoming.len() as u64;
                let d = code
                    .data_chunk(m, r)
                    .ok_or("lost member has no data in row")?;
                write_data(d, off, &incoming)?;
            }
        }
        off += len as u64;
    }
    Ok(traffic)
}

/// An in-memory [`Transport`] over channels, one per member, for tests and
/// for comparing engines without MPI.
pub struct MemoryTransport {
    member: usize,
    to: Vec<Sender<AlignedBuf>>,
    from: Vec<Receiver<AlignedBuf>>,
    /// What `send_and_keep` kept: the caller gets an empty buffer back, as
    /// from the MPI transport, so the tests hold the caller to that.
    kept: Option<AlignedBuf>,
}

/// `p` connected in-memory transports, one per member (move each into its
/// own thread).
pub fn memory_transports(p: usize) -> Vec<MemoryTransport> {
    // chan[a][b]: messages from a to b.
    let mut senders: Vec<Vec<Option<Sender<AlignedBuf>>>> = (0..p).map(|_| Vec::new()).collect();
    let mut receivers: Vec<Vec<Option<Receiver<AlignedBuf>>>> =
        (0..p).map(|_| Vec::new()).collect();
    for a in 0..p {
        for _ in 0..p {
            let (s, r) = channel();
            senders[a].push(Some(s));
            receivers[a].push(Some(r));
        }
    }
    (0..p)
        .map(|m| MemoryTransport {
            member: m,
            to: (0..p).filter_map(|b| senders[m][b].take()).collect(),
            from: (0..p).filter_map(|a| receivers[a][m].take()).collect(),
            kept: None,
        })
        .collect()
}

impl Transport<AlignedBuf> for MemoryTransport {
    fn member(&self) -> usize {
        self.member
    }

    fn members(&self) -> usize {
        self.to.len()
    }

    fn send(&mut self, to: usize, data: &[u8]) -> Result<(), String> {
        self.to[to]
            .send(AlignedBuf::from_slice(data))
            .map_err(|_| format!("member {to} is gone"))
    }

    fn send_owned(&mut self, to: usize, data: AlignedBuf) -> Result<AlignedBuf, String> {
        self.to[to]
            .send(data)
            .map_err(|_| format!("member {to} is gone"))?;
        Ok(AlignedBuf::new())
    }

    fn send_and_keep(&mut self, to: usize, data: AlignedBuf) -> Result<AlignedBuf, String> {
        self.send(to, &data)?;
        self.kept = Some(data);
        Ok(AlignedBuf::new())
    }

    fn send_kept(&mut self, to: usize, data: AlignedBuf) -> Result<AlignedBuf, String> {
        let kept = self
            .kept
            .take()
            .ok_or("a message sent again that was not kept")?;
        self.send_owned(to, kept)?;
        let mut data = data;
        data.clear();
        Ok(data)
    }

    fn recv(&mut self, from: usize, buf: &mut AlignedBuf) -> Result<(), String> {
        *buf = self.from[from]
            .recv()
            .map_err(|_| format!("member {from} is gone"))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gf::kernel::best;
    use crate::inmem;
    use crate::scheme::Scheme;

    /// Runs the ring on threads and returns every member's parity chunks
    /// and traffic.
    fn run(
        code: &StripeCode,
        files: &[Vec<u8>],
        piece: usize,
    ) -> (Vec<Vec<Vec<u8>>>, Vec<Traffic>) {
        let max = files.iter().map(Vec::len).max().unwrap_or(0);
        let chunk = code.chunk_size(max as u64);
        let k = code.parity_count();
        let handles: Vec<_> = memory_transports(code.members())
            .into_iter()
            .map(|mut t| {
                let code = code.clone();
                let file = files[t.member()].clone();
                std::thread::spawn(move || {
                    let mut parity = vec![vec![0u8; chunk as usize]; k];
                    let mut read = |d: usize, off: u64, buf: &mut [u8]| {
                        let c = inmem::data_chunk(&file, d, chunk as usize);
                        buf.copy_from_slice(&c[off as usize..off as usize + buf.len()]);
                        Ok(())
                    };
                    let mut write = |j: usize, off: u64, bytes: &[u8]| {
                        parity[j][off as usize..off as usize + bytes.len()].copy_from_slice(bytes);
                        Ok(())
                    };
                    let traffic =
                        encode(&code, best(), &mut t, chunk, piece, &mut read, &mut write).unwrap();
                    (parity, traffic)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).unzip()
    }

    #[test]
    fn ring_encode_equals_whole_set_encode() {
        for (scheme, p) in [
            (Scheme::Xor, 2),
            (Scheme::Xor, 3),
            (Scheme::Xor, 8),
            (Scheme::Rs { k: 1 }, 4),
            (Scheme::Rs { k: 2 }, 3),
            (Scheme::Rs { k: 2 }, 6),
            (Scheme::Rs { k: 3 }, 8),
        ] {
            let code = StripeCode::new(scheme, p).unwrap();
            let files: Vec<Vec<u8>> = (0..p)
                .map(|m| {
                    (0..(m * 1237 + 1) % 4001)
                        .map(|i| (i * 7 + m) as u8)
                        .collect()
                })
                .collect();
            let refs: Vec<&[u8]> = files.iter().map(Vec::as_slice).collect();
            let (chunk, want) = inmem::encode(&code, best(), &refs);
            for piece in [7usize, 100, 1 << 20] {
                let (got, traffic) = run(&code, &files, piece);
                assert_eq!(got, want, "{scheme} p={p} piece={piece}");
                // Cost model: per member, (p-k)·k + k(k-1)/2 chunks
                // sent, the same received, and its p-k data chunks read.
                let k = code.parity_count() as u64;
                let pieces = (p as u64 - k) * k + k * (k - 1) / 2;
                for t in &traffic {
                    assert_eq!(t.sent, pieces * chunk as u64, "{scheme} p={p}");
                    assert_eq!(t.received, t.sent);
                    assert_eq!(t.read, (p as u64 - k) * chunk as u64);
                }
            }
        }
    }

    #[test]
    fn ring_rebuild_restores_any_tolerated_loss() {
        for (scheme, p, lost) in [
            (Scheme::Xor, 2, vec![0]),
            (Scheme::Xor, 5, vec![3]),
            (Scheme::Rs { k: 2 }, 4, vec![1, 2]),
            (Scheme::Rs { k: 2 }, 6, vec![5, 0]),
            (Scheme::Rs { k: 3 }, 8, vec![2, 3, 7]),
        ] {
            let code = StripeCode::new(scheme, p).unwrap();
            let files: Vec<Vec<u8>> = (0..p)
                .map(|m| {
                    (0..(m * 977 + 5) % 3001)
                        .map(|i| (i * 11 + m * 3) as u8)
                        .collect()
                })
                .collect();
            let refs: Vec<&[u8]> = files.iter().map(Vec::as_slice).collect();
            let (chunk, parity) = inmem::encode(&code, best(), &refs);
            let lost_v: Vec<bool> = (0..p).map(|m| lost.contains(&m)).collect();
            for piece in [13usize, 1 << 20] {
                let handles: Vec<_> = memory_transports(p)
                    .into_iter()
                    .map(|mut t| {
                        let code = code.clone();
                        let m = t.member();
                        let gone = lost_v[m];
                        let file = if gone { Vec::new() } else { files[m].clone() };
                        let par = if gone { Vec::new() } else { parity[m].clone() };
                        let lost_v = lost_v.clone();
                        std::thread::spawn(move || {
                            let mut rebuilt = vec![0u8; code.data_chunks() * chunk];
                            let mut rd = |d: usize, off: u64, buf: &mut [u8]| {
                                let c = inmem::data_chunk(&file, d, chunk);
                                buf.copy_from_slice(&c[off as usize..off as usize + buf.len()]);
                                Ok(())
                            };
                            let mut rp = |j: usize, off: u64, buf: &mut [u8]| {
                                buf.copy_from_slice(
                                    &par[j][off as usize..off as usize + buf.len()],
                                );
                                Ok(())
                            };
                            let mut wd = |d: usize, off: u64, bytes: &[u8]| {
                                let at = d * chunk + off as usize;
                                rebuilt[at..at + bytes.len()].copy_from_slice(bytes);
                                Ok(())
                            };
                            rebuild(
                                &code,
                                best(),
                                &mut t,
                                &lost_v,
                                &lost_v,
                                chunk as u64,
                                piece,
                                &mut rd,
                                &mut rp,
                                &mut wd,
                            )
                            .unwrap();
                            rebuilt
                        })
                    })
                    .collect();
                let out: Vec<Vec<u8>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
                for &m in &lost {
                    assert_eq!(
                        &out[m][..files[m].len()],
                        &files[m][..],
                        "{scheme} p={p} member {m} piece={piece}"
                    );
                }
            }
        }
    }
}
