//! [`ReplicaLink`]: messages among the replicas of one logical rank.

use crate::LinkError;

/// A message link among the [`degree`](ReplicaLink::degree) replicas of one
/// logical rank, replicas numbered `0..degree`.
///
/// Contract the protocols rely on:
///
/// - messages from one replica to another with the same tag arrive in the
///   order they were sent; messages with other tags may overtake them;
/// - `recv` blocks until the message arrives or the link gives up
///   ([`LinkError::Timeout`], [`LinkError::PeerFailed`]);
/// - `send` may return as soon as `data` has been copied or delivered, or
///   may block until the receiver has posted the matching `recv`
///   (rendezvous): every message schedule in this crate is deadlock-free
///   either way. `data` may be reused as soon as `send` returns.
pub trait ReplicaLink {
    /// This replica's index.
    fn me(&self) -> usize;

    /// The number of replicas of the logical rank, this one included (≥ 1).
    fn degree(&self) -> usize;

    /// Sends `data` to replica `to` under `tag`.
    fn send(&mut self, to: usize, tag: u32, data: &[u8]) -> Result<(), LinkError>;

    /// Receives the next message from replica `from` under `tag`.
    fn recv(&mut self, from: usize, tag: u32) -> Result<Vec<u8>, LinkError>;

    /// Receives the next message from replica `from` under `tag` straight
    /// into `buf` and returns its length. A message longer than `buf` is
    /// [`LinkError::TooLong`] (and consumed).
    ///
    /// The default receives into a fresh vector and copies; transports that
    /// can place the bytes directly (MPI) override it, which saves the
    /// protocols one copy of every data byte.
    fn recv_into(&mut self, from: usize, tag: u32, buf: &mut [u8]) -> Result<usize, LinkError> {
        let data = self.recv(from, tag)?;
        let capacity = buf.len();
        let target = buf.get_mut(..data.len()).ok_or(LinkError::TooLong {
            replica: from,
            len: data.len(),
            capacity,
        })?;
        target.copy_from_slice(&data);
        Ok(data.len())
    }

    /// Sends `data` to replica `peer` and receives `peer`'s message under
    /// the same `tag` into `buf`; returns the received length.
    ///
    /// Both replicas of the pair must call it. The default orders the two
    /// directions by index (the lower index sends first), which is
    /// deadlock-free with rendezvous sends; transports that can run both
    /// directions at once (MPI) override it.
    fn sendrecv_into(
        &mut self,
        peer: usize,
        tag: u32,
        data: &[u8],
        buf: &mut [u8],
    ) -> Result<usize, LinkError> {
        if self.me() < peer {
            self.send(peer, tag, data)?;
            self.recv_into(peer, tag, buf)
        } else {
            let len = self.recv_into(peer, tag, buf)?;
            self.send(peer, tag, data)?;
            Ok(len)
        }
    }

    /// Sends `data` to replica `to` under `tag` while running `meanwhile`:
    /// transports that can (MPI) start the send, run `meanwhile` (e.g. the
    /// read of the next chunk) and then wait for the send, so that the two
    /// overlap. A transport may first wait for the send for a while (the
    /// MPI link does for large messages, which an eager transport moves
    /// only while the sender tests them). On an error `meanwhile` may not
    /// have run. The default sends, then runs `meanwhile`.
    fn send_overlapping(
        &mut self,
        to: usize,
        tag: u32,
        data: &[u8],
        meanwhile: &mut dyn FnMut(),
    ) -> Result<(), LinkError> {
        self.send(to, tag, data)?;
        meanwhile();
        Ok(())
    }

    /// All-to-all exchange: returns every replica's payload, indexed by
    /// replica (this replica's own at [`me`](ReplicaLink::me)). Every
    /// replica must call it with the same tag.
    ///
    /// Pairs are served in ascending order of the other replica's index,
    /// the lower index sending first. All replicas thus meet their pairs in
    /// the same global order, which keeps it deadlock-free with rendezvous
    /// sends.
    fn exchange_all(&mut self, tag: u32, mine: &[u8]) -> Result<Vec<Vec<u8>>, LinkError> {
        let me = self.me();
        let mut all = Vec::with_capacity(self.degree());
        for peer in 0..self.degree() {
            let payload = if peer == me {
                mine.to_vec()
            } else if me < peer {
                self.send(peer, tag, mine)?;
                self.recv(peer, tag)?
            } else {
                let theirs = self.recv(peer, tag)?;
                self.send(peer, tag, mine)?;
                theirs
            };
            all.push(payload);
        }
        Ok(all)
    }

    /// Sends `data` under `tag` to each replica in `to` (in that order),
    /// skipping this replica.
    fn send_to_each(&mut self, to: &[usize], tag: u32, data: &[u8]) -> Result<(), LinkError> {
        let me = self.me();
        for &peer in to.iter().filter(|&&peer| peer != me) {
            self.send(peer, tag, data)?;
        }
        Ok(())
    }

    /// Sends `data` under `tag` to every other replica, in index order.
    fn send_to_others(&mut self, tag: u32, data: &[u8]) -> Result<(), LinkError> {
        let me = self.me();
        for peer in (0..self.degree()).filter(|&peer| peer != me) {
            self.send(peer, tag, data)?;
        }
        Ok(())
    }
}
