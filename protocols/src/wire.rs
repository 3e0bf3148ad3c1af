//! Byte encoding of the small protocol messages: a [`Digest`] (vote step)
//! and an I/O result (a byte count or an errno). All integers are
//! little-endian; every message has one exact length per kind, and
//! decoding rejects anything else instead of guessing.
//!
//! ```text
//! result  = kind:u8 (0 = count, 1 = errno) · count:u64 | errno:i32
//! digest  = offset:u64 · requested:u64 · result      (count = data length)
//!           · crc:u32 when kind = 0
//! trailer = result · crc:u32                (follows a chunk's data message)
//! ```
//!
//! A chunk's data travel as a bare message of their own (see `transfer`),
//! so that they move straight between application buffers; the trailer
//! after them carries the read's result and the data's CRC-32.

use crate::announce::Operation;
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

/// The longest trailer [`encode_trailer`] produces.
pub(crate) const TRAILER_MAX: usize = 13;

/// Encodes the trailer that follows a chunk's data message: the read's
/// `result` and the CRC-32 of the bytes sent.
pub(crate) fn encode_trailer(result: Result<usize, Errno>, crc: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(TRAILER_MAX);
    encode_result(result, &mut out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// Decodes a trailer for a chunk of at most `cap` bytes.
pub(crate) fn decode_trailer(
    bytes: &[u8],
    cap: usize,
) -> Result<(Result<usize, Errno>, u32), Malformed> {
    let (result, rest) = decode_result_from(bytes, cap)?;
    let (crc, rest) = take::<4>(rest)?;
    if !rest.is_empty() {
        return Err("trailing bytes after trailer");
    }
    Ok((result, u32::from_le_bytes(crc)))
}

/// Encodes an operation announcement and this replica's refusal of it
/// (the errno it cannot make the call with; 0 for none):
/// `offset:u64 · len:u64 · refusal:i32 · kind_len:u8 · kind · path` (path
/// to the end). The path travels whole: a cut copy would compare unequal
/// with the whole one (a false divergence), and paths differing only past
/// the cut would compare equal (a missed one).
pub(crate) fn encode_operation(op: &Operation, refusal: Option<Errno>) -> Vec<u8> {
    let kind = &op.kind.as_bytes()[..op.kind.len().min(255)];
    let path = op.path.as_bytes();
    let mut out = Vec::with_capacity(21 + kind.len() + path.len());
    out.extend_from_slice(&op.offset.to_le_bytes());
    out.extend_from_slice(&op.len.to_le_bytes());
    out.extend_from_slice(&refusal.unwrap_or(0).to_le_bytes());
    out.push(kind.len() as u8);
    out.extend_from_slice(kind);
    out.extend_from_slice(path);
    out
}

/// Decodes an operation announcement and the sender's refusal.
pub(crate) fn decode_operation(bytes: &[u8]) -> Result<(Operation, Option<Errno>), Malformed> {
    let (offset, rest) = take::<8>(bytes)?;
    let (len, rest) = take::<8>(rest)?;
    let (refusal, rest) = take::<4>(rest)?;
    let refusal = match i32::from_le_bytes(refusal) {
        0 => None,
        errno if errno > 0 => Some(errno),
        _ => return Err("refusal errno is negative"),
    };
    let (&kind_len, rest) = rest.split_first().ok_or("message too short")?;
    if rest.len() < kind_len as usize {
        return Err("message too short");
    }
    let (kind, path) = rest.split_at(kind_len as usize);
    let op = Operation {
        kind: String::from_utf8_lossy(kind).into_owned(),
        path: String::from_utf8_lossy(path).into_owned(),
        offset: u64::from_le_bytes(offset),
        len: u64::from_le_bytes(len),
    };
    Ok((op, refusal))
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
    fn trailers_round_trip_and_reject_any_truncation_or_extension() {
        for (result, cap) in [(Ok(0), 0), (Ok(7), 9), (Err(ENOSPC), 4)] {
            let bytes = encode_trailer(result, 0xdead_beef);
            assert!(bytes.len() <= TRAILER_MAX);
            assert_eq!(decode_trailer(&bytes, cap), Ok((result, 0xdead_beef)));
            for cut in 0..bytes.len() {
                assert!(decode_trailer(&bytes[..cut], cap).is_err(), "cut {cut}");
            }
            let mut longer = bytes.clone();
            longer.push(0);
            assert!(decode_trailer(&longer, cap).is_err());
        }
        assert!(decode_trailer(&encode_trailer(Ok(5), 0), 4).is_err());
    }

    #[test]
    fn operations_round_trip_with_whole_paths_and_refusals() {
        for (path_len, refusal) in [(0, None), (512, Some(libc::EMFILE)), (8192, None)] {
            let op = Operation {
                kind: "open".into(),
                path: "p".repeat(path_len),
                offset: 3,
                len: 4,
            };
            let bytes = encode_operation(&op, refusal);
            assert_eq!(decode_operation(&bytes), Ok((op, refusal)));
            assert!(decode_operation(&bytes[..20]).is_err());
        }
        let mut bytes = encode_operation(&Operation::default(), None);
        bytes[16..20].copy_from_slice(&(-5i32).to_le_bytes());
        assert_eq!(decode_operation(&bytes), Err("refusal errno is negative"));
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
