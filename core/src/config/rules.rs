//! [`Config::io_for`]: the I/O settings of one file.
//!
//! The first rule of `io.rules` that matches the file is used: its glob
//! matches the path and, when the rule names them, the file's file-system
//! type is among `fs_types` and the file was opened in `open_mode`. A rule
//! that names a condition does not match a file for which that fact is
//! unknown. The fields the rule leaves unset come from the `io` and
//! `voting` defaults, never from a later rule. Files that no rule matches
//! get the defaults.

use super::schema::{Config, IoRule, OnMismatch, OpenMode, ReadProtocol, WriteProtocol};

/// What is known about a file when its rule is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileFacts<'a> {
    /// The resolved path.
    pub path: &'a str,
    /// The file system's type, as in `/proc/self/mountinfo`, when known.
    pub fs_type: Option<&'a str>,
    /// The access mode the file is opened with, when known.
    pub open_mode: Option<OpenMode>,
}

impl<'a> FileFacts<'a> {
    /// A file known only by its path.
    pub fn path(path: &'a str) -> FileFacts<'a> {
        FileFacts {
            path,
            fs_type: None,
            open_mode: None,
        }
    }
}

/// The I/O settings that apply to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResolvedIo {
    /// Read protocol.
    pub read: ReadProtocol,
    /// Write protocol.
    pub write: WriteProtocol,
    /// Chunk size in bytes for the chunked protocols.
    pub chunk_size: u64,
    /// Readers for `extended-simple`.
    pub readers: u32,
    /// Whether replicas compare checksums.
    pub voting: bool,
    /// The reaction to a checksum disagreement.
    pub on_mismatch: OnMismatch,
}

impl IoRule {
    /// Whether this rule applies to the file described by `facts`.
    pub fn matches(&self, facts: &FileFacts<'_>) -> bool {
        let fs_ok = match (&self.fs_types, facts.fs_type) {
            (None, _) => true,
            (Some(types), Some(fs)) => types.iter().any(|t| t == fs),
            (Some(_), None) => false,
        };
        let mode_ok = match (self.open_mode, facts.open_mode) {
            (None, _) => true,
            (Some(wanted), Some(mode)) => wanted == mode,
            (Some(_), None) => false,
        };
        fs_ok && mode_ok && self.path.matches(facts.path)
    }
}

impl Config {
    /// The rule that applies to the file: the first that matches.
    pub fn rule_for_file(&self, facts: &FileFacts<'_>) -> Option<&IoRule> {
        self.io.rules.iter().find(|rule| rule.matches(facts))
    }

    /// The rule that applies to `path` when nothing else is known of it.
    pub fn rule_for(&self, path: &str) -> Option<&IoRule> {
        self.rule_for_file(&FileFacts::path(path))
    }

    /// The protocols and parameters for the file (see the module
    /// documentation).
    pub fn io_for(&self, facts: &FileFacts<'_>) -> ResolvedIo {
        let io = &self.io;
        let rule = self.rule_for_file(facts);
        ResolvedIo {
            read: rule.and_then(|r| r.read).unwrap_or(io.read),
            write: rule.and_then(|r| r.write).unwrap_or(io.write),
            chunk_size: rule.and_then(|r| r.chunk_size).unwrap_or(io.chunk_size),
            readers: rule.and_then(|r| r.readers).unwrap_or(io.readers),
            voting: rule.and_then(|r| r.voting).unwrap_or(self.voting.enabled),
            on_mismatch: rule
                .and_then(|r| r.on_mismatch)
                .unwrap_or(self.voting.on_mismatch),
        }
    }

    /// [`io_for`](Config::io_for) a file known only by its path.
    pub fn protocols_for(&self, path: &str) -> ResolvedIo {
        self.io_for(&FileFacts::path(path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(yaml: &str) -> Config {
        Config::from_yaml_str(yaml, "rules.yaml", &|_| None).unwrap()
    }

    #[test]
    fn first_matching_rule_wins_and_falls_back_to_the_defaults() {
        let c = config(
            "version: 1
io:
  read: chained
  write: simple
  chunk_size: 4MiB
  readers: 3
  rules:
    - path: /scratch/**/*.h5
      read: distributed-chunked
      chunk_size: 16MiB
    - path: /scratch/**
      write: none
    - path: '*.log'
      write: distributed
      readers: 2
",
        );
        let defaults = ResolvedIo {
            read: ReadProtocol::Chained,
            write: WriteProtocol::Simple,
            chunk_size: 4 << 20,
            readers: 3,
            voting: true,
            on_mismatch: OnMismatch::Correct,
        };
        let cases: &[(&str, ResolvedIo)] = &[
            (
                "/scratch/run/out.h5",
                ResolvedIo {
                    read: ReadProtocol::DistributedChunked,
                    chunk_size: 16 << 20,
                    ..defaults
                },
            ),
            // The second rule matches too, but the first one wins: write stays the default.
            (
                "/scratch/a/b/c.h5",
                ResolvedIo {
                    read: ReadProtocol::DistributedChunked,
                    chunk_size: 16 << 20,
                    ..defaults
                },
            ),
            (
                "/scratch/run/out.txt",
                ResolvedIo {
                    write: WriteProtocol::None,
                    ..defaults
                },
            ),
            (
                "/scratch/run.log",
                ResolvedIo {
                    write: WriteProtocol::None,
                    ..defaults
                },
            ),
            (
                "/home/u/run.log",
                ResolvedIo {
                    write: WriteProtocol::Distributed,
                    readers: 2,
                    ..defaults
                },
            ),
            ("/home/u/data.bin", defaults),
        ];
        for (path, expected) in cases {
            assert_eq!(c.protocols_for(path), *expected, "{path}");
        }
    }

    #[test]
    fn without_rules_every_path_gets_the_defaults() {
        let c = Config::default();
        let io = c.protocols_for("/anything");
        assert_eq!(io.read, ReadProtocol::Simple);
        assert_eq!(io.write, WriteProtocol::Simple);
        assert_eq!(io.chunk_size, 1 << 20);
        assert_eq!(io.readers, 2);
    }

    #[test]
    fn rules_can_require_a_file_system_type_and_an_open_mode() {
        let c = config(
            "version: 1
voting:
  on_mismatch: error
io:
  rules:
    - path: /data/**
      fs_types: [nfs, nfs4]
      open_mode: read
      read: distributed-chunked
      on_mismatch: warn
    - path: /data/**
      open_mode: write
      write: distributed
      voting: false
    - path: /data/**
      read: chained
",
        );
        let facts = |fs_type, open_mode| FileFacts {
            path: "/data/x",
            fs_type,
            open_mode,
        };
        let nfs_read = c.io_for(&facts(Some("nfs4"), Some(OpenMode::Read)));
        assert_eq!(nfs_read.read, ReadProtocol::DistributedChunked);
        assert_eq!(nfs_read.on_mismatch, OnMismatch::Warn);
        // Another file system, or an unknown one: the first rule does not apply.
        let lustre = c.io_for(&facts(Some("lustre"), Some(OpenMode::Read)));
        assert_eq!(lustre.read, ReadProtocol::Chained);
        assert_eq!(lustre.on_mismatch, OnMismatch::Error);
        assert_eq!(
            c.io_for(&facts(None, Some(OpenMode::Read))).read,
            ReadProtocol::Chained
        );
        let write = c.io_for(&facts(Some("nfs"), Some(OpenMode::Write)));
        assert_eq!(
            (write.write, write.voting),
            (WriteProtocol::Distributed, false)
        );
        // read-write matches neither mode rule.
        let rw = c.io_for(&facts(Some("nfs"), Some(OpenMode::ReadWrite)));
        assert_eq!(
            (rw.read, rw.write, rw.voting),
            (ReadProtocol::Chained, WriteProtocol::Simple, true)
        );
    }
}
