//! Installing signal handlers, the same way in the CLI (`redio exec
//! --survive` forwards signals to the application) and in libredio.so
//! (death hints, fatal signals turned into exits).

/// Installs `handler` for `signal` with `SA_RESTART` (interrupted system
/// calls restart) and an empty mask. `handler` must be async-signal-safe:
/// it runs at any point of any thread.
pub fn set_handler(signal: i32, handler: extern "C" fn(i32)) {
    // SAFETY: an all-zero sigaction is valid to fill; the handler is a
    // plain function of the right signature.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = handler as usize;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(signal, &action, std::ptr::null_mut());
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicI32, Ordering};

    static SEEN: AtomicI32 = AtomicI32::new(0);

    extern "C" fn note(signal: i32) {
        SEEN.store(signal, Ordering::SeqCst);
    }

    #[test]
    fn the_handler_runs_on_its_signal() {
        super::set_handler(libc::SIGUSR2, note);
        // SAFETY: raising a signal this test handles.
        unsafe { libc::raise(libc::SIGUSR2) };
        assert_eq!(SEEN.load(Ordering::SeqCst), libc::SIGUSR2);
    }
}
