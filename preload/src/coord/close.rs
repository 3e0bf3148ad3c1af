//! Closing shared files: a descriptor released at `close`, every file
//! settled at `MPI_Finalize`.

use crate::coord::round::Outcome;
use crate::coord::table;
use crate::state::phase;

/// Forgets descriptor `fd` before it is closed. At the last descriptor of
/// a `distributed-separate` file, joins its parts first; an error of that
/// join is the close's error.
pub fn release(fd: i32) -> Outcome<()> {
    match table::clear(fd) {
        Some(file) if std::sync::Arc::strong_count(&file) == 1 && phase::active() => {
            crate::log!(Debug, "close({fd}): managed descriptor released");
            file.settle(fd)
        }
        Some(_) => {
            crate::log!(Debug, "close({fd}): managed descriptor released");
            Ok(())
        }
        None => Ok(()),
    }
}

/// At `MPI_Finalize`: joins the parts of every `distributed-separate` file
/// still open, in path order (the same on every replica).
pub fn settle_all() {
    let mut open = table::all();
    open.sort_by(|a, b| a.1.path.cmp(&b.1.path).then(a.0.cmp(&b.0)));
    open.dedup_by(|a, b| std::sync::Arc::ptr_eq(&a.1, &b.1));
    for (fd, file) in open {
        if let Err(errno) = file.settle(fd) {
            crate::log!(
                Error,
                "{}: joining its parts at MPI_Finalize failed (errno {errno}); run \
                 `redio join {}`",
                file.path.display(),
                file.path.display()
            );
        }
    }
}
