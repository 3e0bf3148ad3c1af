//! Which files a rank protects: `parity.files` globs (with `{rank}` and
//! `{replica}` expanded) matched against the files on disk, and the root
//! the header paths are relative to.

use redio_core::config::{expand_placeholders, Glob};
use redio_parity::files::is_redio_file;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// A rank's files: the root, and the matching paths relative to it, sorted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    /// The longest directory every pattern's literal part shares.
    pub root: PathBuf,
    /// Matching regular files, relative to `root`, sorted (the file
    /// system's bytes: a name need not be UTF-8).
    pub files: Vec<Vec<u8>>,
}

/// The directory part of `pattern` before its first wildcard component.
fn literal_dir(pattern: &str) -> PathBuf {
    let mut dir = PathBuf::from("/");
    let parts: Vec<&str> = pattern.split('/').filter(|c| !c.is_empty()).collect();
    for (i, c) in parts.iter().enumerate() {
        // The last component names files, never the directory to walk.
        if c.contains(['*', '?']) || i + 1 == parts.len() {
            break;
        }
        dir.push(c);
    }
    dir
}

/// The longest common ancestor of `dirs`.
fn common_dir(dirs: &[PathBuf]) -> PathBuf {
    let mut out: Option<PathBuf> = None;
    for d in dirs {
        out = Some(match out {
            None => d.clone(),
            Some(o) => o
                .components()
                .zip(d.components())
                .take_while(|(a, b)| a == b)
                .map(|(a, _)| a)
                .collect(),
        });
    }
    out.unwrap_or_else(|| PathBuf::from("/"))
}

/// Collects the regular files under `dir` (recursively, not following
/// symlinks) whose path matches one of `globs`.
fn walk(dir: &Path, globs: &[Glob], prefix: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        let Ok(kind) = e.file_type() else { continue };
        if kind.is_dir() {
            walk(&path, globs, prefix, out);
        } else if kind.is_file() {
            let name = e.file_name().to_string_lossy().into_owned();
            let text = path.to_string_lossy();
            if !is_redio_file(&name, prefix) && globs.iter().any(|g| g.matches(&text)) {
                out.push(path);
            }
        }
    }
}

/// The files of logical rank `rank` in replica `replica` that `patterns`
/// select. Patterns must be absolute.
pub fn select(
    patterns: &[String],
    replica: u32,
    rank: u32,
    prefix: &str,
) -> Result<Selection, String> {
    let mut globs = Vec::new();
    let mut dirs = Vec::new();
    for p in patterns {
        let text = expand_placeholders(p, replica, rank);
        if !text.starts_with('/') {
            return Err(format!("parity.files: \"{p}\" is not an absolute path"));
        }
        globs.push(Glob::new(&text).map_err(|e| format!("parity.files: \"{p}\": {e}"))?);
        dirs.push(literal_dir(&text));
    }
    let root = common_dir(&dirs);
    let mut found = Vec::new();
    for d in &dirs {
        walk(d, &globs, prefix, &mut found);
    }
    found.sort();
    found.dedup();
    let files = found
        .iter()
        .filter_map(|f| f.strip_prefix(&root).ok())
        .map(|r| r.as_os_str().as_bytes().to_vec())
        .collect();
    Ok(Selection { root, files })
}

/// The root of an explicit list of absolute files (`redio_protect`): their
/// common directory, and their paths relative to it, in the given order.
pub fn explicit(paths: &[PathBuf]) -> Result<Selection, String> {
    let mut dirs = Vec::new();
    for p in paths {
        if !p.is_absolute() {
            return Err(format!("{}: not an absolute path", p.display()));
        }
        dirs.push(p.parent().unwrap_or(Path::new("/")).to_path_buf());
    }
    let root = common_dir(&dirs);
    let files = paths
        .iter()
        .filter_map(|f| f.strip_prefix(&root).ok())
        .map(|r| r.as_os_str().as_bytes().to_vec())
        .collect();
    Ok(Selection { root, files })
}
