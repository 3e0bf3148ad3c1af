//! MPI handles as plain bits.
//!
//! MPICH handles are `int`s, Open MPI handles are pointers. Converting both
//! to `usize` lets the runtime keep them in atomics with one code path.

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
