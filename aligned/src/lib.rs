//! redio's one type for buffers that data moves through: [`AlignedBuf`], a
//! heap byte buffer whose first byte is always on a page boundary
//! ([`ALIGN`]), reused without reallocating while its capacity suffices,
//! and never zero-filled again once its bytes have been written.
//!
//! Why page-aligned: `malloc` returns blocks 16 bytes past a page boundary
//! (its chunk header), so every `pread`/`pwrite` into a 1 MiB `Vec<u8>`
//! copies between the page cache and a misaligned user buffer; issue 20
//! measured such copies 2.6–3.5x slower than into an aligned buffer on the
//! machine it ran on. Why never zero-filled twice: a buffer that a read is
//! about to overwrite gains nothing from a `memset` (issue 20: 4% of a
//! rebuild).
//!
//! [`ByteBuf`] is what code generic over its buffer (the parity ring over a
//! transport that still hands out `Vec<u8>`) asks of either type.
//!
//! # The invariant
//!
//! An `AlignedBuf` owns `cap` bytes at `ptr` (none when `cap == 0`) and
//! keeps `len <= init <= cap`, where bytes `[0, init)` have been written
//! at least once (by zeroing, by a copy, or through
//! [`spare_capacity_mut`](AlignedBuf::spare_capacity_mut) followed by
//! [`set_len`](AlignedBuf::set_len)), and bytes `[init, cap)` may be
//! uninitialised. Safe code only ever sees `[0, len)`, all initialised.
//! Growing the length past `init` zero-fills exactly the bytes between
//! `init` and the new length, once; [`AlignedBuf::resize_for_overwrite`]
//! grows within `init` without writing anything, so a buffer reused piece
//! after piece costs one `memset` in its life, not one per piece.
//!
//! Under Miri's rules: every byte a `&[u8]` or `&mut [u8]` covers is
//! inside `[0, len)`, hence initialised; `[init, cap)` is only reached
//! through raw pointers (`write_bytes`, `copy_nonoverlapping`) or as
//! `MaybeUninit<u8>`; the allocation is freed with the layout it was made
//! with; the empty buffer's pointer is never dereferenced (zero-length
//! slices only).

#![warn(missing_docs)]

use std::alloc::{self, Layout};
use std::fmt;
use std::mem::MaybeUninit;
use std::ops::{Deref, DerefMut};
use std::ptr::{self, NonNull};

/// The alignment of every [`AlignedBuf`]: the page size of x86-64 and of
/// most Linux systems (a larger page size only costs the misalignment the
/// buffers had before).
pub const ALIGN: usize = 4096;

/// A page-aligned, growable byte buffer: see the [crate] docs for
/// its invariant.
pub struct AlignedBuf {
    /// `ALIGN` as an address (no allocation) when `cap == 0`.
    ptr: NonNull<u8>,
    len: usize,
    /// Bytes `[0, init)` have been written; `len <= init <= cap`.
    init: usize,
    cap: usize,
}

// SAFETY: an `AlignedBuf` owns its allocation exclusively, like a
// `Vec<u8>`: moving it to another thread moves the only pointer to it, and
// `&AlignedBuf` only gives out `&[u8]`.
unsafe impl Send for AlignedBuf {}
// SAFETY: as above; shared references allow reads only.
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    /// An empty buffer; allocates nothing.
    pub const fn new() -> Self {
        AlignedBuf {
            ptr: dangling(),
            len: 0,
            init: 0,
            cap: 0,
        }
    }

    /// An empty buffer with room for `cap` bytes (nothing written yet).
    pub fn with_capacity(cap: usize) -> Self {
        let mut b = AlignedBuf::new();
        b.grow_to(cap);
        b
    }

    /// `len` zero bytes.
    pub fn zeroed(len: usize) -> Self {
        let mut b = AlignedBuf::with_capacity(len);
        b.resize(len, 0);
        b
    }

    /// A buffer of `len` bytes that the caller will overwrite: their
    /// contents are unspecified (zeros for a fresh buffer). Use it for
    /// buffers that a read fills; it is [`AlignedBuf::zeroed`] when
    /// the memory is new, and no work at all when a reused buffer is
    /// brought back to a length it had before (see
    /// [`AlignedBuf::resize_for_overwrite`]).
    pub fn for_overwrite(len: usize) -> Self {
        let mut b = AlignedBuf::with_capacity(len);
        b.resize_for_overwrite(len);
        b
    }

    /// A copy of `bytes`.
    pub fn from_slice(bytes: &[u8]) -> Self {
        let mut b = AlignedBuf::with_capacity(bytes.len());
        b.extend_from_slice(bytes);
        b
    }

    /// Bytes held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no bytes are held.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes the buffer can hold without reallocating.
    pub fn capacity(&self) -> usize {
        self.cap
    }

    /// The first byte (page-aligned, also when empty).
    pub fn as_ptr(&self) -> *const u8 {
        self.ptr.as_ptr()
    }

    /// The first byte, writable (page-aligned, also when empty).
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// The bytes held.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: `[0, len)` lies in the allocation (or is empty at an
        // aligned non-null address) and is initialised (invariant).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// The bytes held, writable.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as in `as_slice`; `&mut self` makes the borrow unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }

    /// Holds nothing, keeping the allocation (and what was written in it:
    /// a later [`AlignedBuf::resize_for_overwrite`] does not zero it again).
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Keeps the first `len` bytes (nothing happens when `len` is not
    /// shorter).
    pub fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }

    /// Makes room for `additional` more bytes than [`len`](Self::len):
    /// reallocates (copying the bytes held, not the rest) only when the
    /// capacity is short, to at least twice the old capacity.
    pub fn reserve(&mut self, additional: usize) {
        let need = self.len.checked_add(additional).expect("capacity overflow");
        if need > self.cap {
            self.grow_to(need.max(self.cap.saturating_mul(2)));
        }
    }

    /// Makes room for exactly `len` bytes in all (no doubling): for
    /// buffers whose final size is known, e.g. a piece.
    pub fn reserve_total(&mut self, len: usize) {
        if len > self.cap {
            self.grow_to(len);
        }
    }

    /// Sets the length to `len`; bytes past the old length become `value`
    /// (as `Vec::resize`).
    pub fn resize(&mut self, len: usize, value: u8) {
        if len > self.len {
            self.reserve_total(len);
            // SAFETY: `[self.len, len)` is inside the allocation
            // (`len <= cap` after the reserve); writing makes it
            // initialised, so `init` may cover it.
            unsafe { ptr::write_bytes(self.ptr.as_ptr().add(self.len), value, len - self.len) };
            self.init = self.init.max(len);
        }
        self.len = len;
    }

    /// Sets the length to `len` for a caller that will overwrite every
    /// byte: bytes past the old length keep whatever this buffer last held
    /// there, and only bytes never written before are zero-filled (once in
    /// the buffer's life). The contents of the new bytes are unspecified;
    /// they are never uninitialised.
    pub fn resize_for_overwrite(&mut self, len: usize) {
        if len > self.init {
            self.reserve_total(len);
            // SAFETY: `[init, len)` is inside the allocation (`len <= cap`);
            // zeroing initialises it.
            unsafe { ptr::write_bytes(self.ptr.as_ptr().add(self.init), 0, len - self.init) };
            self.init = len;
        }
        self.len = len;
    }

    /// Appends `bytes`.
    pub fn extend_from_slice(&mut self, bytes: &[u8]) {
        self.reserve(bytes.len());
        // SAFETY: the reserve left room for `bytes.len()` bytes after
        // `len`; a `&[u8]` cannot overlap our unique allocation's unused
        // part. The copy initialises them.
        unsafe {
            ptr::copy_nonoverlapping(bytes.as_ptr(), self.ptr.as_ptr().add(self.len), bytes.len())
        };
        self.len += bytes.len();
        self.init = self.init.max(self.len);
    }

    /// The capacity past [`len`](Self::len), possibly uninitialised: for a
    /// receiver that writes through a raw pointer (an MPI receive), after
    /// which [`set_len`](Self::set_len) publishes what it wrote.
    pub fn spare_capacity_mut(&mut self) -> &mut [MaybeUninit<u8>] {
        // SAFETY: `[len, cap)` is inside the allocation (or empty);
        // `MaybeUninit<u8>` may hold uninitialised bytes.
        unsafe {
            std::slice::from_raw_parts_mut(
                self.ptr.as_ptr().add(self.len).cast::<MaybeUninit<u8>>(),
                self.cap - self.len,
            )
        }
    }

    /// Sets the length to `len` without writing anything.
    ///
    /// # Safety
    ///
    /// `len <= capacity()`, and every byte of `[0, len)` must be
    /// initialised: held before, or written since (through
    /// [`spare_capacity_mut`](Self::spare_capacity_mut) or
    /// [`as_mut_ptr`](Self::as_mut_ptr)).
    pub unsafe fn set_len(&mut self, len: usize) {
        debug_assert!(len <= self.cap);
        self.len = len;
        self.init = self.init.max(len);
    }

    /// A `Vec<u8>` copy, for interfaces that still take one.
    pub fn to_vec(&self) -> Vec<u8> {
        self.as_slice().to_vec()
    }

    /// Moves the bytes held to a new allocation of `cap` bytes (`cap >=
    /// len`), freeing the old one. What was written past `len` is not
    /// copied: `init` drops to `len`.
    fn grow_to(&mut self, cap: usize) {
        debug_assert!(cap >= self.len);
        if cap == 0 {
            return;
        }
        let wanted = layout(cap);
        // SAFETY: `wanted` has a non-zero size.
        let raw = unsafe { alloc::alloc(wanted) };
        let Some(new) = NonNull::new(raw) else {
            alloc::handle_alloc_error(wanted)
        };
        if self.cap > 0 {
            // SAFETY: both allocations are live and distinct; `[0, len)`
            // is initialised in the old one and fits in the new one.
            unsafe {
                ptr::copy_nonoverlapping(self.ptr.as_ptr(), new.as_ptr(), self.len);
                alloc::dealloc(self.ptr.as_ptr(), layout(self.cap));
            }
        }
        self.ptr = new;
        self.cap = cap;
        self.init = self.len;
    }
}

/// An aligned, non-null address for the empty buffer (never dereferenced:
/// only zero-length slices are made from it).
const fn dangling() -> NonNull<u8> {
    // SAFETY: ALIGN is not zero.
    unsafe { NonNull::new_unchecked(ptr::without_provenance_mut(ALIGN)) }
}

/// The layout of an allocation of `cap` bytes.
fn layout(cap: usize) -> Layout {
    Layout::from_size_align(cap, ALIGN).expect("buffer size overflows isize")
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        if self.cap > 0 {
            // SAFETY: allocated by `grow_to` with this very layout.
            unsafe { alloc::dealloc(self.ptr.as_ptr(), layout(self.cap)) };
        }
    }
}

impl Default for AlignedBuf {
    fn default() -> Self {
        AlignedBuf::new()
    }
}

impl Clone for AlignedBuf {
    fn clone(&self) -> Self {
        AlignedBuf::from_slice(self)
    }
}

impl Deref for AlignedBuf {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        self.as_mut_slice()
    }
}

impl AsRef<[u8]> for AlignedBuf {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl AsMut<[u8]> for AlignedBuf {
    fn as_mut(&mut self) -> &mut [u8] {
        self
    }
}

impl From<&[u8]> for AlignedBuf {
    fn from(bytes: &[u8]) -> Self {
        AlignedBuf::from_slice(bytes)
    }
}

impl fmt::Debug for AlignedBuf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_slice(), f)
    }
}

impl PartialEq for AlignedBuf {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for AlignedBuf {}

impl PartialEq<[u8]> for AlignedBuf {
    fn eq(&self, other: &[u8]) -> bool {
        self.as_slice() == other
    }
}

impl PartialEq<Vec<u8>> for AlignedBuf {
    fn eq(&self, other: &Vec<u8>) -> bool {
        self.as_slice() == other.as_slice()
    }
}

/// What code that moves bytes asks of its buffer, so that it can take an
/// [`AlignedBuf`] or, from an interface not yet moved over, a `Vec<u8>`.
pub trait ByteBuf: Deref<Target = [u8]> + DerefMut + Default + Send {
    /// Holds nothing, keeping the allocation.
    fn clear(&mut self);
    /// Sets the length; new bytes are `value`.
    fn resize(&mut self, len: usize, value: u8);
    /// Sets the length for a caller that overwrites every byte (new bytes
    /// unspecified; zeroed only where `Vec<u8>` must).
    fn resize_for_overwrite(&mut self, len: usize);
    /// Appends `bytes`.
    fn extend_from_slice(&mut self, bytes: &[u8]);
}

impl ByteBuf for AlignedBuf {
    fn clear(&mut self) {
        AlignedBuf::clear(self);
    }

    fn resize(&mut self, len: usize, value: u8) {
        AlignedBuf::resize(self, len, value);
    }

    fn resize_for_overwrite(&mut self, len: usize) {
        AlignedBuf::resize_for_overwrite(self, len);
    }

    fn extend_from_slice(&mut self, bytes: &[u8]) {
        AlignedBuf::extend_from_slice(self, bytes);
    }
}

impl ByteBuf for Vec<u8> {
    fn clear(&mut self) {
        Vec::clear(self);
    }

    fn resize(&mut self, len: usize, value: u8) {
        Vec::resize(self, len, value);
    }

    fn resize_for_overwrite(&mut self, len: usize) {
        // A Vec does not track what was written past its length.
        Vec::resize(self, len, 0);
    }

    fn extend_from_slice(&mut self, bytes: &[u8]) {
        Vec::extend_from_slice(self, bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn aligned(b: &AlignedBuf) -> bool {
        b.as_ptr() as usize % ALIGN == 0
    }

    /// 1 MiB, or 16 KiB under Miri (`cargo +nightly miri test -p
    /// redio-aligned`), which checks every byte access and is slow.
    const MIB: usize = if cfg!(miri) { 1 << 14 } else { 1 << 20 };

    #[test]
    fn every_allocation_is_page_aligned() {
        for n in [1, 15, 16, 17, 4095, 4096, 4097, 65536, MIB, 3 * MIB + 5] {
            for b in [
                AlignedBuf::with_capacity(n),
                AlignedBuf::zeroed(n),
                AlignedBuf::for_overwrite(n),
                AlignedBuf::from_slice(&vec![7u8; n]),
            ] {
                assert!(aligned(&b), "{n} bytes at {:p}", b.as_ptr());
                assert!(b.capacity() >= n);
            }
        }
        let b = AlignedBuf::from_slice(&[1, 2, 3]);
        assert!(aligned(&b.clone()));
        assert_eq!(b.clone(), b);
    }

    #[test]
    fn growing_keeps_alignment_and_contents() {
        let mut b = AlignedBuf::new();
        let mut want = Vec::new();
        for i in 0..if cfg!(miri) { 300u32 } else { 5000 } {
            let piece = [(i % 251) as u8; 37];
            b.extend_from_slice(&piece);
            want.extend_from_slice(&piece);
            assert!(aligned(&b));
        }
        assert_eq!(b, want);
        b.resize(b.len() + 3 * MIB, 9);
        assert!(aligned(&b));
        assert_eq!(&b[..want.len()], &want[..]);
        assert!(b[want.len()..].iter().all(|&x| x == 9));
        b.resize_for_overwrite(b.len() + 12345);
        assert!(aligned(&b));
    }

    #[test]
    fn no_reallocation_while_the_capacity_suffices() {
        let mut b = AlignedBuf::for_overwrite(MIB);
        let at = b.as_ptr();
        for len in [0, 1, 4096, 1000, MIB, 77] {
            b.clear();
            b.resize_for_overwrite(len);
            assert_eq!((b.as_ptr(), b.len()), (at, len));
            b.clear();
            b.resize(len, 3);
            assert_eq!(b.as_ptr(), at);
            b.truncate(0);
            b.extend_from_slice(&vec![1; len]);
            assert_eq!(b.as_ptr(), at);
            b.reserve(MIB - len);
            assert_eq!(b.as_ptr(), at);
        }
        assert_eq!(b.capacity(), MIB);
    }

    #[test]
    fn zero_length_buffers_allocate_nothing_and_are_aligned() {
        for b in [
            AlignedBuf::new(),
            AlignedBuf::default(),
            AlignedBuf::with_capacity(0),
            AlignedBuf::zeroed(0),
            AlignedBuf::for_overwrite(0),
            AlignedBuf::from_slice(&[]),
        ] {
            assert_eq!((b.len(), b.capacity()), (0, 0));
            assert!(b.is_empty() && aligned(&b));
            assert_eq!(&b[..], &[] as &[u8]);
            assert!(b.clone().is_empty());
        }
        let mut b = AlignedBuf::new();
        b.resize(0, 1);
        b.resize_for_overwrite(0);
        b.extend_from_slice(&[]);
        assert!(b.spare_capacity_mut().is_empty());
        assert_eq!(b.capacity(), 0);
    }

    #[test]
    fn overwrite_sizing_zeroes_only_what_was_never_written() {
        let mut b = AlignedBuf::for_overwrite(8);
        assert_eq!(b, vec![0; 8], "fresh memory reads as zeros");
        b.copy_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8]);
        b.clear();
        b.resize_for_overwrite(4);
        // Stale bytes come back: nothing was written.
        assert_eq!(b, vec![1, 2, 3, 4]);
        b.resize_for_overwrite(8);
        assert_eq!(b, vec![1, 2, 3, 4, 5, 6, 7, 8]);
        b.resize_for_overwrite(12);
        assert_eq!(&b[8..], &[0, 0, 0, 0], "never written before: zeroed");
        // Resize (the Vec one) always writes its value.
        b.clear();
        b.resize(3, 0xff);
        assert_eq!(b, vec![0xff; 3]);
        // Growing moves the bytes held, not the stale ones past them.
        let mut c = AlignedBuf::zeroed(4);
        c.copy_from_slice(&[9, 9, 9, 9]);
        c.truncate(2);
        c.reserve_total(1 << 16);
        c.resize_for_overwrite(4);
        assert_eq!(c, vec![9, 9, 0, 0]);
    }

    #[test]
    fn spare_capacity_then_set_len_publishes_what_was_written() {
        let mut b = AlignedBuf::with_capacity(100);
        let spare = b.spare_capacity_mut();
        assert_eq!(spare.len(), 100);
        for (i, s) in spare.iter_mut().take(10).enumerate() {
            s.write(i as u8);
        }
        // SAFETY: the first 10 bytes were written just above.
        unsafe { b.set_len(10) };
        assert_eq!(b, (0..10).collect::<Vec<u8>>());
        // Shrinking and growing back within what was written needs no zeroing.
        b.truncate(3);
        b.resize_for_overwrite(10);
        assert_eq!(b, (0..10).collect::<Vec<u8>>());
    }

    #[test]
    fn is_send_and_sync_and_moves_between_threads() {
        fn both<T: Send + Sync>() {}
        both::<AlignedBuf>();
        let b = AlignedBuf::from_slice(b"across");
        let back = std::thread::spawn(move || b).join().unwrap();
        assert_eq!(back, b"across".to_vec());
    }

    #[test]
    fn the_vec_implementation_of_bytebuf_behaves_alike() {
        fn exercise<B: ByteBuf>() -> Vec<u8> {
            let mut b = B::default();
            b.extend_from_slice(&[1, 2]);
            b.resize(4, 7);
            b.resize_for_overwrite(5);
            b[4] = 5;
            let out = b.to_vec();
            b.clear();
            assert!(b.is_empty());
            out
        }
        assert_eq!(exercise::<Vec<u8>>(), vec![1, 2, 7, 7, 5]);
        assert_eq!(exercise::<AlignedBuf>(), vec![1, 2, 7, 7, 5]);
    }
}
