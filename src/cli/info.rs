//! `redio info`: how redio classifies paths.
//!
//! A path is shared when it lies under a configured `shared.paths` prefix,
//! node-local under a `local.paths` prefix, and otherwise according to the
//! type of the file system that holds it (`shared.fs_types`).

use crate::config::Config;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Prints one line per path: the path, its class and its file system type.
pub fn info(paths: &[PathBuf]) -> ExitCode {
    let env = |key: &str| std::env::var(key).ok();
    let config = match Config::load(None, &env) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("redio info: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    println!("{:<40} {:<7} {:<12} REASON", "PATH", "CLASS", "FS");
    for path in paths {
        let resolved = resolve(path);
        let fs_type = fs_type_of(&resolved, &mounts).unwrap_or_else(|| "?".into());
        let (class, reason) = classify(&config, &resolved, &fs_type);
        println!("{:<40} {:<7} {:<12} {reason}", path.display(), class, fs_type);
    }
    ExitCode::SUCCESS
}

/// Makes `path` absolute and resolves symlinks of the part that exists.
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
    let mut resolved = existing.canonicalize().unwrap_or_else(|_| existing.to_path_buf());
    resolved.extend(tail.iter().rev());
    resolved
}

/// Class and the reason for it.
fn classify(config: &Config, path: &Path, fs_type: &str) -> (&'static str, String) {
    let under = |prefixes: &[String]| {
        prefixes
            .iter()
            .find(|prefix| path.starts_with(Path::new(prefix.as_str())))
            .cloned()
    };
    if let Some(prefix) = under(&config.local.paths) {
        return ("local", format!("under local.paths entry {prefix}"));
    }
    if let Some(prefix) = under(&config.shared.paths) {
        return ("shared", format!("under shared.paths entry {prefix}"));
    }
    if config.shared.fs_types.iter().any(|t| t == fs_type) {
        return ("shared", format!("file system type {fs_type} is in shared.fs_types"));
    }
    ("local", format!("file system type {fs_type} is not in shared.fs_types"))
}

/// Type of the file system holding `path`: the longest mount point that is
/// a prefix of it in `/proc/self/mountinfo` (field 5 is the mount point; the
/// type follows the ` - ` separator).
fn fs_type_of(path: &Path, mountinfo: &str) -> Option<String> {
    mountinfo
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split(' ').collect();
            let mount_point = unescape(fields.get(4)?);
            let separator = fields.iter().position(|f| *f == "-")?;
            let fs_type = fields.get(separator + 1)?;
            path.starts_with(&mount_point)
                .then(|| (mount_point.len(), fs_type.to_string()))
        })
        .max_by_key(|(len, _)| *len)
        .map(|(_, fs_type)| fs_type)
}

/// mountinfo escapes space, tab, newline and backslash as `\ooo`.
fn unescape(field: &str) -> String {
    let mut out = String::new();
    let mut rest = field;
    while let Some(pos) = rest.find('\\') {
        out.push_str(&rest[..pos]);
        match u8::from_str_radix(rest.get(pos + 1..pos + 4).unwrap_or(""), 8) {
            Ok(byte) => {
                out.push(byte as char);
                rest = &rest[pos + 4..];
            }
            Err(_) => {
                out.push('\\');
                rest = &rest[pos + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}
