//! redio-parity: lazy redundancy across ranks, without MPI.
//!
//! After the replicas of a job have closed their node-local output, redio
//! computes redundancy data across the ranks of one replica world, so that
//! the files of lost nodes can be rebuilt (Gropp, Ross & Miller 2004; the
//! SINGLE, PARTNER, XOR and RS schemes of LLNL's redset). This crate holds
//! everything that does not need MPI:
//!
//! - [`gf`]: GF(2^8) arithmetic and the bulk kernels (scalar, AVX2, GFNI);
//! - [`matrix`]: the Cauchy matrix and inversion over GF(2^8);
//! - [`scheme`]: SINGLE, PARTNER, XOR, RS and what each tolerates;
//! - [`stripe`]: the XOR / RS codes with the rotating row layout;
//! - [`partner`]: where PARTNER puts its copies;
//! - [`sets`]: redundancy sets with one member per failure group;
//! - [`inmem`]: whole-set encode and rebuild in memory (the reference);
//! - [`format`](mod@format): the versioned redundancy-file format
//!   (`docs/formats.md`);
//! - [`files`]: safe paths under a root, stat and CRC32 of files, atomic
//!   writes;
//! - [`stale`]: the temporary files of dead runs, told from live ones by
//!   their lock, and removed;
//! - [`safe_fs`]: the safe-file layer (regular files only, bounded reads,
//!   no links followed, `O_EXCL` creation relative to a directory);
//! - [`logical`]: reading and writing a member's files as one logical file;
//! - [`redundancy_file`]: one redundancy file on disk: name, header copies,
//!   payload CRC32s, completion;
//! - [`encode`], [`assess`], [`rebuild`]: the verbs over files (apply a
//!   scheme; decide what is lost and verify; rebuild it), with their
//!   [`options`] and [`error`]; used by the CLI and the collective job;
//! - [`offline`]: the front that re-exports those verbs for their callers;
//! - [`repair`]: one member's part of the collective (MPI) rebuild;
//! - [`survivors`]: a survivor's CRC32 checks folded into the reads that
//!   serve a rebuild, so that each byte is read once;
//! - [`worker_args`]: what the collective `redio parity` job is asked to
//!   do, as the `KEY=VALUE` words of `redio parity worker`;
//! - [`progress`]: periodic progress lines with bytes and MB/s;
//! - [`ring`]: the pipelined ring encode over a `Transport` (in-memory
//!   transport here; the MPI one belongs in the preload).

#![warn(missing_docs)]

pub mod assess;
pub mod encode;
pub mod error;
pub mod files;
pub mod format;
pub mod gf;
pub mod inmem;
pub mod logical;
pub mod logical_crc;
pub mod matrix;
pub mod offline;
pub mod options;
pub mod partner;
pub mod progress;
pub mod rebuild;
pub mod redundancy_file;
pub mod repair;
pub mod ring;
pub mod safe_fs;
pub mod scheme;
pub mod sets;
pub mod stale;
pub mod stripe;
pub mod survivors;
pub mod worker_args;
