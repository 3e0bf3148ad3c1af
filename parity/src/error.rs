//! The one error type of the file-level operations (encode, assess,
//! rebuild): one type, so that the CLI can map each kind to its exit code.

use crate::files::UnsafePath;
use crate::sets::SetError;
use std::io;

/// Anything that stops an encode, an assess or a rebuild.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be read or written.
    #[error("{0}")]
    Io(#[from] io::Error),
    /// Bad arguments.
    #[error("{0}")]
    Usage(String),
    /// A header names a path that must not be used.
    #[error("refused: {0}")]
    Unsafe(#[from] UnsafePath),
    /// Sets could not be built.
    #[error("{0}")]
    Sets(#[from] SetError),
    /// More damage than the scheme tolerates: nothing was written.
    #[error("unrecoverable, nothing written:\n{0}")]
    Unrecoverable(String),
    /// The directories do not hold what the headers say (a directory given
    /// for the wrong rank, a file rewritten after the encode): nothing
    /// was written.
    #[error("refused, nothing written: {0}")]
    Refused(String),
}
