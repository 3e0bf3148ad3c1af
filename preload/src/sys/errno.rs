//! The calling thread's `errno`.

/// An errno value.
pub type Errno = i32;

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

#[cfg(test)]
mod tests {
    #[test]
    fn errno_is_the_calling_threads() {
        super::set_errno(libc::ENOSPC);
        let other = std::thread::spawn(|| {
            super::set_errno(libc::EACCES);
            super::errno()
        });
        assert_eq!(other.join().unwrap(), libc::EACCES);
        assert_eq!(super::errno(), libc::ENOSPC);
    }
}
