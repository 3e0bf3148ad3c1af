//! MPI handles as plain bits.
//!
//! MPICH handles are `int`s, Open MPI handles are pointers. Converting both
//! to `usize` lets the runtime keep them in atomics with one code path.

use std::ffi::{c_char, c_void};

/// An MPI handle type that round-trips through `usize`.
pub trait HandleBits: Copy {
    /// The handle as bits.
    fn to_bits(self) -> usize;
    /// The handle back from [`HandleBits::to_bits`].
    fn from_bits(bits: usize) -> Self;
}

impl HandleBits for i32 {
    #[inline]
    fn to_bits(self) -> usize {
        self as u32 as usize
    }
    #[inline]
    fn from_bits(bits: usize) -> Self {
        bits as u32 as i32
    }
}

impl<T> HandleBits for *mut T {
    #[inline]
    fn to_bits(self) -> usize {
        self as usize
    }
    #[inline]
    fn from_bits(bits: usize) -> Self {
        bits as *mut T
    }
}

extern "C" {
    fn redio_shim_bind(lookup: unsafe extern "C" fn(*const c_char) -> *mut c_void);
}

/// Binds the shim's predefined handles (`MPI_COMM_WORLD`, `MPI_BYTE`, …)
/// to the loaded MPI library. Needed under Open MPI when libmpi was loaded
/// after libredio.so with `dlopen(RTLD_LOCAL)` (Python): the shim's weak
/// references to libmpi's objects were 0 at load time. Call before the
/// first `PMPI_*` call (at `MPI_Init`); a no-op when they are bound.
pub fn bind_predefined() {
    // SAFETY: the shim only writes its own handle variables, before any
    // reader (every reader runs after MPI_Init).
    unsafe { redio_shim_bind(crate::sys::symbols::lookup_mpi_c) }
}
