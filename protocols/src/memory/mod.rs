//! In-memory stand-ins for tests: a [`MemoryLink`] among threads and a
//! [`MemoryFile`] shared by all replicas, both with fault injection, plus
//! [`run_replicas`] to run one operation on every replica at once.
//!
//! Compiled for this crate's tests and, for other crates, behind the
//! `memory-link` feature. Not for production use.

mod file;
mod link;

pub use file::{Faults, MemoryFile, MemoryIo};
pub use link::{link_set, rendezvous_link_set, MemoryLink};

/// Runs `op` once per link, each on its own thread, and returns the
/// results by replica index. A panic on any thread is re-raised here.
pub fn run_replicas<T, F>(links: Vec<MemoryLink>, op: F) -> Vec<T>
where
    T: Send,
    F: Fn(MemoryLink) -> T + Sync,
{
    let op = &op;
    std::thread::scope(|scope| {
        let handles: Vec<_> = links
            .into_iter()
            .map(|link| scope.spawn(move || op(link)))
            .collect();
        handles
            .into_iter()
            .map(|handle| {
                handle
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    })
}
