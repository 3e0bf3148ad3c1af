//! The MPI [`Transport`] of the ring engine: point-to-point messages among
//! the members of one redundancy set, over PMPI on a communicator redio
//! owns (a duplicate of the replica world, so no application message can
//! match ours).
//!
//! Sends are posted nonblocking from a buffer the transport keeps (the
//! caller's, handed over with `send_owned`, or a private copy) and
//! completed lazily:
//! in the ring every member sends to its right neighbour before it receives
//! from its left one, so a send that waited for its receiver would deadlock
//! the ring on large (rendezvous) messages. Receives probe for the next
//! message from the sender, size the buffer, and wait with
//! [`poll::until_moved`] while also progressing the pending sends, so a
//! waiting rank sleeps instead of busy-polling in MPICH.

use crate::comm::ffi;
use crate::comm::pmpi;
use crate::comm::poll;
use crate::parity::collective::ok;
use redio_parity::ring::Transport;

/// The tag of every parity message (communicator-private, so any fixed
/// value below the guaranteed `MPI_TAG_UB` of 32767 does).
const TAG: i32 = 0x7ead;

/// One set's members over an MPI communicator.
pub struct MpiTransport {
    comm: ffi::MPI_Comm,
    /// Member index → rank in `comm`.
    ranks: Vec<i32>,
    member: usize,
    /// Posted sends and the buffers they read from.
    pending: Vec<(ffi::MPI_Request, Vec<u8>)>,
    /// Buffers of completed sends, reused: a fresh megabyte per message
    /// costs page faults at every piece.
    spare: Vec<Vec<u8>>,
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
        }
    }

    /// Frees the sends that have completed; returns the first MPI error.
    fn reap(&mut self) -> Result<(), String> {
        let mut i = 0;
        while i < self.pending.len() {
            let mut done = 0;
            // SAFETY: a live request whose buffer `pending` still owns.
            let rc = unsafe {
                pmpi::PMPI_Test(
                    &mut self.pending[i].0,
                    &mut done,
                    ffi::redio_mpi_status_ignore,
                )
            };
            ok(rc, "MPI_Test of a parity send")?;
            if done != 0 {
                let (_, buf) = self.pending.swap_remove(i);
                self.spare.push(buf);
            } else {
                i += 1;
            }
        }
        Ok(())
    }

    /// An empty buffer, from a completed send where there is one.
    fn recycled(&mut self) -> Vec<u8> {
        let mut buf = self.spare.pop().unwrap_or_default();
        buf.clear();
        buf
    }

    /// Posts the send of `buf` to member `to`; `pending` keeps `buf` until
    /// the send has completed.
    fn post_send(&mut self, to: usize, buf: Vec<u8>) -> Result<(), String> {
        let count = i32::try_from(buf.len()).map_err(|_| "parity message over 2 GiB")?;
        let mut request = unsafe { std::mem::zeroed() };
        // SAFETY: `buf` moves into `pending` (its heap block does not move)
        // and lives until the request has completed.
        let rc = unsafe {
            pmpi::PMPI_Isend(
                buf.as_ptr().cast(),
                count,
                ffi::redio_mpi_byte,
                self.ranks[to],
                TAG,
                self.comm,
                &mut request,
            )
        };
        ok(rc, "MPI_Isend of a parity message")?;
        self.pending.push((request, buf));
        self.reap()
    }

    /// Waits until every posted send has completed (before the buffers and
    /// the communicator go away).
    pub fn flush(&mut self) -> Result<(), String> {
        let bytes = self.pending.iter().map(|p| p.1.len()).sum();
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

impl Transport for MpiTransport {
    fn member(&self) -> usize {
        self.member
    }

    fn members(&self) -> usize {
        self.ranks.len()
    }

    fn send(&mut self, to: usize, data: &[u8]) -> Result<(), String> {
        let mut buf = self.recycled();
        buf.extend_from_slice(data);
        self.post_send(to, buf)
    }

    fn send_owned(&mut self, to: usize, data: Vec<u8>) -> Result<Vec<u8>, String> {
        self.post_send(to, data)?;
        Ok(self.recycled())
    }

    fn recv(&mut self, from: usize, buf: &mut Vec<u8>) -> Result<(), String> {
        let source = self.ranks[from];
        let mut status: ffi::MPI_Status = unsafe { std::mem::zeroed() };
        let mut failed = None;
        // Probe: the length is not known in advance (the last piece is short).
        let rc = poll::until(|| {
            if let Err(e) = self.reap() {
                failed = Some(e);
                return Err(-1);
            }
            let mut found = 0;
            // SAFETY: plain out-parameters.
            let rc = unsafe { pmpi::PMPI_Iprobe(source, TAG, self.comm, &mut found, &mut status) };
            if rc == unsafe { ffi::redio_mpi_success } {
                Ok(found != 0)
            } else {
                Err(rc)
            }
        });
        if let Some(e) = failed {
            return Err(e);
        }
        ok(rc, "MPI_Iprobe for a parity message")?;
        let mut count = 0;
        // SAFETY: `status` was filled by the successful probe.
        ok(
            unsafe { pmpi::PMPI_Get_count(&status, ffi::redio_mpi_byte, &mut count) },
            "MPI_Get_count",
        )?;
        // Received into spare capacity, not a zero-filled buffer: a memset
        // per message is a pass over every byte for nothing.
        let len = count.max(0) as usize;
        buf.clear();
        buf.reserve(len);
        let mut request = unsafe { std::mem::zeroed() };
        // SAFETY: `buf`'s capacity holds `len` bytes and stays borrowed until
        // the request completes or is cancelled below.
        ok(
            unsafe {
                pmpi::PMPI_Irecv(
                    buf.spare_capacity_mut().as_mut_ptr().cast(),
                    count,
                    ffi::redio_mpi_byte,
                    source,
                    TAG,
                    self.comm,
                    &mut request,
                )
            },
            "MPI_Irecv of a parity message",
        )?;
        let rc = poll::until_moved(len, poll::Watch::Nothing, None, || {
            if let Err(e) = self.reap() {
                failed = Some(e);
                return Err(-1);
            }
            let mut done = 0;
            // SAFETY: the live receive request posted above.
            let rc =
                unsafe { pmpi::PMPI_Test(&mut request, &mut done, ffi::redio_mpi_status_ignore) };
            if rc == unsafe { ffi::redio_mpi_success } {
                Ok(done != 0)
            } else {
                Err(rc)
            }
        });
        if failed.is_some() || rc != unsafe { ffi::redio_mpi_success } {
            // Never leave MPI a receive into memory we give back.
            poll::abandon(std::slice::from_mut(&mut request));
        }
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
