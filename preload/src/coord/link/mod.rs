//! The replicas' message link: the real [`ReplicaLink`].
//!
//! Point-to-point messages between the live members of the replica set,
//! addressed by position in the set ([`membership`]). Two transports carry
//! them:
//!
//! - [`stream`]: TCP connections of redio's own, built at start-up, for the
//!   liveness back-end (MPICH, Open MPI 4.1). A replica SIGKILLed in the
//!   middle of a message only closes its connection; inside MPICH's UCX it
//!   could leave its receiver deaf to everyone (docs/fault-tolerance.md);
//! - [`mpi`]: the set's MPI communicator, under ULFM (whose revoke must
//!   reach a survivor's pending link operation), with `REDIO_LINK=mpi`,
//!   and when the connections could not be built.
//!
//! Every operation is polled with back-off ([`poll`]), so a replica waiting
//! for its peers sleeps instead of spinning. Every wait watches the other
//! members: a dead one ends it with [`LinkError::PeerFailed`], and once the
//! operation is under way ([`SetLink::set_deadline`]) a silent one ends it
//! with [`LinkError::Timeout`].

mod mpi;
pub mod stream;

use crate::comm::ffi;
use crate::comm::poll;
use crate::ft::liveness;
use crate::ft::membership;
use crate::ft::ulfm;
use redio_protocols::{LinkError, ReplicaLink};
use std::time::Duration;

/// The link of this process to the other replicas of its logical rank.
pub struct SetLink {
    me: usize,
    degree: usize,
    /// World ranks of the live members, by position.
    members: Vec<u32>,
    /// World ranks of the other live members, watched by every wait.
    others: Vec<u32>,
    deadline: Option<Duration>,
    transport: Transport,
}

#[derive(Clone, Copy)]
enum Transport {
    /// The set's communicator (rank in it = position).
    Mpi(ffi::MPI_Comm),
    /// The connections of [`stream`].
    Streams,
}

impl SetLink {
    /// The link over the live replica set, if there is one.
    pub fn current() -> Option<SetLink> {
        let view = membership::current()?;
        let others = (0..view.members.len())
            .filter(|&i| i != view.me)
            .map(|i| view.members[i])
            .collect();
        let transport = if stream::connected() {
            Transport::Streams
        } else {
            Transport::Mpi(view.comm())
        };
        Some(SetLink {
            me: view.me,
            degree: view.members.len(),
            members: view.members,
            others,
            deadline: None,
            transport,
        })
    }

    /// A link of one: this process alone, for an operation the other
    /// survivors already completed.
    pub fn alone() -> SetLink {
        SetLink {
            me: 0,
            degree: 1,
            members: Vec::new(),
            others: Vec::new(),
            deadline: None,
            // SAFETY: a constant defined in shim.c; never used at degree 1.
            transport: Transport::Mpi(unsafe { ffi::redio_mpi_comm_self }),
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

    fn check(&self, replica: usize) -> Result<(), LinkError> {
        if replica >= self.degree {
            return Err(LinkError::NoSuchReplica { replica });
        }
        Ok(())
    }
}

/// A message larger than what moves in the plain yielding phase at
/// [`poll::TRANSFER_RATE`] (512 KiB). An eager transport
/// (`UCX_RNDV_THRESH=inf`, set for replicated MPICH jobs; or a socket,
/// whose buffer holds less) moves it in pieces that both sides must drive;
/// with UCX's shared-memory FIFO a receiver in its sleeping phase drained
/// the rest of a 4 MiB chunk of Chunked & Chained Read in about 48 ms
/// (docs/benchmarks.md, "Reads under the survival setting"). So a receive
/// of one first waits for it to begin to arrive, and its wait then starts
/// yielding when the bytes start to flow, not while the sender still reads
/// them from the file; and an overlapped send gives it its transfer time
/// before the overlapped work (`send_overlapping`).
const LARGE_MESSAGE: usize =
    (poll::YIELDING_PHASE.as_micros() as usize) * (poll::TRANSFER_RATE as usize) / 1_000_000;

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

impl ReplicaLink for SetLink {
    fn me(&self) -> usize {
        self.me
    }

    fn degree(&self) -> usize {
        self.degree
    }

    fn send(&mut self, to: usize, tag: u32, data: &[u8]) -> Result<(), LinkError> {
        self.check(to)?;
        match self.transport {
            Transport::Mpi(comm) => mpi::send(self, comm, to, tag, data, None),
            Transport::Streams => stream::send(self, to, tag, data, None),
        }
    }

    fn send_overlapping(
        &mut self,
        to: usize,
        tag: u32,
        data: &[u8],
        meanwhile: &mut dyn FnMut(),
    ) -> Result<(), LinkError> {
        self.check(to)?;
        match self.transport {
            Transport::Mpi(comm) => mpi::send(self, comm, to, tag, data, Some(meanwhile)),
            Transport::Streams => stream::send(self, to, tag, data, Some(meanwhile)),
        }
    }

    fn recv_into(&mut self, from: usize, tag: u32, buf: &mut [u8]) -> Result<usize, LinkError> {
        self.check(from)?;
        match self.transport {
            Transport::Mpi(comm) => mpi::recv_into(self, comm, from, tag, buf),
            Transport::Streams => stream::recv_into(self, from, tag, buf),
        }
    }

    fn sendrecv_into(
        &mut self,
        peer: usize,
        tag: u32,
        data: &[u8],
        buf: &mut [u8],
    ) -> Result<usize, LinkError> {
        self.check(peer)?;
        match self.transport {
            Transport::Mpi(comm) => mpi::sendrecv_into(self, comm, peer, tag, data, buf),
            Transport::Streams => stream::sendrecv_into(self, peer, tag, data, buf),
        }
    }

    fn recv(&mut self, from: usize, tag: u32) -> Result<Vec<u8>, LinkError> {
        self.check(from)?;
        match self.transport {
            Transport::Mpi(comm) => mpi::recv(self, comm, from, tag),
            Transport::Streams => stream::recv(self, from, tag),
        }
    }
}
