//! Scenario tests of the read protocols over the in-memory link and file.

use crate::memory::{link_set, run_replicas, Faults, MemoryFile};
use crate::report::OpKind;
use crate::tag::{tag, Step};
use crate::testkit::*;
use crate::vote::{Digest, Outcome};
use crate::{read, wire, LinkError, OpContext, OpError, ReadProtocol, ReplicaLink, EIO};
use libc::ESTALE;

const OFFSET: u64 = 100;
const LEN: usize = 200;

fn expected() -> Vec<u8> {
    content()[OFFSET as usize..OFFSET as usize + LEN].to_vec()
}

fn flip(bit: usize) -> Faults {
    Faults {
        flip_read_bit: Some(bit),
        ..Faults::NONE
    }
}

fn failing(errno: i32) -> Faults {
    Faults {
        read_error: Some(errno),
        ..Faults::NONE
    }
}

#[test]
fn simple_unanimous_returns_the_file_bytes_without_data_messages() {
    for links in BOTH {
        for r in 1..=3 {
            let file = MemoryFile::new(content());
            let got = read_all(ReadProtocol::Simple, links.make(r), &file, &[], OFFSET, LEN);
            assert_all_return(&got, &Ok(LEN));
            for (i, replica) in got.iter().enumerate() {
                assert_eq!(replica.buf, expected(), "{links:?} r={r} replica {i}");
                assert!(replica.reports.is_empty());
                assert_eq!(replica.preads, 1);
                // Digests only: one to each other replica.
                assert_eq!(replica.messages_sent, r as u64 - 1);
            }
        }
    }
}

#[test]
fn simple_r3_corrects_a_flipped_bit_on_any_replica() {
    for links in BOTH {
        for bad in 0..3 {
            let file = MemoryFile::new(content());
            let mut faults = [Faults::NONE; 3];
            faults[bad] = flip(8 * 17 + 3);
            let got = read_all(
                ReadProtocol::Simple,
                links.make(3),
                &file,
                &faults,
                OFFSET,
                LEN,
            );
            assert_all_return(&got, &Ok(LEN));
            for (i, replica) in got.iter().enumerate() {
                assert_eq!(replica.buf, expected(), "{links:?} bad={bad} replica {i}");
            }
            let source = if bad == 0 { 1 } else { 0 };
            let report = the_report(&got);
            assert_eq!(report.op, OpKind::Read);
            assert_eq!((report.rank, report.path.as_str()), (RANK, PATH));
            assert_eq!((report.offset, report.len), (OFFSET, LEN));
            assert_eq!(report.disagreeing, vec![bad]);
            assert_eq!(report.corrected_from, Some(source));
            // The source sent its digests plus the correction, nobody else sent data.
            for (i, replica) in got.iter().enumerate() {
                let data = u64::from(i == source);
                assert_eq!(replica.messages_sent, 2 + data, "replica {i}");
            }
        }
    }
}

#[test]
fn simple_r3_corrects_a_replica_whose_read_failed() {
    for bad in 0..3 {
        let file = MemoryFile::new(content());
        let mut faults = [Faults::NONE; 3];
        faults[bad] = failing(EIO);
        let got = read_all(
            ReadProtocol::Simple,
            link_set(3),
            &file,
            &faults,
            OFFSET,
            LEN,
        );
        assert_all_return(&got, &Ok(LEN));
        for replica in &got {
            assert_eq!(replica.buf, expected(), "bad={bad}");
        }
        let report = the_report(&got);
        assert_eq!(report.disagreeing, vec![bad]);
        assert_eq!(report.digests[bad].outcome, Outcome::Error(EIO));
        assert!(report.corrected());
    }
}

#[test]
fn simple_r2_flipped_bit_is_detected_with_eio_everywhere() {
    for links in BOTH {
        for bad in 0..2 {
            let file = MemoryFile::new(content());
            let mut faults = [Faults::NONE; 2];
            faults[bad] = flip(0);
            let got = read_all(
                ReadProtocol::Simple,
                links.make(2),
                &file,
                &faults,
                OFFSET,
                LEN,
            );
            assert_all_return(&got, &Err(OpError::Io(EIO)));
            let report = the_report(&got);
            assert_eq!(report.op, OpKind::Read);
            assert_eq!((report.rank, report.path.as_str()), (RANK, PATH));
            assert_eq!((report.offset, report.len), (OFFSET, LEN));
            assert_eq!(report.disagreeing, vec![0, 1]);
            assert!(!report.corrected());
            assert_ne!(report.digests[0], report.digests[1]);
        }
    }
}

#[test]
fn simple_r3_without_a_majority_returns_eio_everywhere() {
    let file = MemoryFile::new(content());
    let faults = [flip(1), flip(2), Faults::NONE];
    let got = read_all(
        ReadProtocol::Simple,
        link_set(3),
        &file,
        &faults,
        OFFSET,
        LEN,
    );
    assert_all_return(&got, &Err(OpError::Io(EIO)));
    let report = the_report(&got);
    assert_eq!(report.disagreeing, vec![0, 1, 2]);
    assert_eq!(report.corrected_from, None);
}

#[test]
fn simple_r3_majority_error_is_returned_by_every_replica() {
    let file = MemoryFile::new(content());
    let faults = [failing(ESTALE), Faults::NONE, failing(ESTALE)];
    let got = read_all(
        ReadProtocol::Simple,
        link_set(3),
        &file,
        &faults,
        OFFSET,
        LEN,
    );
    assert_all_return(&got, &Err(OpError::Io(ESTALE)));
    let report = the_report(&got);
    assert_eq!(report.disagreeing, vec![1]);
    assert_eq!(report.corrected_from, Some(0));
}

#[test]
fn simple_unanimous_fs_error_is_returned_without_a_report() {
    for r in 1..=3 {
        let file = MemoryFile::new(content());
        let faults = [failing(ESTALE); 3];
        let got = read_all(
            ReadProtocol::Simple,
            link_set(r),
            &file,
            &faults,
            OFFSET,
            LEN,
        );
        assert_all_return(&got, &Err(OpError::Io(ESTALE)));
        assert!(got.iter().all(|replica| replica.reports.is_empty()));
    }
}

#[test]
fn simple_agrees_on_short_reads_and_eof() {
    let file_len = content().len() as u64;
    for r in 1..=3 {
        for (offset, expected_len) in [(file_len - 40, 40), (file_len, 0), (file_len + 5000, 0)] {
            let file = MemoryFile::new(content());
            let got = read_all(ReadProtocol::Simple, link_set(r), &file, &[], offset, LEN);
            assert_all_return(&got, &Ok(expected_len));
            for replica in &got {
                let start = offset.min(file_len) as usize;
                assert_eq!(
                    replica.buf[..expected_len],
                    content()[start..start + expected_len]
                );
                assert!(replica.reports.is_empty());
            }
        }
    }
}

#[test]
fn simple_r3_corrects_a_replica_that_hit_eof_early() {
    // Replica 1 reads from a file that lacks the last bytes (e.g. stale NFS
    // attributes): its short read is outvoted and filled in.
    let file = MemoryFile::new(content());
    let stale = MemoryFile::new(content()[..OFFSET as usize + 10].to_vec());
    let got = run_replicas(link_set(3), |mut link| {
        let me = link.me();
        let mut io = if me == 1 {
            stale.io(Faults::NONE)
        } else {
            file.io(Faults::NONE)
        };
        let mut buf = vec![0; LEN];
        let mut sink = |_| {};
        let mut ctx = context(0, &mut sink);
        let result = read::run(
            ReadProtocol::Simple,
            &mut ctx,
            &mut link,
            &mut io,
            &mut buf,
            OFFSET,
        );
        (result, buf)
    });
    for (result, buf) in got {
        assert_eq!(result, Ok(LEN));
        assert_eq!(buf, expected());
    }
}

#[test]
fn simple_with_a_dead_peer_fails_with_a_link_error() {
    let file = MemoryFile::new(content());
    let mut links = link_set(2);
    links[0].mark_dead(1);
    let got = read_all(ReadProtocol::Simple, links, &file, &[], OFFSET, LEN);
    assert_eq!(
        got[0].result,
        Err(OpError::Link(LinkError::PeerFailed { replica: 1 }))
    );
    // Replica 0 gave up and dropped its link: replica 1 sees it as failed.
    assert_eq!(
        got[1].result,
        Err(OpError::Link(LinkError::PeerFailed { replica: 0 }))
    );
}

#[test]
fn simple_rejects_a_malformed_digest_without_panicking() {
    let file = MemoryFile::new(content());
    let got = run_replicas(link_set(2), |mut link| {
        let vote = tag(1, Step::Vote);
        if link.me() == 1 {
            // A peer that answers the exchange with three garbage bytes.
            link.recv(0, vote).expect("digest of replica 0");
            link.send(0, vote, &[1, 2, 3]).expect("send");
            return None;
        }
        let mut io = file.io(Faults::NONE);
        let mut buf = vec![0; LEN];
        let mut sink = |_| {};
        let mut ctx = OpContext {
            rank: RANK,
            path: PATH,
            seq: 1,
            on_mismatch: &mut sink,
            policy: Default::default(),
        };
        Some(read::run(
            ReadProtocol::Simple,
            &mut ctx,
            &mut link,
            &mut io,
            &mut buf,
            OFFSET,
        ))
    });
    assert_eq!(
        got[0],
        Some(Err(OpError::Protocol {
            replica: 1,
            what: "message too short"
        }))
    );
}

#[test]
fn simple_rejects_a_correction_that_does_not_match_the_vote() {
    // Replicas 0 and 1 are scripted: they vote for the true data, then
    // replica 0 sends different bytes as the correction to replica 2.
    let file = MemoryFile::new(content());
    let got = run_replicas(link_set(3), |mut link| {
        let me = link.me();
        if me < 2 {
            let digest = Digest {
                offset: OFFSET,
                requested: LEN,
                outcome: Outcome::data(&expected()),
            };
            link.exchange_all(tag(1, Step::Vote), &wire::encode_digest(&digest))
                .expect("exchange");
            if me == 0 {
                link.send(2, tag(1, Step::Data), &[0; LEN]).expect("send");
            }
            return None;
        }
        let mut io = file.io(flip(5));
        let mut buf = vec![0; LEN];
        let mut sink = |_| {};
        let mut ctx = OpContext {
            rank: RANK,
            path: PATH,
            seq: 1,
            on_mismatch: &mut sink,
            policy: Default::default(),
        };
        Some(read::run(
            ReadProtocol::Simple,
            &mut ctx,
            &mut link,
            &mut io,
            &mut buf,
            OFFSET,
        ))
    });
    assert_eq!(
        got[2],
        Some(Err(OpError::Protocol {
            replica: 0,
            what: "corrected data do not match the agreed digest"
        }))
    );
}

#[test]
fn none_each_replica_reads_for_itself_without_messages() {
    let file = MemoryFile::new(content());
    let faults = [Faults::NONE, flip(0), Faults::NONE];
    let got = read_all(ReadProtocol::None, link_set(3), &file, &faults, OFFSET, LEN);
    assert_all_return(&got, &Ok(LEN));
    for (i, replica) in got.iter().enumerate() {
        assert_eq!(replica.preads, 1);
        assert_eq!(replica.messages_sent, 0);
        assert!(replica.reports.is_empty());
        // No vote: replica 1 keeps its corrupted byte.
        assert_eq!(replica.buf == expected(), i != 1, "replica {i}");
    }
    let errors = read_all(
        ReadProtocol::None,
        link_set(2),
        &file,
        &[failing(ESTALE)],
        OFFSET,
        LEN,
    );
    assert_eq!(errors[0].result, Err(OpError::Io(ESTALE)));
    assert_eq!(errors[1].result, Ok(LEN));
}

#[test]
fn policies_decide_what_a_flipped_read_does() {
    use crate::{OnMismatch, Policy};
    let file = MemoryFile::new(content());
    let policy = |on_mismatch| Policy {
        on_mismatch,
        ..Policy::default()
    };
    // error: a majority is not enough; EIO everywhere.
    let faults = [Faults::NONE, flip(5), Faults::NONE];
    let got = read_all_with(
        policy(OnMismatch::Error),
        ReadProtocol::Simple,
        link_set(3),
        &file,
        &faults,
        OFFSET,
        LEN,
    );
    assert_all_return(&got, &Err(OpError::Io(EIO)));
    assert_eq!(the_report(&got).disagreeing, vec![1]);
    assert!(!the_report(&got).corrected());
    // warn at r=2: no majority, so replica 0's bytes are used everywhere.
    for bad in 0..2 {
        let mut faults = [Faults::NONE; 2];
        faults[bad] = flip(5);
        let got = read_all_with(
            policy(OnMismatch::Warn),
            ReadProtocol::Simple,
            link_set(2),
            &file,
            &faults,
            OFFSET,
            LEN,
        );
        assert_all_return(&got, &Ok(LEN));
        assert_eq!(got[0].buf, got[1].buf, "bad={bad}");
        assert_eq!(got[1].buf == expected(), bad == 1, "bad={bad}");
        let report = the_report(&got);
        assert_eq!(report.corrected_from, Some(0));
        assert!(report.to_string().contains("on_mismatch: warn"));
    }
    // voting off: nothing is compared, each replica keeps its bytes.
    let off = Policy {
        checksums: false,
        ..Policy::default()
    };
    let got = read_all_with(
        off,
        ReadProtocol::Simple,
        link_set(2),
        &file,
        &[Faults::NONE, flip(5)],
        OFFSET,
        LEN,
    );
    assert_all_return(&got, &Ok(LEN));
    assert!(got.iter().all(|r| r.reports.is_empty()));
    assert_ne!(got[1].buf, expected());
}
