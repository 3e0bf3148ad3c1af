//! Scenario tests of Append Write over the in-memory link and file.

use super::append;
use crate::memory::{run_replicas, Faults, MemoryFile};
use crate::testkit::*;
use crate::{OpError, EIO};
use libc::ENOSPC;

fn line() -> Vec<u8> {
    b"rank 1: step 7 done\n".to_vec()
}

/// One replica's append: its result (count, landing offset) and the
/// `pwrite` calls it made.
type Appended = (Result<(usize, u64), OpError>, u64);

/// Every replica appends its `requests[i]` to `file`.
fn append_all(
    links: crate::testkit::Links,
    file: &MemoryFile,
    faults: &[Faults],
    requests: &[Vec<u8>],
) -> Vec<Appended> {
    run_replicas(links.make(requests.len()), |mut link| {
        let me = crate::ReplicaLink::me(&link);
        let mut io = file.io(faults.get(me).copied().unwrap_or(Faults::NONE));
        let mut sink = |_| {};
        let mut ctx = context(1, &mut sink);
        let result = append::run(&mut ctx, &mut link, &mut io, &requests[me]);
        (result, io.pwrites())
    })
}

#[test]
fn an_append_lands_once_at_the_end_and_every_replica_learns_where() {
    for links in BOTH {
        for r in 1..=3 {
            let file = MemoryFile::new(content());
            let got = append_all(links, &file, &[], &vec![line(); r]);
            let end = content().len() as u64;
            for (i, (result, _)) in got.iter().enumerate() {
                assert_eq!(
                    result,
                    &Ok((line().len(), end)),
                    "{links:?} r={r} replica {i}"
                );
            }
            let mut expected = content();
            expected.extend_from_slice(&line());
            assert_eq!(file.contents(), expected, "{links:?} r={r}");
            assert_eq!(file.pwrite_calls(), 1);
        }
    }
}

#[test]
fn a_corrupted_leader_is_outvoted_and_a_majority_replica_appends() {
    let file = MemoryFile::new(content());
    let mut bad = line();
    bad[0] ^= 1;
    let got = append_all(Links::Buffered, &file, &[], &[bad, line(), line()]);
    let end = content().len() as u64;
    for (result, _) in &got {
        assert_eq!(result, &Ok((line().len(), end)));
    }
    assert_eq!(got[0].1, 0, "the outvoted leader must not write");
    assert_eq!(got[1].1, 1, "the first majority replica appends");
    assert!(file.contents().ends_with(&line()));
}

#[test]
fn two_disagreeing_replicas_append_nothing() {
    let file = MemoryFile::new(content());
    let mut bad = line();
    bad[3] ^= 1;
    let got = append_all(Links::Rendezvous, &file, &[], &[line(), bad]);
    for (result, _) in &got {
        assert_eq!(result, &Err(OpError::Io(EIO)));
    }
    assert_eq!(file.contents(), content());
}

#[test]
fn the_writers_errno_reaches_every_replica() {
    let file = MemoryFile::new(content());
    let full = Faults {
        write_error: Some(ENOSPC),
        ..Faults::NONE
    };
    let got = append_all(Links::Buffered, &file, &[full], &vec![line(); 3]);
    for (result, _) in &got {
        assert_eq!(result, &Err(OpError::Io(ENOSPC)));
    }
    assert_eq!(file.contents(), content());
}
