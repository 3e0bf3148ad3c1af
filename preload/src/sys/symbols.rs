//! Finds the functions redio forwards to, at run time.
//!
//! Both the MPI library's `PMPI_*` functions and the C library's real
//! `open`, `read`, … are looked up with `dlsym(RTLD_NEXT, …)`: the next
//! definition after libredio.so in the process's search order.

use crate::sys::log;
use std::ffi::CStr;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Returns the address of `name` in the libraries loaded after this one,
/// caching it in `slot`.
///
/// A missing function means the program uses a library without it (an MPI
/// without an optional function): nothing sensible can follow, so the
/// process stops with the name.
#[inline]
pub fn resolve(slot: &AtomicUsize, name: &CStr) -> usize {
    match slot.load(Ordering::Relaxed) {
        0 => {
            // SAFETY: dlsym with a valid NUL-terminated name.
            let address = unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr()) } as usize;
            if address == 0 {
                log::announce(format_args!(
                    "error: {} is not in the libraries this program loaded",
                    name.to_string_lossy()
                ));
                // SAFETY: leaving at once; there is no function to call.
                unsafe { libc::_exit(3) };
            }
            slot.store(address, Ordering::Relaxed);
            address
        }
        address => address,
    }
}

/// Looks `name` up now and caches it in `slot`; a missing name is left for
/// [`resolve`] to report if it is ever called.
pub fn try_resolve(slot: &AtomicUsize, name: &CStr) {
    if slot.load(Ordering::Relaxed) == 0 {
        // SAFETY: dlsym with a valid NUL-terminated name.
        let address = unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr()) } as usize;
        slot.store(address, Ordering::Relaxed);
    }
}
