//! MPICH's launcher, told that this process finalized (the PMI-1 wire
//! protocol of Hydra, on the descriptor in `PMI_FD`), as MPICH's own
//! `PMPI_Finalize` does. A process of a job that survives deaths leaves
//! without `PMPI_Finalize` (`lifecycle/finish.rs`); without this, Hydra
//! takes its exit for a death and sends `SIGUSR1` to every other process
//! of the job, which kills a tool the application runs under (measured:
//! `strace` ended by signal 10, exit code 138).

/// Whether a Hydra PMI-1 connection is there to tell.
pub fn available() -> bool {
    descriptor().is_some()
}

fn descriptor() -> Option<i32> {
    std::env::var("PMI_FD").ok()?.trim().parse().ok()
}

/// Sends `cmd=finalize` and waits for `cmd=finalize_ack` (the proxy
/// answers at once: the others need not be there). Returns whether the
/// launcher acknowledged.
pub fn finalize() -> bool {
    let Some(fd) = descriptor() else {
        return false;
    };
    let request = b"cmd=finalize\n";
    // SAFETY: a buffer valid for its length.
    let sent =
        retrying(|| unsafe { libc::syscall(libc::SYS_write, fd, request.as_ptr(), request.len()) });
    if sent != request.len() as libc::c_long {
        return false;
    }
    let mut line = Vec::new();
    let mut byte = 0u8;
    while line.len() < 256 {
        // SAFETY: one byte into `byte`.
        let read = retrying(|| unsafe {
            libc::syscall(libc::SYS_read, fd, std::ptr::addr_of_mut!(byte), 1)
        });
        if read != 1 {
            return false;
        }
        if byte == b'\n' {
            break;
        }
        line.push(byte);
    }
    line.windows(b"finalize_ack".len())
        .any(|word| word == b"finalize_ack")
}

/// `call` again while a signal (Hydra's `SIGUSR1`) interrupts it.
fn retrying(mut call: impl FnMut() -> libc::c_long) -> libc::c_long {
    loop {
        let result = call();
        if result != -1 || std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return result;
        }
    }
}
