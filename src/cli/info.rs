//! `redio info`: how redio classifies paths, with the rule that decided.
//!
//! Uses the same rules as the runtime ([`crate::fsclass`]), on the same
//! resolved path: absolute, with the symlinks of its existing part resolved.

use crate::config::{Config, FileFacts, OpenMode};
use crate::fsclass::{classify, parse_mountinfo, Class};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Prints one line per path: the path, its class, its file-system type, the
/// read and write protocols that apply (`-` for paths that pass through) and
/// the reasons: the rule for the class and, for shared paths, which
/// `io.rules` entry (or the defaults) chose the protocols.
pub fn info(paths: &[PathBuf]) -> ExitCode {
    let config = match Config::load_process_env(None) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("redio info: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mounts =
        parse_mountinfo(&std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default());
    println!(
        "{:<40} {:<7} {:<12} {:<20} {:<21} REASON",
        "PATH", "CLASS", "FS", "READ", "WRITE"
    );
    for path in paths {
        let resolved = resolve(path);
        let verdict = classify(&config, &resolved, &mounts);
        let text = resolved.to_string_lossy();
        let (read, write, rule) = if verdict.class == Class::Shared {
            // Reads as if opened read-only, writes as if opened write-only.
            let facts = |open_mode| FileFacts {
                path: &text,
                fs_type: Some(&verdict.fs_type),
                open_mode: Some(open_mode),
            };
            let (for_read, for_write) = (facts(OpenMode::Read), facts(OpenMode::Write));
            let (read_io, write_io) = (config.io_for(&for_read), config.io_for(&for_write));
            let which =
                |facts: &FileFacts<'_>| match config.io.rules.iter().position(|r| r.matches(facts))
                {
                    Some(i) => format!("io.rules[{i}] ({})", config.io.rules[i].path),
                    None => "io defaults".to_string(),
                };
            let (read_rule, write_rule) = (which(&for_read), which(&for_write));
            let rule = if read_rule == write_rule {
                format!(
                    "; {read_rule} applies (voting {}, on_mismatch {})",
                    on_off(read_io.voting),
                    read_io.on_mismatch
                )
            } else {
                format!("; reading: {read_rule} applies; writing: {write_rule} applies")
            };
            (read_io.read.to_string(), write_io.write.to_string(), rule)
        } else {
            ("-".to_string(), "-".to_string(), String::new())
        };
        println!(
            "{:<40} {:<7} {:<12} {read:<20} {write:<21} {}{rule}",
            path.display(),
            verdict.class.to_string(),
            verdict.fs_type,
            verdict.reason
        );
    }
    eprintln!("{MPI_IO_NOTE}");
    ExitCode::SUCCESS
}

/// How MPI-IO is handled, printed under the table (on stderr, so that the
/// table stays one line per path).
pub const MPI_IO_NOTE: &str = "note: MPI-IO (MPI_File_*, and HDF5, PnetCDF, ADIOS over it) is \
coordinated where it meets the file system: the MPI library's own reads and writes of a \
shared path follow that path's protocols above, once for the replica set \
(docs/io-stacks.md)";

fn on_off(on: bool) -> &'static str {
    if on {
        "on"
    } else {
        "off"
    }
}

/// Makes `path` absolute and resolves the symlinks of the part that exists
/// (a file about to be created has a parent that exists).
fn resolve(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut existing = absolute.as_path();
    let mut tail = Vec::new();
    while !existing.exists() {
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                tail.push(name.to_owned());
                existing = parent;
            }
            _ => return absolute,
        }
    }
    let mut resolved = existing
        .canonicalize()
        .unwrap_or_else(|_| existing.to_path_buf());
    resolved.extend(tail.iter().rev());
    resolved
}
