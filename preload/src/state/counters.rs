//! What this process did with shared files: coordinated operations, bytes
//! it read and bytes it wrote itself (the summary and `redio run`'s
//! outcome report them).

use std::sync::atomic::{AtomicU64, Ordering};

static OPERATIONS: AtomicU64 = AtomicU64::new(0);
static BYTES_READ: AtomicU64 = AtomicU64::new(0);
static BYTES_WRITTEN: AtomicU64 = AtomicU64::new(0);

/// Counts one coordinated operation.
pub fn operation() {
    OPERATIONS.fetch_add(1, Ordering::Relaxed);
}

/// Counts `n` bytes this process read from a shared file.
pub fn read(n: u64) {
    BYTES_READ.fetch_add(n, Ordering::Relaxed);
}

/// Counts `n` bytes this process wrote to a shared file.
pub fn written(n: u64) {
    BYTES_WRITTEN.fetch_add(n, Ordering::Relaxed);
}

/// `(operations, bytes read, bytes written)` so far.
pub fn snapshot() -> (u64, u64, u64) {
    (
        OPERATIONS.load(Ordering::Relaxed),
        BYTES_READ.load(Ordering::Relaxed),
        BYTES_WRITTEN.load(Ordering::Relaxed),
    )
}
