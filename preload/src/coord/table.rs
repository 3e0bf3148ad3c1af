//! Which descriptors and streams are managed, and by which file.
//!
//! Every open-like call that returns a managed descriptor sets its entry;
//! every close clears it before the real close, so a reused descriptor
//! number is never taken for the old file. `dup` makes a second entry for
//! the same [`SharedFile`] (sharing its offset, like the kernel's open file
//! description).

use crate::coord::file::SharedFile;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

static FDS: Mutex<Option<HashMap<i32, Arc<SharedFile>>>> = Mutex::new(None);
/// Number of entries in [`FDS`]: lets unmanaged calls skip the lock.
static COUNT: AtomicUsize = AtomicUsize::new(0);
/// Managed stdio streams: `FILE*` address → descriptor.
static STREAMS: Mutex<Option<HashMap<usize, i32>>> = Mutex::new(None);

fn fds() -> MutexGuard<'static, Option<HashMap<i32, Arc<SharedFile>>>> {
    FDS.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn streams() -> MutexGuard<'static, Option<HashMap<usize, i32>>> {
    STREAMS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The managed file behind `fd`, if any.
#[inline]
pub fn get(fd: i32) -> Option<Arc<SharedFile>> {
    if COUNT.load(Ordering::Acquire) == 0 {
        return None;
    }
    fds().as_ref()?.get(&fd).cloned()
}

/// Makes `fd` refer to `file` (replacing whatever it referred to).
pub fn set(fd: i32, file: Arc<SharedFile>) {
    let mut table = fds();
    if table
        .get_or_insert_with(HashMap::new)
        .insert(fd, file)
        .is_none()
    {
        COUNT.fetch_add(1, Ordering::AcqRel);
    }
}

/// Forgets `fd`; returns the file it referred to.
pub fn clear(fd: i32) -> Option<Arc<SharedFile>> {
    if COUNT.load(Ordering::Acquire) == 0 {
        return None;
    }
    let removed = fds().as_mut()?.remove(&fd);
    if removed.is_some() {
        COUNT.fetch_sub(1, Ordering::AcqRel);
    }
    removed
}

/// Forgets every descriptor in `first..=last`.
pub fn clear_range(first: u32, last: u32) {
    if COUNT.load(Ordering::Acquire) == 0 {
        return;
    }
    if let Some(table) = fds().as_mut() {
        let before = table.len();
        table.retain(|fd, _| !(first as i64..=last as i64).contains(&(*fd as i64)));
        COUNT.fetch_sub(before - table.len(), Ordering::AcqRel);
    }
}

/// Every managed descriptor (for flushing and diagnostics).
pub fn all() -> Vec<(i32, Arc<SharedFile>)> {
    fds()
        .as_ref()
        .map(|table| table.iter().map(|(fd, file)| (*fd, file.clone())).collect())
        .unwrap_or_default()
}

/// Records that `stream` is a managed stream over `fd`.
pub fn set_stream(stream: *mut libc::FILE, fd: i32) {
    streams()
        .get_or_insert_with(HashMap::new)
        .insert(stream as usize, fd);
}

/// The managed descriptor of `stream`, if it is a managed stream.
pub fn stream_fd(stream: *mut libc::FILE) -> Option<i32> {
    streams().as_ref()?.get(&(stream as usize)).copied()
}

/// Forgets `stream`.
pub fn clear_stream(stream: *mut libc::FILE) -> Option<i32> {
    streams().as_mut()?.remove(&(stream as usize))
}

/// Every managed stream.
pub fn all_streams() -> Vec<*mut libc::FILE> {
    streams()
        .as_ref()
        .map(|table| {
            table
                .keys()
                .map(|&address| address as *mut libc::FILE)
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coord::plan::plan_for;
    use crate::coord::target::Target;

    fn file(path: &str) -> Arc<SharedFile> {
        let target = Target {
            path: path.into(),
            app_path: path.into(),
            c_path: std::ffi::CString::new(path).unwrap(),
            fs_type: None,
            per_replica: false,
        };
        let plan = plan_for(&target, libc::O_RDWR);
        Arc::new(SharedFile::new(&target, false, libc::O_RDWR, &plan, None))
    }

    /// One test: the table is process-wide, and tests run on threads.
    #[test]
    fn descriptors_and_their_dups_share_one_file_until_each_is_closed() {
        let a = file("/shared/a");
        set(1000, a.clone());
        set(1001, a.clone());
        set(1002, file("/shared/b"));
        assert!(Arc::ptr_eq(&get(1000).unwrap(), &get(1001).unwrap()));
        assert_eq!(get(1002).unwrap().path, std::path::Path::new("/shared/b"));
        assert!(get(1003).is_none());

        // Closing one descriptor of a dup'ed file leaves the other.
        assert!(clear(1000).is_some());
        assert!(get(1000).is_none() && get(1001).is_some());
        // The last reference is the one being closed (the join runs then).
        let last = clear(1001).unwrap();
        drop(a);
        assert_eq!(Arc::strong_count(&last), 1);
        assert!(clear(1001).is_none());

        // A reused descriptor number names the new file only.
        set(1002, file("/shared/c"));
        assert_eq!(get(1002).unwrap().path, std::path::Path::new("/shared/c"));
        assert_eq!(all().len(), 1);
        clear(1002);
        assert!(all().is_empty());

        let stream = 0x1234usize as *mut libc::FILE;
        set_stream(stream, 7);
        assert_eq!(stream_fd(stream), Some(7));
    }
}
