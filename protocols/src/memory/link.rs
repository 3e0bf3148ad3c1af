//! [`MemoryLink`]: a [`ReplicaLink`] over std channels, one channel per
//! ordered pair of replicas.

use crate::{LinkError, ReplicaLink};
use redio_aligned::AlignedBuf;
use std::collections::VecDeque;
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::time::{Duration, Instant};

/// How long `send` and `recv` wait before [`LinkError::Timeout`] unless
/// changed with [`MemoryLink::set_timeout`]: long enough for any test,
/// short enough that a protocol bug fails a test instead of hanging it.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// Messages a buffered link queues per pair before `send` waits.
const BUFFERED_CAPACITY: usize = 1024;

/// One message in flight, in a page-aligned buffer as the MPI link's
/// chunks should be.
#[derive(Debug)]
struct Envelope {
    tag: u32,
    data: AlignedBuf,
}

/// One replica's end of an in-memory link set; move it to that replica's
/// thread. Dropping it makes the other replicas see [`LinkError::PeerFailed`]
/// once they have received what it sent.
#[derive(Debug)]
pub struct MemoryLink {
    me: usize,
    /// Sender to each replica, by index.
    to: Vec<SyncSender<Envelope>>,
    /// Receiver from each replica, by index.
    from: Vec<Receiver<Envelope>>,
    /// Messages already taken off a channel while waiting for another tag,
    /// by sender; kept in arrival order so same-tag order is preserved.
    pending: Vec<VecDeque<Envelope>>,
    dead: Vec<bool>,
    /// Fault injection: (sender, tag, messages to let through first) of
    /// messages to corrupt on receipt.
    corrupt: Vec<(usize, u32, usize)>,
    timeout: Duration,
    messages_sent: u64,
    bytes_sent: u64,
}

/// `degree` connected links that queue messages (`send` returns at once).
pub fn link_set(degree: usize) -> Vec<MemoryLink> {
    links(degree, BUFFERED_CAPACITY)
}

/// `degree` connected links whose `send` waits until the receiver takes the
/// message (like an MPI synchronous send): a protocol whose message
/// schedule could deadlock times out instead of passing.
pub fn rendezvous_link_set(degree: usize) -> Vec<MemoryLink> {
    links(degree, 0)
}

fn links(degree: usize, capacity: usize) -> Vec<MemoryLink> {
    let mut senders: Vec<Vec<SyncSender<Envelope>>> = (0..degree).map(|_| Vec::new()).collect();
    let mut receivers: Vec<Vec<Receiver<Envelope>>> = (0..degree).map(|_| Vec::new()).collect();
    // Receivers are pushed in sender order, so `from[i]` is the channel from i.
    for sender_list in senders.iter_mut() {
        for receiver_list in receivers.iter_mut() {
            let (tx, rx) = sync_channel(capacity);
            sender_list.push(tx);
            receiver_list.push(rx);
        }
    }
    senders
        .into_iter()
        .zip(receivers)
        .enumerate()
        .map(|(me, (to, from))| MemoryLink {
            me,
            to,
            from,
            pending: (0..degree).map(|_| VecDeque::new()).collect(),
            dead: vec![false; degree],
            corrupt: Vec::new(),
            timeout: DEFAULT_TIMEOUT,
            messages_sent: 0,
            bytes_sent: 0,
        })
        .collect()
}

impl MemoryLink {
    /// Fault injection: from now on this link treats `replica` as failed
    /// (`send` and `recv` with it return [`LinkError::PeerFailed`]).
    pub fn mark_dead(&mut self, replica: usize) {
        if let Some(dead) = self.dead.get_mut(replica) {
            *dead = true;
        }
    }

    /// Fault injection: the next message this link receives from `replica`
    /// under `tag` arrives with one bit flipped (bit 0 of its middle byte,
    /// `len / 2`), as if damaged in transit. Empty messages are left alone.
    /// Each call corrupts one more message.
    pub fn corrupt_next_from(&mut self, replica: usize, tag: u32) {
        self.corrupt_nth_from(replica, tag, 0);
    }

    /// Like [`corrupt_next_from`](Self::corrupt_next_from), but lets `skip`
    /// messages from `replica` under `tag` through intact first.
    pub fn corrupt_nth_from(&mut self, replica: usize, tag: u32, skip: usize) {
        self.corrupt.push((replica, tag, skip));
    }

    /// Applies pending [`corrupt_nth_from`](Self::corrupt_nth_from)s.
    fn deliver(&mut self, from: usize, tag: u32, mut data: AlignedBuf) -> AlignedBuf {
        let mut hit = None;
        for (i, entry) in self.corrupt.iter_mut().enumerate() {
            if (entry.0, entry.1) != (from, tag) {
                continue;
            }
            match entry.2.checked_sub(1) {
                Some(left) => entry.2 = left,
                None if hit.is_none() => hit = Some(i),
                None => {}
            }
        }
        if let Some(i) = hit {
            self.corrupt.remove(i);
            let middle = data.len() / 2;
            if let Some(byte) = data.get_mut(middle) {
                *byte ^= 1;
            }
        }
        data
    }

    /// The next message from `from` under `tag`, waiting for it.
    fn take(&mut self, from: usize, tag: u32) -> Result<AlignedBuf, LinkError> {
        self.check(from)?;
        let pending = &mut self.pending[from];
        if let Some(i) = pending.iter().position(|e| e.tag == tag) {
            let data = pending.remove(i).map(|e| e.data).unwrap_or_default();
            return Ok(self.deliver(from, tag, data));
        }
        let deadline = Instant::now() + self.timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.from[from].recv_timeout(left) {
                Ok(envelope) if envelope.tag == tag => {
                    return Ok(self.deliver(from, tag, envelope.data))
                }
                Ok(other) => self.pending[from].push_back(other),
                Err(RecvTimeoutError::Timeout) => return Err(LinkError::Timeout { replica: from }),
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(LinkError::PeerFailed { replica: from })
                }
            }
        }
    }

    /// Sets how long `send` and `recv` wait before [`LinkError::Timeout`].
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
    }

    /// Messages this link has sent.
    pub fn messages_sent(&self) -> u64 {
        self.messages_sent
    }

    /// Payload bytes this link has sent.
    pub fn bytes_sent(&self) -> u64 {
        self.bytes_sent
    }

    /// Rejects indices that name no replica, or a replica marked dead.
    fn check(&self, replica: usize) -> Result<(), LinkError> {
        match self.dead.get(replica) {
            None => Err(LinkError::NoSuchReplica { replica }),
            Some(true) => Err(LinkError::PeerFailed { replica }),
            Some(false) => Ok(()),
        }
    }
}

impl ReplicaLink for MemoryLink {
    fn me(&self) -> usize {
        self.me
    }

    fn degree(&self) -> usize {
        self.to.len()
    }

    fn send(&mut self, to: usize, tag: u32, data: &[u8]) -> Result<(), LinkError> {
        self.check(to)?;
        let deadline = Instant::now() + self.timeout;
        let mut envelope = Envelope {
            tag,
            data: AlignedBuf::from_slice(data),
        };
        // `SyncSender` has no stable send-with-timeout: poll instead.
        loop {
            match self.to[to].try_send(envelope) {
                Ok(()) => break,
                Err(TrySendError::Disconnected(_)) => {
                    return Err(LinkError::PeerFailed { replica: to })
                }
                Err(TrySendError::Full(back)) if Instant::now() < deadline => {
                    envelope = back;
                    std::thread::sleep(Duration::from_micros(20));
                }
                Err(TrySendError::Full(_)) => return Err(LinkError::Timeout { replica: to }),
            }
        }
        self.messages_sent += 1;
        self.bytes_sent += data.len() as u64;
        Ok(())
    }

    fn recv(&mut self, from: usize, tag: u32) -> Result<Vec<u8>, LinkError> {
        self.take(from, tag).map(|data| data.to_vec())
    }

    /// Copies straight from the queued message (no intermediate vector).
    fn recv_into(&mut self, from: usize, tag: u32, buf: &mut [u8]) -> Result<usize, LinkError> {
        let data = self.take(from, tag)?;
        let capacity = buf.len();
        let target = buf.get_mut(..data.len()).ok_or(LinkError::TooLong {
            replica: from,
            len: data.len(),
            capacity,
        })?;
        target.copy_from_slice(&data);
        Ok(data.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::run_replicas;

    type Factory = fn(usize) -> Vec<MemoryLink>;
    const FACTORIES: [Factory; 2] = [link_set, rendezvous_link_set];

    #[test]
    fn exchange_all_gives_everyone_everything_in_replica_order() {
        for make in FACTORIES {
            for degree in 1..=3 {
                let got = run_replicas(make(degree), |mut link| {
                    let mine = vec![link.me() as u8; link.me() + 1];
                    link.exchange_all(9, &mine)
                });
                let expected: Vec<Vec<u8>> = (0..degree).map(|i| vec![i as u8; i + 1]).collect();
                for result in got {
                    assert_eq!(result, Ok(expected.clone()));
                }
            }
        }
    }

    #[test]
    fn other_tags_are_held_back_and_same_tag_order_is_kept() {
        let mut links = link_set(2);
        let mut b = links.pop().expect("two links");
        let mut a = links.pop().expect("two links");
        for (tag, byte) in [(1, 10), (2, 20), (1, 11), (2, 21)] {
            a.send(1, tag, &[byte]).expect("send");
        }
        assert_eq!(b.recv(0, 2), Ok(vec![20]));
        assert_eq!(b.recv(0, 1), Ok(vec![10]));
        assert_eq!(b.recv(0, 1), Ok(vec![11]));
        assert_eq!(b.recv(0, 2), Ok(vec![21]));
        assert_eq!(a.messages_sent(), 4);
        assert_eq!(a.bytes_sent(), 4);
    }

    #[test]
    fn faults_surface_as_link_errors() {
        let mut links = link_set(3);
        let c = links.pop().expect("three links");
        let mut b = links.pop().expect("three links");
        let mut a = links.pop().expect("three links");
        a.mark_dead(1);
        assert_eq!(
            a.send(1, 0, b"x"),
            Err(LinkError::PeerFailed { replica: 1 })
        );
        assert_eq!(a.recv(1, 0), Err(LinkError::PeerFailed { replica: 1 }));
        assert_eq!(
            a.send(3, 0, b"x"),
            Err(LinkError::NoSuchReplica { replica: 3 })
        );
        b.set_timeout(Duration::from_millis(10));
        assert_eq!(b.recv(0, 0), Err(LinkError::Timeout { replica: 0 }));
        // A dropped peer's queued messages still arrive, then it reads as failed.
        a.send(2, 5, b"last").expect("send");
        drop(a);
        let mut c = c;
        assert_eq!(c.recv(0, 5), Ok(b"last".to_vec()));
        assert_eq!(c.recv(0, 5), Err(LinkError::PeerFailed { replica: 0 }));
        assert_eq!(
            c.send(0, 5, b"x"),
            Err(LinkError::PeerFailed { replica: 0 })
        );
    }

    #[test]
    fn corrupt_next_from_flips_one_bit_of_one_message() {
        let mut links = link_set(2);
        let mut b = links.pop().expect("two links");
        let mut a = links.pop().expect("two links");
        b.corrupt_next_from(0, 1);
        b.corrupt_nth_from(0, 1, 2);
        for (tag, data) in [(2, [0u8; 3]), (1, [0; 3]), (1, [0; 3]), (1, [0; 3])] {
            a.send(1, tag, &data).expect("send");
        }
        assert_eq!(b.recv(0, 2), Ok(vec![0, 0, 0]));
        assert_eq!(b.recv(0, 1), Ok(vec![0, 1, 0]));
        assert_eq!(b.recv(0, 1), Ok(vec![0, 0, 0]));
        assert_eq!(b.recv(0, 1), Ok(vec![0, 1, 0]));
    }

    #[test]
    fn rendezvous_send_times_out_without_a_receiver() {
        let mut links = rendezvous_link_set(2);
        let _b = links.pop().expect("two links");
        let mut a = links.pop().expect("two links");
        a.set_timeout(Duration::from_millis(10));
        assert_eq!(a.send(1, 0, b"x"), Err(LinkError::Timeout { replica: 1 }));
    }
}
