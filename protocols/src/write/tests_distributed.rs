//! Scenario tests of Distributed Write, table-driven over degrees, buffer
//! sizes and both link kinds.

use crate::memory::{Faults, MemoryFile};
use crate::testkit::*;
use crate::{OpError, WriteProtocol, EIO};
use libc::ENOSPC;

const CHUNK: usize = 16;
const OFFSET: u64 = 300;
const SIZES: [usize; 6] = [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 7 * CHUNK + 3];
const LONG: usize = 7 * CHUNK + 3;
const PROTOCOL: WriteProtocol = WriteProtocol::Distributed { chunk: CHUNK };

fn data(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 13 + 1) as u8).collect()
}

/// The test file after `data(len)` was written at `OFFSET`.
fn written(len: usize) -> Vec<u8> {
    let mut bytes = content();
    bytes[OFFSET as usize..OFFSET as usize + len].copy_from_slice(&data(len));
    bytes
}

fn requests(r: usize, len: usize, bad: Option<usize>) -> Vec<(u64, Vec<u8>)> {
    (0..r)
        .map(|i| {
            let mut d = data(len);
            if Some(i) == bad {
                d[len / 2] ^= 0x10;
            }
            (OFFSET, d)
        })
        .collect()
}

/// Bytes of the pieces `i` with `owner(i) == me`.
fn share(len: usize, owner: impl Fn(usize) -> usize, me: usize) -> u64 {
    crate::chunks::pieces(len, CHUNK)
        .iter()
        .enumerate()
        .filter(|(i, _)| owner(*i) == me)
        .map(|(_, p)| p.len() as u64)
        .sum()
}

#[test]
fn distributed_writes_the_buffer_once_split_across_the_replicas() {
    for links in BOTH {
        for r in 1..=3 {
            for len in SIZES {
                let file = MemoryFile::new(content());
                let got = write_all(PROTOCOL, links.make(r), &file, &[], &requests(r, len, None));
                let case = format!("{links:?} r={r} len={len}");
                assert_all_return(&got, &Ok(len));
                assert_eq!(file.contents(), written(len), "{case}");
                assert_eq!(file.bytes_written(), len as u64, "{case}");
                assert_eq!(
                    file.pwrite_calls(),
                    crate::chunks::pieces(len, CHUNK).len() as u64
                );
                for (i, replica) in got.iter().enumerate() {
                    assert_eq!(
                        replica.bytes_written,
                        share(len, |p| p % r, i),
                        "{case} {i}"
                    );
                    assert!(replica.reports.is_empty());
                    assert_eq!(replica.preads, 0);
                    // Digests and results, one of each to every other replica.
                    assert_eq!(replica.messages_sent, 2 * (r as u64 - 1), "{case} {i}");
                }
            }
        }
    }
}

#[test]
fn distributed_r3_corrupted_buffer_is_outvoted_and_its_pieces_written_by_the_source() {
    for links in BOTH {
        for bad in 0..3 {
            let file = MemoryFile::new(content());
            let got = write_all(
                PROTOCOL,
                links.make(3),
                &file,
                &[],
                &requests(3, LONG, Some(bad)),
            );
            assert_all_return(&got, &Ok(LONG));
            assert_eq!(file.contents(), written(LONG), "{links:?} bad={bad}");
            assert_eq!(file.bytes_written(), LONG as u64);
            let source = usize::from(bad == 0);
            let owner = |p: usize| if p % 3 == bad { source } else { p % 3 };
            for (i, replica) in got.iter().enumerate() {
                assert_eq!(
                    replica.bytes_written,
                    share(LONG, owner, i),
                    "bad={bad} {i}"
                );
            }
            assert_eq!(got[bad].pwrites, 0);
            let report = the_report(&got);
            assert_eq!(report.disagreeing, vec![bad]);
            assert_eq!(report.corrected_from, Some(source));
        }
    }
}

#[test]
fn distributed_r2_corrupted_buffer_leaves_the_file_untouched() {
    for links in BOTH {
        for bad in 0..2 {
            let file = MemoryFile::new(content());
            let got = write_all(
                PROTOCOL,
                links.make(2),
                &file,
                &[],
                &requests(2, LONG, Some(bad)),
            );
            assert_all_return(&got, &Err(OpError::Io(EIO)));
            assert_eq!(file.contents(), content());
            assert_eq!(file.pwrite_calls(), 0);
            let report = the_report(&got);
            assert_eq!(report.disagreeing, vec![0, 1]);
            assert!(!report.corrected());
        }
    }
}

#[test]
fn distributed_enospc_on_one_writer_is_every_replicas_errno() {
    let full = Faults {
        write_error: Some(ENOSPC),
        ..Faults::NONE
    };
    for links in BOTH {
        for r in 1..=3 {
            for victim in 0..r {
                let mut faults = vec![Faults::NONE; r];
                faults[victim] = full;
                let file = MemoryFile::new(content());
                let got = write_all(
                    PROTOCOL,
                    links.make(r),
                    &file,
                    &faults,
                    &requests(r, LONG, None),
                );
                assert_all_return(&got, &Err(OpError::Io(ENOSPC)));
                assert!(got.iter().all(|x| x.reports.is_empty()));
                // The failing replica stops after its first piece.
                assert_eq!(got[victim].pwrites, 1, "{links:?} r={r} victim={victim}");
            }
        }
    }
}

#[test]
fn distributed_chunk_zero_is_one_piece_and_the_name_is_distributed() {
    let protocol = WriteProtocol::Distributed { chunk: 0 };
    assert_eq!(protocol.name(), "distributed");
    let file = MemoryFile::new(content());
    let got = write_all(
        protocol,
        BOTH[1].make(3),
        &file,
        &[],
        &requests(3, LONG, None),
    );
    assert_all_return(&got, &Ok(LONG));
    assert_eq!(file.contents(), written(LONG));
    assert_eq!((got[0].pwrites, got[1].pwrites, got[2].pwrites), (1, 0, 0));
}

#[test]
fn distributed_short_write_of_a_piece_gives_the_count_up_to_it_everywhere() {
    for links in BOTH {
        let mut faults = vec![Faults::NONE; 3];
        faults[1] = Faults {
            write_limit: Some(5),
            ..Faults::NONE
        };
        let file = MemoryFile::new(content());
        let got = write_all(
            PROTOCOL,
            links.make(3),
            &file,
            &faults,
            &requests(3, LONG, None),
        );
        // Piece 0 (replica 0) in full, piece 1 (replica 1) short by 11 bytes.
        assert_all_return(&got, &Ok(CHUNK + 5));
        assert!(got.iter().all(|x| x.reports.is_empty()));
        // Replica 1 stopped after its short piece; the others wrote theirs.
        assert_eq!(got[1].pwrites, 1, "{links:?}");
        let contents = file.contents();
        let start = OFFSET as usize;
        assert_eq!(contents[start..start + CHUNK + 5], data(LONG)[..CHUNK + 5]);
    }
}
