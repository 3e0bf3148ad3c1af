//! Coordinated operations on files of the shared file system.
//!
//! Every replica of a logical rank makes the same calls in the same order
//! (the application is deterministic), so each coordinated operation takes
//! the next number of one per-process sequence, and its messages carry tags
//! derived from it ([`redio_protocols::tag`]).
//!
//! - Data (`read`, `write` and their variants) goes through the configured
//!   protocol of `redio-protocols`, with CRC32 voting.
//! - Metadata (`open`, `fstat`, `lseek(SEEK_END)`, `ftruncate`, `fsync`,
//!   `stat`, `unlink`, `rename`) is done once, by the leader (replica 0),
//!   which sends its outcome to the others: every replica returns the same
//!   answer, and `O_CREAT|O_TRUNC` truncates exactly once.
//! - Each replica keeps the file offset itself: the real descriptor of a
//!   replica that did not write has not moved.

use super::divergence;
use super::failover::{self, Stop};
use super::faults;
use super::link::MpiLink;
use super::parts::Parts;
use super::paths::Resolved;
use super::route;
use crate::io::hooks::real;
use crate::runtime::{membership, settings, world};
use redio_core::{join, plan};
use redio_protocols::tag::{tag, Step};
use redio_protocols::{
    read, write, Errno, FileIo, LinkError, Mismatch, OnMismatch, OpContext, OpError, Operation,
    Placement, Policy, ReadProtocol, ReplicaLink, WriteProtocol,
};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::Mutex;

/// One open shared file, as seen by this replica. Descriptors made with
/// `dup` share it (and so its offset).
pub struct ManagedFile {
    /// The (resolved) path, for logs and mismatch reports.
    pub path: PathBuf,
    /// The path as the application named it (resolved, before `remap`):
    /// the same on every replica, so it is what replicas announce.
    pub app_path: PathBuf,
    /// True when this replica could not open the real file and holds a
    /// descriptor on `/dev/null` instead (it never does I/O on it).
    pub placeholder: bool,
    offset: Mutex<u64>,
    /// Status flags as the application set them (`O_APPEND`, access mode).
    flags: AtomicI32,
    read: ReadProtocol,
    write: WriteProtocol,
    policy: Policy,
    /// Distributed Separate Write: this replica's part file.
    parts: Option<Parts>,
    /// Written under Distributed Separate Write since the last join (the
    /// same on every replica, unlike whether this replica's part got data).
    unjoined: AtomicBool,
    /// Each replica reaches its own copy of the file (see
    /// [`Resolved::per_replica`]).
    per_replica: bool,
}

/// Result of one replica's operation: a value or an errno.
pub type Outcome<T> = Result<T, Errno>;

static SEQUENCE: AtomicU64 = AtomicU64::new(0);

fn next_seq() -> u64 {
    SEQUENCE.fetch_add(1, Ordering::Relaxed)
}

/// The calling thread's `errno`.
pub fn errno() -> Errno {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// Sets the calling thread's `errno`.
pub fn set_errno(value: Errno) {
    // SAFETY: __errno_location returns this thread's errno.
    unsafe { *libc::__errno_location() = value };
}

/// Refuses coordinated I/O from threads other than the one that called
/// `MPI_Init`: their order is not deterministic across replicas. (After
/// `MPI_Finalize` nothing is coordinated, so any thread may go on.)
fn main_thread_only(call: &str, file: &dyn std::fmt::Display) -> Outcome<()> {
    if !route::active() || route::on_main_thread() {
        Ok(())
    } else {
        crate::log!(
            Error,
            "{call}({file}) from a thread other than the MPI main thread: shared-file I/O \
             is coordinated on the thread that called MPI_Init only; refused with ENOTSUP"
        );
        Err(libc::ENOTSUP)
    }
}

/// Logs a mismatch report; under `on_mismatch: abort`, then ends the job.
/// Every replica gets the same report, so every replica aborts.
fn report_mismatch(mismatch: Mismatch) {
    match mismatch.policy {
        OnMismatch::Warn => crate::log!(Warn, "{mismatch}"),
        OnMismatch::Abort => {
            crate::log!(Error, "{mismatch}; on_mismatch is abort: ending the job");
            crate::mpi::lifecycle::abort_job(divergence::EXIT_MISMATCH);
        }
        _ => crate::log!(Error, "{mismatch}"),
    }
}

/// This process's replica index (the original one: fault-injection
/// switches and part files name replicas by it).
fn my_replica() -> usize {
    world::identity().map_or(0, |i| i.placement.replica as usize)
}

/// What the leader sends back: a value (or errno) and optional bytes.
struct Reply {
    outcome: Outcome<i64>,
    payload: Vec<u8>,
}

impl Reply {
    fn encode(&self) -> Vec<u8> {
        let (value, errno) = match self.outcome {
            Ok(value) => (value, 0),
            Err(errno) => (-1, errno),
        };
        let mut out = Vec::with_capacity(12 + self.payload.len());
        out.extend_from_slice(&value.to_le_bytes());
        out.extend_from_slice(&errno.to_le_bytes());
        out.extend_from_slice(&self.payload);
        out
    }

    fn decode(bytes: &[u8]) -> Outcome<Reply> {
        let (value, rest) = bytes.split_first_chunk::<8>().ok_or(libc::EIO)?;
        let (errno, payload) = rest.split_first_chunk::<4>().ok_or(libc::EIO)?;
        let errno = i32::from_le_bytes(*errno);
        Ok(Reply {
            outcome: if errno == 0 {
                Ok(i64::from_le_bytes(*value))
            } else {
                Err(errno)
            },
            payload: payload.to_vec(),
        })
    }
}

/// Runs `operation` once, on the leader (the first live replica), and
/// returns its reply on every replica, with whether this process was the
/// leader. After `MPI_Finalize` every replica runs it alone. A leader that
/// dies is replaced, and the new one runs `operation` again
/// ([`failover::run`]).
fn on_leader(op: Operation, mut operation: impl FnMut() -> Reply) -> (Reply, bool) {
    if !route::active() {
        return (operation(), membership::is_leader());
    }
    let result = coordinated(&op, |link, seq| {
        faults::maybe_die(seq);
        let step = tag(seq, Step::Result);
        if link.me() == 0 {
            let reply = forgive_redo(&op, operation());
            faults::after_call(seq);
            link.send_to_others(step, &reply.encode())?;
            Ok((reply, true))
        } else {
            let bytes = link.recv(0, step)?;
            Reply::decode(&bytes)
                .map(|reply| (reply, false))
                .map_err(Stop::Errno)
        }
    });
    result.unwrap_or_else(|errno| {
        (
            Reply {
                outcome: Err(errno),
                payload: Vec::new(),
            },
            false,
        )
    })
}

/// Agrees on a call every replica made on its own copy of a file (one
/// server per replica): the first failure in replica order, the same on
/// every replica, or success when all succeeded.
fn agree_on_outcome(op: Operation, mine: Outcome<()>) -> Outcome<()> {
    if !route::active() {
        return mine;
    }
    coordinated(&op, |link, seq| {
        let errno: Errno = mine.err().unwrap_or(0);
        let all = link.exchange_all(tag(seq, Step::Result), &errno.to_le_bytes())?;
        let first = all
            .iter()
            .filter_map(|b| b.first_chunk::<4>().map(|e| i32::from_le_bytes(*e)))
            .find(|&e| e != 0);
        Ok(first.map_or(Ok(()), Err))
    })
    .and_then(|agreed| agreed)
}

/// Runs `step` as the next coordinated operation `op`: every replica
/// announces it (a divergence fails it), waits at most the deadline, and
/// fails over when a member dies. `step` gets the link and the sequence
/// number.
fn coordinated<T>(
    op: &Operation,
    mut step: impl FnMut(&mut MpiLink, u64) -> Result<T, Stop>,
) -> Result<T, Errno> {
    let seq = next_seq();
    failover::run(
        seq,
        op,
        |e| report_link(&op.kind, e),
        |link| {
            divergence::agree(link, seq, op)?;
            link.set_deadline(deadline());
            step(link, seq)
        },
    )
}

/// The deadline of a wait once every replica announced the operation
/// (`faults.timeout`). With heartbeats a dead peer on another node is
/// found after `faults.timeout` without a beat, and fails over: the
/// deadline, which ends the operation with an error instead, then only
/// catches peers that are alive but stuck, so it is twice as long.
fn deadline() -> Option<std::time::Duration> {
    settings::get().map(|c| match c.faults.heartbeat_dir {
        Some(_) => 2 * c.faults.timeout,
        None => c.faults.timeout,
    })
}

/// A name operation run again by a new leader may find its work done by
/// the dead one (`unlink`/`rename`: the source is gone): that is success.
fn forgive_redo(op: &Operation, reply: Reply) -> Reply {
    let done_before = failover::redoing()
        && matches!(op.kind.as_str(), "unlink" | "rename" | "rmdir")
        && reply.outcome == Err(libc::ENOENT);
    if done_before {
        crate::log!(
            Warn,
            "{} {}: run again after a fail-over, found done by the failed leader",
            op.kind,
            op.path
        );
        return Reply {
            outcome: Ok(0),
            payload: reply.payload,
        };
    }
    reply
}

/// The announcement of a call `kind` on `path`.
fn operation(kind: &str, path: impl std::fmt::Display, offset: u64, len: u64) -> Operation {
    Operation {
        kind: kind.to_owned(),
        path: path.to_string(),
        offset,
        len,
    }
}

fn report_link(what: &str, error: &LinkError) -> Errno {
    crate::log!(
        Error,
        "{what}: coordination with the other replicas failed: {error}"
    );
    libc::EIO
}

/// The settings of one opened file.
struct FileSettings {
    read: ReadProtocol,
    write: WriteProtocol,
    policy: Policy,
    /// Distributed Separate Write: `write` is Distributed Write into part files.
    separate: bool,
}

/// The protocols, with their parameters, and the policy for `resolved`
/// opened with `flags`.
fn settings_for(resolved: &Resolved, flags: i32) -> FileSettings {
    let plan = match settings::get() {
        Some(config) => {
            let io = resolved.io(config, Some(plan::open_mode(flags)));
            let placement = if resolved.per_replica {
                Placement::Separate
            } else {
                Placement::Shared
            };
            plan::file(&io, placement, world::identity().map_or(1, |i| i.degree))
        }
        None => plan::FilePlan::default(),
    };
    FileSettings {
        read: plan.read,
        write: plan.write,
        policy: plan.policy,
        separate: plan.separate,
    }
}

/// Before a `distributed-separate` file is opened: parts left by an earlier
/// run are dropped when the file is truncated, joined otherwise, so that
/// nothing written is lost. Runs on the leader.
fn settle_stale_parts(path: &std::path::Path, flags: i32) {
    let Ok(stale) = join::existing_parts(path) else {
        return;
    };
    if stale.is_empty() {
        return;
    }
    if flags & libc::O_TRUNC != 0 {
        for (_, part) in stale {
            let _ = std::fs::remove_file(join::index_path(&part));
            let _ = std::fs::remove_file(part);
        }
        return;
    }
    // The application opens the file to go on with it: what an earlier
    // join put there stays (Tail::Keep).
    match join::join(path, join::Tail::Keep) {
        Ok(joined) => crate::log!(
            Warn,
            "{}: joined {} parts left by an earlier run ({} bytes)",
            path.display(),
            joined.parts,
            joined.bytes
        ),
        Err(e) => crate::log!(Error, "{}: parts of an earlier run: {e}", path.display()),
    }
}

/// The flags a replica other than the leader opens with, once the leader
/// has opened with `flags`. One shared file: without `O_CREAT`, `O_EXCL`
/// and `O_TRUNC`, which the leader's open applied once for all. A copy per
/// replica (one server per replica): each replica creates and truncates
/// its own copy as the leader did its own; `O_EXCL` becomes `O_TRUNC`,
/// because the leader's success means the file is new, and a stale copy
/// left on this replica's storage must not survive in it.
fn follower_flags(flags: i32, per_replica: bool) -> i32 {
    if !per_replica {
        return flags & !(libc::O_CREAT | libc::O_EXCL | libc::O_TRUNC);
    }
    if flags & libc::O_EXCL != 0 {
        (flags & !libc::O_EXCL) | libc::O_TRUNC
    } else {
        flags
    }
}

/// Opens a shared file on every replica: the leader with the application's
/// flags (so `O_CREAT`, `O_EXCL` and `O_TRUNC` act once), then the others
/// without them. Returns this replica's descriptor and its file.
pub fn open(resolved: &Resolved, flags: i32, mode: libc::mode_t) -> Outcome<(i32, ManagedFile)> {
    main_thread_only("open", &resolved.path.display())?;
    let path = resolved.c_path.as_c_str();
    // redio places every write itself (O_APPEND: at the size the leader
    // reports). A real descriptor with O_APPEND would make Linux's pwrite
    // ignore the offset, and pieces written by several replicas would land
    // in arrival order.
    let real_flags = flags & !libc::O_APPEND;
    let settings = settings_for(resolved, flags);
    let (reply, leader) = on_leader(operation("open", resolved.app_path.display(), 0, 0), || {
        if settings.separate {
            // std's file calls inside must reach the real functions.
            route::inside(|| settle_stale_parts(&resolved.path, flags));
        }
        // Run again after a fail-over, the failed leader may have created
        // the file already: O_EXCL would fail where the first attempt did not.
        let flags = if failover::redoing() {
            real_flags & !libc::O_EXCL
        } else {
            real_flags
        };
        // SAFETY: a NUL-terminated path.
        let fd = unsafe { real::open(path.as_ptr(), flags, mode) };
        Reply {
            outcome: if fd < 0 {
                Err(errno())
            } else {
                Ok(i64::from(fd))
            },
            payload: Vec::new(),
        }
    });
    let leader_fd = reply.outcome?;
    let me = world::identity().map_or(0, |i| i.placement.replica);
    // This replica's descriptor and whether it is a placeholder, or the
    // errno of a replica that cannot open its own copy.
    let opened: Outcome<(i32, bool)> = if leader {
        Ok((leader_fd as i32, false))
    } else {
        let follow = follower_flags(real_flags, resolved.per_replica);
        // SAFETY: a NUL-terminated path.
        match unsafe { real::open(path.as_ptr(), follow, mode) } {
            fd if fd >= 0 => Ok((fd, false)),
            // Its own copy: without it this replica's share of the data
            // would be lost; the open fails on every replica (below).
            _ if resolved.per_replica => Err(errno()),
            _ => {
                let why = std::io::Error::last_os_error();
                crate::log!(
                    Warn,
                    "{}: the leader opened it but this replica cannot ({why}); using a \
                     placeholder descriptor",
                    resolved.path.display()
                );
                // SAFETY: a constant path.
                let fd = unsafe { real::open(c"/dev/null".as_ptr(), libc::O_RDWR, 0) };
                Ok((fd, true))
            }
        }
    };
    if resolved.per_replica {
        let mine = opened.map(|_| ());
        let agreed = agree_on_outcome(operation("open", resolved.app_path.display(), 1, 0), mine);
        if let Err(errno) = agreed {
            if let Ok((fd, _)) = opened {
                // SAFETY: this replica's own descriptor, not handed out.
                unsafe { real::close(fd) };
            }
            crate::log!(
                Error,
                "{}: a replica cannot open its own copy (errno {errno}); the open fails on \
                 every replica",
                resolved.path.display()
            );
            return Err(errno);
        }
    }
    // Only a copy per replica fails here, and then the agreement returned.
    let (fd, placeholder) = opened?;
    let FileSettings {
        read,
        write,
        policy,
        separate,
    } = settings;
    crate::log!(
        Debug,
        "open({}) coordinated: fd {fd}, read {}, write {}{}, voting {}, on_mismatch {}{}",
        resolved.path.display(),
        read.name(),
        write.name(),
        if separate { " (separate files)" } else { "" },
        if policy.checksums { "on" } else { "off" },
        policy.on_mismatch.name(),
        if placeholder { ", placeholder" } else { "" }
    );
    Ok((
        fd,
        ManagedFile {
            path: resolved.path.clone(),
            app_path: resolved.app_path.clone(),
            placeholder,
            offset: Mutex::new(0),
            flags: AtomicI32::new(flags),
            read,
            write,
            policy,
            parts: separate.then(|| Parts::new(me)),
            unjoined: AtomicBool::new(false),
            per_replica: resolved.per_replica,
        },
    ))
}

impl ManagedFile {
    fn offset(&self) -> std::sync::MutexGuard<'_, u64> {
        self.offset.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Status flags as the application set them.
    pub fn flags(&self) -> i32 {
        self.flags.load(Ordering::Relaxed)
    }

    /// Applies `F_SETFL`: only `O_APPEND`, `O_NONBLOCK`, `O_DIRECT`,
    /// `O_NOATIME` and `O_ASYNC` can change.
    pub fn set_status_flags(&self, new: i32) {
        let changeable =
            libc::O_APPEND | libc::O_NONBLOCK | libc::O_DIRECT | libc::O_NOATIME | libc::O_ASYNC;
        let old = self.flags();
        self.flags
            .store((old & !changeable) | (new & changeable), Ordering::Relaxed);
    }

    fn display(&self) -> std::path::Display<'_> {
        self.path.display()
    }

    /// Reads into `buf` at `at`, or at the file offset (which then moves).
    ///
    /// After `MPI_Finalize` (a stream flushed at exit) there is no
    /// coordination: each replica reads its own file.
    pub fn read(&self, fd: i32, buf: &mut [u8], at: Option<u64>) -> Outcome<usize> {
        main_thread_only("read", &self.display())?;
        let mut offset = self.offset();
        let start = at.unwrap_or(*offset);
        let count = if route::active() {
            self.settle(fd)?;
            self.run_read(fd, buf, start)?
        } else {
            // SAFETY: a descriptor of this process and a buffer of `buf.len()`.
            let n = unsafe { real::pread64(fd, buf.as_mut_ptr().cast(), buf.len(), start as i64) };
            usize::try_from(n).map_err(|_| errno())?
        };
        if at.is_none() {
            *offset = start + count as u64;
        }
        Ok(count)
    }

    /// Writes `data` at `at`, or at the file offset (at the end with
    /// `O_APPEND`), which then moves.
    ///
    /// After `MPI_Finalize` there is no coordination: the leader writes and
    /// the other replicas only move their offset, so the bytes still reach
    /// the file once.
    pub fn write(&self, fd: i32, data: &[u8], at: Option<u64>) -> Outcome<usize> {
        main_thread_only("write", &self.display())?;
        let mut offset = self.offset();
        let start = match at {
            Some(at) => at,
            None if self.flags() & libc::O_APPEND != 0 => self.size(fd)?,
            None => *offset,
        };
        let leader = membership::is_leader();
        let count = if route::active() {
            self.run_write(fd, data, start)?
        } else if leader && !self.placeholder {
            // SAFETY: a descriptor of this process and a buffer of `data.len()`.
            let n = unsafe { real::pwrite64(fd, data.as_ptr().cast(), data.len(), start as i64) };
            usize::try_from(n).map_err(|_| errno())?
        } else {
            data.len()
        };
        if at.is_none() {
            *offset = start + count as u64;
        }
        Ok(count)
    }

    /// Runs one protocol operation with its context, link and file: the
    /// real file, or for a write under Distributed Separate Write this
    /// replica's part.
    fn run_protocol<T>(
        &self,
        fd: i32,
        announced: Operation,
        mut op: impl FnMut(&mut OpContext<'_>, &mut MpiLink, &mut dyn FileIo) -> Result<T, OpError>,
    ) -> Outcome<T> {
        let seq = next_seq();
        let path = self.path.to_string_lossy();
        let me = my_replica();
        // A descriptor opened read-only must fail writes as usual (EBADF
        // from the real file), not fill a part.
        let writable = self.flags() & libc::O_ACCMODE != libc::O_RDONLY;
        let to_parts = self
            .parts
            .as_ref()
            .filter(|_| announced.kind == "write" && writable);
        failover::run(
            seq,
            &announced,
            |e| report_link(&announced.kind, e),
            |link| {
                divergence::agree(link, seq, &announced)?;
                link.set_deadline(deadline());
                faults::maybe_die(seq);
                let mut on_mismatch = report_mismatch;
                let mut ctx = OpContext {
                    rank: world::identity().map_or(0, |i| i.placement.rank),
                    path: &path,
                    seq,
                    on_mismatch: &mut on_mismatch,
                    policy: self.policy,
                };
                let result = match to_parts {
                    Some(parts) => {
                        self.unjoined.store(true, Ordering::Relaxed);
                        op(&mut ctx, link, &mut parts.io(&self.path, seq))
                    }
                    None => op(&mut ctx, link, &mut faults::RealFile::new(fd, me, seq)),
                };
                result.map_err(Stop::from)
            },
        )
    }

    /// Distributed Separate Write: joins the parts into the file if
    /// anything was written since the last join. Every replica syncs its
    /// part, then the leader joins (a coordinated operation). Called before
    /// anything that needs the file's contents or size, and at the last
    /// close.
    pub fn settle(&self, fd: i32) -> Outcome<()> {
        let Some(parts) = &self.parts else {
            return Ok(());
        };
        if !self.unjoined.swap(false, Ordering::Relaxed) {
            return Ok(());
        }
        let synced = parts.sync();
        let path = self.path.clone();
        let join_here = || {
            // SAFETY: this replica's own descriptor of the final file, borrowed.
            let target = std::mem::ManuallyDrop::new(unsafe {
                <std::fs::File as std::os::unix::io::FromRawFd>::from_raw_fd(fd)
            });
            // std's file calls inside must reach the real functions.
            match route::inside(|| join::join_into(&path, &target)) {
                Ok(joined) => {
                    crate::log!(
                        Debug,
                        "{}: joined {} parts, {} pieces, {} bytes",
                        path.display(),
                        joined.parts,
                        joined.records,
                        joined.bytes
                    );
                    Ok(0)
                }
                Err(e) => {
                    crate::log!(Error, "join: {e}");
                    Err(libc::EIO)
                }
            }
        };
        let outcome = if self.per_replica {
            // Each replica's storage holds only its own part (one server
            // per replica): each joins its own, and nobody else can.
            join_here()
        } else {
            on_leader(operation("join", self.app_path.display(), 0, 0), || Reply {
                outcome: join_here(),
                payload: Vec::new(),
            })
            .0
            .outcome
        };
        parts.close();
        synced?;
        outcome.map(|_| ())
    }

    fn run_read(&self, fd: i32, buf: &mut [u8], offset: u64) -> Outcome<usize> {
        let announced = operation("read", self.app_path.display(), offset, buf.len() as u64);
        self.run_protocol(fd, announced, |ctx, link, io| {
            read::run(self.read, ctx, link, io, buf, offset)
        })
    }

    fn run_write(&self, fd: i32, data: &[u8], offset: u64) -> Outcome<usize> {
        let announced = operation("write", self.app_path.display(), offset, data.len() as u64);
        self.run_protocol(fd, announced, |ctx, link, io| {
            let data = faults::corrupt_write(data, my_replica());
            write::run(self.write, ctx, link, io, &data, offset)
        })
    }

    /// The file size, as the leader sees it.
    fn size(&self, fd: i32) -> Outcome<u64> {
        // SAFETY: an all-zero `stat` is a valid value to be overwritten.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        self.fstat(
            fd,
            (&mut st as *mut libc::stat).cast(),
            std::mem::size_of::<libc::stat>(),
        )?;
        Ok(st.st_size as u64)
    }

    /// `fstat` on the leader, copied into `buf` (`len` bytes) everywhere.
    pub fn fstat(&self, fd: i32, buf: *mut u8, len: usize) -> Outcome<()> {
        main_thread_only("fstat", &self.display())?;
        self.settle(fd)?;
        let (reply, _) = on_leader(operation("fstat", self.app_path.display(), 0, 0), || {
            // SAFETY: an all-zero `stat` is a valid value to be overwritten.
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            // SAFETY: a descriptor of this process and a local buffer.
            let rc = unsafe { real::fstat(fd, &mut st) };
            let bytes = unsafe {
                std::slice::from_raw_parts(
                    (&st as *const libc::stat).cast::<u8>(),
                    std::mem::size_of::<libc::stat>(),
                )
            };
            Reply {
                outcome: if rc < 0 { Err(errno()) } else { Ok(0) },
                payload: bytes.to_vec(),
            }
        });
        reply.outcome?;
        copy_payload(&reply.payload, buf, len)
    }

    /// `lseek`: computed from the agreed offset and size, the same on every
    /// replica.
    pub fn seek(&self, fd: i32, offset: i64, whence: i32) -> Outcome<i64> {
        main_thread_only("lseek", &self.display())?;
        let mut current = self.offset();
        let base = match whence {
            libc::SEEK_SET => 0,
            libc::SEEK_CUR => *current as i64,
            libc::SEEK_END => self.size(fd)? as i64,
            libc::SEEK_DATA | libc::SEEK_HOLE => {
                self.settle(fd)?;
                let op = operation(
                    "lseek",
                    self.app_path.display(),
                    offset as u64,
                    whence as u64,
                );
                let (reply, _) = on_leader(op, || {
                    // SAFETY: a descriptor of this process.
                    let at = unsafe { real::lseek(fd, offset, whence) };
                    Reply {
                        outcome: if at < 0 { Err(errno()) } else { Ok(at) },
                        payload: Vec::new(),
                    }
                });
                let at = reply.outcome?;
                *current = at as u64;
                return Ok(at);
            }
            _ => return Err(libc::EINVAL),
        };
        let target = base
            .checked_add(offset)
            .filter(|t| *t >= 0)
            .ok_or(libc::EINVAL)?;
        *current = target as u64;
        Ok(target)
    }

    /// `ftruncate`, once, by the leader.
    pub fn truncate(&self, fd: i32, length: i64) -> Outcome<()> {
        main_thread_only("ftruncate", &self.display())?;
        self.settle(fd)?;
        // SAFETY: a descriptor of this process.
        leader_call(
            operation("ftruncate", self.app_path.display(), length as u64, 0),
            || unsafe { real::ftruncate(fd, length) },
        )
    }

    /// `fsync` or `fdatasync`, once, by the leader.
    pub fn sync(&self, fd: i32, data_only: bool) -> Outcome<()> {
        main_thread_only("fsync", &self.display())?;
        self.settle(fd)?;
        leader_call(
            operation("fsync", self.app_path.display(), 0, 0),
            || unsafe {
                // SAFETY: a descriptor of this process.
                if data_only {
                    real::fdatasync(fd)
                } else {
                    real::fsync(fd)
                }
            },
        )
    }
}

/// Runs a C call returning `0`/`-1` once on the leader; same result
/// everywhere.
fn leader_call(op: Operation, mut call: impl FnMut() -> i32) -> Outcome<()> {
    on_leader(op, || {
        let rc = call();
        Reply {
            outcome: if rc < 0 {
                Err(errno())
            } else {
                Ok(i64::from(rc))
            },
            payload: Vec::new(),
        }
    })
    .0
    .outcome
    .map(|_| ())
}

/// A `stat`-like call on a shared path (`subject`, as the application
/// named it), done by the leader: `call` fills a buffer of `len` bytes;
/// every replica gets the same bytes in `buf`.
pub fn stat_on_leader(
    what: &str,
    subject: &std::path::Path,
    buf: *mut u8,
    len: usize,
    mut call: impl FnMut(*mut u8) -> i32,
) -> Outcome<()> {
    main_thread_only(what, &subject.display())?;
    let (reply, _) = on_leader(operation(what, subject.display(), 0, 0), || {
        let mut local = vec![0u8; len];
        let rc = call(local.as_mut_ptr());
        Reply {
            outcome: if rc < 0 { Err(errno()) } else { Ok(0) },
            payload: local,
        }
    });
    reply.outcome?;
    copy_payload(&reply.payload, buf, len)
}

/// A name operation (`unlink`, `rename`) on shared paths (`subject`, as
/// the application named it), done once by the leader; same result
/// everywhere.
pub fn name_on_leader(
    what: &str,
    subject: &std::path::Path,
    call: impl FnMut() -> i32,
) -> Outcome<()> {
    main_thread_only(what, &subject.display())?;
    leader_call(operation(what, subject.display(), 0, 0), call)
}

fn copy_payload(payload: &[u8], buf: *mut u8, len: usize) -> Outcome<()> {
    if payload.len() != len {
        return Err(libc::EIO);
    }
    // SAFETY: the caller's buffer has `len` bytes.
    unsafe { std::ptr::copy_nonoverlapping(payload.as_ptr(), buf, len) };
    Ok(())
}

/// Forgets descriptor `fd` before it is closed. At the last descriptor of
/// a `distributed-separate` file, joins its parts first; an error of that
/// join is the close's error.
pub fn release(fd: i32) -> Outcome<()> {
    match super::table::clear(fd) {
        Some(file) if std::sync::Arc::strong_count(&file) == 1 && route::active() => {
            crate::log!(Debug, "close({fd}): managed descriptor released");
            file.settle(fd)
        }
        Some(_) => {
            crate::log!(Debug, "close({fd}): managed descriptor released");
            Ok(())
        }
        None => Ok(()),
    }
}

/// At `MPI_Finalize`: joins the parts of every `distributed-separate` file
/// still open, in path order (the same on every replica).
pub fn settle_all() {
    let mut open = super::table::all();
    open.sort_by(|a, b| a.1.path.cmp(&b.1.path).then(a.0.cmp(&b.0)));
    open.dedup_by(|a, b| std::sync::Arc::ptr_eq(&a.1, &b.1));
    for (fd, file) in open {
        if let Err(errno) = file.settle(fd) {
            crate::log!(
                Error,
                "{}: joining its parts at MPI_Finalize failed (errno {errno}); run \
                 `redio join {}`",
                file.path.display(),
                file.path.display()
            );
        }
    }
}

/// Announces `MPI_Finalize` to the replica set under the next sequence
/// number (without taking it: it is not an operation on a file), so that
/// a replica with an extra coordinated call meets it instead of waiting
/// forever ([`divergence`]).
pub fn announce_finalize() {
    divergence::announce_finalize(SEQUENCE.load(Ordering::Relaxed));
}

/// Number of coordinated operations this process took part in.
pub fn operations() -> u64 {
    SEQUENCE.load(Ordering::Relaxed)
}
