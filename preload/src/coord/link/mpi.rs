//! The link's MPI transport: point-to-point messages on the replica set's
//! communicator, posted nonblocking and polled.

use super::{transport, SetLink, LARGE_MESSAGE};
use crate::comm::ffi;
use crate::comm::p2p;
use crate::comm::poll;
use crate::comm::request::Request;
use redio_protocols::LinkError;

/// Posts a receive of up to `buf.len()` bytes from `peer` into `buf`,
/// which the request borrows until it is waited for or dropped.
fn post_recv<'b>(
    comm: ffi::MPI_Comm,
    peer: usize,
    tag: u32,
    buf: &'b mut [u8],
) -> Result<Request<'b>, LinkError> {
    message_count(peer, buf.len())?;
    p2p::irecv(buf, peer as i32, tag as i32, comm).map_err(|code| transport(peer, code))
}

/// Posts a send of `data` to `peer`; completed like [`post_recv`].
fn post_send<'b>(
    comm: ffi::MPI_Comm,
    peer: usize,
    tag: u32,
    data: &'b [u8],
) -> Result<Request<'b>, LinkError> {
    message_count(peer, data.len())?;
    p2p::isend(data, peer as i32, tag as i32, comm).map_err(|code| transport(peer, code))
}

/// Waits for all `requests`, which move `bytes`. On an error the caller
/// drops them: the pending ones are cancelled and freed.
fn finish(
    link: &SetLink,
    replica: usize,
    requests: &mut [Request<'_>],
    bytes: usize,
) -> Result<(), LinkError> {
    let deadline = link.deadline_for(bytes);
    match poll::wait_each(requests, bytes, link.watch(), deadline) {
        rc if rc == unsafe { ffi::redio_mpi_success } => Ok(()),
        code => Err(transport(replica, code)),
    }
}

/// Waits for `requests`, which move `bytes`, no longer than the wait
/// yields ([`poll::yielding_phase`]); those still pending stay posted.
fn wait_while_yielding(
    link: &SetLink,
    replica: usize,
    requests: &mut [Request<'_>],
    bytes: usize,
) -> Result<(), LinkError> {
    let budget = Some(poll::yielding_phase(bytes));
    match poll::wait_each(requests, bytes, link.watch(), budget) {
        rc if rc == unsafe { ffi::redio_mpi_success } || rc == poll::TIMED_OUT => Ok(()),
        code => Err(transport(replica, code)),
    }
}

/// Posts the receive of the next message from `peer` with `tag` into
/// `buf` and waits for it; returns its length.
fn receive(
    link: &SetLink,
    comm: ffi::MPI_Comm,
    peer: usize,
    tag: u32,
    buf: &mut [u8],
) -> Result<usize, LinkError> {
    let bytes = buf.len();
    let mut requests = [post_recv(comm, peer, tag, buf)?];
    finish(link, peer, &mut requests, bytes)?;
    Ok(requests[0].received_bytes().unwrap_or(0))
}

/// Waits (polled) until the next message from `peer` with `tag` has begun
/// to arrive, and returns its length.
fn arrival(link: &SetLink, comm: ffi::MPI_Comm, peer: usize, tag: u32) -> Result<usize, LinkError> {
    let mut probed = None;
    let rc = poll::until_moved(0, link.watch(), link.deadline_for(0), || {
        probed = p2p::iprobe(peer as i32, tag as i32, comm)?;
        Ok(probed.is_some())
    });
    if rc != unsafe { ffi::redio_mpi_success } {
        return Err(transport(peer, rc));
    }
    Ok(probed.map_or(0, |p| p.bytes().unwrap_or(0)))
}

/// The element count MPI takes for a `len`-byte message: an `int`.
fn message_count(peer: usize, len: usize) -> Result<i32, LinkError> {
    i32::try_from(len).map_err(|_| LinkError::TooLong {
        replica: peer,
        len,
        capacity: i32::MAX as usize,
    })
}

/// Sends `data` to `to`; with `meanwhile`, runs it while the receiver
/// copies ([`redio_protocols::ReplicaLink::send_overlapping`]).
pub(super) fn send(
    link: &SetLink,
    comm: ffi::MPI_Comm,
    to: usize,
    tag: u32,
    data: &[u8],
    meanwhile: Option<&mut dyn FnMut()>,
) -> Result<(), LinkError> {
    let bytes = data.len();
    let mut requests = [post_send(comm, to, tag, data)?];
    if let Some(meanwhile) = meanwhile {
        if bytes > LARGE_MESSAGE {
            // An eager transport moves a large message only while this side
            // tests it: left pending through `meanwhile` (a `pread` of the
            // next chunk), a 4 MiB chunk went 512 KiB ahead, then crept
            // along once the read was done. So it gets the time its bytes
            // need first; a receiver not there yet is overlapped as before.
            wait_while_yielding(link, to, &mut requests, bytes)?;
        }
        // The receiver copies while this replica does `meanwhile` (a send
        // already complete is not tested again).
        meanwhile();
    }
    finish(link, to, &mut requests, bytes)
}

/// Receives the next message from `from` under `tag` into `buf`.
pub(super) fn recv_into(
    link: &SetLink,
    comm: ffi::MPI_Comm,
    from: usize,
    tag: u32,
    buf: &mut [u8],
) -> Result<usize, LinkError> {
    if buf.len() > LARGE_MESSAGE {
        arrival(link, comm, from, tag)?;
    }
    receive(link, comm, from, tag, buf)
}

/// Sends to and receives from `peer` at once: the two copies run on both
/// cores.
pub(super) fn sendrecv_into(
    link: &SetLink,
    comm: ffi::MPI_Comm,
    peer: usize,
    tag: u32,
    data: &[u8],
    buf: &mut [u8],
) -> Result<usize, LinkError> {
    let bytes = data.len().max(buf.len());
    let mut receive = post_recv(comm, peer, tag, buf)?;
    let send = match post_send(comm, peer, tag, data) {
        Ok(send) => send,
        Err(e) => {
            receive.cancel();
            poll::wait_each(std::slice::from_mut(&mut receive), 0, link.watch(), None);
            return Err(e);
        }
    };
    let mut requests = [receive, send];
    finish(link, peer, &mut requests, bytes)?;
    Ok(requests[0].received_bytes().unwrap_or(0))
}

/// Receives the next message from `from` under `tag`, of any length.
pub(super) fn recv(
    link: &SetLink,
    comm: ffi::MPI_Comm,
    from: usize,
    tag: u32,
) -> Result<Vec<u8>, LinkError> {
    // The size is not known in advance: probe, then receive.
    let len = arrival(link, comm, from, tag)?;
    let mut data = vec![0u8; len];
    // Probed already: receive it without probing again.
    let len = receive(link, comm, from, tag, &mut data)?;
    data.truncate(len);
    Ok(data)
}
