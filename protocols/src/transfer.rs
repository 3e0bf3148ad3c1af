//! Moving one chunk of read data from the replica that read it to another:
//! the bytes travel as a message of their own, sent straight from and
//! received straight into the application's buffer (redio copies nothing),
//! followed by a small trailer with the read's result and the CRC-32 of the
//! bytes (see `wire::encode_trailer`).
//!
//! A chunk's data message is exactly as long as the bytes read: `full`
//! bytes for a complete chunk, fewer (possibly none) for the final chunk of
//! a short read or a failed one. Whether more chunks follow is therefore
//! read from the data message's length, which a damaged payload cannot
//! change: every replica waits for exactly the messages that are sent, even
//! when it cannot make sense of them.

use crate::chunks::Tally;
use crate::link::ReplicaLink;
use crate::vote::{Digest, Outcome};
use crate::{wire, Errno, LinkError, EIO};

/// What a replica learnt from one received chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Received {
    /// The chunk's result: the byte count, the reader's errno, or `EIO`
    /// when the trailer is damaged or does not match the bytes.
    pub result: Result<usize, Errno>,
    /// Whether the chunk was complete (`full` bytes), so that more follow.
    pub more: bool,
    /// CRC-32 of the bytes received (0 when checksums are off).
    pub crc: u32,
}

/// Sends a chunk to each replica in `to` (skipping this one): `data` (the
/// bytes read, empty for an errno), then the trailer with the `result` of
/// reading it and `crc`, their CRC-32 (ignored by receivers when checksums
/// are off).
pub(crate) fn send<L: ReplicaLink + ?Sized>(
    link: &mut L,
    to: &[usize],
    tag: u32,
    result: Result<usize, Errno>,
    data: &[u8],
    crc: u32,
) -> Result<(), LinkError> {
    send_overlapping(link, to, tag, data, &mut || {})?;
    send_trailers(link, to, tag, result, crc)
}

/// Sends a chunk's bytes to each replica in `to` (skipping this one),
/// running `meanwhile` while they travel to the first (see
/// [`ReplicaLink::send_overlapping`]): the master computes their CRC and
/// reads its next chunk meanwhile. `meanwhile` runs exactly once, also
/// when there is nobody to send to. The trailers follow with
/// [`send_trailers`].
pub(crate) fn send_overlapping<L: ReplicaLink + ?Sized>(
    link: &mut L,
    to: &[usize],
    tag: u32,
    data: &[u8],
    meanwhile: &mut dyn FnMut(),
) -> Result<(), LinkError> {
    let me = link.me();
    let mut peers = to.iter().copied().filter(|&peer| peer != me);
    match peers.next() {
        Some(first) => link.send_overlapping(first, tag, data, meanwhile)?,
        None => meanwhile(),
    }
    for peer in peers {
        link.send(peer, tag, data)?;
    }
    Ok(())
}

/// Sends the trailer of a chunk sent with [`send_overlapping`]: its
/// `result` and `crc`, to each replica in `to` (skipping this one).
pub(crate) fn send_trailers<L: ReplicaLink + ?Sized>(
    link: &mut L,
    to: &[usize],
    tag: u32,
    result: Result<usize, Errno>,
    crc: u32,
) -> Result<(), LinkError> {
    let trailer = wire::encode_trailer(result, crc);
    let me = link.me();
    for &peer in to.iter().filter(|&&peer| peer != me) {
        link.send(peer, tag, &trailer)?;
    }
    Ok(())
}

/// Receives a chunk from `from` into `piece` (the chunk's full size) and
/// passes it on unchanged to each replica in `forward` as it arrives (the
/// chain). Checks the CRC when `checksums` is on.
pub(crate) fn recv<L: ReplicaLink + ?Sized>(
    link: &mut L,
    from: usize,
    forward: &[usize],
    tag: u32,
    piece: &mut [u8],
    checksums: bool,
) -> Result<Received, LinkError> {
    let len = link.recv_into(from, tag, piece)?;
    link.send_to_each(forward, tag, &piece[..len])?;
    let trailer = link.recv(from, tag)?;
    link.send_to_each(forward, tag, &trailer)?;
    Ok(judge(&piece[..len], piece.len(), &trailer, checksums))
}

/// Receives `peer`'s chunk into `theirs` while sending this replica's
/// chunk (`result`, `data`, `crc`) to `peer`: the pairwise step of an
/// all-to-all exchange, both directions at once where the link can.
#[allow(clippy::too_many_arguments)]
pub(crate) fn swap<L: ReplicaLink + ?Sized>(
    link: &mut L,
    peer: usize,
    tag: u32,
    result: Result<usize, Errno>,
    data: &[u8],
    crc: u32,
    theirs: &mut [u8],
    checksums: bool,
) -> Result<Received, LinkError> {
    let len = link.sendrecv_into(peer, tag, data, theirs)?;
    let mut trailer = [0u8; wire::TRAILER_MAX];
    let trailer_len =
        link.sendrecv_into(peer, tag, &wire::encode_trailer(result, crc), &mut trailer)?;
    Ok(judge(
        &theirs[..len],
        theirs.len(),
        &trailer[..trailer_len],
        checksums,
    ))
}

/// The CRC-32 of `bytes` when checksums are on, else 0.
pub(crate) fn crc_of(bytes: &[u8], checksums: bool) -> u32 {
    if checksums {
        crc32fast::hash(bytes)
    } else {
        0
    }
}

/// Checks received `bytes` of a `full`-byte chunk against its `trailer`.
fn judge(bytes: &[u8], full: usize, trailer: &[u8], checksums: bool) -> Received {
    let crc = crc_of(bytes, checksums);
    let result = match wire::decode_trailer(trailer, full) {
        Ok((Ok(count), sent)) if count == bytes.len() && (!checksums || sent == crc) => Ok(count),
        Ok((Err(errno), _)) if bytes.is_empty() => Err(errno),
        _ => Err(EIO),
    };
    Received {
        result,
        more: bytes.len() == full,
        crc,
    }
}

/// The CRC-32 of a concatenation, from the CRCs and lengths of its parts:
/// lets a replica digest a whole buffer from the chunk CRCs it already
/// computed instead of reading the buffer again.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct CrcSum {
    crc: u32,
    len: u64,
}

impl CrcSum {
    /// Appends a part of `len` bytes whose CRC-32 is `crc`.
    pub fn add(&mut self, crc: u32, len: usize) {
        let mut whole = crc32fast::Hasher::new_with_initial_len(self.crc, self.len);
        whole.combine(&crc32fast::Hasher::new_with_initial_len(crc, len as u64));
        self.crc = whole.finalize();
        self.len += len as u64;
    }

    /// The CRC-32 of everything appended.
    pub fn crc(&self) -> u32 {
        self.crc
    }
}

/// Adds up the chunks of one read: their results in chunk order ([`Tally`])
/// and the CRC of the bytes counted, so that the digest of the whole buffer
/// needs no second pass over it.
#[derive(Debug, Default)]
pub(crate) struct ChunkTally {
    tally: Tally,
    crc: CrcSum,
}

impl ChunkTally {
    /// Accounts for the next chunk, `full` bytes long, which produced
    /// `result`; `crc` is the CRC-32 of its bytes. Chunks after the end of
    /// the operation are ignored.
    pub fn add(&mut self, result: Result<usize, Errno>, crc: u32, full: usize) {
        if let (false, Ok(count)) = (self.tally.ended(), result) {
            self.crc.add(crc, count);
        }
        self.tally.add(result, full);
    }

    /// The digest of the whole read of `requested` bytes at `offset`.
    pub fn digest(&self, offset: u64, requested: usize) -> Digest {
        Digest {
            offset,
            requested,
            outcome: match self.tally.result() {
                Ok(len) => Outcome::Data {
                    len,
                    crc: self.crc.crc(),
                },
                Err(errno) => Outcome::Error(errno),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc_sum_equals_the_crc_of_the_whole() {
        let data: Vec<u8> = (0..1000u32).map(|i| (i * 7 + 3) as u8).collect();
        for cut in [0, 1, 500, 999, 1000] {
            let mut sum = CrcSum::default();
            sum.add(crc32fast::hash(&data[..cut]), cut);
            sum.add(crc32fast::hash(&data[cut..]), data.len() - cut);
            assert_eq!(sum.crc(), crc32fast::hash(&data), "cut at {cut}");
        }
        assert_eq!(CrcSum::default().crc(), crc32fast::hash(b""));
    }

    #[test]
    fn a_chunk_is_accepted_only_when_trailer_and_bytes_agree() {
        let bytes = b"abcd";
        let crc = crc32fast::hash(bytes);
        let ok = wire::encode_trailer(Ok(4), crc);
        assert_eq!(judge(bytes, 4, &ok, true).result, Ok(4));
        assert!(judge(bytes, 4, &ok, true).more);
        assert_eq!(judge(b"abce", 4, &ok, true).result, Err(EIO));
        // Without checksums only the count is checked.
        assert_eq!(judge(b"abce", 4, &ok, false).result, Ok(4));
        let short = wire::encode_trailer(Ok(2), crc32fast::hash(b"ab"));
        let got = judge(b"ab", 4, &short, true);
        assert_eq!((got.result, got.more), (Ok(2), false));
        // A count that does not match the bytes that came.
        assert_eq!(judge(b"abc", 4, &short, true).result, Err(EIO));
        let failed = wire::encode_trailer(Err(libc::ENOSPC), 0);
        assert_eq!(judge(b"", 4, &failed, true).result, Err(libc::ENOSPC));
        assert_eq!(judge(b"", 4, b"\x07", true).result, Err(EIO));
    }
}
