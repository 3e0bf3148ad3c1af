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

use crate::gf::kernel::Kernel;
use crate::stripe::StripeCode;
use std::sync::mpsc::{channel, Receiver, Sender};

/// Point-to-point messages among the members of one set, delivered in
/// order per sender.
pub trait Transport {
    /// This member's index in the set.
    fn member(&self) -> usize;
    /// Set size.
    fn members(&self) -> usize;
    /// Sends `data` to member `to` (may return before it is delivered).
    fn send(&mut self, to: usize, data: &[u8]) -> Result<(), String>;
    /// Receives the next message from member `from` into `buf` (resized).
    fn recv(&mut self, from: usize, buf: &mut Vec<u8>) -> Result<(), String>;
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
pub fn encode(
    code: &StripeCode,
    kernel: &dyn Kernel,
    t: &mut dyn Transport,
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
    let mut msg: Vec<u8> = Vec::new();
    let mut data = Vec::new();
    let mut off = 0u64;
    while off < chunk {
        let len = piece.min((chunk - off) as usize);
        for u in 0..p {
            let r = (m + 2 * p - k - u) % p;
            if u == 0 {
                msg.clear();
                msg.resize(k * len, 0);
            } else {
                t.recv(left, &mut msg)?;
                traffic.received += msg.len() as u64;
            }
            if u < p - k {
                // A data member of row r: add its contribution to every equation.
                let d = code
                    .data_chunk(m, r)
                    .ok_or_else(|| format!("member {m} has no data in row {r}"))?;
                data.resize(len, 0);
                read(d, off, &mut data)?;
                traffic.read += len as u64;
                for j in 0..k {
                    code.contribute(kernel, j, m, &data, &mut msg[j * len..(j + 1) * len]);
                }
                if u + 1 < p {
                    t.send(right, &msg)?;
                    traffic.sent += msg.len() as u64;
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

/// An in-memory [`Transport`] over channels, one per member, for tests and
/// for comparing engines without MPI.
pub struct MemoryTransport {
    member: usize,
    to: Vec<Sender<Vec<u8>>>,
    from: Vec<Receiver<Vec<u8>>>,
}

/// `p` connected in-memory transports, one per member (move each into its
/// own thread).
pub fn memory_transports(p: usize) -> Vec<MemoryTransport> {
    // chan[a][b]: messages from a to b.
    let mut senders: Vec<Vec<Option<Sender<Vec<u8>>>>> = (0..p).map(|_| Vec::new()).collect();
    let mut receivers: Vec<Vec<Option<Receiver<Vec<u8>>>>> = (0..p).map(|_| Vec::new()).collect();
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
        })
        .collect()
}

impl Transport for MemoryTransport {
    fn member(&self) -> usize {
        self.member
    }

    fn members(&self) -> usize {
        self.to.len()
    }

    fn send(&mut self, to: usize, data: &[u8]) -> Result<(), String> {
        self.to[to]
            .send(data.to_vec())
            .map_err(|_| format!("member {to} is gone"))
    }

    fn recv(&mut self, from: usize, buf: &mut Vec<u8>) -> Result<(), String> {
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
}
