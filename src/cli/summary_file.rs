//! The file `redio run --summary PATH` writes.
//!
//! The summary is written twice (a provisional one before the launch, the
//! verdict after), so PATH must be a regular file or not exist yet: a FIFO
//! without a reader would block `redio run` in `open()` before anything
//! ran, and a device or a directory is no place for JSON (docs/security.md).

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// What `path` is when it is not a regular file, for the error.
fn kind(file_type: std::fs::FileType) -> Option<&'static str> {
    if file_type.is_file() {
        None
    } else if file_type.is_fifo() {
        Some("a FIFO")
    } else if file_type.is_dir() {
        Some("a directory")
    } else if file_type.is_socket() {
        Some("a socket")
    } else if file_type.is_char_device() || file_type.is_block_device() {
        Some("a device")
    } else {
        Some("not a regular file")
    }
}

/// Writes `text` to `path`, a regular file (replaced) or a new one; any
/// other kind of file is refused without blocking or writing.
pub fn write(path: &Path, text: &str) -> Result<(), String> {
    let refuse = |what: &str| {
        format!(
            "{}: {what}, and the summary is written to a regular file",
            path.display()
        )
    };
    // Follows symbolic links, as the open does.
    if let Some(what) = std::fs::metadata(path)
        .ok()
        .and_then(|m| kind(m.file_type()))
    {
        return Err(refuse(what));
    }
    // O_NONBLOCK: a FIFO put there since the check fails the open instead
    // of blocking it (a regular file ignores the flag).
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if let Some(what) = file.metadata().ok().and_then(|m| kind(m.file_type())) {
        return Err(refuse(what));
    }
    file.write_all(text.as_bytes())
        .map_err(|e| format!("{}: {e}", path.display()))
}
