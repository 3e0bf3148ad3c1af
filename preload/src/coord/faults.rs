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
//!   `pread` of a coordinated read (e.g. `0:5` for EIO on the master);
//! - `REDIO_TEST_DIE=<world rank>:<operation>[:<how>[:<calls>]],…`: that
//!   process (each listed one) dies in coordinated operation number `operation` (its
//!   sequence number, from 0), once every replica has announced it: before
//!   touching the file (`calls` 0, the default), or right after its
//!   `calls`-th real `pread`/`pwrite` (or leader call) of that operation,
//!   e.g. in the middle of a chunked transfer; or, with `calls` `link`, in
//!   the middle of its first link message of that operation, half of it
//!   sent (the TCP link only). `how`: `exit` (the default, `_exit(1)`),
//!   `segv`, `abort` or `kill` (SIGKILL).

use crate::sys::errno::errno;
use crate::sys::real;
use redio_protocols::{Errno, FileIo};
use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;

#[derive(Default)]
struct Switches {
    flip_read: Option<usize>,
    flip_write: Option<usize>,
    write_errno: Option<(usize, Errno)>,
    read_errno: Option<(usize, Errno)>,
    die: Option<Death>,
}

/// An injected death: in which operation of this process, after how many
/// file calls, and how.
#[derive(Clone, Copy)]
struct Death {
    seq: u64,
    calls: u32,
    /// Dies half-way through a link message instead of after `calls`.
    mid_message: bool,
    signal: Option<i32>,
}

/// Parses `REDIO_TEST_DIE` for world rank `me`.
fn death_for(me: u32) -> Option<Death> {
    let value = std::env::var("REDIO_TEST_DIE").ok()?;
    value.split(',').find_map(|entry| parse_death(entry, me))
}

/// One entry of `REDIO_TEST_DIE`, if it is about world rank `me`.
fn parse_death(entry: &str, me: u32) -> Option<Death> {
    let mut fields = entry.split(':').map(str::trim);
    let rank: u32 = fields.next()?.parse().ok()?;
    let seq: u64 = fields.next()?.parse().ok()?;
    let signal = match fields.next().unwrap_or("exit") {
        "exit" => None,
        "segv" => Some(libc::SIGSEGV),
        "abort" => Some(libc::SIGABRT),
        "kill" => Some(libc::SIGKILL),
        _ => return None,
    };
    let (calls, mid_message) = match fields.next() {
        None => (0, false),
        Some("link") => (0, true),
        Some(count) => (count.parse().ok()?, false),
    };
    (rank == me).then_some(Death {
        seq,
        calls,
        mid_message,
        signal,
    })
}

/// File calls made so far in the operation a death waits for.
static CALLS: AtomicU64 = AtomicU64::new(0);
/// Set while the operation of a death in the middle of a link message runs.
static MID_MESSAGE: AtomicBool = AtomicBool::new(false);

/// Called once operation `seq` is announced: dies now if an injected death
/// is due before any file call.
pub fn maybe_die(seq: u64) {
    // A death in the middle of a link message belongs to its operation: one
    // that sent no link message must not hand it on to the next.
    MID_MESSAGE.store(false, Ordering::Relaxed);
    if let Some(death) = switches().die.filter(|d| d.seq == seq) {
        CALLS.store(0, Ordering::Relaxed);
        if death.mid_message {
            MID_MESSAGE.store(true, Ordering::Relaxed);
        } else if death.calls == 0 {
            die(death);
        }
    }
}

/// True when this process must die half-way through its next link message.
pub fn dies_mid_message() -> bool {
    MID_MESSAGE.load(Ordering::Relaxed)
}

/// The death [`dies_mid_message`] announced, once half the message is sent.
pub fn die_mid_message() -> ! {
    match switches().die {
        Some(death) => die(death),
        None => crate::state::report::die_on_purpose("exit", 0, None),
    }
}

/// Called after each real file call of operation `seq`: dies when the
/// injected death's count is reached.
pub fn after_call(seq: u64) {
    if let Some(death) = switches().die.filter(|d| d.seq == seq && d.calls > 0) {
        if CALLS.fetch_add(1, Ordering::Relaxed) + 1 == u64::from(death.calls) {
            die(death);
        }
    }
}

fn die(death: Death) -> ! {
    let how = match death.signal {
        None => "exit",
        Some(libc::SIGSEGV) => "segv",
        Some(libc::SIGABRT) => "abort",
        Some(_) => "kill",
    };
    let moment = if death.mid_message {
        "half-way through a link message".to_string()
    } else {
        format!("after {} file call(s)", death.calls)
    };
    crate::log!(
        Warn,
        "REDIO_TEST_DIE: dying ({how}) in operation {} {moment}",
        death.seq
    );
    crate::state::report::die_on_purpose(how, death.seq, death.signal)
}

static SWITCHES: OnceLock<Switches> = OnceLock::new();

/// True when the test switch `var` holds this process's world rank (the
/// hooks that name one process: `REDIO_TEST_DEAF_BARRIER`,
/// `REDIO_TEST_DIE_IN_FINALIZE`, `REDIO_TEST_LINK_NO_LISTEN`). False
/// before the process knows its world rank.
pub fn names_this_process(var: &str) -> bool {
    let me = crate::state::world::identity().map(|i| i.world_rank);
    me.is_some()
        && std::env::var(var)
            .ok()
            .and_then(|v| v.trim().parse::<u32>().ok())
            == me
}

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
        die: crate::state::world::identity().and_then(|i| death_for(i.world_rank)),
    };
    if switches.flip_read.is_some()
        || switches.flip_write.is_some()
        || switches.write_errno.is_some()
        || switches.read_errno.is_some()
        || switches.die.is_some()
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
    seq: u64,
    flip_read: bool,
    write_errno: Option<Errno>,
    read_errno: Option<Errno>,
}

impl RealFile {
    /// The file behind `fd`, for replica `me`, in operation `seq`.
    pub fn new(fd: i32, me: usize, seq: u64) -> Self {
        let switches = switches();
        RealFile {
            fd,
            seq,
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
        crate::state::counters::read(n as u64);
        after_call(self.seq);
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
            crate::state::counters::written(n as u64);
            after_call(self.seq);
            Ok(n as usize)
        }
    }

    /// The descriptor is open without `O_APPEND` (redio places writes
    /// itself): the flag is set for this one `write`, so the kernel places
    /// it at the end as in a plain run, then cleared again.
    fn append(&mut self, data: &[u8]) -> Result<(usize, u64), Errno> {
        if let Some(errno) = self.write_errno {
            return Err(errno);
        }
        let (n, landed) = append_to(self.fd, data)?;
        crate::state::counters::written(n as u64);
        after_call(self.seq);
        Ok((n, landed))
    }
}

/// Writes `data` at the end of `fd` (see [`RealFile::append`]); returns
/// the count and the offset where the bytes landed.
pub fn append_to(fd: i32, data: &[u8]) -> Result<(usize, u64), Errno> {
    // SAFETY: fcntl, write and lseek on a descriptor of this process, with
    // a buffer of `data.len()` bytes.
    unsafe {
        let flags = real::fcntl(fd, libc::F_GETFL, 0);
        if flags < 0 || real::fcntl(fd, libc::F_SETFL, (flags | libc::O_APPEND) as _) < 0 {
            return Err(errno());
        }
        let n = real::write(fd, data.as_ptr().cast(), data.len());
        let failed = errno();
        let end = real::lseek(fd, 0, libc::SEEK_CUR);
        real::fcntl(fd, libc::F_SETFL, flags as _);
        if n < 0 {
            return Err(failed);
        }
        if end < 0 {
            return Err(errno());
        }
        Ok((n as usize, end as u64 - n as u64))
    }
}
