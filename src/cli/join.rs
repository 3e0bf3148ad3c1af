//! `redio join`: turn the part files that Distributed Separate Write left
//! behind (a job that ended before closing its files, or `join: manual`)
//! into the final files.

use crate::join::{existing_parts, join, Tail};
use std::path::PathBuf;
use std::process::ExitCode;

/// Joins the parts of each path in `paths`; prints one line per path.
/// Fails (exit 1) if any join fails; the parts of a failed join are kept.
/// `tail`: what to do with bytes of an existing final file past the last
/// piece (see [`Tail`]).
pub fn run(paths: &[PathBuf], tail: Tail) -> ExitCode {
    let mut ok = true;
    for path in paths {
        match existing_parts(path) {
            Ok(parts) if parts.is_empty() => {
                println!("{}: no part files, nothing to join", path.display());
                continue;
            }
            Ok(_) => {}
            Err(e) => {
                eprintln!("redio join: {}: {e}", path.display());
                ok = false;
                continue;
            }
        }
        match join(path, tail) {
            Ok(joined) => {
                println!(
                    "{}: joined {} parts, {} pieces, {} bytes ({} copied through user space)",
                    path.display(),
                    joined.parts,
                    joined.records,
                    joined.bytes,
                    joined.bytes_through_user_space
                );
                if joined.tail_dropped > 0 {
                    println!(
                        "{}: dropped {} byte(s) of the existing file past the last piece \
                         (--keep-tail keeps them)",
                        path.display(),
                        joined.tail_dropped
                    );
                }
            }
            Err(e) => {
                eprintln!("redio join: {e}");
                ok = false;
            }
        }
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
