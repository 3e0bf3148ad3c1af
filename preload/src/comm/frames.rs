//! Tagged messages over one byte stream to a peer (`sys::socket`): the
//! replica-set link's transport outside MPI.
//!
//! Why not MPI: under MPICH, UCX's shared-memory FIFO lets a sender claim a
//! slot in the receiver's queue, copy, then mark it ready. A replica
//! SIGKILLed in between leaves a slot that never becomes ready, and its
//! receiver, a replica of *another* replica world that must survive, hears
//! nobody again (docs/fault-tolerance.md, "Limits"). A TCP connection that
//! loses its sender mid-message only ends: the kernel closes it.
//!
//! A message is a 16-byte header (epoch, tag, length) and its bytes.
//! Messages are matched by tag, in order per tag, as MPI matches them; one
//! that arrives before it is asked for waits in a stash. The epoch is the
//! size of the replica set when the message was sent. A fail-over shrinks
//! the set, so a message of a larger epoch belongs to an operation given up
//! on and is dropped, as MPI's new communicator would never deliver it.
//!
//! A send given up on part-way keeps its remaining bytes and sends them
//! before anything else, so that the stream stays framed; its receiver
//! drops the message by its epoch.

use crate::sys::socket::{Socket, Transfer};
use std::collections::VecDeque;

/// The header: epoch (u32), tag (u32), length (u64), little-endian.
pub const HEADER: usize = 16;

/// Why a stream cannot go on.
#[derive(Debug, PartialEq, Eq)]
pub enum Failure {
    /// The peer closed its end: it exited or died.
    Closed,
    /// The system call failed with this errno.
    Os(i32),
    /// A header no peer of ours would send (the stream is not framed).
    Garbled,
}

/// The largest message a header may announce: more is a garbled stream.
const LARGEST: u64 = 1 << 40;

struct Stashed {
    epoch: u32,
    tag: u32,
    data: Vec<u8>,
}

enum Sink {
    /// Straight into the receiver's buffer.
    Wanted,
    /// Into a vector that becomes the receiver's result.
    Owned(Vec<u8>),
    /// Into the stash, for a later receive.
    Stash(Vec<u8>),
    /// Nowhere: a message of an operation given up on.
    Discard,
}

struct Body {
    epoch: u32,
    tag: u32,
    len: usize,
    got: usize,
    sink: Sink,
}

/// One peer's stream with its receive state.
pub struct Stream {
    socket: Socket,
    /// The peer closed its end (seen by a send or a receive).
    closed: bool,
    head: [u8; HEADER],
    head_got: usize,
    body: Option<Body>,
    stash: VecDeque<Stashed>,
    unsent: Vec<u8>,
    unsent_from: usize,
}

/// A message on its way out: borrowed until it is sent or given up on.
pub struct Outgoing<'a> {
    header: [u8; HEADER],
    data: &'a [u8],
    sent: usize,
}

impl<'a> Outgoing<'a> {
    /// `data` under `tag`, in `epoch`.
    pub fn new(epoch: u32, tag: u32, data: &'a [u8]) -> Self {
        let mut header = [0u8; HEADER];
        header[..4].copy_from_slice(&epoch.to_le_bytes());
        header[4..8].copy_from_slice(&tag.to_le_bytes());
        header[8..].copy_from_slice(&(data.len() as u64).to_le_bytes());
        Outgoing {
            header,
            data,
            sent: 0,
        }
    }

    fn total(&self) -> usize {
        HEADER + self.data.len()
    }

    /// True once every byte is in the kernel's hands.
    pub fn done(&self) -> bool {
        self.sent == self.total()
    }
}

/// Where a receive puts its message.
pub enum Dest<'a> {
    /// Into this buffer (a longer message is an error, and consumed).
    Into(&'a mut [u8]),
    /// Into a new vector of the message's length.
    Owned,
}

/// What a receive got.
#[derive(Debug, PartialEq, Eq)]
pub enum Received {
    /// This many bytes, in the receiver's buffer.
    Into(usize),
    /// These bytes.
    Owned(Vec<u8>),
    /// A message of this length, longer than the buffer: dropped.
    TooLong(usize),
}

/// A receive in progress.
pub struct Incoming<'a> {
    epoch: u32,
    tag: u32,
    dest: Dest<'a>,
    result: Option<Received>,
}

impl<'a> Incoming<'a> {
    /// The next message under `tag` in `epoch`, into `dest`.
    pub fn new(epoch: u32, tag: u32, dest: Dest<'a>) -> Self {
        Incoming {
            epoch,
            tag,
            dest,
            result: None,
        }
    }

    /// The message, once it has arrived.
    pub fn take(&mut self) -> Option<Received> {
        self.result.take()
    }

    /// True once the message has arrived.
    pub fn done(&self) -> bool {
        self.result.is_some()
    }

    fn matches(&self, epoch: u32, tag: u32) -> bool {
        self.result.is_none() && epoch == self.epoch && tag == self.tag
    }

    fn deliver(&mut self, data: Vec<u8>) {
        self.result = Some(match &mut self.dest {
            Dest::Into(buf) => match buf.get_mut(..data.len()) {
                Some(target) => {
                    target.copy_from_slice(&data);
                    Received::Into(data.len())
                }
                None => Received::TooLong(data.len()),
            },
            Dest::Owned => Received::Owned(data),
        });
    }
}

impl Stream {
    /// A stream over a connected socket.
    pub fn new(socket: Socket) -> Self {
        Stream {
            socket,
            closed: false,
            head: [0; HEADER],
            head_got: 0,
            body: None,
            stash: VecDeque::new(),
            unsent: Vec::new(),
            unsent_from: 0,
        }
    }

    fn closed(&mut self) -> Failure {
        self.closed = true;
        Failure::Closed
    }

    /// Waits up to `pause` for the socket to have `events` (`POLLIN`,
    /// `POLLOUT`) ready, or sleeps for `pause` once the peer has closed
    /// its end (whose readiness would never stop).
    pub fn nap(&self, events: libc::c_short, pause: std::time::Duration) {
        if self.closed {
            std::thread::sleep(pause);
        } else {
            self.socket.wait(events, pause);
        }
    }

    /// Sends what the socket takes now of an earlier, abandoned message and
    /// then of `out`; true once `out` is all sent.
    pub fn push(&mut self, out: &mut Outgoing<'_>) -> Result<bool, Failure> {
        let total = out.total();
        self.push_upto(out, total)
    }

    /// [`push`](Self::push), but sends no more of `out` than its first
    /// `limit` bytes, header included (a test dies half-way through).
    pub fn push_upto(&mut self, out: &mut Outgoing<'_>, limit: usize) -> Result<bool, Failure> {
        while self.unsent_from < self.unsent.len() {
            match self.socket.send(&[&self.unsent[self.unsent_from..]]) {
                Ok(Transfer::Moved(n)) => self.unsent_from += n,
                Ok(Transfer::WouldBlock) => return Ok(false),
                Ok(Transfer::Closed) => return Err(self.closed()),
                Err(e) => return Err(Failure::Os(e)),
            }
        }
        self.unsent.clear();
        self.unsent_from = 0;
        let limit = limit.min(out.total());
        while out.sent < limit {
            let head = &out.header[out.sent.min(HEADER)..limit.min(HEADER)];
            let data = &out.data[out.sent.saturating_sub(HEADER)..limit - HEADER.min(limit)];
            match self.socket.send(&[head, data]) {
                Ok(Transfer::Moved(n)) => out.sent += n,
                Ok(Transfer::WouldBlock) => return Ok(false),
                Ok(Transfer::Closed) => return Err(self.closed()),
                Err(e) => return Err(Failure::Os(e)),
            }
        }
        Ok(out.sent == limit)
    }

    /// Gives up on `out`: a message not begun is dropped whole; the rest of
    /// one begun is kept and sent before the next, so the stream stays
    /// framed (its receiver drops it by its epoch).
    pub fn abandon(&mut self, out: Outgoing<'_>) {
        if out.sent == 0 || out.done() {
            return;
        }
        let head = &out.header[out.sent.min(HEADER)..];
        let data = &out.data[out.sent.saturating_sub(HEADER)..];
        self.unsent.extend_from_slice(head);
        self.unsent.extend_from_slice(data);
    }

    /// Receives what has arrived, toward `want`; true once it has its
    /// message. Messages under other tags or of a later epoch go to the
    /// stash; those of an earlier epoch (a larger set) are dropped.
    pub fn pull(&mut self, want: &mut Incoming<'_>) -> Result<bool, Failure> {
        if want.done() {
            return Ok(true);
        }
        self.stash.retain(|m| m.epoch <= want.epoch);
        if let Some(at) = self.stash.iter().position(|m| want.matches(m.epoch, m.tag)) {
            let found = self.stash.remove(at).map(|m| m.data).unwrap_or_default();
            want.deliver(found);
            return Ok(true);
        }
        loop {
            if self.body.is_none() && !self.read_header(want)? {
                return Ok(false);
            }
            if !self.read_body(want)? {
                return Ok(false);
            }
            if let Some(done) = self.finish_body(want) {
                return Ok(done);
            }
        }
    }

    /// Reads header bytes; when the header is whole, decides where its
    /// body goes. False when the socket has no more now.
    fn read_header(&mut self, want: &mut Incoming<'_>) -> Result<bool, Failure> {
        while self.head_got < HEADER {
            match self.socket.recv(&mut self.head[self.head_got..]) {
                Ok(Transfer::Moved(n)) => self.head_got += n,
                Ok(Transfer::WouldBlock) => return Ok(false),
                Ok(Transfer::Closed) => return Err(self.closed()),
                Err(e) => return Err(Failure::Os(e)),
            }
        }
        self.head_got = 0;
        let word = |at: usize| u32::from_le_bytes(self.head[at..at + 4].try_into().unwrap());
        let (epoch, tag) = (word(0), word(4));
        let len = u64::from_le_bytes(self.head[8..].try_into().unwrap());
        if len > LARGEST {
            return Err(Failure::Garbled);
        }
        let len = len as usize;
        let sink = if epoch > want.epoch {
            Sink::Discard
        } else if want.matches(epoch, tag) {
            match &want.dest {
                Dest::Into(buf) if len <= buf.len() => Sink::Wanted,
                // Too long: stashed whole, then reported by `finish_body`.
                Dest::Into(_) => Sink::Stash(vec![0; len]),
                Dest::Owned => Sink::Owned(vec![0; len]),
            }
        } else {
            Sink::Stash(vec![0; len])
        };
        self.body = Some(Body {
            epoch,
            tag,
            len,
            got: 0,
            sink,
        });
        Ok(true)
    }

    /// Reads body bytes into their sink; false when the socket has no more
    /// now (the body is not complete).
    fn read_body(&mut self, want: &mut Incoming<'_>) -> Result<bool, Failure> {
        let Some(body) = self.body.as_mut() else {
            return Ok(true);
        };
        let mut scratch = [0u8; 4096];
        while body.got < body.len {
            let target: &mut [u8] = match &mut body.sink {
                Sink::Wanted => match &mut want.dest {
                    Dest::Into(buf) => &mut buf[body.got..body.len],
                    Dest::Owned => unreachable!("a wanted body always has a buffer"),
                },
                Sink::Owned(v) | Sink::Stash(v) => &mut v[body.got..],
                Sink::Discard => {
                    let n = (body.len - body.got).min(scratch.len());
                    &mut scratch[..n]
                }
            };
            match self.socket.recv(target) {
                Ok(Transfer::Moved(n)) => body.got += n,
                Ok(Transfer::WouldBlock) => return Ok(false),
                Ok(Transfer::Closed) => {
                    self.closed = true;
                    return Err(Failure::Closed);
                }
                Err(e) => return Err(Failure::Os(e)),
            }
        }
        Ok(true)
    }

    /// Files a complete body: `Some(true)` when it was `want`'s message.
    fn finish_body(&mut self, want: &mut Incoming<'_>) -> Option<bool> {
        let body = self.body.take()?;
        match body.sink {
            Sink::Wanted => {
                want.result = Some(Received::Into(body.len));
                Some(true)
            }
            Sink::Owned(data) => {
                want.result = Some(Received::Owned(data));
                Some(true)
            }
            Sink::Stash(data) if want.matches(body.epoch, body.tag) => {
                want.deliver(data);
                Some(true)
            }
            Sink::Stash(data) => {
                self.stash.push_back(Stashed {
                    epoch: body.epoch,
                    tag: body.tag,
                    data,
                });
                None
            }
            Sink::Discard => None,
        }
    }

    /// Ends a receive that did not complete: a body that was going into
    /// its buffer is copied to the stash so that the stream goes on.
    pub fn release(&mut self, want: Incoming<'_>) {
        let Some(body) = self.body.as_mut() else {
            return;
        };
        let sink = std::mem::replace(&mut body.sink, Sink::Discard);
        body.sink = match (sink, want.dest) {
            (Sink::Wanted, Dest::Into(buf)) => {
                let mut data = vec![0u8; body.len];
                data[..body.got].copy_from_slice(&buf[..body.got]);
                Sink::Stash(data)
            }
            (Sink::Owned(data), _) => Sink::Stash(data),
            (sink, _) => sink,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair() -> (Stream, Stream) {
        let (a, b) = Socket::pair().unwrap();
        (Stream::new(a), Stream::new(b))
    }

    /// Pushes `out` while pulling `want` on the other end until both are done.
    fn move_one(
        from: &mut Stream,
        out: &mut Outgoing<'_>,
        to: &mut Stream,
        want: &mut Incoming<'_>,
    ) {
        for _ in 0..1_000_000 {
            let sent = from.push(out).unwrap();
            let got = to.pull(want).unwrap();
            if sent && got {
                return;
            }
        }
        panic!("the message did not arrive");
    }

    #[test]
    fn a_large_message_arrives_whole_in_the_receivers_buffer() {
        let (mut a, mut b) = pair();
        let data: Vec<u8> = (0..5_000_000u32).map(|i| (i % 251) as u8).collect();
        let mut buf = vec![0u8; 6_000_000];
        let mut out = Outgoing::new(2, 7, &data);
        let mut want = Incoming::new(2, 7, Dest::Into(&mut buf));
        move_one(&mut a, &mut out, &mut b, &mut want);
        assert_eq!(want.take(), Some(Received::Into(data.len())));
        assert_eq!(&buf[..data.len()], &data[..]);
    }

    #[test]
    fn messages_match_by_tag_and_keep_their_order_within_a_tag() {
        let (mut a, mut b) = pair();
        for (tag, data) in [(1u32, &b"one"[..]), (2, b"two"), (1, b"three")] {
            let mut out = Outgoing::new(2, tag, data);
            assert!(a.push(&mut out).unwrap());
        }
        let mut got = Vec::new();
        for tag in [2u32, 1, 1] {
            let mut want = Incoming::new(2, tag, Dest::Owned);
            while !b.pull(&mut want).unwrap() {}
            got.push(want.take());
        }
        assert_eq!(
            got,
            vec![
                Some(Received::Owned(b"two".to_vec())),
                Some(Received::Owned(b"one".to_vec())),
                Some(Received::Owned(b"three".to_vec())),
            ]
        );
    }

    #[test]
    fn a_message_of_a_larger_set_is_dropped_after_a_fail_over() {
        let (mut a, mut b) = pair();
        let mut stale = Outgoing::new(3, 1, b"stale");
        assert!(a.push(&mut stale).unwrap());
        let mut fresh = Outgoing::new(2, 1, b"fresh");
        assert!(a.push(&mut fresh).unwrap());
        let mut want = Incoming::new(2, 1, Dest::Owned);
        while !b.pull(&mut want).unwrap() {}
        assert_eq!(want.take(), Some(Received::Owned(b"fresh".to_vec())));
    }

    #[test]
    fn a_send_given_up_part_way_keeps_the_stream_framed() {
        let (mut a, mut b) = pair();
        let big = vec![9u8; 8 << 20];
        let mut out = Outgoing::new(3, 1, &big);
        // The socket takes only part of 8 MiB while nobody reads.
        assert!(!a.push(&mut out).unwrap());
        a.abandon(out);
        let mut next = Outgoing::new(2, 1, b"after the fail-over");
        let mut buf = [0u8; 64];
        let mut want = Incoming::new(2, 1, Dest::Into(&mut buf));
        move_one(&mut a, &mut next, &mut b, &mut want);
        assert_eq!(want.take(), Some(Received::Into(19)));
        assert_eq!(&buf[..19], b"after the fail-over");
    }

    #[test]
    fn a_receive_given_up_part_way_leaves_its_bytes_for_the_next() {
        let (mut a, mut b) = pair();
        let big: Vec<u8> = (0..(8u32 << 20)).map(|i| i as u8).collect();
        let mut out = Outgoing::new(2, 1, &big);
        let mut first = vec![0u8; 8 << 20];
        let mut want = Incoming::new(2, 1, Dest::Into(&mut first));
        let _ = a.push(&mut out).unwrap();
        let _ = b.pull(&mut want).unwrap();
        assert!(!want.done(), "8 MiB cannot arrive in one socket buffer");
        b.release(want);
        let mut again = Incoming::new(2, 1, Dest::Owned);
        for _ in 0..1_000_000 {
            let _ = a.push(&mut out).unwrap();
            if b.pull(&mut again).unwrap() {
                break;
            }
        }
        assert_eq!(again.take(), Some(Received::Owned(big)));
    }

    #[test]
    fn a_message_longer_than_the_buffer_is_reported_and_consumed() {
        let (mut a, mut b) = pair();
        for data in [&b"too long for four"[..], b"fits"] {
            assert!(a.push(&mut Outgoing::new(2, 1, data)).unwrap());
        }
        let mut buf = [0u8; 4];
        let mut want = Incoming::new(2, 1, Dest::Into(&mut buf));
        while !b.pull(&mut want).unwrap() {}
        assert_eq!(want.take(), Some(Received::TooLong(17)));
        let mut want = Incoming::new(2, 1, Dest::Into(&mut buf));
        while !b.pull(&mut want).unwrap() {}
        assert_eq!(want.take(), Some(Received::Into(4)));
        assert_eq!(&buf, b"fits");
    }

    #[test]
    fn a_closed_peer_fails_the_receive() {
        let (a, mut b) = pair();
        drop(a);
        let mut want = Incoming::new(2, 1, Dest::Owned);
        assert_eq!(b.pull(&mut want), Err(Failure::Closed));
    }
}
