//! [`Config::protocols_for`]: the I/O settings of one path.
//!
//! The first rule of `io.rules` whose glob matches the path is used; the
//! fields it leaves unset come from the `io` defaults, never from a later
//! rule. Paths that no rule matches get the defaults.

use super::schema::{Config, IoRule, ReadProtocol, WriteProtocol};

/// The I/O settings that apply to one path.
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
}

impl Config {
    /// The rule that applies to `path`: the first whose glob matches.
    pub fn rule_for(&self, path: &str) -> Option<&IoRule> {
        self.io.rules.iter().find(|rule| rule.path.matches(path))
    }

    /// The protocols and parameters for `path` (see the module documentation).
    pub fn protocols_for(&self, path: &str) -> ResolvedIo {
        let io = &self.io;
        let rule = self.rule_for(path);
        ResolvedIo {
            read: rule.and_then(|r| r.read).unwrap_or(io.read),
            write: rule.and_then(|r| r.write).unwrap_or(io.write),
            chunk_size: rule.and_then(|r| r.chunk_size).unwrap_or(io.chunk_size),
            readers: rule.and_then(|r| r.readers).unwrap_or(io.readers),
        }
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
}
