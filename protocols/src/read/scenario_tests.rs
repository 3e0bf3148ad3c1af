//! Scenario tests of the read protocols beyond None and Simple, table-driven
//! over protocols, degrees, buffer sizes and both link kinds.

use crate::memory::Faults;
use crate::memory::MemoryFile;
use crate::tag::{tag, Step};
use crate::testkit::*;
use crate::{OnMismatch, OpError, Policy, ReadProtocol, EIO};
use libc::ESTALE;

const CHUNK: usize = 16;
const OFFSET: u64 = 100;
const SIZES: [usize; 6] = [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 7 * CHUNK + 3];
const LONG: usize = 7 * CHUNK + 3;

const PROTOCOLS: [ReadProtocol; 7] = [
    ReadProtocol::ExtendedSimple { readers: 2 },
    ReadProtocol::ExtendedSimple { readers: 1 },
    ReadProtocol::ReadDistribute,
    ReadProtocol::Chained,
    ReadProtocol::ChunkedChained { chunk: CHUNK },
    ReadProtocol::DistributedChunked { chunk: CHUNK },
    ReadProtocol::ChunkedChained { chunk: 0 },
];

/// The chunk lengths of a `len`-byte buffer (at least one chunk).
fn chunk_lens(len: usize, chunk: usize) -> Vec<usize> {
    crate::chunks::pieces(len, chunk)
        .iter()
        .map(|r| r.len())
        .collect()
}

/// Bytes replica `me` of `r` reads itself when `len` bytes are available.
fn share(protocol: ReadProtocol, r: usize, me: usize, len: usize) -> u64 {
    let bytes = match protocol {
        ReadProtocol::ExtendedSimple { readers } if me < readers.clamp(1, r) => len,
        ReadProtocol::ExtendedSimple { .. } => 0,
        ReadProtocol::DistributedChunked { chunk } => chunk_lens(len, chunk)
            .iter()
            .enumerate()
            .filter(|(i, _)| i % r == me)
            .map(|(_, n)| n)
            .sum(),
        _ if me == 0 => len,
        _ => 0,
    };
    bytes as u64
}

/// Messages replica `me` of `r` sends for a full `len`-byte read.
fn messages(protocol: ReadProtocol, r: usize, me: usize, len: usize) -> u64 {
    let others = r - 1;
    let check = others;
    let count = match protocol {
        ReadProtocol::ExtendedSimple { readers } if readers.clamp(1, r) == r && r > 1 => others,
        ReadProtocol::ExtendedSimple { readers } if readers.clamp(1, r) > 1 => {
            // Vote, then the source (replica 0) sends data and trailer to
            // each non-reader.
            let data = if me == 0 { 2 * (r - readers) } else { 0 };
            others + data + check
        }
        ReadProtocol::ExtendedSimple { .. } | ReadProtocol::ReadDistribute => {
            check + if me == 0 { 2 * others } else { 0 }
        }
        ReadProtocol::Chained => check + 2 * usize::from(me + 1 < r),
        ReadProtocol::ChunkedChained { chunk } => {
            check
                + if me + 1 < r {
                    2 * chunk_lens(len, chunk).len()
                } else {
                    0
                }
        }
        ReadProtocol::DistributedChunked { chunk } => {
            // Data and trailer to each other replica, in every round where
            // this replica owns a chunk.
            let chunks = chunk_lens(len, chunk).len();
            let owned_rounds = (0..chunks).filter(|i| i % r == me).count();
            check + 2 * owned_rounds * others
        }
        ReadProtocol::None | ReadProtocol::Simple | ReadProtocol::Auto { .. } => unreachable!(),
    };
    count as u64
}

#[test]
fn every_replica_gets_the_file_bytes_with_the_expected_work_and_messages() {
    for links in BOTH {
        for protocol in PROTOCOLS {
            for r in 1..=3 {
                for len in SIZES {
                    let file = MemoryFile::new(content());
                    let got = read_all(protocol, links.make(r), &file, &[], OFFSET, len);
                    let case =
                        format!("{links:?} {} {protocol:?} r={r} len={len}", protocol.name());
                    assert_all_return(&got, &Ok(len));
                    let expected = &content()[OFFSET as usize..OFFSET as usize + len];
                    for (i, replica) in got.iter().enumerate() {
                        assert_eq!(replica.buf, expected, "{case} replica {i}");
                        assert!(replica.reports.is_empty(), "{case}");
                        assert_eq!(replica.pwrites, 0, "{case}");
                        assert_eq!(
                            replica.bytes_read,
                            share(protocol, r, i, len),
                            "{case} replica {i} read"
                        );
                        assert_eq!(
                            replica.messages_sent,
                            messages(protocol, r, i, len),
                            "{case} replica {i} messages"
                        );
                    }
                    assert_eq!(file.bytes_written(), 0);
                }
            }
        }
    }
}

#[test]
fn eof_inside_the_buffer_gives_the_short_count_everywhere() {
    let file_len = content().len();
    for links in BOTH {
        for protocol in PROTOCOLS {
            for r in 1..=3 {
                for available in [0, 1, CHUNK, CHUNK + 5, 40] {
                    let offset = (file_len - available) as u64;
                    let file = MemoryFile::new(content());
                    let got = read_all(protocol, links.make(r), &file, &[], offset, LONG);
                    let case = format!("{links:?} {protocol:?} r={r} available={available}");
                    assert_all_return(&got, &Ok(available));
                    for (i, replica) in got.iter().enumerate() {
                        assert_eq!(
                            replica.buf[..available],
                            content()[file_len - available..],
                            "{case} replica {i}"
                        );
                        assert!(replica.reports.is_empty(), "{case}");
                    }
                }
            }
        }
    }
}

#[test]
fn a_read_error_on_the_reader_is_every_replicas_errno() {
    let failing = Faults {
        read_error: Some(ESTALE),
        ..Faults::NONE
    };
    for links in BOTH {
        for protocol in PROTOCOLS {
            for r in 1..=3 {
                let mut faults = vec![Faults::NONE; r];
                // The master; for Distributed Chunked the owner of chunk 1,
                // for Extended Simple every reader (else the readers disagree).
                match protocol {
                    ReadProtocol::DistributedChunked { .. } => faults[1 % r] = failing,
                    ReadProtocol::ExtendedSimple { readers } => {
                        faults[..readers.min(r)].fill(failing)
                    }
                    _ => faults[0] = failing,
                }
                let file = MemoryFile::new(content());
                let got = read_all(protocol, links.make(r), &file, &faults, OFFSET, LONG);
                let case = format!("{links:?} {protocol:?} r={r}");
                assert_all_return(&got, &Err(OpError::Io(ESTALE)));
                assert!(got.iter().all(|x| x.reports.is_empty()), "{case}");
            }
        }
    }
}

#[test]
fn a_damaged_transfer_is_repaired_from_its_source_or_eio_everywhere_under_error() {
    let error = Policy {
        on_mismatch: OnMismatch::Error,
        ..Policy::default()
    };
    for links in BOTH {
        for protocol in PROTOCOLS {
            for r in 2..=3 {
                let victim = r - 1;
                // The replica the victim's data come from.
                let from = match protocol {
                    ReadProtocol::Chained | ReadProtocol::ChunkedChained { .. } => victim - 1,
                    _ => 0,
                };
                if protocol == (ReadProtocol::ExtendedSimple { readers: 2 }) && r == 2 {
                    continue; // Simple Read: no transfer to damage.
                }
                for policy in [Policy::default(), error] {
                    let mut set = links.make(r);
                    set[victim].corrupt_next_from(from, tag(1, Step::Data));
                    let file = MemoryFile::new(content());
                    let got = read_all_with(policy, protocol, set, &file, &[], OFFSET, LONG);
                    let case = format!("{links:?} {protocol:?} r={r} {policy:?}");
                    let report = the_report(&got);
                    let expected = match protocol {
                        ReadProtocol::DistributedChunked { .. } if r == 2 => vec![0, 1],
                        _ => vec![victim],
                    };
                    assert_eq!(report.disagreeing, expected, "{case}");
                    assert_eq!((report.offset, report.len), (OFFSET, LONG), "{case}");
                    assert_eq!(report.digests.len(), r, "{case}");
                    // Distributed Chunked at r=2 has neither a source nor a majority.
                    let repairable = policy.on_mismatch == OnMismatch::Correct
                        && !(matches!(protocol, ReadProtocol::DistributedChunked { .. }) && r == 2);
                    if repairable {
                        assert_all_return(&got, &Ok(LONG));
                        let start = OFFSET as usize;
                        for (i, replica) in got.iter().enumerate() {
                            assert_eq!(
                                replica.buf,
                                content()[start..start + LONG],
                                "{case} replica {i}"
                            );
                        }
                        assert_eq!(report.corrected_from, Some(0), "{case}");
                    } else {
                        assert_all_return(&got, &Err(OpError::Io(EIO)));
                        assert!(!report.corrected(), "{case}");
                    }
                }
            }
        }
    }
}

#[test]
fn extended_simple_readers_that_disagree_give_eio_and_the_non_reader_never_reads() {
    for links in BOTH {
        let flip = Faults {
            flip_read_bit: Some(3),
            ..Faults::NONE
        };
        let file = MemoryFile::new(content());
        let got = read_all(
            ReadProtocol::ExtendedSimple { readers: 2 },
            links.make(3),
            &file,
            &[Faults::NONE, flip],
            OFFSET,
            LONG,
        );
        assert_all_return(&got, &Err(OpError::Io(EIO)));
        let report = the_report(&got);
        assert_eq!(report.disagreeing, vec![0, 1]);
        assert_eq!(report.digests.len(), 2);
        assert_eq!(got[2].preads, 0);
    }
}

#[test]
fn extended_simple_clamps_the_reader_count() {
    for readers in [0, 1, 3, 99] {
        let file = MemoryFile::new(content());
        let got = read_all(
            ReadProtocol::ExtendedSimple { readers },
            BOTH[1].make(3),
            &file,
            &[],
            OFFSET,
            LONG,
        );
        assert_all_return(&got, &Ok(LONG));
        let readers_seen = got.iter().filter(|x| x.preads > 0).count();
        assert_eq!(readers_seen, readers.clamp(1, 3), "readers={readers}");
    }
}

#[test]
fn protocol_names_match_the_configuration() {
    let names: Vec<&str> = [
        ReadProtocol::None,
        ReadProtocol::Simple,
        ReadProtocol::ExtendedSimple { readers: 2 },
        ReadProtocol::ReadDistribute,
        ReadProtocol::Chained,
        ReadProtocol::ChunkedChained { chunk: 1 },
        ReadProtocol::DistributedChunked { chunk: 1 },
    ]
    .iter()
    .map(|p| p.name())
    .collect();
    assert_eq!(
        names,
        [
            "none",
            "simple",
            "extended-simple",
            "read-distribute",
            "chained",
            "chunked-chained",
            "distributed-chunked"
        ]
    );
}

#[test]
fn chunked_chained_survives_damage_to_any_message_on_any_hop() {
    // The chain stays in step whichever message is damaged (a chunk's data
    // or its trailer, full or short), because finality is read from the
    // data message's length. Each chunk is two messages.
    let file_len = content().len();
    let file = MemoryFile::new(content());
    for links in BOTH {
        for (offset, messages) in [(OFFSET, 16u64), ((file_len - 40) as u64, 6)] {
            for victim in 1..3 {
                for k in 0..messages {
                    let mut set = links.make(3);
                    // Damage message `k` on this hop only.
                    set[victim].corrupt_nth_from(victim - 1, tag(1, Step::Data), k as usize);
                    let got = read_all_with(
                        Policy {
                            on_mismatch: OnMismatch::Error,
                            ..Policy::default()
                        },
                        ReadProtocol::ChunkedChained { chunk: CHUNK },
                        set,
                        &file,
                        &[],
                        offset,
                        LONG,
                    );
                    let case = format!("{links:?} offset={offset} victim={victim} k={k}");
                    assert_all_return(&got, &Err(OpError::Io(EIO)));
                    let report = the_report(&got);
                    let downstream: Vec<usize> = (victim..3).collect();
                    assert_eq!(report.disagreeing, downstream, "{case}");
                    // Every replica but the last forwarded every message.
                    for (i, replica) in got.iter().enumerate() {
                        let data = if i < 2 { messages } else { 0 };
                        assert_eq!(replica.messages_sent, data + 2, "{case} replica {i}");
                    }
                }
            }
        }
    }
}
