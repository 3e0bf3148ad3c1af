//! The MPI [`Transport`] of the ring engine: point-to-point messages among
//! the members of one redundancy set, over PMPI on a communicator redio
//! owns (a duplicate of the replica world, so no application message can
//! match ours).
//!
//! Sends are posted nonblocking from a buffer the transport keeps (the
//! caller's, handed over with `send_owned`, or a private copy; one buffer
//! may feed two sends, `send_and_keep` then `send_kept`) and completed
//! lazily:
//! in the ring every member sends to its right neighbour before it receives
//! from its left one, so a send that waited for its receiver would deadlock
//! the ring on large (rendezvous) messages. Receives probe for the next
//! message from the sender, size the buffer, and wait with
//! [`poll::until_moved`] while also progressing the pending sends, so a
//! waiting rank sleeps instead of busy-polling in MPICH.

use crate::comm::ffi;
use crate::comm::p2p::{self, OwnedSend};
use crate::comm::poll;
use crate::parity::collective::ok;
use redio_aligned::AlignedBuf;
use redio_parity::ring::Transport;
use std::rc::Rc;

/// The tag of every parity message (communicator-private, so any fixed
/// value below the guaranteed `MPI_TAG_UB` of 32767 does).
const TAG: i32 = 0x7ead;

/// One set's members over an MPI communicator.
pub struct MpiTransport {
    comm: ffi::MPI_Comm,
    /// Member index → rank in `comm`.
    ranks: Vec<i32>,
    member: usize,
    /// Posted sends, each owning the buffer it reads from.
    pending: Vec<OwnedSend>,
    /// Buffers of completed sends, reused: a fresh megabyte per message
    /// costs page faults at every piece. Page-aligned, as every buffer
    /// the pieces move through (issue 20).
    spare: Vec<AlignedBuf>,
    /// The buffer of the last `send_and_keep`, for its `send_kept`.
    kept: Option<Rc<AlignedBuf>>,
}

impl MpiTransport {
    /// Member `member` of the set whose member `i` is rank `ranks[i]` of
    /// `comm`.
    pub(crate) fn new(comm: ffi::MPI_Comm, ranks: Vec<i32>, member: usize) -> Self {
        MpiTransport {
            comm,
            ranks,
            member,
            pending: Vec::new(),
            spare: Vec::new(),
            kept: None,
        }
    }

    /// Frees the sends that have completed; returns the first MPI error.
    fn reap(&mut self) -> Result<(), String> {
        let mut i = 0;
        while i < self.pending.len() {
            match self.pending[i].test() {
                Err(rc) => return ok(rc, "MPI_Test of a parity send"),
                Ok(false) => i += 1,
                // Complete: its buffer is free again.
                // (Unless another send or `kept` still holds it.)
                Ok(true) => {
                    let done = self.pending.swap_remove(i).into_buffer();
                    if let Some(buf) = done.ok().and_then(|b| Rc::try_unwrap(b).ok()) {
                        self.spare.push(buf);
                    }
                }
            }
        }
        Ok(())
    }

    /// An empty buffer, from a completed send where there is one.
    fn recycled(&mut self) -> AlignedBuf {
        let mut buf = self.spare.pop().unwrap_or_default();
        buf.clear();
        buf
    }

    /// Posts the send of `buf` to member `to`; `pending` keeps `buf` until
    /// the send has completed.
    fn post_send(&mut self, to: usize, buf: Rc<AlignedBuf>) -> Result<(), String> {
        i32::try_from(buf.len()).map_err(|_| "parity message over 2 GiB")?;
        match p2p::isend_owned(buf, self.ranks[to], TAG, self.comm) {
            Ok(send) => self.pending.push(send),
            Err(rc) => return ok(rc, "MPI_Isend of a parity message"),
        }
        self.reap()
    }

    /// Waits until every posted send has completed (before the buffers and
    /// the communicator go away).
    pub fn flush(&mut self) -> Result<(), String> {
        let bytes = self.pending.iter().map(OwnedSend::bytes).sum();
        let mut failed = None;
        let rc = poll::until_moved(bytes, poll::Watch::Nothing, None, || match self.reap() {
            Ok(()) => Ok(self.pending.is_empty()),
            Err(e) => {
                failed = Some(e);
                Err(-1)
            }
        });
        match failed {
            Some(e) => Err(e),
            None => ok(rc, "waiting for parity sends"),
        }
    }
}

impl Transport<AlignedBuf> for MpiTransport {
    fn member(&self) -> usize {
        self.member
    }

    fn members(&self) -> usize {
        self.ranks.len()
    }

    fn send(&mut self, to: usize, data: &[u8]) -> Result<(), String> {
        let mut buf = self.recycled();
        buf.extend_from_slice(data);
        self.post_send(to, Rc::new(buf))
    }

    fn send_owned(&mut self, to: usize, data: AlignedBuf) -> Result<AlignedBuf, String> {
        self.post_send(to, Rc::new(data))?;
        Ok(self.recycled())
    }

    fn send_and_keep(&mut self, to: usize, data: AlignedBuf) -> Result<AlignedBuf, String> {
        let shared = Rc::new(data);
        self.kept = Some(Rc::clone(&shared));
        self.post_send(to, shared)?;
        Ok(self.recycled())
    }

    fn send_kept(&mut self, to: usize, data: AlignedBuf) -> Result<AlignedBuf, String> {
        let shared = self
            .kept
            .take()
            .ok_or("a parity message sent again that was not kept")?;
        self.post_send(to, shared)?;
        let mut data = data;
        data.clear();
        Ok(data)
    }

    fn recv(&mut self, from: usize, buf: &mut AlignedBuf) -> Result<(), String> {
        let source = self.ranks[from];
        let mut probed = None;
        let mut failed = None;
        // Probe: the length is not known in advance (the last piece is short).
        let rc = poll::until(|| {
            if let Err(e) = self.reap() {
                failed = Some(e);
                return Err(-1);
            }
            probed = p2p::iprobe(source, TAG, self.comm)?;
            Ok(probed.is_some())
        });
        if let Some(e) = failed {
            return Err(e);
        }
        ok(rc, "MPI_Iprobe for a parity message")?;
        let len = match probed.map(|p| p.bytes()) {
            Some(Ok(len)) => len,
            Some(Err(rc)) => return ok(rc, "MPI_Get_count"),
            None => 0,
        };
        // Received into spare capacity, not a zero-filled buffer: a memset
        // per message is a pass over every byte for nothing.
        buf.clear();
        // Exactly the message: pieces are all one size but the last.
        buf.reserve_total(len);
        let spare = &mut buf.spare_capacity_mut()[..len];
        let mut receive = match p2p::irecv_uninit(spare, source, TAG, self.comm) {
            Ok(receive) => receive,
            Err(rc) => return ok(rc, "MPI_Irecv of a parity message"),
        };
        let rc = poll::until_moved(len, poll::Watch::Nothing, None, || {
            if let Err(e) = self.reap() {
                failed = Some(e);
                return Err(-1);
            }
            receive.test()
        });
        // Never leave MPI a receive into memory we give back: dropping a
        // pending receive cancels it.
        drop(receive);
        if let Some(e) = failed {
            return Err(e);
        }
        ok(rc, "receiving a parity message")?;
        // SAFETY: the completed receive wrote the `len` probed bytes.
        unsafe { buf.set_len(len) };
        Ok(())
    }
}

impl Drop for MpiTransport {
    fn drop(&mut self) {
        // Never free a buffer MPI may still read.
        let _ = self.flush();
    }
}
