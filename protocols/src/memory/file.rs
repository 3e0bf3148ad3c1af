//! [`MemoryFile`]: one shared "file" in memory, and [`MemoryIo`], one
//! replica's access to it with optional injected faults.

use crate::{Errno, FileIo};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// A file shared by all replicas, standing in for a file on a shared file
/// system. Clones refer to the same file. Counts every `pwrite` that
/// reaches it, whichever replica made it.
#[derive(Debug, Clone, Default)]
pub struct MemoryFile {
    state: Arc<Mutex<FileState>>,
}

#[derive(Debug, Default)]
struct FileState {
    bytes: Vec<u8>,
    pwrite_calls: u64,
    bytes_written: u64,
}

impl MemoryFile {
    /// A file holding `contents`.
    pub fn new(contents: impl Into<Vec<u8>>) -> MemoryFile {
        let state = FileState {
            bytes: contents.into(),
            ..FileState::default()
        };
        MemoryFile {
            state: Arc::new(Mutex::new(state)),
        }
    }

    /// The file's current contents.
    pub fn contents(&self) -> Vec<u8> {
        self.lock().bytes.clone()
    }

    /// Successful `pwrite` calls that reached the file.
    pub fn pwrite_calls(&self) -> u64 {
        self.lock().pwrite_calls
    }

    /// Bytes written to the file by all replicas together.
    pub fn bytes_written(&self) -> u64 {
        self.lock().bytes_written
    }

    /// One replica's access to the file, with `faults` injected.
    pub fn io(&self, faults: Faults) -> MemoryIo {
        MemoryIo {
            file: self.clone(),
            faults,
            preads: 0,
            pwrites: 0,
            bytes_read: 0,
            bytes_written: 0,
        }
    }

    fn lock(&self) -> MutexGuard<'_, FileState> {
        // A test thread that panicked holding the lock left no half-done
        // update behind (every update is one copy), so the data are usable.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Faults one replica's [`MemoryIo`] injects, on every call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Faults {
    /// Flip this bit (counted from the first byte read, bit 0 = least
    /// significant bit of byte 0) in what `pread` returns, if it read that
    /// far. A soft error on the read path.
    pub flip_read_bit: Option<usize>,
    /// `pread` fails with this errno without reading.
    pub read_error: Option<Errno>,
    /// `pwrite` fails with this errno (e.g. `ENOSPC`) without writing.
    pub write_error: Option<Errno>,
    /// `pwrite` writes at most this many bytes per call (a short write,
    /// e.g. a full disk or a signal).
    pub write_limit: Option<usize>,
}

impl Faults {
    /// No faults.
    pub const NONE: Faults = Faults {
        flip_read_bit: None,
        read_error: None,
        write_error: None,
        write_limit: None,
    };
}

/// One replica's [`FileIo`] on a [`MemoryFile`].
#[derive(Debug)]
pub struct MemoryIo {
    file: MemoryFile,
    faults: Faults,
    preads: u64,
    pwrites: u64,
    bytes_read: u64,
    bytes_written: u64,
}

impl MemoryIo {
    /// Bytes this replica's successful `pread` calls returned.
    pub fn bytes_read(&self) -> u64 {
        self.bytes_read
    }

    /// Bytes this replica's successful `pwrite` calls wrote.
    pub fn bytes_written(&self) -> u64 {
        self.bytes_written
    }

    /// `pread` calls made through this replica, failed ones included.
    pub fn preads(&self) -> u64 {
        self.preads
    }

    /// `pwrite` calls made through this replica, failed ones included.
    pub fn pwrites(&self) -> u64 {
        self.pwrites
    }
}

impl FileIo for MemoryIo {
    fn pread(&mut self, buf: &mut [u8], offset: u64) -> Result<usize, Errno> {
        self.preads += 1;
        if let Some(errno) = self.faults.read_error {
            return Err(errno);
        }
        let n = {
            let state = self.file.lock();
            let start = usize::try_from(offset)
                .unwrap_or(usize::MAX)
                .min(state.bytes.len());
            let available = &state.bytes[start..];
            let n = available.len().min(buf.len());
            buf[..n].copy_from_slice(&available[..n]);
            n
        };
        if let Some(bit) = self.faults.flip_read_bit.filter(|bit| bit / 8 < n) {
            buf[bit / 8] ^= 1 << (bit % 8);
        }
        self.bytes_read += n as u64;
        Ok(n)
    }

    fn pwrite(&mut self, data: &[u8], offset: u64) -> Result<usize, Errno> {
        self.pwrites += 1;
        if let Some(errno) = self.faults.write_error {
            return Err(errno);
        }
        let data = &data[..data
            .len()
            .min(self.faults.write_limit.unwrap_or(usize::MAX))];
        let start = usize::try_from(offset).map_err(|_| libc::EFBIG)?;
        let end = start.checked_add(data.len()).ok_or(libc::EFBIG)?;
        let mut state = self.file.lock();
        if state.bytes.len() < end {
            // Like a real file: writing past the end leaves a hole of zeros.
            state.bytes.resize(end, 0);
        }
        state.bytes[start..end].copy_from_slice(data);
        state.pwrite_calls += 1;
        state.bytes_written += data.len() as u64;
        self.bytes_written += data.len() as u64;
        Ok(data.len())
    }

    fn append(&mut self, data: &[u8]) -> Result<(usize, u64), Errno> {
        // The end, then a write there: a test's in-memory file has no
        // other writer in between.
        let end = self.file.lock().bytes.len() as u64;
        self.pwrite(data, end).map(|n| (n, end))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pread_reads_what_is_there_and_stops_at_eof() {
        let file = MemoryFile::new(*b"0123456789");
        let mut io = file.io(Faults::NONE);
        let mut buf = [0u8; 4];
        assert_eq!(io.pread(&mut buf, 2), Ok(4));
        assert_eq!(&buf, b"2345");
        assert_eq!(io.pread(&mut buf, 8), Ok(2));
        assert_eq!(&buf[..2], b"89");
        assert_eq!(io.pread(&mut buf, 10), Ok(0));
        assert_eq!(io.pread(&mut buf, u64::MAX), Ok(0));
        assert_eq!(io.preads(), 4);
        assert_eq!(io.bytes_read(), 6);
    }

    #[test]
    fn pwrite_overwrites_extends_with_a_hole_and_counts() {
        let file = MemoryFile::new(*b"abc");
        let mut io = file.io(Faults::NONE);
        assert_eq!(io.pwrite(b"XY", 1), Ok(2));
        assert_eq!(io.pwrite(b"Z", 5), Ok(1));
        assert_eq!(file.contents(), b"aXY\0\0Z");
        assert_eq!(
            (file.pwrite_calls(), file.bytes_written(), io.pwrites()),
            (2, 3, 2)
        );
        assert_eq!(io.bytes_written(), 3);
        assert_eq!(io.pwrite(b"Z", u64::MAX), Err(libc::EFBIG));
    }

    #[test]
    fn injected_faults() {
        let file = MemoryFile::new(*b"\x00\x00");
        let mut flip = file.io(Faults {
            flip_read_bit: Some(9),
            ..Faults::NONE
        });
        let mut buf = [0u8; 2];
        assert_eq!(flip.pread(&mut buf, 0), Ok(2));
        assert_eq!(buf, [0, 2]);
        // Out of range of what was read: nothing to flip.
        assert_eq!(flip.pread(&mut buf[..1], 0), Ok(1));
        assert_eq!(buf[0], 0);

        let mut broken = file.io(Faults {
            read_error: Some(libc::EIO),
            write_error: Some(libc::ENOSPC),
            ..Faults::NONE
        });
        assert_eq!(broken.pread(&mut buf, 0), Err(libc::EIO));
        assert_eq!(broken.pwrite(b"zz", 0), Err(libc::ENOSPC));
        assert_eq!(file.contents(), b"\x00\x00");
        assert_eq!((file.pwrite_calls(), broken.pwrites()), (0, 1));

        let mut short = file.io(Faults {
            write_limit: Some(1),
            ..Faults::NONE
        });
        assert_eq!(short.pwrite(b"ab", 0), Ok(1));
        assert_eq!(file.contents(), b"a\x00");
    }
}
