//! Test harness: runs one operation on every replica at once over the
//! in-memory link and file, and collects what each replica ended with.

use crate::memory::{link_set, rendezvous_link_set, run_replicas, Faults, MemoryFile, MemoryLink};
use crate::{read, write, Mismatch, OpContext, OpError, Policy, ReadProtocol, WriteProtocol};

/// The logical rank every test operation claims.
pub const RANK: u32 = 7;
/// The path every test operation claims.
pub const PATH: &str = "/shared/run/data.bin";

/// Which kind of in-memory link to run over.
#[derive(Debug, Clone, Copy)]
pub enum Links {
    /// `send` returns at once.
    Buffered,
    /// `send` waits for the matching `recv`: catches deadlocking schedules.
    Rendezvous,
}

/// Both link kinds: scenario tests run over each.
pub const BOTH: [Links; 2] = [Links::Buffered, Links::Rendezvous];

impl Links {
    /// A fresh link set of `degree` replicas.
    pub fn make(self, degree: usize) -> Vec<MemoryLink> {
        match self {
            Links::Buffered => link_set(degree),
            Links::Rendezvous => rendezvous_link_set(degree),
        }
    }
}

/// A test file's initial contents: 1000 bytes, no two neighbours equal.
pub fn content() -> Vec<u8> {
    (0..1000u32).map(|i| (i * 7 + 3) as u8).collect()
}

/// What one replica ended with.
#[derive(Debug)]
pub struct Replica {
    /// What the protocol returned.
    pub result: Result<usize, OpError>,
    /// Read: the buffer after the read. Write: the data passed in.
    pub buf: Vec<u8>,
    /// Mismatch reports this replica received.
    pub reports: Vec<Mismatch>,
    /// `pread` calls this replica made.
    pub preads: u64,
    /// `pwrite` calls this replica made.
    pub pwrites: u64,
    /// Bytes this replica's own `pread` calls returned.
    pub bytes_read: u64,
    /// Bytes this replica's own `pwrite` calls wrote.
    pub bytes_written: u64,
    /// Messages this replica sent.
    pub messages_sent: u64,
}

/// The context of operation `seq` of the test file under the default
/// policy, reporting mismatches to `sink`.
pub fn context<'a>(seq: u64, sink: &'a mut dyn FnMut(Mismatch)) -> OpContext<'a> {
    OpContext {
        rank: RANK,
        path: PATH,
        seq,
        on_mismatch: sink,
        policy: Policy::default(),
    }
}

/// Faults of replica `i`, none when `faults` is shorter.
fn faults_of(faults: &[Faults], i: usize) -> Faults {
    faults.get(i).copied().unwrap_or(Faults::NONE)
}

/// Every replica reads `len` bytes at `offset` of `file` under `protocol`.
pub fn read_all(
    protocol: ReadProtocol,
    links: Vec<MemoryLink>,
    file: &MemoryFile,
    faults: &[Faults],
    offset: u64,
    len: usize,
) -> Vec<Replica> {
    read_all_with(
        Policy::default(),
        protocol,
        links,
        file,
        faults,
        offset,
        len,
    )
}

/// [`read_all`] under `policy`.
pub fn read_all_with(
    policy: Policy,
    protocol: ReadProtocol,
    links: Vec<MemoryLink>,
    file: &MemoryFile,
    faults: &[Faults],
    offset: u64,
    len: usize,
) -> Vec<Replica> {
    run_replicas(links, |mut link| {
        let me = crate::ReplicaLink::me(&link);
        let mut io = file.io(faults_of(faults, me));
        let mut buf = vec![0xEE; len];
        let mut reports = Vec::new();
        let mut sink = |m| reports.push(m);
        let mut ctx = OpContext {
            rank: RANK,
            path: PATH,
            seq: 1,
            on_mismatch: &mut sink,
            policy,
        };
        let result = read::run(protocol, &mut ctx, &mut link, &mut io, &mut buf, offset);
        Replica {
            result,
            buf,
            reports,
            preads: io.preads(),
            pwrites: io.pwrites(),
            bytes_read: io.bytes_read(),
            bytes_written: io.bytes_written(),
            messages_sent: link.messages_sent(),
        }
    })
}

/// Replica `i` writes `requests[i]` (offset, data) to `file` under `protocol`.
pub fn write_all(
    protocol: WriteProtocol,
    links: Vec<MemoryLink>,
    file: &MemoryFile,
    faults: &[Faults],
    requests: &[(u64, Vec<u8>)],
) -> Vec<Replica> {
    write_all_with(Policy::default(), protocol, links, file, faults, requests)
}

/// [`write_all`] under `policy`.
pub fn write_all_with(
    policy: Policy,
    protocol: WriteProtocol,
    links: Vec<MemoryLink>,
    file: &MemoryFile,
    faults: &[Faults],
    requests: &[(u64, Vec<u8>)],
) -> Vec<Replica> {
    assert_eq!(links.len(), requests.len(), "one request per replica");
    run_replicas(links, |mut link| {
        let me = crate::ReplicaLink::me(&link);
        let mut io = file.io(faults_of(faults, me));
        let (offset, data) = &requests[me];
        let mut reports = Vec::new();
        let mut sink = |m| reports.push(m);
        let mut ctx = OpContext {
            rank: RANK,
            path: PATH,
            seq: 1,
            on_mismatch: &mut sink,
            policy,
        };
        let result = write::run(protocol, &mut ctx, &mut link, &mut io, data, *offset);
        Replica {
            result,
            buf: data.clone(),
            reports,
            preads: io.preads(),
            pwrites: io.pwrites(),
            bytes_read: io.bytes_read(),
            bytes_written: io.bytes_written(),
            messages_sent: link.messages_sent(),
        }
    })
}

/// Asserts that every replica received exactly one report, the same one,
/// and returns it.
pub fn the_report(replicas: &[Replica]) -> Mismatch {
    let first = replicas[0]
        .reports
        .first()
        .cloned()
        .expect("replica 0 got a report");
    for (i, r) in replicas.iter().enumerate() {
        assert_eq!(r.reports, vec![first.clone()], "reports of replica {i}");
    }
    first
}

/// Asserts that every replica returned `expected`.
pub fn assert_all_return(replicas: &[Replica], expected: &Result<usize, OpError>) {
    for (i, r) in replicas.iter().enumerate() {
        assert_eq!(&r.result, expected, "result of replica {i}");
    }
}
