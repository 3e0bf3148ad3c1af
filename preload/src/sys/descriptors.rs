//! redio's own descriptors and the application's limit on them
//! (`RLIMIT_NOFILE`): redio's long-lived descriptors (the link's sockets,
//! the parts of `distributed-separate`) are kept apart, above the soft
//! limit, so that they never take a number the application could have
//! opened ([`apart`]); and whether a descriptor is free right now
//! ([`shortage`]), so that every replica can fail an `open` at the same
//! call when one of them has none left.

/// How far above the soft limit redio places its own descriptors: room
/// for the link's sockets and two descriptors per file written with
/// `distributed-separate`.
const ROOM: u64 = 1 << 16;

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// `RLIMIT_NOFILE` (soft, hard), by the raw system call.
fn limits() -> Option<(u64, u64)> {
    // SAFETY: rlimit is plain data; prlimit64 fills it.
    let mut limit: libc::rlimit64 = unsafe { std::mem::zeroed() };
    let rc = unsafe {
        libc::syscall(
            libc::SYS_prlimit64,
            0,
            libc::RLIMIT_NOFILE,
            std::ptr::null::<libc::rlimit64>(),
            &mut limit as *mut libc::rlimit64,
        )
    };
    (rc == 0).then_some((limit.rlim_cur, limit.rlim_max))
}

fn set_soft(soft: u64, hard: u64) -> bool {
    let limit = libc::rlimit64 {
        rlim_cur: soft,
        rlim_max: hard,
    };
    // SAFETY: a valid rlimit; no old value asked for.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_prlimit64,
            0,
            libc::RLIMIT_NOFILE,
            &limit as *const libc::rlimit64,
            std::ptr::null_mut::<libc::rlimit64>(),
        )
    };
    rc == 0
}

/// Moves redio's own descriptor `fd` to the lowest free number at or above
/// the soft limit, where the application's `open` never reaches, and
/// returns its new number (close-on-exec). The soft limit is raised for
/// the move and set back at once: a descriptor above the limit stays
/// valid, and the application's limit stays what it set. When the hard
/// limit leaves no room above the soft one, or `fd` is there already, `fd`
/// is returned as it is (it then counts against the application's limit,
/// as it did before).
pub fn apart(fd: i32) -> i32 {
    let Some((soft, hard)) = limits() else {
        return fd;
    };
    if fd < 0 || fd as u64 >= soft || hard <= soft || soft > i32::MAX as u64 {
        return fd;
    }
    let raised = hard.min(soft + ROOM).min(i32::MAX as u64);
    if !set_soft(raised, hard) {
        return fd;
    }
    // SAFETY: duplicating a descriptor this process owns.
    let moved = unsafe {
        libc::syscall(
            libc::SYS_fcntl,
            fd,
            libc::F_DUPFD_CLOEXEC,
            soft as libc::c_long,
        )
    };
    set_soft(soft, hard);
    if moved < 0 {
        return fd;
    }
    // SAFETY: the original, replaced by its duplicate.
    unsafe { libc::syscall(libc::SYS_close, fd) };
    moved as i32
}

/// The errno an `open` would fail with now for want of a descriptor
/// (`EMFILE`: the soft limit is reached; `ENFILE`: the system's), or `None`
/// when one is free.
pub fn shortage() -> Option<i32> {
    // SAFETY: a NUL-terminated constant path; the descriptor is closed below.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat,
            libc::AT_FDCWD,
            c"/".as_ptr(),
            libc::O_PATH | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        let e = errno();
        return matches!(e, libc::EMFILE | libc::ENFILE).then_some(e);
    }
    // SAFETY: the descriptor just opened.
    unsafe { libc::syscall(libc::SYS_close, fd) };
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One test: the limit is process-wide, and tests run on threads.
    #[test]
    fn own_descriptors_go_above_the_soft_limit_and_the_limit_stays() {
        let (soft, hard) = limits().unwrap();
        if hard <= soft + 8 {
            return; // no room above: nothing to move to
        }
        // SAFETY: opening and closing this test's own descriptors.
        let fd = unsafe { libc::open(c"/".as_ptr(), libc::O_PATH) };
        assert!(fd >= 0 && (fd as u64) < soft);
        let moved = apart(fd);
        assert!(moved as u64 >= soft, "{moved} below the soft limit {soft}");
        assert_eq!(limits(), Some((soft, hard)), "the limit must stay");
        // The old number is free again, the new one open and close-on-exec.
        assert_eq!(unsafe { libc::fcntl(fd, libc::F_GETFD) }, -1);
        assert_eq!(
            unsafe { libc::fcntl(moved, libc::F_GETFD) },
            libc::FD_CLOEXEC
        );
        assert_eq!(apart(moved), moved);
        assert_eq!(shortage(), None);
        unsafe { libc::close(moved) };
    }
}
