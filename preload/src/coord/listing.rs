//! Directory listings of shared directories (`opendir`, `fdopendir`,
//! `readdir`, `rewinddir`, `closedir`): the leader reads the directory,
//! once, and sends the entries to the others, so `readdir` returns the same
//! names, in the same order, on every replica, even while other ranks
//! create or remove files in it.
//!
//! Each replica still opens the directory itself (its `DIR*` is real:
//! `dirfd` and `closedir` work as usual); `readdir` on a managed `DIR*`
//! hands out the leader's entries from this table instead of reading.
//!
//! Wire format of the leader's reply payload, per entry:
//! `ino u64 LE | type u8 | name length u16 LE | name bytes`.

use crate::coord::round::{main_thread_only, on_leader, operation, Outcome};
use crate::sys::errno::errno;
use crate::sys::real;
use redio_protocols::leader::Reply;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// One directory entry, as the leader read it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// `d_ino`.
    pub ino: u64,
    /// `d_type` (`DT_REG`, `DT_DIR`, …).
    pub kind: u8,
    /// `d_name`, without its NUL.
    pub name: Vec<u8>,
}

/// The entries as the leader sends them.
pub fn encode(entries: &[Entry]) -> Vec<u8> {
    let mut out = Vec::new();
    for entry in entries {
        let name = &entry.name[..entry.name.len().min(255)];
        out.extend_from_slice(&entry.ino.to_le_bytes());
        out.push(entry.kind);
        out.extend_from_slice(&(name.len() as u16).to_le_bytes());
        out.extend_from_slice(name);
    }
    out
}

/// Decodes [`encode`]'s bytes; `None` when they are damaged.
pub fn decode(mut bytes: &[u8]) -> Option<Vec<Entry>> {
    let mut entries = Vec::new();
    while !bytes.is_empty() {
        let (ino, rest) = bytes.split_first_chunk::<8>()?;
        let (kind, rest) = rest.split_first()?;
        let (len, rest) = rest.split_first_chunk::<2>()?;
        let len = u16::from_le_bytes(*len) as usize;
        if rest.len() < len || len > 255 {
            return None;
        }
        entries.push(Entry {
            ino: u64::from_le_bytes(*ino),
            kind: *kind,
            name: rest[..len].to_vec(),
        });
        bytes = &rest[len..];
    }
    Some(entries)
}

/// Reads every entry of the directory `dir` opened (a real `DIR*`), then
/// closes it.
///
/// # Safety
/// `dir` is a `DIR*` of this process, not used afterwards.
unsafe fn read_all(dir: *mut libc::DIR) -> Outcome<Vec<Entry>> {
    let mut entries = Vec::new();
    loop {
        crate::sys::errno::set_errno(0);
        let entry = real::readdir64(dir);
        if entry.is_null() {
            let e = errno();
            real::closedir(dir);
            return if e == 0 { Ok(entries) } else { Err(e) };
        }
        let entry = &*entry;
        let name = std::ffi::CStr::from_ptr(entry.d_name.as_ptr());
        entries.push(Entry {
            ino: entry.d_ino,
            kind: entry.d_type,
            name: name.to_bytes().to_vec(),
        });
    }
}

/// Lists the directory on the leader: `open` opens it there (a real
/// `DIR*`, or null with errno); every replica gets the leader's entries
/// or errno. `what` and `subject` are announced.
pub fn list_on_leader(
    what: &str,
    subject: &std::path::Path,
    mut open: impl FnMut() -> *mut libc::DIR,
) -> Outcome<Vec<Entry>> {
    main_thread_only(what, &subject.display())?;
    let (reply, _) = on_leader(operation(what, subject.display(), 0, 0), || {
        let dir = open();
        let listed = if dir.is_null() {
            Err(errno())
        } else {
            // SAFETY: a DIR* just opened, closed by read_all.
            unsafe { read_all(dir) }
        };
        match listed {
            Ok(entries) => Reply {
                outcome: Ok(entries.len() as i64),
                payload: encode(&entries),
            },
            Err(e) => Reply::bare(Err(e)),
        }
    });
    let count = reply.outcome?;
    match decode(&reply.payload) {
        Some(entries) if entries.len() as i64 == count => Ok(entries),
        _ => Err(libc::EIO),
    }
}

/// A managed `DIR*`: the leader's entries and the next one to hand out.
struct Listing {
    entries: Vec<Entry>,
    next: usize,
    /// Where `readdir` puts the entry it returns (valid until the next
    /// `readdir` of this stream, as POSIX says).
    slot: Box<libc::dirent64>,
    /// For `rewinddir`: lists the directory again.
    relist: Box<dyn FnMut() -> Outcome<Vec<Entry>> + Send>,
}

static DIRS: Mutex<Option<HashMap<usize, Listing>>> = Mutex::new(None);
/// Number of managed streams: lets unmanaged `readdir` skip the lock.
static COUNT: AtomicUsize = AtomicUsize::new(0);

fn dirs() -> std::sync::MutexGuard<'static, Option<HashMap<usize, Listing>>> {
    DIRS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Makes `dir` a managed stream serving `entries`; `relist` lists the
/// directory again for `rewinddir`.
pub fn register(
    dir: *mut libc::DIR,
    entries: Vec<Entry>,
    relist: Box<dyn FnMut() -> Outcome<Vec<Entry>> + Send>,
) {
    // SAFETY: all-zero is a valid dirent64.
    let slot = Box::new(unsafe { std::mem::zeroed::<libc::dirent64>() });
    let listing = Listing {
        entries,
        next: 0,
        slot,
        relist,
    };
    if dirs()
        .get_or_insert_with(HashMap::new)
        .insert(dir as usize, listing)
        .is_none()
    {
        COUNT.fetch_add(1, Ordering::AcqRel);
    }
}

/// True when `dir` is a managed stream.
pub fn is_managed(dir: *mut libc::DIR) -> bool {
    COUNT.load(Ordering::Acquire) > 0
        && dirs()
            .as_ref()
            .is_some_and(|d| d.contains_key(&(dir as usize)))
}

/// The next entry of managed stream `dir` (null at the end), or `None`
/// when `dir` is not managed. The entry lives until the next call.
pub fn next(dir: *mut libc::DIR) -> Option<*mut libc::dirent64> {
    if COUNT.load(Ordering::Acquire) == 0 {
        return None;
    }
    let mut guard = dirs();
    let listing = guard.as_mut()?.get_mut(&(dir as usize))?;
    let Some(entry) = listing.entries.get(listing.next) else {
        return Some(std::ptr::null_mut());
    };
    listing.next += 1;
    let slot = &mut *listing.slot;
    slot.d_ino = entry.ino;
    slot.d_off = listing.next as i64;
    slot.d_type = entry.kind;
    slot.d_reclen = std::mem::size_of::<libc::dirent64>() as u16;
    slot.d_name = [0; 256];
    for (to, from) in slot.d_name.iter_mut().zip(&entry.name) {
        *to = *from as libc::c_char;
    }
    Some(slot as *mut libc::dirent64)
}

/// `rewinddir` of a managed stream: lists the directory again, on the
/// leader. `false` when `dir` is not managed.
pub fn rewind(dir: *mut libc::DIR) -> bool {
    if !is_managed(dir) {
        return false;
    }
    // Take the closure out: listing runs a coordinated round, and must not
    // hold the table's lock meanwhile.
    let relist = dirs()
        .as_mut()
        .and_then(|d| d.get_mut(&(dir as usize)))
        .map(|l| std::mem::replace(&mut l.relist, Box::new(|| Err(libc::EIO))));
    let Some(mut relist) = relist else {
        return false;
    };
    let entries = relist().unwrap_or_default();
    if let Some(listing) = dirs().as_mut().and_then(|d| d.get_mut(&(dir as usize))) {
        listing.entries = entries;
        listing.next = 0;
        listing.relist = relist;
    }
    true
}

/// Forgets managed stream `dir` (before its real `closedir`).
pub fn forget(dir: *mut libc::DIR) {
    if COUNT.load(Ordering::Acquire) == 0 {
        return;
    }
    if dirs()
        .as_mut()
        .and_then(|d| d.remove(&(dir as usize)))
        .is_some()
    {
        COUNT.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(ino: u64, kind: u8, name: &str) -> Entry {
        Entry {
            ino,
            kind,
            name: name.as_bytes().to_vec(),
        }
    }

    #[test]
    fn entries_survive_their_wire_format() {
        let entries = vec![
            entry(1, libc::DT_DIR, "."),
            entry(2, libc::DT_DIR, ".."),
            entry(u64::MAX, libc::DT_REG, "a file with spaces"),
            entry(7, libc::DT_LNK, &"x".repeat(255)),
        ];
        assert_eq!(decode(&encode(&entries)), Some(entries.clone()));
        assert_eq!(decode(&[]), Some(vec![]));
        let bytes = encode(&entries);
        assert_eq!(decode(&bytes[..bytes.len() - 1]), None);
    }

    #[test]
    fn a_managed_stream_hands_out_its_entries_then_null_and_rewinds() {
        let fake = 0x1000 as *mut libc::DIR;
        assert_eq!(next(fake), None);
        register(
            fake,
            vec![entry(5, libc::DT_REG, "f"), entry(6, libc::DT_DIR, "d")],
            Box::new(|| Ok(vec![entry(9, libc::DT_REG, "g")])),
        );
        assert!(is_managed(fake));
        let names: Vec<(u64, String)> = std::iter::from_fn(|| {
            let e = next(fake).unwrap();
            (!e.is_null()).then(|| unsafe {
                let e = &*e;
                let name = std::ffi::CStr::from_ptr(e.d_name.as_ptr());
                (e.d_ino, name.to_string_lossy().into_owned())
            })
        })
        .collect();
        assert_eq!(names, [(5, "f".to_string()), (6, "d".to_string())]);
        assert_eq!(next(fake), Some(std::ptr::null_mut()));
        assert!(rewind(fake));
        let again = unsafe { &*next(fake).unwrap() };
        assert_eq!(again.d_ino, 9);
        forget(fake);
        assert!(!is_managed(fake));
        assert_eq!(next(fake), None);
        assert!(!rewind(fake));
    }
}
