//! Byte encoding of the small protocol messages: a [`Digest`] (vote step)
//! and an I/O result (a byte count or an errno). All integers are
//! little-endian; every message has one exact length per kind, and
//! decoding rejects anything else instead of guessing.
//!
//! ```text
//! result  = kind:u8 (0 = count, 1 = errno) · count:u64 | errno:i32
//! digest  = offset:u64 · requested:u64 · result      (count = data length)
//!           · crc:u32 when kind = 0
//! chunk   = data (exactly `full` bytes) · crc:u32(data)            (a full chunk)
//!         | result · data (count bytes) · !crc:u32(result · data) · [pad:u8 = 0]
//!                                           (a short chunk or an errno; final)
//! ```
//!
//! A chunk message is for a chunk of `full` bytes that both ends know. A
//! full chunk is exactly `full + 4` bytes long; any other message is the
//! final one of its chain, padded with one zero byte in the one case where
//! it would otherwise also be `full + 4` bytes long. So whether more
//! messages follow is decided by the message's length, which a corrupted
//! payload cannot change: a receiver forwards and waits for exactly the
//! messages the sender sends, even when it cannot decode them. The final
//! form's CRC is inverted (`!crc`), so that a final message that lost its
//! padding byte cannot pass for a full chunk.

use crate::vote::{Digest, Outcome};
use crate::Errno;

/// Why a peer's message was rejected (becomes [`crate::OpError::Protocol`]).
pub(crate) type Malformed = &'static str;

const COUNT: u8 = 0;
const ERRNO: u8 = 1;

/// Encodes `result` (after [`crate::io::checked`]: counts fit, errnos > 0).
pub(crate) fn encode_result(result: Result<usize, Errno>, out: &mut Vec<u8>) {
    match result {
        Ok(count) => {
            out.push(COUNT);
            out.extend_from_slice(&(count as u64).to_le_bytes());
        }
        Err(errno) => {
            out.push(ERRNO);
            out.extend_from_slice(&errno.to_le_bytes());
        }
    }
}

/// Decodes a result from the front of `bytes`; returns it and the rest.
fn decode_result_prefix(bytes: &[u8]) -> Result<(Result<usize, Errno>, &[u8]), Malformed> {
    let (&kind, rest) = bytes.split_first().ok_or("empty result")?;
    match kind {
        COUNT => {
            let (count, rest) = take::<8>(rest)?;
            let count = usize::try_from(u64::from_le_bytes(count))
                .map_err(|_| "byte count does not fit this machine")?;
            Ok((Ok(count), rest))
        }
        ERRNO => {
            let (errno, rest) = take::<4>(rest)?;
            match i32::from_le_bytes(errno) {
                errno if errno > 0 => Ok((Err(errno), rest)),
                _ => Err("errno is not positive"),
            }
        }
        _ => Err("unknown result kind"),
    }
}

/// Decodes a complete result message whose count may not exceed `cap`.
pub(crate) fn decode_result(bytes: &[u8], cap: usize) -> Result<Result<usize, Errno>, Malformed> {
    let (result, rest) = decode_result_prefix(bytes)?;
    if !rest.is_empty() {
        return Err("trailing bytes after result");
    }
    match result {
        Ok(count) if count > cap => Err("byte count exceeds the agreed length"),
        other => Ok(other),
    }
}

/// Decodes a result whose count may not exceed `cap` from the front of
/// `bytes`; returns it and the rest.
pub(crate) fn decode_result_from(
    bytes: &[u8],
    cap: usize,
) -> Result<(Result<usize, Errno>, &[u8]), Malformed> {
    match decode_result_prefix(bytes)? {
        (Ok(count), _) if count > cap => Err("byte count exceeds the agreed length"),
        other => Ok(other),
    }
}

/// One decoded chunk message (see the module documentation).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Chunk<'a> {
    /// All `full` bytes of the chunk; more chunks may follow.
    Full(&'a [u8]),
    /// The final message: a short count with its bytes, or an errno (no
    /// bytes).
    Final(Result<usize, Errno>, &'a [u8]),
}

/// Whether a chunk message of `len` bytes for a `full`-byte chunk is a full
/// chunk (so that, unless it is the last chunk of the buffer, more follow).
pub(crate) fn is_full_chunk(len: usize, full: usize) -> bool {
    Some(len) == full.checked_add(4)
}

/// Encodes the chunk message for a `full`-byte chunk whose read produced
/// `result`, with `data` the bytes read (`data.len()` equal to the count,
/// empty for an errno).
pub(crate) fn encode_chunk(result: Result<usize, Errno>, data: &[u8], full: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() + 14);
    if result == Ok(full) {
        out.extend_from_slice(data);
        out.extend_from_slice(&crc32fast::hash(data).to_le_bytes());
        return out;
    }
    encode_result(result, &mut out);
    if result.is_ok() {
        out.extend_from_slice(data);
    }
    let crc = !crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    if is_full_chunk(out.len(), full) {
        out.push(0);
    }
    out
}

/// Decodes a chunk message for a `full`-byte chunk, checking its CRC.
pub(crate) fn decode_chunk(bytes: &[u8], full: usize) -> Result<Chunk<'_>, Malformed> {
    if is_full_chunk(bytes.len(), full) {
        let (data, crc) = bytes.split_at(full);
        return if crc32fast::hash(data).to_le_bytes() == crc {
            Ok(Chunk::Full(data))
        } else {
            Err("chunk checksum mismatch")
        };
    }
    let (result, rest) = decode_result_prefix(bytes)?;
    let count = match result {
        Ok(count) if count >= full => return Err("final chunk is not short"),
        Ok(count) => count,
        Err(_) => 0,
    };
    if rest.len() < count {
        return Err("message too short");
    }
    let (data, rest) = rest.split_at(count);
    let (crc, rest) = take::<4>(rest)?;
    let covered = bytes.len() - rest.len() - 4;
    let padded = is_full_chunk(covered + 4, full);
    match (rest, padded) {
        ([], false) | ([0], true) => {}
        _ => return Err("trailing bytes after chunk"),
    }
    if (!crc32fast::hash(&bytes[..covered])).to_le_bytes() != crc {
        return Err("chunk checksum mismatch");
    }
    Ok(Chunk::Final(result, data))
}

/// Encodes `digest`.
pub(crate) fn encode_digest(digest: &Digest) -> Vec<u8> {
    let mut out = Vec::with_capacity(29);
    out.extend_from_slice(&digest.offset.to_le_bytes());
    out.extend_from_slice(&(digest.requested as u64).to_le_bytes());
    encode_result(digest.outcome.result(), &mut out);
    if let Outcome::Data { crc, .. } = digest.outcome {
        out.extend_from_slice(&crc.to_le_bytes());
    }
    out
}

/// Decodes a digest message.
pub(crate) fn decode_digest(bytes: &[u8]) -> Result<Digest, Malformed> {
    let (offset, rest) = take::<8>(bytes)?;
    let (requested, rest) = take::<8>(rest)?;
    let requested = usize::try_from(u64::from_le_bytes(requested))
        .map_err(|_| "requested length does not fit this machine")?;
    let (result, rest) = decode_result_prefix(rest)?;
    let (outcome, rest) = match result {
        Ok(len) => {
            let (crc, rest) = take::<4>(rest)?;
            let crc = u32::from_le_bytes(crc);
            (Outcome::Data { len, crc }, rest)
        }
        Err(errno) => (Outcome::Error(errno), rest),
    };
    if !rest.is_empty() {
        return Err("trailing bytes after digest");
    }
    Ok(Digest {
        offset: u64::from_le_bytes(offset),
        requested,
        outcome,
    })
}

/// Splits `N` bytes off the front of `bytes`.
fn take<const N: usize>(bytes: &[u8]) -> Result<([u8; N], &[u8]), Malformed> {
    if bytes.len() < N {
        return Err("message too short");
    }
    let (head, rest) = bytes.split_at(N);
    let mut array = [0; N];
    array.copy_from_slice(head);
    Ok((array, rest))
}

#[cfg(test)]
mod tests {
    use super::*;
    use libc::{EIO, ENOSPC};

    fn digests() -> [Digest; 3] {
        [
            Digest {
                offset: 7,
                requested: 10,
                outcome: Outcome::data(b"hello"),
            },
            Digest {
                offset: u64::MAX,
                requested: 0,
                outcome: Outcome::Data { len: 0, crc: 0 },
            },
            Digest {
                offset: 0,
                requested: 4096,
                outcome: Outcome::Error(ENOSPC),
            },
        ]
    }

    #[test]
    fn digests_round_trip_with_exact_lengths() {
        for d in digests() {
            let bytes = encode_digest(&d);
            let expected_len = if matches!(d.outcome, Outcome::Data { .. }) {
                29
            } else {
                21
            };
            assert_eq!(bytes.len(), expected_len);
            assert_eq!(decode_digest(&bytes), Ok(d));
        }
    }

    #[test]
    fn every_truncation_or_extension_of_a_digest_is_rejected() {
        for d in digests() {
            let bytes = encode_digest(&d);
            for cut in 0..bytes.len() {
                assert!(decode_digest(&bytes[..cut]).is_err(), "{d:?} cut at {cut}");
            }
            let mut longer = bytes.clone();
            longer.push(0);
            assert_eq!(decode_digest(&longer), Err("trailing bytes after digest"));
        }
    }

    #[test]
    fn bad_kinds_and_errnos_are_rejected() {
        let mut bytes = encode_digest(&digests()[0]);
        bytes[16] = 9;
        assert_eq!(decode_digest(&bytes), Err("unknown result kind"));
        let mut out = Vec::new();
        encode_result(Err(0), &mut out);
        assert_eq!(decode_result(&out, 10), Err("errno is not positive"));
        out.clear();
        encode_result(Err(-EIO), &mut out);
        assert_eq!(decode_result(&out, 10), Err("errno is not positive"));
    }

    #[test]
    fn chunks_round_trip_and_finality_follows_from_the_length() {
        let data: Vec<u8> = (0..40u8).collect();
        for full in [0usize, 1, 5, 9, 13, 16, 40] {
            let mut cases = vec![(Err(EIO), 0), (Err(ENOSPC), 0)];
            cases.extend((0..=full.min(data.len())).map(|n| (Ok(n), n)));
            for (result, n) in cases {
                let bytes = encode_chunk(result, &data[..n], full);
                let full_chunk = result == Ok(full);
                assert_eq!(
                    is_full_chunk(bytes.len(), full),
                    full_chunk,
                    "{full} {result:?}"
                );
                let expected = if full_chunk {
                    Chunk::Full(&data[..n])
                } else {
                    Chunk::Final(result, &data[..n])
                };
                assert_eq!(
                    decode_chunk(&bytes, full),
                    Ok(expected),
                    "{full} {result:?}"
                );
                // Any single flipped bit is caught.
                for bit in 0..bytes.len() * 8 {
                    let mut bad = bytes.clone();
                    bad[bit / 8] ^= 1 << (bit % 8);
                    if let Ok(chunk) = decode_chunk(&bad, full) {
                        panic!("flip {bit} of {full} {result:?} accepted as {chunk:?}");
                    }
                }
                // So is any truncation or extension.
                for cut in 0..bytes.len() {
                    assert!(
                        decode_chunk(&bytes[..cut], full).is_err(),
                        "{full} {result:?} cut {cut}"
                    );
                }
                let mut longer = bytes.clone();
                longer.push(0);
                assert!(decode_chunk(&longer, full).is_err());
            }
        }
    }

    #[test]
    fn results_round_trip_and_respect_the_cap() {
        for (result, cap) in [
            (Ok(0), 0),
            (Ok(4096), 4096),
            (Err(ENOSPC), 0),
            (Err(EIO), 8),
        ] {
            let mut out = Vec::new();
            encode_result(result, &mut out);
            assert_eq!(decode_result(&out, cap), Ok(result));
        }
        let mut out = Vec::new();
        encode_result(Ok(11), &mut out);
        assert_eq!(
            decode_result(&out, 10),
            Err("byte count exceeds the agreed length")
        );
        assert_eq!(decode_result(&[], 10), Err("empty result"));
        assert_eq!(decode_result(&[COUNT, 1, 2], 10), Err("message too short"));
    }
}
