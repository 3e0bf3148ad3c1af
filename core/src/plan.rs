//! The plan: the configuration as the protocols (`redio-protocols`) and the
//! parity code (`redio-parity`) take it. This is the only place where
//! configuration values become their types; libredio.so asks the plan and
//! translates nothing itself.
//!
//! Where the configuration and another crate mean the same thing by the
//! same values, one type serves both and needs no translation:
//! `voting.on_mismatch` is [`redio_protocols::OnMismatch`] itself
//! ([`config::OnMismatch`](crate::config::OnMismatch) re-exports it). The
//! schema keeps its own enums where the values differ, and the plan
//! translates them:
//!
//! - [`config::ReadProtocol`](crate::config::ReadProtocol) and
//!   [`config::WriteProtocol`](crate::config::WriteProtocol) are the bare
//!   words a user writes. The protocols' types carry their parameters, which
//!   come from other keys (`chunk_size`, `readers`) and from where the
//!   replicas reach the file ([`Placement`]); and `distributed-separate` has
//!   no protocol of its own: it is Distributed Write into per-replica part
//!   files, which the preload keeps ([`FilePlan::separate`]).
//! - [`ParityScheme`] has `none` (no scheme at all), and PARTNER's copies
//!   and Reed-Solomon's parity count come from other keys; a
//!   [`Scheme`] always protects something and carries its parameter.
//! - `voting.checksum` has one value, `crc32`, which is what the protocols
//!   always compute; only `voting.enabled` reaches them
//!   ([`Policy::checksums`]).

use crate::config::{
    OpenMode, Parity, ParityScheme, ReadProtocol as ReadWord, ResolvedIo,
    WriteProtocol as WriteWord,
};
use redio_parity::scheme::Scheme;
use redio_protocols::{Placement, Policy, ReadProtocol, WriteProtocol};

/// How the replicas coordinate one opened file of the shared file system.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FilePlan {
    /// The read protocol, with its parameters.
    pub read: ReadProtocol,
    /// The write protocol, with its parameters (Distributed Write for
    /// `distributed-separate`).
    pub write: WriteProtocol,
    /// Checksum voting and the reaction to a disagreement.
    pub policy: Policy,
    /// Distributed Separate Write: [`write`](FilePlan::write) is
    /// Distributed Write into part files that are joined later. Only with
    /// more than one replica: with one there is nothing to split, and a
    /// part and a join would only copy every byte once more.
    pub separate: bool,
}

impl Default for FilePlan {
    /// The plan of a file when there is no configuration: the built-in
    /// defaults' (Simple Read, Simple Write, voting on, `correct`).
    fn default() -> FilePlan {
        FilePlan {
            read: ReadProtocol::Simple,
            write: WriteProtocol::Simple,
            policy: Policy::default(),
            separate: false,
        }
    }
}

/// The plan of a file whose settings are `io` (from
/// [`Config::io_for`](crate::config::Config::io_for)), reached by the
/// replicas as `placement`, in a job of `degree` replicas per logical rank.
pub fn file(io: &ResolvedIo, placement: Placement, degree: u32) -> FilePlan {
    FilePlan {
        read: read_protocol(io, placement),
        write: write_protocol(io, placement),
        policy: policy(io),
        separate: io.write == WriteWord::DistributedSeparate && degree > 1,
    }
}

/// `io.chunk_size` as the protocols take it.
fn chunk(io: &ResolvedIo) -> usize {
    usize::try_from(io.chunk_size).unwrap_or(usize::MAX)
}

/// The read protocol of `io`, with its parameters.
pub fn read_protocol(io: &ResolvedIo, placement: Placement) -> ReadProtocol {
    let chunk = chunk(io);
    match io.read {
        ReadWord::None => ReadProtocol::None,
        ReadWord::Simple => ReadProtocol::Simple,
        ReadWord::ExtendedSimple => ReadProtocol::ExtendedSimple {
            readers: usize::try_from(io.readers).unwrap_or(usize::MAX),
        },
        ReadWord::ReadDistribute => ReadProtocol::ReadDistribute,
        ReadWord::Chained => ReadProtocol::Chained,
        ReadWord::ChunkedChained => ReadProtocol::ChunkedChained { chunk },
        ReadWord::DistributedChunked => ReadProtocol::DistributedChunked { chunk },
        ReadWord::Auto => ReadProtocol::Auto { chunk, placement },
    }
}

/// The write protocol of `io`, with its parameters. `distributed-separate`
/// is Distributed Write (into part files: see [`FilePlan::separate`]).
pub fn write_protocol(io: &ResolvedIo, placement: Placement) -> WriteProtocol {
    let chunk = chunk(io);
    match io.write {
        WriteWord::None => WriteProtocol::None,
        WriteWord::Simple => WriteProtocol::Simple,
        WriteWord::Distributed | WriteWord::DistributedSeparate => {
            WriteProtocol::Distributed { chunk }
        }
        WriteWord::Auto => WriteProtocol::Auto { chunk, placement },
    }
}

/// The voting policy of `io`: whether replicas compare checksums, and the
/// reaction to a disagreement.
pub fn policy(io: &ResolvedIo) -> Policy {
    Policy {
        checksums: io.voting,
        on_mismatch: io.on_mismatch,
    }
}

/// The access mode of a file opened with `flags` (`open(2)` flags; only
/// `O_ACCMODE` counts), for choosing its rule (`open_mode`). An access
/// mode that is none of the three counts as `read`.
pub fn open_mode(flags: libc::c_int) -> OpenMode {
    match flags & libc::O_ACCMODE {
        libc::O_WRONLY => OpenMode::Write,
        libc::O_RDWR => OpenMode::ReadWrite,
        _ => OpenMode::Read,
    }
}

/// The parity scheme of the `parity` section, or `None` for
/// `scheme: none`. PARTNER keeps one copy; Reed-Solomon has `rs_parity`
/// parity chunks per row (at most 255; validation keeps it below
/// `set_size`).
pub fn parity_scheme(parity: &Parity) -> Option<Scheme> {
    Some(match parity.scheme {
        ParityScheme::None => return None,
        ParityScheme::Single => Scheme::Single,
        ParityScheme::Partner => Scheme::Partner { copies: 1 },
        ParityScheme::Xor => Scheme::Xor,
        ParityScheme::Rs => Scheme::Rs {
            k: u8::try_from(parity.rs_parity).unwrap_or(u8::MAX),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Config, Named, OnMismatch};

    /// The settings of a file with the given protocols, 64 KiB chunks and
    /// 2 readers.
    fn io(read: ReadWord, write: WriteWord) -> ResolvedIo {
        ResolvedIo {
            read,
            write,
            chunk_size: 64 << 10,
            readers: 2,
            voting: true,
            on_mismatch: OnMismatch::Correct,
        }
    }

    #[test]
    fn every_read_word_becomes_its_protocol() {
        let chunk = 64 << 10;
        for placement in [Placement::Shared, Placement::Separate] {
            for &(word, name) in ReadWord::ALL {
                let got = read_protocol(&io(word, WriteWord::Simple), placement);
                let want = match word {
                    ReadWord::None => ReadProtocol::None,
                    ReadWord::Simple => ReadProtocol::Simple,
                    ReadWord::ExtendedSimple => ReadProtocol::ExtendedSimple { readers: 2 },
                    ReadWord::ReadDistribute => ReadProtocol::ReadDistribute,
                    ReadWord::Chained => ReadProtocol::Chained,
                    ReadWord::ChunkedChained => ReadProtocol::ChunkedChained { chunk },
                    ReadWord::DistributedChunked => ReadProtocol::DistributedChunked { chunk },
                    ReadWord::Auto => ReadProtocol::Auto { chunk, placement },
                };
                assert_eq!(got, want, "{name}");
                // Both crates spell the protocol the same way.
                assert_eq!(got.name(), name);
            }
        }
    }

    #[test]
    fn every_write_word_becomes_its_protocol() {
        let chunk = 64 << 10;
        for placement in [Placement::Shared, Placement::Separate] {
            for &(word, name) in WriteWord::ALL {
                let got = write_protocol(&io(ReadWord::Simple, word), placement);
                let want = match word {
                    WriteWord::None => WriteProtocol::None,
                    WriteWord::Simple => WriteProtocol::Simple,
                    WriteWord::Distributed => WriteProtocol::Distributed { chunk },
                    WriteWord::DistributedSeparate => WriteProtocol::Distributed { chunk },
                    WriteWord::Auto => WriteProtocol::Auto { chunk, placement },
                };
                assert_eq!(got, want, "{name}");
                let spelled = match word {
                    WriteWord::DistributedSeparate => "distributed",
                    _ => name,
                };
                assert_eq!(got.name(), spelled);
            }
        }
    }

    #[test]
    fn parameters_come_from_the_file_settings() {
        let mut settings = io(ReadWord::ExtendedSimple, WriteWord::Distributed);
        settings.readers = 3;
        settings.chunk_size = 4 << 20;
        assert_eq!(
            read_protocol(&settings, Placement::Shared),
            ReadProtocol::ExtendedSimple { readers: 3 }
        );
        assert_eq!(
            write_protocol(&settings, Placement::Shared),
            WriteProtocol::Distributed { chunk: 4 << 20 }
        );
        settings.read = ReadWord::DistributedChunked;
        settings.chunk_size = 0;
        assert_eq!(
            read_protocol(&settings, Placement::Separate),
            ReadProtocol::DistributedChunked { chunk: 0 }
        );
    }

    #[test]
    fn separate_only_for_distributed_separate_with_replicas() {
        for &(word, name) in WriteWord::ALL {
            let settings = io(ReadWord::Simple, word);
            for degree in 1..=3 {
                let plan = file(&settings, Placement::Shared, degree);
                let want = word == WriteWord::DistributedSeparate && degree > 1;
                assert_eq!(plan.separate, want, "{name} at r = {degree}");
            }
        }
    }

    #[test]
    fn every_policy_reaches_the_protocols() {
        for &(on_mismatch, name) in OnMismatch::ALL {
            for voting in [true, false] {
                let mut settings = io(ReadWord::Simple, WriteWord::Simple);
                settings.voting = voting;
                settings.on_mismatch = on_mismatch;
                let plan = file(&settings, Placement::Shared, 3);
                assert_eq!(plan.policy.checksums, voting, "{name}");
                assert_eq!(plan.policy.on_mismatch, on_mismatch);
                assert_eq!(plan.policy.on_mismatch.to_string(), name);
            }
        }
    }

    #[test]
    fn on_mismatch_is_one_type_with_its_words() {
        assert_eq!(OnMismatch::names(), "correct, error, abort, warn");
        for &(value, name) in OnMismatch::ALL {
            assert_eq!(OnMismatch::from_name(name), Some(value));
            assert_eq!(value.as_str(), name);
        }
        assert_eq!(OnMismatch::from_name("Warn"), None);
        assert_eq!(OnMismatch::default(), OnMismatch::Correct);
    }

    #[test]
    fn the_default_plan_is_the_default_configuration_s() {
        let config = Config::default();
        let settings = config.protocols_for("/shared/out.dat");
        assert_eq!(file(&settings, Placement::Shared, 1), FilePlan::default());
        assert_eq!(file(&settings, Placement::Separate, 3), FilePlan::default());
    }

    #[test]
    fn a_rule_s_settings_become_the_file_s_plan() {
        let config = Config::from_yaml_str(
            "version: 1
replication:
  degree: 2
io:
  read: chained
  chunk_size: 1MiB
  rules:
    - path: /shared/out/**
      open_mode: write
      write: distributed-separate
      chunk_size: 256KiB
      on_mismatch: warn
    - path: /shared/in/**
      read: auto
      voting: false
",
            "plan.yaml",
            &|_| None,
        )
        .unwrap();
        let facts = |path, open_mode| crate::config::FileFacts {
            path,
            fs_type: None,
            open_mode: Some(open_mode),
        };
        let out = config.io_for(&facts("/shared/out/a", open_mode(libc::O_WRONLY)));
        assert_eq!(
            file(&out, Placement::Shared, 2),
            FilePlan {
                read: ReadProtocol::Chained,
                write: WriteProtocol::Distributed { chunk: 256 << 10 },
                policy: Policy {
                    checksums: true,
                    on_mismatch: OnMismatch::Warn,
                },
                separate: true,
            }
        );
        // Opened for reading, the rule's open_mode does not match.
        let read = config.io_for(&facts("/shared/out/a", open_mode(libc::O_RDONLY)));
        assert_eq!(
            file(&read, Placement::Shared, 2).write,
            WriteProtocol::Simple
        );
        let input = config.io_for(&facts("/shared/in/b", OpenMode::Read));
        assert_eq!(
            file(&input, Placement::Separate, 2),
            FilePlan {
                read: ReadProtocol::Auto {
                    chunk: 1 << 20,
                    placement: Placement::Separate,
                },
                write: WriteProtocol::Simple,
                policy: Policy {
                    checksums: false,
                    on_mismatch: OnMismatch::Correct,
                },
                separate: false,
            }
        );
    }

    #[test]
    fn open_mode_reads_the_access_mode_only() {
        assert_eq!(open_mode(libc::O_RDONLY), OpenMode::Read);
        assert_eq!(open_mode(libc::O_WRONLY), OpenMode::Write);
        assert_eq!(open_mode(libc::O_RDWR), OpenMode::ReadWrite);
        let extra = libc::O_CREAT | libc::O_TRUNC | libc::O_APPEND | libc::O_CLOEXEC;
        assert_eq!(open_mode(libc::O_RDONLY | extra), OpenMode::Read);
        assert_eq!(open_mode(libc::O_WRONLY | extra), OpenMode::Write);
        assert_eq!(open_mode(libc::O_RDWR | extra), OpenMode::ReadWrite);
        // O_ACCMODE itself is no access mode: read, as before.
        assert_eq!(open_mode(libc::O_ACCMODE), OpenMode::Read);
    }

    #[test]
    fn every_parity_scheme_becomes_its_scheme() {
        for &(word, name) in ParityScheme::ALL {
            let parity = Parity {
                scheme: word,
                rs_parity: 3,
                ..Parity::default()
            };
            let want = match word {
                ParityScheme::None => None,
                ParityScheme::Single => Some(Scheme::Single),
                ParityScheme::Partner => Some(Scheme::Partner { copies: 1 }),
                ParityScheme::Xor => Some(Scheme::Xor),
                ParityScheme::Rs => Some(Scheme::Rs { k: 3 }),
            };
            assert_eq!(parity_scheme(&parity), want, "{name}");
        }
        // The default section computes no parity.
        assert_eq!(parity_scheme(&Parity::default()), None);
        // A count beyond what a scheme can hold is clamped, not wrapped.
        let parity = Parity {
            scheme: ParityScheme::Rs,
            rs_parity: 300,
            ..Parity::default()
        };
        assert_eq!(parity_scheme(&parity), Some(Scheme::Rs { k: 255 }));
    }

    #[test]
    fn the_configured_parity_section_becomes_its_scheme() {
        let config = Config::from_yaml_str(
            "version: 1\nparity:\n  scheme: rs\n  set_size: 6\n  rs_parity: 2\n  files: [/l/*]\n",
            "parity.yaml",
            &|_| None,
        )
        .unwrap();
        let scheme = parity_scheme(&config.parity).unwrap();
        assert_eq!(scheme, Scheme::Rs { k: 2 });
        assert!(scheme.validate(config.parity.set_size as usize).is_ok());
    }
}
