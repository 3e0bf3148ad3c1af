//! The real file of one replica, with test-only fault injection.
//!
//! Switches, read once at `MPI_Init` (names reserved by the configuration):
//! - `REDIO_TEST_FLIP_READ=<replica>`: that replica flips bit 0 of the first
//!   byte of every coordinated read, before the vote;
//! - `REDIO_TEST_FLIP_WRITE=<replica>`: that replica flips bit 0 of the first
//!   byte of (a copy of) every coordinated write buffer, before the vote;
//! - `REDIO_TEST_WRITE_ERRNO=<replica>:<errno>`: every real `pwrite` of that
//!   replica fails with that errno (e.g. `0:28` for ENOSPC on the writer);
//! - `REDIO_TEST_READ_ERRNO=<replica>:<errno>`: likewise for every real
//!   `pread` of a coordinated read (e.g. `0:5` for EIO on the master).

use crate::io::hooks::real;
use crate::io::managed::errno;
use redio_protocols::{Errno, FileIo};
use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// Bytes this process read from and wrote to shared files itself.
static BYTES_READ: AtomicU64 = AtomicU64::new(0);
static BYTES_WRITTEN: AtomicU64 = AtomicU64::new(0);

/// `(bytes read, bytes written)` by this process on shared files.
pub fn bytes_moved() -> (u64, u64) {
    (
        BYTES_READ.load(Ordering::Relaxed),
        BYTES_WRITTEN.load(Ordering::Relaxed),
    )
}

#[derive(Default)]
struct Switches {
    flip_read: Option<usize>,
    flip_write: Option<usize>,
    write_errno: Option<(usize, Errno)>,
    read_errno: Option<(usize, Errno)>,
}

static SWITCHES: OnceLock<Switches> = OnceLock::new();

/// Reads the switches from the environment (once).
pub fn load() {
    let number = |name: &str| std::env::var(name).ok()?.trim().parse::<usize>().ok();
    // REPLICA:ERRNO, e.g. 1:28 (ENOSPC on replica 1).
    let replica_errno = |name: &str| {
        let value = std::env::var(name).ok()?;
        let (replica, errno) = value.split_once(':')?;
        Some((replica.trim().parse().ok()?, errno.trim().parse().ok()?))
    };
    let switches = Switches {
        flip_read: number("REDIO_TEST_FLIP_READ"),
        flip_write: number("REDIO_TEST_FLIP_WRITE"),
        write_errno: replica_errno("REDIO_TEST_WRITE_ERRNO"),
        read_errno: replica_errno("REDIO_TEST_READ_ERRNO"),
    };
    if switches.flip_read.is_some()
        || switches.flip_write.is_some()
        || switches.write_errno.is_some()
        || switches.read_errno.is_some()
    {
        crate::log!(Warn, "test fault injection is on (REDIO_TEST_*)");
    }
    let _ = SWITCHES.set(switches);
}

fn switches() -> &'static Switches {
    SWITCHES.get_or_init(Switches::default)
}

/// `data`, or a corrupted copy when this replica must corrupt writes.
pub fn corrupt_write(data: &[u8], me: usize) -> Cow<'_, [u8]> {
    match switches().flip_write {
        Some(replica) if replica == me && !data.is_empty() => {
            let mut copy = data.to_vec();
            copy[0] ^= 1;
            Cow::Owned(copy)
        }
        _ => Cow::Borrowed(data),
    }
}

/// This replica's descriptor of a shared file, as a [`FileIo`].
pub struct RealFile {
    fd: i32,
    flip_read: bool,
    write_errno: Option<Errno>,
    read_errno: Option<Errno>,
}

impl RealFile {
    /// The file behind `fd`, for replica `me`.
    pub fn new(fd: i32, me: usize) -> Self {
        let switches = switches();
        RealFile {
            fd,
            flip_read: switches.flip_read == Some(me),
            write_errno: switches
                .write_errno
                .and_then(|(replica, errno)| (replica == me).then_some(errno)),
            read_errno: switches
                .read_errno
                .and_then(|(replica, errno)| (replica == me).then_some(errno)),
        }
    }
}

impl FileIo for RealFile {
    fn pread(&mut self, buf: &mut [u8], offset: u64) -> Result<usize, Errno> {
        if let Some(errno) = self.read_errno {
            return Err(errno);
        }
        // SAFETY: a descriptor of this process and a buffer of `buf.len()`.
        let n =
            unsafe { real::pread64(self.fd, buf.as_mut_ptr().cast(), buf.len(), offset as i64) };
        if n < 0 {
            return Err(errno());
        }
        if self.flip_read && n > 0 {
            buf[0] ^= 1;
        }
        BYTES_READ.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n as usize)
    }

    fn pwrite(&mut self, data: &[u8], offset: u64) -> Result<usize, Errno> {
        if let Some(errno) = self.write_errno {
            return Err(errno);
        }
        // SAFETY: a descriptor of this process and a buffer of `data.len()`.
        let n = unsafe { real::pwrite64(self.fd, data.as_ptr().cast(), data.len(), offset as i64) };
        if n < 0 {
            Err(errno())
        } else {
            BYTES_WRITTEN.fetch_add(n as u64, Ordering::Relaxed);
            Ok(n as usize)
        }
    }
}
