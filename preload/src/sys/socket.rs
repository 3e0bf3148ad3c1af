//! TCP sockets through raw system calls, for the replica-set link
//! (`comm::frames`): redio's own descriptors, which no I/O hook sees.
//!
//! Every socket is nonblocking and close-on-exec; sends never raise
//! `SIGPIPE` (a peer that died makes them fail with `EPIPE` instead).

use std::time::{Duration, Instant};

/// An owned socket descriptor, closed when dropped.
#[derive(Debug)]
pub struct Socket {
    fd: i32,
}

/// What one nonblocking send or receive did.
#[derive(Debug, PartialEq, Eq)]
pub enum Transfer {
    /// This many bytes moved (more than zero).
    Moved(usize),
    /// Nothing moved now; try again later.
    WouldBlock,
    /// The peer closed its end (or died): nothing will move again.
    Closed,
}

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// The result of a raw system call: its value, or the errno it set.
fn checked(rc: libc::c_long) -> Result<libc::c_long, i32> {
    if rc < 0 {
        Err(errno())
    } else {
        Ok(rc)
    }
}

fn ipv4(address: [u8; 4], port: u16) -> libc::sockaddr_in {
    // SAFETY: sockaddr_in is plain data; all zeros is a valid value.
    let mut sa: libc::sockaddr_in = unsafe { std::mem::zeroed() };
    sa.sin_family = libc::AF_INET as libc::sa_family_t;
    sa.sin_port = port.to_be();
    sa.sin_addr.s_addr = u32::from_ne_bytes(address);
    sa
}

fn new_tcp() -> Result<Socket, i32> {
    // SAFETY: creating a descriptor; owned by the returned Socket.
    let fd = checked(unsafe {
        libc::syscall(
            libc::SYS_socket,
            libc::AF_INET,
            libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            0,
        )
    })?;
    // Never a number the application could have opened.
    let fd = super::descriptors::apart(fd as i32);
    Ok(Socket { fd })
}

impl Socket {
    /// A socket listening on every interface at a port the kernel picks;
    /// returns it with that port.
    pub fn listen_any() -> Result<(Socket, u16), i32> {
        let socket = new_tcp()?;
        let sa = ipv4([0; 4], 0);
        let len = std::mem::size_of_val(&sa) as libc::socklen_t;
        // SAFETY: a valid address of `len` bytes; our own descriptor.
        checked(unsafe { libc::syscall(libc::SYS_bind, socket.fd, &sa as *const _, len) })?;
        // SAFETY: our own bound descriptor.
        checked(unsafe { libc::syscall(libc::SYS_listen, socket.fd, 64) })?;
        // SAFETY: as zeroed above; getsockname writes at most `bound_len` bytes.
        let mut bound: libc::sockaddr_in = unsafe { std::mem::zeroed() };
        let mut bound_len = len;
        checked(unsafe {
            libc::syscall(
                libc::SYS_getsockname,
                socket.fd,
                &mut bound as *mut _,
                &mut bound_len as *mut _,
            )
        })?;
        Ok((socket, u16::from_be(bound.sin_port)))
    }

    /// Accepts one pending connection, if there is one.
    pub fn accept(&self) -> Result<Option<Socket>, i32> {
        // SAFETY: no peer address is asked for; the new descriptor is owned below.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_accept4,
                self.fd,
                std::ptr::null_mut::<libc::sockaddr>(),
                std::ptr::null_mut::<libc::socklen_t>(),
                libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            )
        };
        match checked(rc) {
            Ok(fd) => {
                let fd = super::descriptors::apart(fd as i32);
                let socket = Socket { fd };
                socket.no_delay();
                Ok(Some(socket))
            }
            Err(e) if e == libc::EAGAIN || e == libc::EINTR => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Connects to `address:port`, giving up after `timeout`.
    pub fn connect(address: [u8; 4], port: u16, timeout: Duration) -> Result<Socket, i32> {
        let socket = new_tcp()?;
        let sa = ipv4(address, port);
        let len = std::mem::size_of_val(&sa) as libc::socklen_t;
        // SAFETY: a valid address of `len` bytes; our own descriptor.
        let rc = unsafe { libc::syscall(libc::SYS_connect, socket.fd, &sa as *const _, len) };
        match checked(rc) {
            Ok(_) => {}
            Err(libc::EINPROGRESS) => {
                if !socket.wait(libc::POLLOUT, timeout) {
                    return Err(libc::ETIMEDOUT);
                }
                let pending = socket.pending_error();
                if pending != 0 {
                    return Err(pending);
                }
            }
            Err(e) => return Err(e),
        }
        socket.no_delay();
        Ok(socket)
    }

    /// Small messages (headers, votes) leave at once instead of waiting
    /// for more bytes to fill a segment.
    fn no_delay(&self) {
        let on: libc::c_int = 1;
        // SAFETY: a valid option value of its size; our own descriptor.
        unsafe {
            libc::syscall(
                libc::SYS_setsockopt,
                self.fd,
                libc::IPPROTO_TCP,
                libc::TCP_NODELAY,
                &on as *const libc::c_int,
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
    }

    fn pending_error(&self) -> i32 {
        let mut error: libc::c_int = 0;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: writes one int and its length; our own descriptor.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_getsockopt,
                self.fd,
                libc::SOL_SOCKET,
                libc::SO_ERROR,
                &mut error as *mut libc::c_int,
                &mut len as *mut libc::socklen_t,
            )
        };
        if rc < 0 {
            errno()
        } else {
            error
        }
    }

    /// Waits up to `timeout` for `events` (`POLLIN`, `POLLOUT`); true when
    /// one happened (an error or hang-up counts: the next call reports it).
    pub fn wait(&self, events: libc::c_short, timeout: Duration) -> bool {
        let started = Instant::now();
        loop {
            let left = timeout.saturating_sub(started.elapsed());
            let mut fd = libc::pollfd {
                fd: self.fd,
                events,
                revents: 0,
            };
            let ts = libc::timespec {
                tv_sec: left.as_secs() as libc::time_t,
                tv_nsec: left.subsec_nanos() as libc::c_long,
            };
            // SAFETY: one pollfd and a timespec that live across the call.
            let rc = unsafe {
                libc::syscall(
                    libc::SYS_ppoll,
                    &mut fd as *mut libc::pollfd,
                    1,
                    &ts as *const libc::timespec,
                    std::ptr::null::<libc::sigset_t>(),
                    0,
                )
            };
            match checked(rc) {
                Ok(0) => return false,
                Ok(_) => return true,
                Err(libc::EINTR) if started.elapsed() < timeout => continue,
                Err(_) => return false,
            }
        }
    }

    /// Sends as much of `parts` (in order, as one stream) as the socket
    /// takes now.
    pub fn send(&self, parts: &[&[u8]]) -> Result<Transfer, i32> {
        let iov: Vec<libc::iovec> = parts
            .iter()
            .filter(|p| !p.is_empty())
            .map(|p| libc::iovec {
                iov_base: p.as_ptr() as *mut libc::c_void,
                iov_len: p.len(),
            })
            .collect();
        if iov.is_empty() {
            return Ok(Transfer::Moved(0));
        }
        // SAFETY: msghdr is plain data; all zeros is a valid value.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = iov.as_ptr() as *mut libc::iovec;
        msg.msg_iovlen = iov.len() as _;
        // SAFETY: the iovecs point into live slices; our own descriptor.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_sendmsg,
                self.fd,
                &msg as *const libc::msghdr,
                libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT,
            )
        };
        match checked(rc) {
            Ok(n) => Ok(Transfer::Moved(n as usize)),
            Err(e) if e == libc::EAGAIN || e == libc::EINTR => Ok(Transfer::WouldBlock),
            Err(e) if e == libc::EPIPE || e == libc::ECONNRESET => Ok(Transfer::Closed),
            Err(e) => Err(e),
        }
    }

    /// Receives into `buf` what has arrived, up to its length.
    pub fn recv(&self, buf: &mut [u8]) -> Result<Transfer, i32> {
        if buf.is_empty() {
            return Ok(Transfer::Moved(0));
        }
        // SAFETY: writes at most `buf.len()` bytes into `buf`; our own descriptor.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_recvfrom,
                self.fd,
                buf.as_mut_ptr(),
                buf.len(),
                libc::MSG_DONTWAIT,
                std::ptr::null_mut::<libc::sockaddr>(),
                std::ptr::null_mut::<libc::socklen_t>(),
            )
        };
        match checked(rc) {
            Ok(0) => Ok(Transfer::Closed),
            Ok(n) => Ok(Transfer::Moved(n as usize)),
            Err(e) if e == libc::EAGAIN || e == libc::EINTR => Ok(Transfer::WouldBlock),
            Err(e) if e == libc::ECONNRESET => Ok(Transfer::Closed),
            Err(e) => Err(e),
        }
    }

    /// A connected pair of sockets (for tests of the code above them).
    pub fn pair() -> Result<(Socket, Socket), i32> {
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: writes two descriptors, owned below.
        checked(unsafe {
            libc::syscall(
                libc::SYS_socketpair,
                libc::AF_UNIX,
                libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                0,
                fds.as_mut_ptr(),
            )
        })?;
        Ok((Socket { fd: fds[0] }, Socket { fd: fds[1] }))
    }
}

impl Drop for Socket {
    fn drop(&mut self) {
        // SAFETY: our own descriptor, closed once.
        unsafe { libc::syscall(libc::SYS_close, self.fd) };
    }
}

/// This machine's IPv4 addresses other than loopback, for peers on other
/// nodes to connect to.
pub fn ipv4_addresses() -> Vec<[u8; 4]> {
    let mut found = Vec::new();
    let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `list`, freed below.
    if unsafe { libc::getifaddrs(&mut list) } != 0 {
        return found;
    }
    let mut entry = list;
    while !entry.is_null() {
        // SAFETY: a node of the list getifaddrs returned.
        let ifa = unsafe { &*entry };
        entry = ifa.ifa_next;
        let up = ifa.ifa_flags & libc::IFF_UP as libc::c_uint != 0;
        let loopback = ifa.ifa_flags & libc::IFF_LOOPBACK as libc::c_uint != 0;
        if !up || loopback || ifa.ifa_addr.is_null() {
            continue;
        }
        // SAFETY: a socket address; its family says which kind.
        if unsafe { (*ifa.ifa_addr).sa_family } as i32 != libc::AF_INET {
            continue;
        }
        // SAFETY: an AF_INET address is a sockaddr_in.
        let sa = unsafe { &*(ifa.ifa_addr as *const libc::sockaddr_in) };
        found.push(sa.sin_addr.s_addr.to_ne_bytes());
    }
    // SAFETY: the list getifaddrs returned, freed once.
    unsafe { libc::freeifaddrs(list) };
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connection_carries_bytes_both_ways_and_reports_a_closed_peer() {
        let (listener, port) = Socket::listen_any().unwrap();
        let client = Socket::connect([127, 0, 0, 1], port, Duration::from_secs(5)).unwrap();
        assert!(listener.wait(libc::POLLIN, Duration::from_secs(5)));
        let server = listener.accept().unwrap().expect("a pending connection");
        assert_eq!(client.send(&[b"he", b"llo"]).unwrap(), Transfer::Moved(5));
        assert!(server.wait(libc::POLLIN, Duration::from_secs(5)));
        let mut buf = [0u8; 16];
        assert_eq!(server.recv(&mut buf).unwrap(), Transfer::Moved(5));
        assert_eq!(&buf[..5], b"hello");
        assert_eq!(server.recv(&mut buf).unwrap(), Transfer::WouldBlock);
        drop(client);
        assert!(server.wait(libc::POLLIN, Duration::from_secs(5)));
        assert_eq!(server.recv(&mut buf).unwrap(), Transfer::Closed);
    }

    #[test]
    fn nobody_listening_is_an_error_not_a_hang() {
        let (listener, port) = Socket::listen_any().unwrap();
        drop(listener);
        let refused = Socket::connect([127, 0, 0, 1], port, Duration::from_secs(5));
        assert_eq!(refused.unwrap_err(), libc::ECONNREFUSED);
    }
}
