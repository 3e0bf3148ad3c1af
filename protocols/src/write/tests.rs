//! Scenario tests of the write protocols over the in-memory link and file.

use crate::memory::{link_set, run_replicas, Faults, MemoryFile};
use crate::report::OpKind;
use crate::tag::{tag, Step};
use crate::testkit::*;
use crate::vote::{Digest, Outcome};
use crate::{wire, write, OpError, ReplicaLink, WriteProtocol, EIO};
use libc::ENOSPC;

const OFFSET: u64 = 300;

fn data() -> Vec<u8> {
    (0..256u32).map(|i| (i * 13 + 1) as u8).collect()
}

fn corrupted() -> Vec<u8> {
    let mut bytes = data();
    bytes[42] ^= 0x10;
    bytes
}

/// `r` replicas writing `data()` at `OFFSET`, replica `bad` (if any) a
/// corrupted copy.
fn requests(r: usize, bad: Option<usize>) -> Vec<(u64, Vec<u8>)> {
    (0..r)
        .map(|i| (OFFSET, if Some(i) == bad { corrupted() } else { data() }))
        .collect()
}

/// The test file after `data()` was written once at `OFFSET`.
fn written() -> Vec<u8> {
    let mut bytes = content();
    bytes[OFFSET as usize..OFFSET as usize + data().len()].copy_from_slice(&data());
    bytes
}

fn full() -> Faults {
    Faults {
        write_error: Some(ENOSPC),
        ..Faults::NONE
    }
}

#[test]
fn simple_unanimous_writes_exactly_once() {
    for links in BOTH {
        for r in 1..=3 {
            let file = MemoryFile::new(content());
            let got = write_all(
                WriteProtocol::Simple,
                links.make(r),
                &file,
                &[],
                &requests(r, None),
            );
            assert_all_return(&got, &Ok(data().len()));
            assert_eq!(file.contents(), written(), "{links:?} r={r}");
            assert_eq!(file.pwrite_calls(), 1);
            assert_eq!(file.bytes_written(), data().len() as u64);
            for (i, replica) in got.iter().enumerate() {
                assert_eq!(
                    replica.pwrites,
                    u64::from(i == 0),
                    "replica {i} is not the writer"
                );
                assert!(replica.reports.is_empty());
                // Digests to every other replica; the writer also sends the result.
                let results = if i == 0 { r - 1 } else { 0 };
                assert_eq!(replica.messages_sent, (r - 1 + results) as u64);
            }
        }
    }
}

#[test]
fn simple_r3_corrupted_buffer_on_any_replica_writes_the_majority() {
    for links in BOTH {
        for bad in 0..3 {
            let file = MemoryFile::new(content());
            let got = write_all(
                WriteProtocol::Simple,
                links.make(3),
                &file,
                &[],
                &requests(3, Some(bad)),
            );
            assert_all_return(&got, &Ok(data().len()));
            assert_eq!(file.contents(), written(), "{links:?} bad={bad}");
            assert_eq!(
                (file.pwrite_calls(), file.bytes_written()),
                (1, data().len() as u64)
            );
            let writer = if bad == 0 { 1 } else { 0 };
            for (i, replica) in got.iter().enumerate() {
                assert_eq!(replica.pwrites, u64::from(i == writer), "replica {i}");
            }
            let report = the_report(&got);
            assert_eq!(report.op, OpKind::Write);
            assert_eq!((report.rank, report.path.as_str()), (RANK, PATH));
            assert_eq!((report.offset, report.len), (OFFSET, data().len()));
            assert_eq!(report.disagreeing, vec![bad]);
            assert_eq!(report.corrected_from, Some(writer));
        }
    }
}

#[test]
fn simple_r2_corrupted_buffer_leaves_the_file_untouched() {
    for links in BOTH {
        for bad in 0..2 {
            let file = MemoryFile::new(content());
            let got = write_all(
                WriteProtocol::Simple,
                links.make(2),
                &file,
                &[],
                &requests(2, Some(bad)),
            );
            assert_all_return(&got, &Err(OpError::Io(EIO)));
            assert_eq!(file.contents(), content());
            assert_eq!((file.pwrite_calls(), file.bytes_written()), (0, 0));
            assert!(got.iter().all(|replica| replica.pwrites == 0));
            let report = the_report(&got);
            assert_eq!(report.op, OpKind::Write);
            assert_eq!((report.rank, report.path.as_str()), (RANK, PATH));
            assert_eq!((report.offset, report.len), (OFFSET, data().len()));
            assert_eq!(report.disagreeing, vec![0, 1]);
            assert!(!report.corrected());
        }
    }
}

#[test]
fn simple_r3_three_different_buffers_write_nothing() {
    let file = MemoryFile::new(content());
    let mut reqs = requests(3, Some(0));
    reqs[1].1[7] ^= 1;
    let got = write_all(WriteProtocol::Simple, link_set(3), &file, &[], &reqs);
    assert_all_return(&got, &Err(OpError::Io(EIO)));
    assert_eq!(file.contents(), content());
    assert_eq!(the_report(&got).disagreeing, vec![0, 1, 2]);
}

#[test]
fn simple_enospc_on_the_writer_is_returned_by_every_replica() {
    for links in BOTH {
        for r in 1..=3 {
            let file = MemoryFile::new(content());
            let got = write_all(
                WriteProtocol::Simple,
                links.make(r),
                &file,
                &[full()],
                &requests(r, None),
            );
            assert_all_return(&got, &Err(OpError::Io(ENOSPC)));
            assert_eq!(file.contents(), content());
            assert_eq!(got[0].pwrites, 1);
            assert!(got.iter().all(|replica| replica.reports.is_empty()));
        }
    }
}

#[test]
fn simple_r3_enospc_on_the_stand_in_writer_is_returned_by_every_replica() {
    // Replica 0's buffer is outvoted, so replica 1 writes and hits ENOSPC.
    let file = MemoryFile::new(content());
    let faults = [Faults::NONE, full(), Faults::NONE];
    let got = write_all(
        WriteProtocol::Simple,
        link_set(3),
        &file,
        &faults,
        &requests(3, Some(0)),
    );
    assert_all_return(&got, &Err(OpError::Io(ENOSPC)));
    assert_eq!(file.contents(), content());
    assert_eq!(the_report(&got).corrected_from, Some(1));
}

#[test]
fn simple_write_fault_on_a_non_writer_has_no_effect() {
    let file = MemoryFile::new(content());
    let faults = [Faults::NONE, full()];
    let got = write_all(
        WriteProtocol::Simple,
        link_set(2),
        &file,
        &faults,
        &requests(2, None),
    );
    assert_all_return(&got, &Ok(data().len()));
    assert_eq!(file.contents(), written());
    assert_eq!(got[1].pwrites, 0);
}

#[test]
fn simple_r3_outvotes_a_replica_with_a_diverged_offset() {
    let file = MemoryFile::new(content());
    let mut reqs = requests(3, None);
    reqs[0].0 = 0;
    let got = write_all(WriteProtocol::Simple, link_set(3), &file, &[], &reqs);
    assert_all_return(&got, &Ok(data().len()));
    assert_eq!(file.contents(), written());
    let report = the_report(&got);
    assert_eq!(
        (report.disagreeing.clone(), report.offset),
        (vec![0], OFFSET)
    );
    assert_eq!(report.digests[0].offset, 0);
}

#[test]
fn simple_write_past_the_end_extends_the_file_once() {
    let file = MemoryFile::new(*b"head");
    let got = write_all(
        WriteProtocol::Simple,
        link_set(3),
        &file,
        &[],
        &[
            (8, b"tail".to_vec()),
            (8, b"tail".to_vec()),
            (8, b"tail".to_vec()),
        ],
    );
    assert_all_return(&got, &Ok(4));
    assert_eq!(file.contents(), b"head\0\0\0\0tail");
    assert_eq!(file.bytes_written(), 4);
}

#[test]
fn simple_rejects_a_writer_result_beyond_the_buffer() {
    let file = MemoryFile::new(content());
    let got = run_replicas(link_set(2), |mut link| {
        if link.me() == 0 {
            // A scripted writer that votes honestly, then claims 1000 bytes.
            let digest = Digest {
                offset: OFFSET,
                requested: data().len(),
                outcome: Outcome::data(&data()),
            };
            link.exchange_all(tag(1, Step::Vote), &wire::encode_digest(&digest))
                .expect("exchange");
            let mut message = Vec::new();
            wire::encode_result(Ok(1000), &mut message);
            link.send(1, tag(1, Step::Result), &message).expect("send");
            return None;
        }
        let mut io = file.io(Faults::NONE);
        let mut sink = |_| {};
        let mut ctx = context(1, &mut sink);
        Some(write::run(
            WriteProtocol::Simple,
            &mut ctx,
            &mut link,
            &mut io,
            &data(),
            OFFSET,
        ))
    });
    assert_eq!(
        got[1],
        Some(Err(OpError::Protocol {
            replica: 0,
            what: "byte count exceeds the agreed length"
        }))
    );
    assert_eq!(file.pwrite_calls(), 0);
}

#[test]
fn none_every_replica_writes_for_itself() {
    let file = MemoryFile::new(content());
    let got = write_all(
        WriteProtocol::None,
        link_set(3),
        &file,
        &[],
        &requests(3, None),
    );
    assert_all_return(&got, &Ok(data().len()));
    assert_eq!(file.contents(), written());
    assert_eq!(file.pwrite_calls(), 3);
    assert_eq!(file.bytes_written(), 3 * data().len() as u64);
    for replica in &got {
        assert_eq!((replica.pwrites, replica.messages_sent), (1, 0));
        assert!(replica.reports.is_empty());
    }
    let got = write_all(
        WriteProtocol::None,
        link_set(2),
        &file,
        &[Faults::NONE, full()],
        &requests(2, None),
    );
    assert_eq!(got[0].result, Ok(data().len()));
    assert_eq!(got[1].result, Err(OpError::Io(ENOSPC)));
}
