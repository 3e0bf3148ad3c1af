//! Cross-protocol tests: many operations in a row on one link set.

use crate::memory::{run_replicas, Faults, MemoryFile};
use crate::testkit::{Links, BOTH, PATH, RANK};
use crate::{read, write, Mismatch, OpContext, OpError, ReadProtocol, ReplicaLink, WriteProtocol};

const OPS: u64 = 60;

/// One operation's sequence number, result and (for reads) buffer.
type OpLog = (u64, Result<usize, OpError>, Vec<u8>);
/// One replica's operations and how many mismatch reports it received.
type ReplicaLog = (Vec<OpLog>, usize);
const CHUNK: usize = 64;

/// The chunk written by operation `seq`.
fn chunk(seq: u64) -> Vec<u8> {
    (0..CHUNK)
        .map(|i| (seq as u8).wrapping_mul(31).wrapping_add(i as u8))
        .collect()
}

/// Replica results of `OPS` operations: even `seq` writes `chunk(seq)` at
/// `seq / 2 * CHUNK`, odd `seq` reads it back. Each operation has one
/// faulty replica (`seq % 3`): a corrupted buffer or a flipped bit.
fn run(links: Links, file: &MemoryFile) -> Vec<ReplicaLog> {
    run_with(
        links,
        file,
        ReadProtocol::Simple,
        WriteProtocol::Simple,
        true,
    )
}

/// Like `run`, under `read` and `write`, with the faults only if `faulty`.
fn run_with(
    links: Links,
    file: &MemoryFile,
    read_protocol: ReadProtocol,
    write_protocol: WriteProtocol,
    faulty: bool,
) -> Vec<ReplicaLog> {
    run_replicas(links.make(3), |mut link| {
        let me = link.me();
        let mut reports = 0;
        let mut results = Vec::new();
        for seq in 0..OPS {
            let victim = faulty && me == (seq % 3) as usize;
            let offset = seq / 2 * CHUNK as u64;
            let mut sink = |_: Mismatch| reports += 1;
            let mut ctx = OpContext {
                rank: RANK,
                path: PATH,
                seq,
                on_mismatch: &mut sink,
                policy: Default::default(),
            };
            if seq % 2 == 0 {
                let mut data = chunk(seq);
                if victim {
                    data[seq as usize % CHUNK] ^= 0x80;
                }
                let mut io = file.io(Faults::NONE);
                let result =
                    write::run(write_protocol, &mut ctx, &mut link, &mut io, &data, offset);
                results.push((seq, result, Vec::new()));
            } else {
                let flip = Faults {
                    flip_read_bit: Some(seq as usize),
                    ..Faults::NONE
                };
                let mut io = file.io(if victim { flip } else { Faults::NONE });
                let mut buf = vec![0; CHUNK];
                let result = read::run(
                    read_protocol,
                    &mut ctx,
                    &mut link,
                    &mut io,
                    &mut buf,
                    offset,
                );
                results.push((seq, result, buf));
            }
        }
        (results, reports)
    })
}

#[test]
fn consecutive_operations_with_faults_do_not_mix_up() {
    for links in BOTH {
        let file = MemoryFile::new(Vec::new());
        let got = run(links, &file);
        let expected_file: Vec<u8> = (0..OPS).step_by(2).flat_map(chunk).collect();
        assert_eq!(file.contents(), expected_file, "{links:?}");
        assert_eq!(file.pwrite_calls(), OPS / 2);
        for (replica, (results, reports)) in got.iter().enumerate() {
            assert_eq!(*reports, OPS as usize, "every operation had a minority");
            for (seq, result, buf) in results {
                assert_eq!(*result, Ok(CHUNK), "replica {replica} seq {seq}");
                if seq % 2 == 1 {
                    assert_eq!(*buf, chunk(seq - 1), "replica {replica} seq {seq}");
                }
            }
        }
    }
}

#[test]
fn consecutive_operations_under_every_new_protocol_do_not_mix_up() {
    let reads = [
        ReadProtocol::ExtendedSimple { readers: 2 },
        ReadProtocol::ReadDistribute,
        ReadProtocol::Chained,
        ReadProtocol::ChunkedChained { chunk: 16 },
        ReadProtocol::DistributedChunked { chunk: 16 },
    ];
    for links in BOTH {
        for read_protocol in reads {
            let file = MemoryFile::new(Vec::new());
            let write_protocol = WriteProtocol::Distributed { chunk: 16 };
            let got = run_with(links, &file, read_protocol, write_protocol, false);
            let expected_file: Vec<u8> = (0..OPS).step_by(2).flat_map(chunk).collect();
            assert_eq!(
                file.contents(),
                expected_file,
                "{links:?} {read_protocol:?}"
            );
            assert_eq!(file.bytes_written(), OPS / 2 * CHUNK as u64);
            for (replica, (results, reports)) in got.iter().enumerate() {
                assert_eq!(*reports, 0);
                for (seq, result, buf) in results {
                    assert_eq!(*result, Ok(CHUNK), "replica {replica} seq {seq}");
                    if seq % 2 == 1 {
                        assert_eq!(*buf, chunk(seq - 1), "replica {replica} seq {seq}");
                    }
                }
            }
        }
    }
}
