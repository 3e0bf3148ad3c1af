//! Distributed Separate Write in the preload: this replica's part file and
//! index (see [`redio_core::join`] for the layout and the join), opened on
//! the first write and closed after each join. The part is named by run,
//! logical rank and replica, and held (locked) while it is open, so that
//! neither another rank's join nor another run's open touches it.

use crate::coord::faults::RealFile;
use crate::sys::real;
use redio_core::join::{self, index_path, rank_part_path, Record};
use redio_protocols::{Errno, FileIo};
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Mutex;

/// This replica's part of one file written with `distributed-separate`.
pub struct Parts {
    run: u64,
    rank: u32,
    replica: u32,
    /// Descriptors of the part and its index, once the first write opened
    /// them.
    open: Mutex<Option<(i32, i32)>>,
}

impl Parts {
    /// The (not yet opened) part of `replica` of logical rank `rank` in
    /// run `run`.
    pub fn new(run: u64, rank: u32, replica: u32) -> Parts {
        Parts {
            run,
            rank,
            replica,
            open: Mutex::new(None),
        }
    }

    /// Whether this replica wrote into its part since the last join.
    pub fn pending(&self) -> bool {
        self.lock().is_some()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<(i32, i32)>> {
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The part's descriptors, opening (creating) the files if needed.
    fn descriptors(&self, path: &Path) -> Result<(i32, i32), Errno> {
        let mut open = self.lock();
        if let Some(fds) = *open {
            return Ok(fds);
        }
        let part = rank_part_path(path, self.run, self.rank, self.replica);
        let part_fd = open_real(&part, libc::O_RDWR | libc::O_CREAT)?;
        // Held while open: a join of another run leaves it alone.
        match crate::sys::guard::inside(|| join::lock_part(part_fd)) {
            Ok(true) => {}
            Ok(false) => crate::log!(
                Warn,
                "{}: another process holds this part (redio join while the job runs?)",
                part.display()
            ),
            Err(e) => crate::log!(Debug, "{}: no lock on the part: {e}", part.display()),
        }
        let index_fd = match open_real(
            &index_path(&part),
            libc::O_WRONLY | libc::O_CREAT | libc::O_APPEND,
        ) {
            Ok(fd) => fd,
            Err(errno) => {
                // SAFETY: closing the descriptor just opened.
                unsafe { real::close(part_fd) };
                return Err(errno);
            }
        };
        *open = Some((part_fd, index_fd));
        Ok((part_fd, index_fd))
    }

    /// Makes what this replica wrote durable before the leader joins.
    pub fn sync(&self) -> Result<(), Errno> {
        if let Some((part_fd, index_fd)) = *self.lock() {
            for fd in [part_fd, index_fd] {
                // SAFETY: descriptors owned by this part.
                if unsafe { real::fdatasync(fd) } < 0 {
                    return Err(crate::sys::errno::errno());
                }
            }
        }
        Ok(())
    }

    /// Closes the descriptors after a join removed the files.
    pub fn close(&self) {
        if let Some((part_fd, index_fd)) = self.lock().take() {
            // SAFETY: descriptors owned by this part.
            unsafe {
                real::close(part_fd);
                real::close(index_fd);
            }
        }
    }

    /// The [`FileIo`] that puts the pieces of operation `seq` into the part,
    /// reserving their space in the final file (this replica's descriptor
    /// `final_fd`).
    pub fn io<'a>(&'a self, final_fd: i32, path: &'a Path, seq: u64) -> PartIo<'a> {
        PartIo {
            parts: self,
            final_fd,
            path,
            seq,
        }
    }

    /// This replica's index.
    fn replica(&self) -> usize {
        self.replica as usize
    }
}

fn open_real(path: &Path, flags: i32) -> Result<i32, Errno> {
    let c_path = CString::new(path.as_os_str().as_bytes()).map_err(|_| libc::EINVAL)?;
    // SAFETY: a NUL-terminated path.
    match unsafe { real::open(c_path.as_ptr(), flags | libc::O_CLOEXEC, 0o644) } {
        // redio's own: never a number the application could have opened.
        fd if fd >= 0 => Ok(crate::sys::descriptors::apart(fd)),
        _ => Err(crate::sys::errno::errno()),
    }
}

/// Writes pieces into the part at their final offsets and records them.
pub struct PartIo<'a> {
    parts: &'a Parts,
    final_fd: i32,
    path: &'a Path,
    seq: u64,
}

/// Allocates `len` bytes at `offset` of the final file (`fd`) without
/// changing its size, so that the join, which copies the piece there, never
/// runs out of space: a full file system fails the write that needs the
/// space (`ENOSPC`, `EDQUOT`), as a plain run's write would, instead of
/// the `fsync` or `close` that joins. A file system that cannot preallocate
/// (`EOPNOTSUPP`, NFS before 4.2) is written without a reservation.
fn reserve(fd: i32, offset: u64, len: usize) -> Result<(), Errno> {
    if len == 0 {
        return Ok(());
    }
    // SAFETY: a descriptor of this process; no memory is passed.
    let rc = unsafe { libc::fallocate64(fd, libc::FALLOC_FL_KEEP_SIZE, offset as i64, len as i64) };
    match crate::sys::errno::errno() {
        errno @ (libc::ENOSPC | libc::EDQUOT) if rc < 0 => Err(errno),
        _ => Ok(()),
    }
}

impl FileIo for PartIo<'_> {
    fn pread(&mut self, _buf: &mut [u8], _offset: u64) -> Result<usize, Errno> {
        // The write protocols never read.
        Err(libc::EBADF)
    }

    fn pwrite(&mut self, data: &[u8], offset: u64) -> Result<usize, Errno> {
        reserve(self.final_fd, offset, data.len())?;
        let (part_fd, index_fd) = self.parts.descriptors(self.path)?;
        // The real file's writer: byte counters and test fault switches.
        let n = RealFile::new(part_fd, self.parts.replica(), self.seq).pwrite(data, offset)?;
        if n < data.len() {
            // A short write to a regular file: its file system is full.
            // Unrecorded, the piece is not joined; the write protocol's
            // caller joins and writes into the final file instead
            // (`SharedFile::run_write`), where a plain run's write would go.
            return Err(libc::ENOSPC);
        }
        let record = Record {
            seq: self.seq,
            offset,
            len: n as u64,
        }
        .encode();
        // One write(2) of 24 bytes with O_APPEND: records never interleave.
        // SAFETY: as above.
        let w = unsafe { real::write(index_fd, record.as_ptr().cast(), record.len()) };
        if w < 0 {
            // ENOSPC, EDQUOT: the application learns why.
            return Err(crate::sys::errno::errno());
        }
        if w != record.len() as isize {
            return Err(libc::EIO);
        }
        Ok(n)
    }
}
