//! One open shared file, as seen by this replica, and its coordinated
//! operations: data through the configured protocol with CRC32 voting,
//! metadata through the leader round. Each replica keeps the file offset
//! itself: the real descriptor of a replica that did not write has not
//! moved.

use crate::coord::failover::Stop;
use crate::coord::faults;
use crate::coord::link::SetLink;
use crate::coord::parts::Parts;
use crate::coord::plan::FilePlan;
use crate::coord::round::{
    coordinated, copy_payload, leader_call, main_thread_only, my_replica, on_leader, operation,
    report_mismatch, Outcome,
};
use crate::coord::target::Target;
use crate::ft::membership;
use crate::state::{phase, world};
use crate::sys::errno::errno;
use crate::sys::real;
use redio_core::join;
use redio_protocols::leader::Reply;
use redio_protocols::{
    read, write, FileIo, OpContext, OpError, Operation, Policy, ReadProtocol, WriteProtocol,
};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Mutex;

/// One open shared file, as seen by this replica. Descriptors made with
/// `dup` share it (and so its offset).
pub struct SharedFile {
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
    /// [`crate::coord::target::Target::per_replica`]).
    per_replica: bool,
}

impl SharedFile {
    /// The file `target` opened with `flags` under `plan`; `parts` is this
    /// replica's part file under Distributed Separate Write.
    pub fn new(
        target: &Target,
        placeholder: bool,
        flags: i32,
        plan: &FilePlan,
        parts: Option<Parts>,
    ) -> SharedFile {
        SharedFile {
            path: target.path.clone(),
            app_path: target.app_path.clone(),
            placeholder,
            offset: Mutex::new(0),
            flags: AtomicI32::new(flags),
            read: plan.read,
            write: plan.write,
            policy: plan.policy,
            parts,
            unjoined: AtomicBool::new(false),
            per_replica: target.per_replica,
        }
    }

    fn offset(&self) -> std::sync::MutexGuard<'_, u64> {
        self.offset.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The file offset as the application sees it (the real descriptor's
    /// own offset does not move: redio reads and writes at offsets).
    pub fn position(&self) -> u64 {
        *self.offset()
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
        let count = if phase::active() {
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
        if at.is_none() && self.appends_in_one_step() {
            return self.append(fd, data);
        }
        let mut offset = self.offset();
        let start = match at {
            Some(at) => at,
            None if self.flags() & libc::O_APPEND != 0 => self.size(fd)?,
            None => *offset,
        };
        let leader = membership::is_leader();
        let count = if phase::active() {
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

    /// True when a write at the file offset goes through Append Write: the
    /// file is open with `O_APPEND`, every replica reaches it as one file
    /// (not one copy per replica), and its writes are written once (not
    /// Write None, where every replica writes for itself).
    fn appends_in_one_step(&self) -> bool {
        self.flags() & libc::O_APPEND != 0 && !self.per_replica && self.write != WriteProtocol::None
    }

    /// A write to an `O_APPEND` file at its end, placed by the kernel in
    /// one step as in a plain run (`write::append`), so that appends of
    /// other ranks to the same file never land on it. The file offset
    /// moves to the end of the bytes, the same on every replica.
    ///
    /// After `MPI_Finalize` the leader appends alone; the others only move
    /// their offset, to the end of the file as they see it.
    fn append(&self, fd: i32, data: &[u8]) -> Outcome<usize> {
        let mut offset = self.offset();
        let (count, landed) = if phase::active() {
            // Parts not yet joined must be in the file before its end is.
            self.settle(fd)?;
            let announced = operation(
                "append",
                self.app_path.display(),
                write::append::AT_THE_END,
                data.len() as u64,
            );
            self.run_protocol(fd, announced, true, |ctx, link, io| {
                let data = faults::corrupt_write(data, my_replica());
                write::append::run(ctx, link, io, &data)
            })?
        } else if membership::is_leader() && !self.placeholder {
            faults::append_to(fd, data)?
        } else {
            (data.len(), self.size(fd)?)
        };
        *offset = landed + count as u64;
        Ok(count)
    }

    /// Runs one protocol operation with its context, link and file: the
    /// real file, or for a write under Distributed Separate Write this
    /// replica's part.
    fn run_protocol<T>(
        &self,
        fd: i32,
        announced: Operation,
        via_parts: bool,
        mut op: impl FnMut(&mut OpContext<'_>, &mut SetLink, &mut dyn FileIo) -> Result<T, OpError>,
    ) -> Outcome<T> {
        let path = self.path.to_string_lossy();
        let me = my_replica();
        // A descriptor opened read-only must fail writes as usual (EBADF
        // from the real file), not fill a part.
        let writable = self.flags() & libc::O_ACCMODE != libc::O_RDONLY;
        let to_parts = self
            .parts
            .as_ref()
            .filter(|_| via_parts && announced.kind == "write" && writable);
        coordinated(&announced, |link, seq| {
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
                    op(&mut ctx, link, &mut parts.io(fd, &self.path, seq))
                }
                None => op(&mut ctx, link, &mut faults::RealFile::new(fd, me, seq)),
            };
            result.map_err(Stop::from)
        })
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
        let rank = world::identity().map_or(0, |i| i.placement.rank);
        let join_here = || {
            // SAFETY: this replica's own descriptor of the final file, borrowed.
            let target = std::mem::ManuallyDrop::new(unsafe {
                <std::fs::File as std::os::unix::io::FromRawFd>::from_raw_fd(fd)
            });
            // std's file calls inside must reach the real functions.
            match crate::sys::guard::inside(|| {
                join::join_rank_into(&path, world::run(), rank, &target)
            }) {
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
        if synced.is_err() || outcome.is_err() {
            // The parts stay: the next settle (fsync, close) tries again and
            // reports it, never a success over data left in the parts.
            self.unjoined.store(true, Ordering::Relaxed);
        }
        synced?;
        outcome.map(|_| ())
    }

    fn run_read(&self, fd: i32, buf: &mut [u8], offset: u64) -> Outcome<usize> {
        let announced = operation("read", self.app_path.display(), offset, buf.len() as u64);
        self.run_protocol(fd, announced, true, |ctx, link, io| {
            read::run(self.read, ctx, link, io, buf, offset)
        })
    }

    fn run_write(&self, fd: i32, data: &[u8], offset: u64) -> Outcome<usize> {
        match self.write_once(fd, data, offset, true) {
            // Distributed Separate Write on a full file system: the parts
            // hold what the final file will get at the join, in space of
            // their own. Join now, which frees the parts, and write this
            // one straight into the file (Distributed Write): it then fails
            // for want of space exactly where a plain run's write would.
            // Every replica has the same agreed result, so every replica
            // joins and writes again.
            Err(errno @ (libc::ENOSPC | libc::EDQUOT)) if self.parts.is_some() => {
                if self.settle(fd).is_err() {
                    return Err(errno);
                }
                self.write_once(fd, data, offset, false)
            }
            other => other,
        }
    }

    fn write_once(&self, fd: i32, data: &[u8], offset: u64, via_parts: bool) -> Outcome<usize> {
        let announced = operation("write", self.app_path.display(), offset, data.len() as u64);
        self.run_protocol(fd, announced, via_parts, |ctx, link, io| {
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

    /// A metadata call on this file's descriptor (`fchmod`, `fchown`,
    /// `futimens`), once, by the leader; the same result everywhere.
    pub fn on_leader_fd(&self, what: &str, call: impl FnMut() -> i32) -> Outcome<()> {
        main_thread_only(what, &self.display())?;
        leader_call(operation(what, self.app_path.display(), 0, 0), call)
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
