//! Is a path on the shared file system or node-local, and why.
//!
//! Order of the rules, first match wins:
//! 1. never managed: `/proc`, `/sys`, `/dev`, `/run` (and the MPI runtime's
//!    files, which live there or in `/tmp` under the runtime's own names),
//!    except `/dev/shm`, node-local storage (tmpfs) that applications
//!    write files into: it goes on through the rules below;
//! 2. `local.paths` of the configuration;
//! 3. `shared.paths` of the configuration;
//! 4. the type of the file system that holds the path, looked up in the
//!    mount table (`/proc/self/mountinfo`), against `shared.fs_types`.
//!
//! Pure functions over a parsed mount table, so the CLI (`redio info`) and
//! the preload classify identically and the rules are unit-tested.

use crate::config::Config;
use std::fmt;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Prefixes that are never managed, whatever the configuration says,
/// except [`STORAGE_UNDER_SYSTEM`] (see [`system_prefix`]).
pub const NEVER_MANAGED: &[&str] = &["/proc", "/sys", "/dev", "/run"];

/// Directories under [`NEVER_MANAGED`] prefixes that are file storage
/// (tmpfs), classified like any other path: applications keep files in
/// `/dev/shm`. The MPI libraries' own segments there are created from
/// inside MPI calls or before `MPI_Init`, where nothing is coordinated
/// (docs/interposition.md, "`/dev/shm`").
pub const STORAGE_UNDER_SYSTEM: &[&str] = &["/dev/shm"];

/// The [`NEVER_MANAGED`] prefix that makes `path` a system path, or
/// `None` (not under one, or under [`STORAGE_UNDER_SYSTEM`]). By whole
/// components: `/dev/shmx` is a system path, `/dev/shm/x` is not.
pub fn system_prefix(path: &Path) -> Option<&'static str> {
    if STORAGE_UNDER_SYSTEM
        .iter()
        .any(|storage| path.starts_with(storage))
    {
        return None;
    }
    NEVER_MANAGED
        .iter()
        .copied()
        .find(|prefix| path.starts_with(prefix))
}

/// Where a path lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// On the shared file system: I/O is coordinated among replicas.
    Shared,
    /// Node-local: every replica keeps its own copy, untouched.
    Local,
    /// A system path (`/proc`, `/dev`, …): passed through, never managed.
    System,
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Class::Shared => "shared",
            Class::Local => "local",
            Class::System => "system",
        })
    }
}

/// The class of a path and the rule that decided it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// The class.
    pub class: Class,
    /// File-system type of the mount holding the path (`?` if unknown).
    pub fs_type: String,
    /// Which rule decided, in words, for `redio info` and debug logs.
    pub reason: String,
}

/// One line of the mount table: mount point, file-system type and source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    /// Absolute mount point.
    pub point: PathBuf,
    /// File-system type, e.g. `nfs4`, `ext4`, `fuse.sshfs`.
    pub fs_type: String,
    /// Where the file system comes from, e.g. `server:/export` for NFS, a
    /// device for a disk (`none` when the table has nothing).
    pub source: String,
}

/// Parses the text of `/proc/self/mountinfo`; malformed lines are skipped.
///
/// Field 5 is the mount point (octal-escaped); the type follows the ` - `
/// separator.
pub fn parse_mountinfo(text: &str) -> Vec<Mount> {
    text.lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split(' ').collect();
            let point = unescape_octal(fields.get(4)?);
            let separator = fields.iter().position(|f| *f == "-")?;
            let fs_type = fields.get(separator + 1)?;
            let source = fields
                .get(separator + 2)
                .map_or("none".into(), |s| unescape_octal(s));
            Some(Mount {
                point: PathBuf::from(point),
                fs_type: (*fs_type).to_string(),
                source,
            })
        })
        .collect()
}

/// The mount that holds `path`: the longest mount point containing it.
pub fn mount_of<'m>(path: &Path, mounts: &'m [Mount]) -> Option<&'m Mount> {
    let plain_path = plain(path.as_os_str().as_bytes());
    mounts
        .iter()
        .filter(|mount| contains(&mount.point, path, plain_path))
        .max_by_key(|mount| mount.point.as_os_str().len())
}

/// `path.starts_with(point)` (by whole components), comparing bytes when
/// both are spelled plainly (no `//`, no `.` component, no trailing `/`),
/// as resolved paths and the mount table's points are; `plain_path` says
/// whether `path` is. Every intercepted path call looks for its mount (a
/// component-wise comparison with each mount point was a quarter of
/// `redio run -r 1`'s time in a `stat` loop).
fn contains(point: &Path, path: &Path, plain_path: bool) -> bool {
    let (point_bytes, path_bytes) = (point.as_os_str().as_bytes(), path.as_os_str().as_bytes());
    if !(plain_path && plain(point_bytes)) {
        return path.starts_with(point);
    }
    path_bytes.starts_with(point_bytes)
        && (point_bytes == b"/"
            || path_bytes.len() == point_bytes.len()
            || path_bytes[point_bytes.len()] == b'/')
}

/// An absolute path spelled the one way `Path::components` reads it.
fn plain(path: &[u8]) -> bool {
    path.first() == Some(&b'/')
        && (path.len() == 1 || path.last() != Some(&b'/'))
        && !path.windows(2).any(|w| w == b"//")
        && !path.windows(3).any(|w| w == b"/./")
        && !path.ends_with(b"/.")
}

/// The file-system type of the longest mount point that contains `path`.
pub fn fs_type_of<'m>(path: &Path, mounts: &'m [Mount]) -> Option<&'m str> {
    mount_of(path, mounts).map(|mount| mount.fs_type.as_str())
}

/// Where `path` is stored: its mount's source and type, and the path
/// inside that mount. Two paths with the same storage are the same file,
/// even through different mount points (two nodes mounting one NFS
/// server); paths on different servers, or at different places of one
/// file system, are not.
pub fn storage_of(path: &Path, mounts: &[Mount]) -> (String, String, PathBuf) {
    match mount_of(path, mounts) {
        Some(mount) => (
            mount.source.clone(),
            mount.fs_type.clone(),
            path.strip_prefix(&mount.point)
                .unwrap_or(path)
                .to_path_buf(),
        ),
        None => ("?".into(), "?".into(), path.to_path_buf()),
    }
}

/// [`Verdict::fs_type`] of a path under no known mount.
pub const UNKNOWN_FS_TYPE: &str = "?";

/// Classifies an absolute, symlink-resolved `path`.
pub fn classify(config: &Config, path: &Path, mounts: &[Mount]) -> Verdict {
    let fs_type = fs_type_of(path, mounts)
        .unwrap_or(UNKNOWN_FS_TYPE)
        .to_string();
    let under = |prefixes: &[String]| {
        prefixes
            .iter()
            .find(|prefix| path.starts_with(Path::new(prefix.as_str())))
            .cloned()
    };
    let (class, reason) = if let Some(prefix) = system_prefix(path) {
        (Class::System, format!("system path under {prefix}"))
    } else if let Some(prefix) = under(&config.local.paths) {
        (Class::Local, format!("under local.paths entry {prefix}"))
    } else if let Some(prefix) = under(&config.shared.paths) {
        (Class::Shared, format!("under shared.paths entry {prefix}"))
    } else if config.shared.fs_types.contains(&fs_type) {
        (
            Class::Shared,
            format!("file system type {fs_type} is in shared.fs_types"),
        )
    } else {
        (
            Class::Local,
            format!("file system type {fs_type} is not in shared.fs_types"),
        )
    };
    Verdict {
        class,
        fs_type,
        reason,
    }
}

/// Applies the first `remap` entry whose prefix contains `path`: the
/// per-replica path the file really has (`None`: no entry applies).
///
/// The prefix matches whole components (`/local` does not match `/localx`).
/// A path already inside this replica's target is left alone: a directory
/// opened through the remap has its real (remapped) path, and files opened
/// relative to it must not be remapped twice (`to` may lie under `prefix`).
pub fn remap(config: &Config, path: &Path, replica: u32, rank: u32) -> Option<PathBuf> {
    config.remap.iter().find_map(|entry| {
        let rest = path.strip_prefix(&entry.prefix).ok()?;
        let target = crate::config::expand_placeholders(&entry.to, replica, rank);
        if path.starts_with(&target) {
            return None;
        }
        Some(if rest.as_os_str().is_empty() {
            PathBuf::from(target)
        } else {
            Path::new(&target).join(rest)
        })
    })
}

/// The inverse of [`remap`]: the path as the application names it, for a
/// real path inside this replica's target of a `remap` entry (`None`:
/// none applies). A descriptor's path in `/proc/self/fd` is the real one;
/// this gives back the name every replica shares.
pub fn unremap(config: &Config, path: &Path, replica: u32, rank: u32) -> Option<PathBuf> {
    config.remap.iter().find_map(|entry| {
        let target = crate::config::expand_placeholders(&entry.to, replica, rank);
        let rest = path.strip_prefix(&target).ok()?;
        Some(if rest.as_os_str().is_empty() {
            PathBuf::from(&entry.prefix)
        } else {
            Path::new(&entry.prefix).join(rest)
        })
    })
}

/// mountinfo escapes space, tab, newline and backslash as `\ooo`.
fn unescape_octal(field: &str) -> String {
    let mut out = Vec::with_capacity(field.len());
    let bytes = field.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes
            .get(i + 1..i + 4)
            .and_then(|digits| std::str::from_utf8(digits).ok())
            .and_then(|digits| u8::from_str_radix(digits, 8).ok());
        match (bytes[i], octal) {
            (b'\\', Some(byte)) => {
                out.push(byte);
                i += 4;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
22 1 254:0 / / rw,relatime - ext4 /dev/vda rw
30 22 0:26 / /proc rw - proc proc rw
41 22 0:40 / /scratch rw - nfs4 server:/export rw,vers=4.2
42 41 0:41 / /scratch/local\\040disk rw - tmpfs tmpfs rw
43 22 0:42 / /home rw - fuse.sshfs host:/home rw
bad line
";

    #[test]
    fn a_mount_contains_a_path_exactly_when_path_starts_with_says_so() {
        let points = [
            "/",
            "/scratch",
            "/scratch/local disk",
            "/a/b",
            "/a/b/",
            "/a//b",
            "/a/./b",
        ];
        let paths = [
            "/",
            "/scratch",
            "/scratch/",
            "/scratchy",
            "/scratch/x",
            "/scratch//x",
            "/scratch/./x",
            "/scratch/.",
            "/scratch/local disk/f",
            "/scratch/local diskx",
            "/a/b",
            "/a/bc",
            "/a/b/c",
            "/a//b/c",
            "/a/./b/c",
            "/a/b/..",
            "/a/../a/b",
        ];
        for point in points {
            for path in paths {
                let plain_path = plain(path.as_bytes());
                assert_eq!(
                    contains(Path::new(point), Path::new(path), plain_path),
                    Path::new(path).starts_with(point),
                    "{point} contains {path}?"
                );
            }
        }
    }

    fn config(local: &[&str], shared: &[&str]) -> Config {
        let mut config = Config::default();
        config.local.paths = local.iter().map(|s| s.to_string()).collect();
        config.shared.paths = shared.iter().map(|s| s.to_string()).collect();
        config
    }

    #[test]
    fn mountinfo_is_parsed_and_unescaped() {
        let mounts = parse_mountinfo(MOUNTINFO);
        assert_eq!(mounts.len(), 5);
        assert_eq!(mounts[3].point, PathBuf::from("/scratch/local disk"));
        assert_eq!(mounts[3].fs_type, "tmpfs");
        assert_eq!(mounts[2].source, "server:/export");
    }

    #[test]
    fn one_server_through_two_mount_points_is_one_storage() {
        let text = "\
22 1 254:0 / / rw - ext4 /dev/vda rw
50 22 0:50 / /c/replica0 rw - fuse.nfs 10.0.0.1:/export rw
51 22 0:51 / /c/replica1 rw - fuse.nfs 10.0.0.1:/export rw
52 22 0:52 / /c/replica2 rw - fuse.nfs 10.0.0.2:/export rw
";
        let mounts = parse_mountinfo(text);
        let at = |p: &str| storage_of(Path::new(p), &mounts);
        assert_eq!(at("/c/replica0/out/a"), at("/c/replica1/out/a"));
        assert_ne!(
            at("/c/replica0/out/a"),
            at("/c/replica2/out/a"),
            "another server"
        );
        assert_ne!(at("/c/replica0/out/a"), at("/c/replica0/out/b"));
        assert_ne!(at("/tmp/r0/a"), at("/tmp/r1/a"), "one disk, two places");
    }

    #[test]
    fn longest_mount_point_wins() {
        let mounts = parse_mountinfo(MOUNTINFO);
        let type_of = |p: &str| fs_type_of(Path::new(p), &mounts);
        assert_eq!(type_of("/scratch/run/out.dat"), Some("nfs4"));
        assert_eq!(type_of("/scratch/local disk/x"), Some("tmpfs"));
        assert_eq!(type_of("/scratchy"), Some("ext4"), "prefix is by component");
        assert_eq!(type_of("/home/u/f"), Some("fuse.sshfs"));
    }

    #[test]
    fn rules_apply_in_order() {
        let mounts = parse_mountinfo(MOUNTINFO);
        let cfg = config(&["/scratch/tmp"], &["/data"]);
        let class = |p: &str| classify(&cfg, Path::new(p), &mounts).class;
        assert_eq!(class("/proc/self/maps"), Class::System);
        assert_eq!(class("/dev/null"), Class::System);
        assert_eq!(class("/dev/shmx"), Class::System, "by component");
        assert_eq!(class("/dev/shm/x"), Class::Local, "tmpfs is node-local");
        assert_eq!(class("/dev/shm"), Class::Local);
        assert_eq!(
            class("/scratch/tmp/a"),
            Class::Local,
            "local.paths beats fs type"
        );
        assert_eq!(class("/scratch/out"), Class::Shared, "nfs4 is shared");
        assert_eq!(class("/data/in"), Class::Shared, "shared.paths on ext4");
        assert_eq!(class("/home/u/f"), Class::Shared, "fuse.sshfs is shared");
        assert_eq!(class("/tmp/x"), Class::Local);
        assert_eq!(class("/scratch/local disk/x"), Class::Local);
    }

    #[test]
    fn remap_rewrites_whole_components_per_replica() {
        let cfg = Config {
            remap: vec![crate::config::Remap {
                prefix: "/local".into(),
                to: "/tmp/redio/r{replica}/n{rank}".into(),
            }],
            ..Config::default()
        };
        let remap = |p: &str| remap(&cfg, Path::new(p), 2, 5);
        assert_eq!(
            remap("/local/a/b"),
            Some(PathBuf::from("/tmp/redio/r2/n5/a/b"))
        );
        assert_eq!(remap("/local"), Some(PathBuf::from("/tmp/redio/r2/n5")));
        assert_eq!(remap("/localx/a"), None);
        assert_eq!(remap("/other"), None);
    }

    #[test]
    fn remap_does_not_apply_twice() {
        let cfg = Config {
            remap: vec![crate::config::Remap {
                prefix: "/local".into(),
                to: "/local/r{replica}".into(),
            }],
            ..Config::default()
        };
        let remap = |p: &str| remap(&cfg, Path::new(p), 1, 0);
        assert_eq!(remap("/local/x"), Some(PathBuf::from("/local/r1/x")));
        assert_eq!(remap("/local/r1/x"), None, "already this replica's path");
        assert_eq!(remap("/local/r1"), None);
    }

    #[test]
    fn unremap_gives_back_the_applications_name() {
        let cfg = Config {
            remap: vec![crate::config::Remap {
                prefix: "/scratch".into(),
                to: "/mnt/r{replica}/n{rank}".into(),
            }],
            ..Config::default()
        };
        for path in ["/scratch/a/b", "/scratch"] {
            let real = remap(&cfg, Path::new(path), 2, 5).unwrap();
            assert_eq!(unremap(&cfg, &real, 2, 5), Some(PathBuf::from(path)));
        }
        assert_eq!(unremap(&cfg, Path::new("/mnt/r1/n5/a"), 2, 5), None);
        assert_eq!(unremap(&cfg, Path::new("/other"), 2, 5), None);
        let nested = Config {
            remap: vec![crate::config::Remap {
                prefix: "/local".into(),
                to: "/local/r{replica}".into(),
            }],
            ..Config::default()
        };
        assert_eq!(
            unremap(&nested, Path::new("/local/r1/x"), 1, 0),
            Some(PathBuf::from("/local/x"))
        );
    }

    #[test]
    fn verdict_explains_itself() {
        let mounts = parse_mountinfo(MOUNTINFO);
        let verdict = classify(&config(&[], &[]), Path::new("/scratch/a"), &mounts);
        assert_eq!(verdict.fs_type, "nfs4");
        assert_eq!(
            verdict.reason,
            "file system type nfs4 is in shared.fs_types"
        );
    }
}
