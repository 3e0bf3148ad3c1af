//! The link's own transport: a TCP connection between every two members of
//! the replica set, built at start-up ([`connect_replica_set`]), carrying
//! the framed messages of [`frames`].
//!
//! Why: under MPICH, a replica SIGKILLed in the middle of a UCX
//! shared-memory message can leave its receiver deaf to every process,
//! and the receiver of a link message is a replica of *another* replica
//! world, one that must survive (docs/fault-tolerance.md, "Limits"). A
//! connection whose sender dies is closed by the kernel; nothing else
//! stalls.
//!
//! The epoch of a message is the size of the set it was sent in: a
//! fail-over shrinks the set, so the survivors drop what an operation
//! given up on left in their streams, as a new MPI communicator would.

use super::{transport, SetLink, LARGE_MESSAGE};
use crate::comm::collective;
use crate::comm::ffi;
use crate::comm::frames::{Dest, Failure, Incoming, Outgoing, Received, Stream, HEADER};
use crate::comm::poll;
use crate::comm::request::Op;
use crate::coord::faults;
use crate::ft::liveness;
use crate::ft::membership;
use crate::ft::ulfm;
use crate::sys::socket::{self, Socket};
use redio_protocols::LinkError;
use std::cell::RefCell;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The connections to the other members, by their world rank.
static STREAMS: Mutex<Option<Vec<(u32, Stream)>>> = Mutex::new(None);

fn streams() -> std::sync::MutexGuard<'static, Option<Vec<(u32, Stream)>>> {
    STREAMS.lock().unwrap_or_else(|p| p.into_inner())
}

/// True when the replica set's connections were built.
pub fn connected() -> bool {
    streams().is_some()
}

/// Returned as a wait's code: there is no connection to that member.
const NOT_CONNECTED: i32 = -0x7ed3;
/// Returned as a wait's code: the peer's stream carried a header no peer
/// sends.
const GARBLED: i32 = -0x7ed4;

fn code(failure: Failure) -> i32 {
    match failure {
        Failure::Closed => NOT_CONNECTED,
        Failure::Garbled => GARBLED,
        Failure::Os(errno) => errno,
    }
}

/// Runs `step` on the stream to `replica` until it reports completion,
/// polled as every link wait is: true when it completed, false when
/// `budget` ran out first (then it is still under way).
fn drive(
    link: &SetLink,
    replica: usize,
    bytes: usize,
    budget: Option<Duration>,
    events: libc::c_short,
    mut step: impl FnMut(&mut Stream) -> Result<bool, Failure>,
) -> Result<bool, LinkError> {
    let mut guard = streams();
    let Some(stream) = stream_to(&mut guard, link, replica) else {
        return Err(LinkError::Transport {
            replica,
            code: NOT_CONNECTED,
        });
    };
    let deadline = budget.or(link.deadline_for(bytes));
    // A closed connection means its peer exited or died, but the set learns
    // of deaths from the liveness checks (across nodes only after
    // `faults.timeout`), and every survivor must fail over on the same
    // knowledge: so the wait goes on until its watch sees the death, as a
    // receive from a dead process over MPI would.
    // Between two steps the wait naps in `ppoll`: woken as soon as the
    // socket can move bytes, not a pause later.
    let stream = RefCell::new(stream);
    let rc = poll::until_ready(
        bytes,
        link.watch(),
        deadline,
        || match step(&mut stream.borrow_mut()) {
            Err(Failure::Closed) => Ok(false),
            other => other.map_err(code),
        },
        |pause| stream.borrow().nap(events, pause),
    );
    match rc {
        rc if rc == unsafe { ffi::redio_mpi_success } => Ok(true),
        poll::TIMED_OUT if budget.is_some() => Ok(false),
        code => Err(transport(replica, code)),
    }
}

/// The stream to the member at position `replica` of `link`.
fn stream_to<'a>(
    all: &'a mut Option<Vec<(u32, Stream)>>,
    link: &SetLink,
    replica: usize,
) -> Option<&'a mut Stream> {
    let world = link.members[replica];
    all.as_mut()?
        .iter_mut()
        .find(|(w, _)| *w == world)
        .map(|(_, s)| s)
}

/// Runs `f` on the stream to `replica` outside a wait, once.
fn with_stream<T>(link: &SetLink, replica: usize, f: impl FnOnce(&mut Stream) -> T) -> Option<T> {
    stream_to(&mut streams(), link, replica).map(f)
}

/// The length of a message received into a `capacity`-byte buffer, or the
/// error for one that did not fit.
fn received_len(received: Received, replica: usize, capacity: usize) -> Result<usize, LinkError> {
    match received {
        Received::Into(len) => Ok(len),
        Received::Owned(data) => Ok(data.len()),
        Received::TooLong(len) => Err(LinkError::TooLong {
            replica,
            len,
            capacity,
        }),
    }
}

fn epoch(link: &SetLink) -> u32 {
    link.degree as u32
}

/// Sends `data` to `to`; with `meanwhile`, runs it once the bytes had the
/// time to move (or the socket took them all).
pub(super) fn send(
    link: &SetLink,
    to: usize,
    tag: u32,
    data: &[u8],
    meanwhile: Option<&mut dyn FnMut()>,
) -> Result<(), LinkError> {
    let bytes = data.len();
    let mut out = Outgoing::new(epoch(link), tag, data);
    if faults::dies_mid_message() && bytes >= 2 {
        // Test hook (REDIO_TEST_DIE=…:link): half the message, then death.
        let half = HEADER + bytes / 2;
        let _ = drive(link, to, bytes, None, libc::POLLOUT, |s| {
            s.push_upto(&mut out, half)
        });
        faults::die_mid_message();
    }
    let result = (|| {
        if let Some(meanwhile) = meanwhile {
            if bytes > LARGE_MESSAGE {
                drive(
                    link,
                    to,
                    bytes,
                    Some(poll::yielding_phase(bytes)),
                    libc::POLLOUT,
                    |s| s.push(&mut out),
                )?;
            }
            meanwhile();
        }
        drive(link, to, bytes, None, libc::POLLOUT, |s| s.push(&mut out)).map(|_| ())
    })();
    if result.is_err() {
        with_stream(link, to, |s| s.abandon(out));
    }
    result
}

/// Receives the next message from `from` under `tag` into `dest`.
fn receive(
    link: &SetLink,
    from: usize,
    tag: u32,
    dest: Dest<'_>,
    bytes: usize,
) -> Result<Received, LinkError> {
    let mut want = Incoming::new(epoch(link), tag, dest);
    match drive(link, from, bytes, None, libc::POLLIN, |s| s.pull(&mut want)) {
        Ok(_) => Ok(want.take().unwrap_or(Received::Into(0))),
        Err(e) => {
            with_stream(link, from, |s| s.release(want));
            Err(e)
        }
    }
}

/// Receives the next message from `from` under `tag` into `buf`.
pub(super) fn recv_into(
    link: &SetLink,
    from: usize,
    tag: u32,
    buf: &mut [u8],
) -> Result<usize, LinkError> {
    let capacity = buf.len();
    let received = receive(link, from, tag, Dest::Into(buf), capacity)?;
    received_len(received, from, capacity)
}

/// Receives the next message from `from` under `tag`, of any length.
pub(super) fn recv(link: &SetLink, from: usize, tag: u32) -> Result<Vec<u8>, LinkError> {
    match receive(link, from, tag, Dest::Owned, 0)? {
        Received::Owned(data) => Ok(data),
        Received::Into(_) | Received::TooLong(_) => Ok(Vec::new()),
    }
}

/// Sends to and receives from `peer` at once.
pub(super) fn sendrecv_into(
    link: &SetLink,
    peer: usize,
    tag: u32,
    data: &[u8],
    buf: &mut [u8],
) -> Result<usize, LinkError> {
    let capacity = buf.len();
    let bytes = data.len().max(capacity);
    let mut out = Outgoing::new(epoch(link), tag, data);
    let mut want = Incoming::new(epoch(link), tag, Dest::Into(buf));
    // Woken by the peer's bytes; a send blocked on a full buffer moves on
    // at the next pause at the latest.
    let result = drive(link, peer, bytes, None, libc::POLLIN, |s| {
        let sent = s.push(&mut out)?;
        let received = s.pull(&mut want)?;
        Ok(sent && received)
    });
    if let Err(e) = result {
        with_stream(link, peer, |s| {
            s.abandon(out);
            s.release(want);
        });
        return Err(e);
    }
    received_len(want.take().unwrap_or(Received::Into(0)), peer, capacity)
}

/// What each member publishes: its port, a secret (member 0's is the
/// set's), how many addresses follow, and up to [`ADDRESSES`] IPv4
/// addresses.
const CARD: usize = 3 + ADDRESSES;
const ADDRESSES: usize = 4;
/// How long a member waits for the others to connect at start-up.
const ACCEPT_WITHIN: Duration = Duration::from_secs(60);
/// How long one connection attempt may take.
const CONNECT_WITHIN: Duration = Duration::from_secs(5);
/// The first message each end of a connection sends: the set's secret and
/// its world rank.
const HELLO: usize = 12;

/// Builds the connections of this process's replica set (every member
/// calls it at start-up, collectively on the set's communicator), unless
/// the link stays on MPI: under ULFM, with `REDIO_LINK=mpi`, or at r=1.
/// When a member cannot connect, every member keeps the MPI link, and each
/// member that failed logs why.
pub fn connect_replica_set() {
    let Some(view) = membership::current() else {
        return;
    };
    if view.members.len() < 2
        || ulfm::active()
        || std::env::var("REDIO_LINK").is_ok_and(|v| v == "mpi")
    {
        return;
    }
    let comm = view.comm();
    // Test hook: that process fails to listen, as where a firewall or a
    // port policy stops the connections; its replica set keeps the MPI link.
    let listener = if faults::names_this_process("REDIO_TEST_LINK_NO_LISTEN") {
        Err(libc::EACCES)
    } else {
        Socket::listen_any()
    };
    let mut card = [0u64; CARD];
    if let Ok((_, port)) = &listener {
        card[0] = u64::from(*port);
        card[1] = secret();
        let addresses = socket::ipv4_addresses();
        card[2] = addresses.len().min(ADDRESSES) as u64;
        for (slot, address) in card[3..].iter_mut().zip(addresses) {
            *slot = u64::from(u32::from_be_bytes(address));
        }
    }
    let mut cards = vec![0u64; CARD * view.members.len()];
    collective::check(collective::allgather(&card, &mut cards, comm));
    let cards: Vec<&[u64]> = cards.chunks(CARD).collect();
    let built = match listener {
        Ok((listener, _)) if cards.iter().all(|c| c[0] != 0) => {
            connect_all(&listener, &cards, &view.members, view.me)
        }
        Ok(_) => Err("a member could not listen".to_string()),
        Err(errno) => Err(format!("listening failed with errno {errno}")),
    };
    let mut everywhere = [i32::from(built.is_ok())];
    collective::check(collective::allreduce_in_place(
        &mut everywhere,
        Op::Min,
        comm,
    ));
    match built {
        Ok(streams_built) if everywhere[0] == 1 => {
            crate::log!(
                Debug,
                "replica link: TCP connections to {} member(s)",
                streams_built.len()
            );
            *streams() = Some(streams_built);
        }
        Ok(_) => {}
        Err(why) => crate::log!(
            Warn,
            "the replica link stays on MPI: {why} (set REDIO_LINK=mpi to skip the attempt)"
        ),
    }
}

/// A random 64-bit secret: a connection that does not present the set's
/// is not one of its members.
fn secret() -> u64 {
    let mut bytes = [0u8; 8];
    // SAFETY: writes at most 8 bytes into `bytes`.
    unsafe { libc::syscall(libc::SYS_getrandom, bytes.as_mut_ptr(), bytes.len(), 0) };
    u64::from_ne_bytes(bytes) | 1
}

/// Connects to every member before this one and accepts every member
/// after it: all listen before anyone connects, so the order cannot stall.
fn connect_all(
    listener: &Socket,
    cards: &[&[u64]],
    members: &[u32],
    me: usize,
) -> Result<Vec<(u32, Stream)>, String> {
    let secret = cards[0][1];
    let mut built = Vec::new();
    for (position, card) in cards.iter().enumerate().take(me) {
        let world = members[position];
        let socket = connect_to(world, card, secret, members[me])?;
        built.push((world, Stream::new(socket)));
    }
    let started = Instant::now();
    while built.len() < members.len() - 1 {
        let left = ACCEPT_WITHIN.saturating_sub(started.elapsed());
        if left.is_zero() || !listener.wait(libc::POLLIN, left) {
            return Err(format!(
                "{} member(s) did not connect within {ACCEPT_WITHIN:?}",
                members.len() - 1 - built.len()
            ));
        }
        let Ok(Some(socket)) = listener.accept() else {
            continue;
        };
        let Some(world) = greeting(&socket, secret, CONNECT_WITHIN) else {
            continue;
        };
        let expected = members[me + 1..].contains(&world);
        if expected
            && !built.iter().any(|(w, _)| *w == world)
            && send_all(&socket, &hello(secret, members[me])).is_ok()
        {
            built.push((world, Stream::new(socket)));
        }
    }
    Ok(built)
}

/// Connects to the member `world` that published `card`, at each address
/// in turn (loopback first when it is on this node, last otherwise), and
/// greets it; the first connection whose other end answers as `world`
/// with the set's secret is the one (a port on the wrong machine may
/// belong to another process).
fn connect_to(world: u32, card: &[u64], secret: u64, me: u32) -> Result<Socket, String> {
    let port = card[0] as u16;
    let published = (card[2] as usize).min(ADDRESSES);
    let mut addresses: Vec<[u8; 4]> = card[3..3 + published]
        .iter()
        .map(|&a| (a as u32).to_be_bytes())
        .collect();
    let loopback = [127, 0, 0, 1];
    if liveness::all_local(&[world]) {
        addresses.insert(0, loopback);
    } else {
        addresses.push(loopback);
    }
    let mut why = String::from("no address to try");
    for address in addresses {
        let socket = match Socket::connect(address, port, CONNECT_WITHIN) {
            Ok(socket) => socket,
            Err(errno) => {
                why = format!("errno {errno}");
                continue;
            }
        };
        if let Err(errno) = send_all(&socket, &hello(secret, me)) {
            why = format!("greeting failed with errno {errno}");
            continue;
        }
        // The member answers once it accepts, after its own connections
        // to the members before it.
        match greeting(&socket, secret, ACCEPT_WITHIN) {
            Some(answered) if answered == world => return Ok(socket),
            _ => why = "no answer from the member".to_string(),
        }
    }
    Err(format!("connecting to world rank {world} failed ({why})"))
}

/// The greeting each end sends first: the set's secret and its world rank.
fn hello(secret: u64, world: u32) -> [u8; HELLO] {
    let mut hello = [0u8; HELLO];
    hello[..8].copy_from_slice(&secret.to_le_bytes());
    hello[8..].copy_from_slice(&world.to_le_bytes());
    hello
}

fn send_all(socket: &Socket, bytes: &[u8]) -> Result<(), i32> {
    let mut sent = 0;
    while sent < bytes.len() {
        match socket.send(&[&bytes[sent..]])? {
            socket::Transfer::Moved(n) => sent += n,
            socket::Transfer::WouldBlock => {
                socket.wait(libc::POLLOUT, CONNECT_WITHIN);
            }
            socket::Transfer::Closed => return Err(libc::EPIPE),
        }
    }
    Ok(())
}

/// Reads a connection's greeting (within `within`); the other end's world
/// rank when it presents the set's secret.
fn greeting(socket: &Socket, secret: u64, within: Duration) -> Option<u32> {
    let mut hello = [0u8; HELLO];
    let mut got = 0;
    let started = Instant::now();
    while got < HELLO {
        match socket.recv(&mut hello[got..]).ok()? {
            socket::Transfer::Moved(n) => got += n,
            socket::Transfer::WouldBlock => {
                let left = within.saturating_sub(started.elapsed());
                if left.is_zero() || !socket.wait(libc::POLLIN, left) {
                    return None;
                }
            }
            socket::Transfer::Closed => return None,
        }
    }
    let presented = u64::from_le_bytes(hello[..8].try_into().ok()?);
    (presented == secret).then(|| u32::from_le_bytes(hello[8..].try_into().unwrap()))
}
