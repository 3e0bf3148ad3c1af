//! The replicas' message link over MPI: the real [`ReplicaLink`].
//!
//! Point-to-point messages on the communicator of the live replica set
//! (rank in it = position in the set, [`membership`]). Every operation is
//! nonblocking and polled with back-off ([`poll`]), so a replica waiting
//! for its peers sleeps instead of spinning. Every wait watches the other
//! members: a dead one ends it with [`LinkError::PeerFailed`], and once the
//! operation is under way ([`MpiLink::set_deadline`]) a silent one ends it
//! with [`LinkError::Timeout`].

use crate::comm::ffi;

use crate::comm::p2p;
use crate::comm::poll;
use crate::comm::request::Request;
use crate::ft::liveness;
use crate::ft::membership;
use crate::ft::ulfm;
use redio_protocols::{LinkError, ReplicaLink};
use std::time::Duration;

/// The link of this process to the other replicas of its logical rank.
pub struct MpiLink {
    comm: ffi::MPI_Comm,
    me: usize,
    degree: usize,
    /// World ranks of the other live members, watched by every wait.
    others: Vec<u32>,
    deadline: Option<Duration>,
}

impl MpiLink {
    /// The link over the live replica set, if there is one.
    pub fn current() -> Option<MpiLink> {
        let view = membership::current()?;
        let others = (0..view.members.len())
            .filter(|&i| i != view.me)
            .map(|i| view.members[i])
            .collect();
        Some(MpiLink {
            comm: view.comm(),
            me: view.me,
            degree: view.members.len(),
            others,
            deadline: None,
        })
    }

    /// A link of one: this process alone, for an operation the other
    /// survivors already completed.
    pub fn alone() -> MpiLink {
        MpiLink {
            // SAFETY: a constant defined in shim.c; never used at degree 1.
            comm: unsafe { ffi::redio_mpi_comm_self },
            me: 0,
            degree: 1,
            others: Vec::new(),
            deadline: None,
        }
    }

    /// From now on, each wait gives up after `deadline` (plus the time its
    /// bytes need): set once every replica has announced the operation, so
    /// that a peer still computing is never mistaken for a dead one. Only
    /// peers on other nodes need it: the death of a peer on this node is
    /// seen directly, and a slow but live one (a large read from a slow
    /// file system) must not be given up on.
    pub fn set_deadline(&mut self, deadline: Option<Duration>) {
        self.deadline = deadline.filter(|_| !liveness::all_local(&self.others));
    }

    fn watch(&self) -> poll::Watch<'_> {
        poll::Watch::Processes(&self.others)
    }

    fn deadline_for(&self, bytes: usize) -> Option<Duration> {
        self.deadline.map(|d| d + poll::transfer_time(bytes))
    }

    fn check(&self, replica: usize) -> Result<i32, LinkError> {
        if replica >= self.degree {
            return Err(LinkError::NoSuchReplica { replica });
        }
        Ok(replica as i32)
    }
}

impl MpiLink {
    /// Posts a receive of up to `buf.len()` bytes from `peer` into `buf`,
    /// which the request borrows until it is waited for or dropped.
    fn post_recv<'b>(
        &self,
        peer: i32,
        tag: u32,
        buf: &'b mut [u8],
    ) -> Result<Request<'b>, LinkError> {
        message_count(peer, buf.len())?;
        p2p::irecv(buf, peer, tag as i32, self.comm).map_err(|code| transport(peer as usize, code))
    }

    /// Posts a send of `data` to `peer`; completed like [`post_recv`](Self::post_recv).
    fn post_send<'b>(&self, peer: i32, tag: u32, data: &'b [u8]) -> Result<Request<'b>, LinkError> {
        message_count(peer, data.len())?;
        p2p::isend(data, peer, tag as i32, self.comm).map_err(|code| transport(peer as usize, code))
    }

    /// Waits for all `requests`, which move `bytes`. On an error the
    /// caller drops them: the pending ones are cancelled and freed.
    fn finish(
        &self,
        replica: usize,
        requests: &mut [Request<'_>],
        bytes: usize,
    ) -> Result<(), LinkError> {
        let deadline = self.deadline_for(bytes);
        match poll::wait_each(requests, bytes, self.watch(), deadline) {
            rc if rc == unsafe { ffi::redio_mpi_success } => Ok(()),
            code => Err(transport(replica, code)),
        }
    }

    /// Waits for `requests`, which move `bytes`, no longer than the wait
    /// yields ([`poll::yielding_phase`]); those still pending stay posted.
    fn wait_while_yielding(
        &self,
        replica: usize,
        requests: &mut [Request<'_>],
        bytes: usize,
    ) -> Result<(), LinkError> {
        let budget = Some(poll::yielding_phase(bytes));
        match poll::wait_each(requests, bytes, self.watch(), budget) {
            rc if rc == unsafe { ffi::redio_mpi_success } || rc == poll::TIMED_OUT => Ok(()),
            code => Err(transport(replica, code)),
        }
    }

    /// Posts the receive of the next message from `peer` with `tag` into
    /// `buf` and waits for it; returns its length.
    fn receive(
        &self,
        replica: usize,
        peer: i32,
        tag: u32,
        buf: &mut [u8],
    ) -> Result<usize, LinkError> {
        let bytes = buf.len();
        let mut requests = [self.post_recv(peer, tag, buf)?];
        self.finish(replica, &mut requests, bytes)?;
        Ok(requests[0].received_bytes().unwrap_or(0))
    }

    /// Waits (polled) until the next message from `peer` with `tag` has
    /// begun to arrive, and returns its length.
    fn arrival(&self, replica: usize, peer: i32, tag: u32) -> Result<usize, LinkError> {
        let mut probed = None;
        let rc = poll::until_moved(0, self.watch(), self.deadline_for(0), || {
            probed = p2p::iprobe(peer, tag as i32, self.comm)?;
            Ok(probed.is_some())
        });
        if rc != unsafe { ffi::redio_mpi_success } {
            return Err(transport(replica, rc));
        }
        Ok(probed.map_or(0, |p| p.bytes().unwrap_or(0)))
    }
}

/// A message larger than what moves in the plain yielding phase at
/// [`poll::TRANSFER_RATE`] (512 KiB). An eager transport
/// (`UCX_RNDV_THRESH=inf`, set for replicated MPICH jobs) moves it in
/// fragments that both sides must test; with UCX's shared-memory FIFO a
/// receiver in its sleeping phase drained the rest of a 4 MiB chunk of
/// Chunked & Chained Read in about 48 ms (docs/benchmarks.md, "Reads under
/// the survival setting"). So a receive of one first waits for it to begin
/// to arrive ([`MpiLink::arrival`]), and its wait then starts yielding when
/// the bytes start to flow, not while the sender still reads them from the
/// file; and an overlapped send gives it its transfer time before the
/// overlapped work (`send_overlapping`).
const LARGE_MESSAGE: usize =
    (poll::YIELDING_PHASE.as_micros() as usize) * (poll::TRANSFER_RATE as usize) / 1_000_000;

/// The element count MPI takes for a `len`-byte message: an `int`.
fn message_count(peer: i32, len: usize) -> Result<i32, LinkError> {
    i32::try_from(len).map_err(|_| LinkError::TooLong {
        replica: peer as usize,
        len,
        capacity: i32::MAX as usize,
    })
}

/// The link error for a failed wait: a dead peer, a deadline, or the
/// transport's own code (ULFM's `MPI_ERR_PROC_FAILED` counts as a dead peer).
fn transport(replica: usize, code: i32) -> LinkError {
    match code {
        poll::PEER_DIED => LinkError::PeerFailed { replica },
        code if ulfm::is_failure(code) => LinkError::PeerFailed { replica },
        poll::TIMED_OUT => LinkError::Timeout { replica },
        code => LinkError::Transport { replica, code },
    }
}

impl ReplicaLink for MpiLink {
    fn me(&self) -> usize {
        self.me
    }

    fn degree(&self) -> usize {
        self.degree
    }

    fn send(&mut self, to: usize, tag: u32, data: &[u8]) -> Result<(), LinkError> {
        let peer = self.check(to)?;
        let mut requests = [self.post_send(peer, tag, data)?];
        self.finish(to, &mut requests, data.len())
    }

    fn send_overlapping(
        &mut self,
        to: usize,
        tag: u32,
        data: &[u8],
        meanwhile: &mut dyn FnMut(),
    ) -> Result<(), LinkError> {
        let peer = self.check(to)?;
        let bytes = data.len();
        let mut requests = [self.post_send(peer, tag, data)?];
        if bytes > LARGE_MESSAGE {
            // An eager transport moves a large message only while this side
            // tests it: left pending through `meanwhile` (a `pread` of the
            // next chunk), a 4 MiB chunk went 512 KiB ahead, then crept
            // along once the read was done. So it gets the time its bytes
            // need first; a receiver not there yet is overlapped as before.
            self.wait_while_yielding(to, &mut requests, bytes)?;
        }
        // The receiver copies while this replica does `meanwhile` (a send
        // already complete is not tested again).
        meanwhile();
        self.finish(to, &mut requests, bytes)
    }

    fn recv_into(&mut self, from: usize, tag: u32, buf: &mut [u8]) -> Result<usize, LinkError> {
        let peer = self.check(from)?;
        if buf.len() > LARGE_MESSAGE {
            self.arrival(from, peer, tag)?;
        }
        self.receive(from, peer, tag, buf)
    }

    fn sendrecv_into(
        &mut self,
        peer: usize,
        tag: u32,
        data: &[u8],
        buf: &mut [u8],
    ) -> Result<usize, LinkError> {
        let rank = self.check(peer)?;
        let bytes = data.len().max(buf.len());
        // Both directions at once: the two copies run on both cores.
        let mut receive = self.post_recv(rank, tag, buf)?;
        let send = match self.post_send(rank, tag, data) {
            Ok(send) => send,
            Err(e) => {
                receive.cancel();
                poll::wait_each(std::slice::from_mut(&mut receive), 0, self.watch(), None);
                return Err(e);
            }
        };
        let mut requests = [receive, send];
        self.finish(peer, &mut requests, bytes)?;
        Ok(requests[0].received_bytes().unwrap_or(0))
    }

    fn recv(&mut self, from: usize, tag: u32) -> Result<Vec<u8>, LinkError> {
        let peer = self.check(from)?;
        // The size is not known in advance: probe, then receive.
        let len = self.arrival(from, peer, tag)?;
        let mut data = vec![0u8; len];
        // Probed already: receive it without probing again.
        let len = self.receive(from, peer, tag, &mut data)?;
        data.truncate(len);
        Ok(data)
    }
}
