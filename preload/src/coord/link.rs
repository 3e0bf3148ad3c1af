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

use crate::comm::pmpi;
use crate::comm::poll;
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
        self.deadline
            .map(|d| d + Duration::from_secs_f64(bytes as f64 / poll::TRANSFER_RATE as f64))
    }

    fn check(&self, replica: usize) -> Result<i32, LinkError> {
        if replica >= self.degree {
            return Err(LinkError::NoSuchReplica { replica });
        }
        Ok(replica as i32)
    }
}

impl MpiLink {
    /// Posts a receive of up to `buf.len()` bytes from `peer` into `buf`.
    /// The caller completes the request before `buf` goes out of scope.
    fn post_recv(
        &self,
        peer: i32,
        tag: u32,
        buf: &mut [u8],
    ) -> Result<ffi::MPI_Request, LinkError> {
        let (comm, at) = (self.comm, buf.as_mut_ptr().cast());
        // SAFETY: `buf` stays borrowed until the request completes (callers
        // wait for it before returning).
        post(peer, buf.len(), |count, request| unsafe {
            pmpi::PMPI_Irecv(
                at,
                count,
                ffi::redio_mpi_byte,
                peer,
                tag as i32,
                comm,
                request,
            )
        })
    }

    /// Posts a send of `data` to `peer`; completed like [`post_recv`](Self::post_recv).
    fn post_send(&self, peer: i32, tag: u32, data: &[u8]) -> Result<ffi::MPI_Request, LinkError> {
        let (comm, at) = (self.comm, data.as_ptr().cast());
        // SAFETY: `data` stays borrowed until the request completes.
        post(peer, data.len(), |count, request| unsafe {
            pmpi::PMPI_Isend(
                at,
                count,
                ffi::redio_mpi_byte,
                peer,
                tag as i32,
                comm,
                request,
            )
        })
    }

    /// Waits for all `requests`; a truncated receive becomes
    /// [`LinkError::TooLong`].
    fn finish(
        &self,
        replica: usize,
        requests: &mut [ffi::MPI_Request],
        statuses: &mut [ffi::MPI_Status],
        bytes: usize,
    ) -> Result<(), LinkError> {
        let deadline = self.deadline_for(bytes);
        match poll::wait_each_until(requests, statuses, bytes, self.watch(), deadline) {
            rc if rc == unsafe { ffi::redio_mpi_success } => Ok(()),
            code => {
                poll::abandon(requests);
                Err(transport(replica, code))
            }
        }
    }
}

/// Starts a nonblocking operation on a `len`-byte message with `start`
/// (given the MPI count and the request to fill) and returns its request.
fn post(
    peer: i32,
    len: usize,
    start: impl FnOnce(i32, &mut ffi::MPI_Request) -> i32,
) -> Result<ffi::MPI_Request, LinkError> {
    let count = message_count(peer, len)?;
    let mut request = unsafe { std::mem::zeroed() };
    match start(count, &mut request) {
        rc if rc == unsafe { ffi::redio_mpi_success } => Ok(request),
        code => Err(transport(peer as usize, code)),
    }
}

/// The element count MPI takes for a `len`-byte message: an `int`.
fn message_count(peer: i32, len: usize) -> Result<i32, LinkError> {
    i32::try_from(len).map_err(|_| LinkError::TooLong {
        replica: peer as usize,
        len,
        capacity: i32::MAX as usize,
    })
}

/// The byte count of a completed receive.
fn received_len(status: &ffi::MPI_Status) -> usize {
    let mut count = 0;
    // SAFETY: `status` belongs to a completed receive.
    unsafe { pmpi::PMPI_Get_count(status, ffi::redio_mpi_byte, &mut count) };
    count.max(0) as usize
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
        let mut statuses: [ffi::MPI_Status; 1] = unsafe { std::mem::zeroed() };
        self.finish(to, &mut requests, &mut statuses, data.len())
    }

    fn send_overlapping(
        &mut self,
        to: usize,
        tag: u32,
        data: &[u8],
        meanwhile: &mut dyn FnMut(),
    ) -> Result<(), LinkError> {
        let peer = self.check(to)?;
        let mut requests = [self.post_send(peer, tag, data)?];
        // The receiver copies while this replica does `meanwhile`.
        meanwhile();
        let mut statuses: [ffi::MPI_Status; 1] = unsafe { std::mem::zeroed() };
        self.finish(to, &mut requests, &mut statuses, data.len())
    }

    fn recv_into(&mut self, from: usize, tag: u32, buf: &mut [u8]) -> Result<usize, LinkError> {
        let peer = self.check(from)?;
        let bytes = buf.len();
        let mut requests = [self.post_recv(peer, tag, buf)?];
        let mut statuses: [ffi::MPI_Status; 1] = unsafe { std::mem::zeroed() };
        self.finish(from, &mut requests, &mut statuses, bytes)?;
        Ok(received_len(&statuses[0]))
    }

    fn sendrecv_into(
        &mut self,
        peer: usize,
        tag: u32,
        data: &[u8],
        buf: &mut [u8],
    ) -> Result<usize, LinkError> {
        let rank = self.check(peer)?;
        // Both directions at once: the two copies run on both cores.
        let receive = self.post_recv(rank, tag, buf)?;
        let send = match self.post_send(rank, tag, data) {
            Ok(send) => send,
            Err(e) => {
                let mut pending = [receive];
                // SAFETY: cancelling and completing our own posted receive.
                unsafe { pmpi::PMPI_Cancel(&mut pending[0]) };
                let mut statuses: [ffi::MPI_Status; 1] = unsafe { std::mem::zeroed() };
                poll::wait_each(&mut pending, &mut statuses, 0, self.watch());
                return Err(e);
            }
        };
        let mut requests = [receive, send];
        let mut statuses: [ffi::MPI_Status; 2] = unsafe { std::mem::zeroed() };
        self.finish(
            peer,
            &mut requests,
            &mut statuses,
            data.len().max(buf.len()),
        )?;
        Ok(received_len(&statuses[0]))
    }

    fn recv(&mut self, from: usize, tag: u32) -> Result<Vec<u8>, LinkError> {
        let peer = self.check(from)?;
        let success = unsafe { ffi::redio_mpi_success };
        // The size is not known in advance: probe (polled), then receive.
        let mut status: ffi::MPI_Status = unsafe { std::mem::zeroed() };
        let rc = poll::until_moved(0, self.watch(), self.deadline_for(0), || {
            let mut found = 0;
            // SAFETY: probing on a valid communicator into a local status.
            match unsafe { pmpi::PMPI_Iprobe(peer, tag as i32, self.comm, &mut found, &mut status) }
            {
                rc if rc == success => Ok(found != 0),
                code => Err(code),
            }
        });
        if rc != success {
            return Err(transport(from, rc));
        }
        let mut data = vec![0u8; received_len(&status)];
        let len = self.recv_into(from, tag, &mut data)?;
        data.truncate(len);
        Ok(data)
    }
}
