//! The resolved configuration: typed sections with their built-in defaults.
//!
//! These are the types the rest of redio reads. Every value is already
//! checked and converted (sizes in bytes, durations as [`Duration`], enums
//! instead of words), so users of a [`Config`] never parse anything.
//! `Serialize` is derived for [`Config::to_yaml`](crate::config::Config::to_yaml):
//! the field names and order here are the YAML schema, version 1.

use super::emit;
use super::glob::Glob;
use super::named::named_enum;
use serde::Serialize;
use std::path::PathBuf;
use std::time::Duration;

/// File-system types counted as shared when `shared.fs_types` is not given.
pub const DEFAULT_SHARED_FS_TYPES: &[&str] = &[
    "nfs",
    "nfs4",
    "lustre",
    "gpfs",
    "beegfs",
    "cephfs",
    "fuse.sshfs",
    "orangefs",
    "pvfs2",
];

/// The complete configuration of a redio job (schema version 1).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Config {
    /// How many replicas run each logical rank, and how world ranks map onto them.
    pub replication: Replication,
    /// Which paths are on the shared file system.
    pub shared: Shared,
    /// Which paths are always node-local.
    pub local: Local,
    /// Per-replica path rewrites, tried in order.
    pub remap: Vec<Remap>,
    /// Default coordination protocols and per-path rules.
    pub io: Io,
    /// Checksum voting between replicas.
    pub voting: Voting,
    /// Failure detection.
    pub faults: Faults,
    /// Parity across ranks after output is written.
    pub parity: Parity,
    /// Diagnostics of the runtime.
    pub log: Log,
}

/// The `replication` section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Replication {
    /// Replicas per logical rank, 1 to 3 (1 = no redundancy).
    pub degree: u8,
    /// How world ranks are assigned to replicas.
    pub layout: Layout,
    /// The explicit replica map; set exactly when `layout` is [`Layout::Map`].
    #[serde(serialize_with = "emit::escaped_opt")]
    pub map_file: Option<PathBuf>,
    /// Who provides the replica mapping.
    pub source: Source,
}

impl Default for Replication {
    fn default() -> Self {
        Replication {
            degree: 1,
            layout: Layout::Block,
            map_file: None,
            source: Source::Builtin,
        }
    }
}

named_enum! {
    /// How the `N·r` world ranks are assigned to `r` replicas of `N` ranks.
    pub enum Layout ("layout") {
        /// World rank `w` is replica `w / N`, logical rank `w % N`.
        #[default]
        Block = "block",
        /// World rank `w` is replica `w % r`, logical rank `w / r`.
        Cyclic = "cyclic",
        /// The assignment is read from `replication.map_file`.
        Map = "map",
    }
}

named_enum! {
    /// Who provides the replica mapping.
    pub enum Source ("source") {
        /// redio splits `MPI_COMM_WORLD` itself.
        #[default]
        Builtin = "builtin",
        /// An outer layer already hides the replicas and tells redio the mapping.
        External = "external",
    }
}

/// The `shared` section: how a path is recognised as being on the shared file system.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Shared {
    /// Absolute path prefixes that are on the shared file system.
    #[serde(serialize_with = "emit::escaped_all")]
    pub paths: Vec<String>,
    /// File-system types (as in `/proc/self/mountinfo`) counted as shared.
    #[serde(serialize_with = "emit::escaped_all")]
    pub fs_types: Vec<String>,
}

impl Default for Shared {
    fn default() -> Self {
        Shared {
            paths: Vec::new(),
            fs_types: DEFAULT_SHARED_FS_TYPES
                .iter()
                .map(|t| t.to_string())
                .collect(),
        }
    }
}

/// The `local` section.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Local {
    /// Absolute path prefixes that are always node-local, whatever their file system.
    #[serde(serialize_with = "emit::escaped_all")]
    pub paths: Vec<String>,
}

/// One entry of `remap`: paths under `prefix` are rewritten per replica.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Remap {
    /// Absolute path prefix that is rewritten.
    #[serde(serialize_with = "emit::escaped")]
    pub prefix: String,
    /// Replacement; may contain the placeholders `{replica}` and `{rank}`.
    #[serde(serialize_with = "emit::escaped")]
    pub to: String,
}

/// The `io` section: default protocols and per-path rules.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Io {
    /// Read protocol for shared files no rule matches.
    pub read: ReadProtocol,
    /// Write protocol for shared files no rule matches.
    pub write: WriteProtocol,
    /// Chunk size in bytes for the chunked protocols.
    #[serde(serialize_with = "emit::size")]
    pub chunk_size: u64,
    /// Number of replicas that read with `extended-simple`.
    pub readers: u32,
    /// Per-path overrides; the first rule whose glob matches wins.
    pub rules: Vec<IoRule>,
}

impl Default for Io {
    fn default() -> Self {
        Io {
            read: ReadProtocol::Simple,
            write: WriteProtocol::Simple,
            chunk_size: 1 << 20,
            readers: 2,
            rules: Vec::new(),
        }
    }
}

/// One entry of `io.rules`. Unset fields fall back to the `io` and
/// `voting` defaults.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IoRule {
    /// Which paths the rule applies to.
    pub path: Glob,
    /// When set, the rule applies only to files on these file-system types
    /// (as in `/proc/self/mountinfo`).
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "emit::escaped_all_opt"
    )]
    pub fs_types: Option<Vec<String>>,
    /// When set, the rule applies only to files opened in this mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_mode: Option<OpenMode>,
    /// Read protocol for matching paths.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read: Option<ReadProtocol>,
    /// Write protocol for matching paths.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write: Option<WriteProtocol>,
    /// Chunk size in bytes for matching paths.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "emit::size_opt"
    )]
    pub chunk_size: Option<u64>,
    /// Readers for `extended-simple` on matching paths.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub readers: Option<u32>,
    /// Whether replicas compare checksums on matching paths.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub voting: Option<bool>,
    /// The reaction to a checksum disagreement on matching paths.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "emit::named_opt"
    )]
    pub on_mismatch: Option<OnMismatch>,
}

named_enum! {
    /// The access mode a file was opened with (`O_ACCMODE`).
    pub enum OpenMode ("open mode") {
        /// `O_RDONLY`.
        #[default]
        Read = "read",
        /// `O_WRONLY`.
        Write = "write",
        /// `O_RDWR`.
        ReadWrite = "read-write",
    }
}

/// What the replicas do when their checksums disagree: `correct` (the
/// default: a majority corrects the minority; without one, always at r = 2,
/// `error`), `error` (every replica returns EIO; nothing is written),
/// `abort` (the job ends with the report, MPI_Abort) or `warn` (log the
/// report and go on with the majority's data, or replica 0's).
///
/// The protocols' own type: the configuration and the protocols share one
/// definition, which spells the words ([`OnMismatch::name`]).
pub use redio_protocols::OnMismatch;

named_enum! {
    impl OnMismatch ("on_mismatch policy") {
        Correct,
        Error,
        Abort,
        Warn,
    }
}

named_enum! {
    /// How the replicas of one logical rank read a shared file
    /// (the read protocols of Böhm & Engelmann 2012).
    pub enum ReadProtocol ("protocol") {
        /// No coordination: the read passes straight through.
        None = "none",
        /// Every replica reads the same data itself; checksums are compared.
        #[default]
        Simple = "simple",
        /// `io.readers` replicas read; they send the data to the others.
        ExtendedSimple = "extended-simple",
        /// One master replica reads and multicasts the data to the others.
        ReadDistribute = "read-distribute",
        /// One replica reads; the data pass along a point-to-point chain.
        Chained = "chained",
        /// Like `chained`, pipelined in chunks of `io.chunk_size`.
        ChunkedChained = "chunked-chained",
        /// Each replica reads different chunks of `io.chunk_size` and sends them to the others.
        DistributedChunked = "distributed-chunked",
        /// redio chooses per read from its size and whether the replicas
        /// reach one server or one each (docs/protocols.md).
        Auto = "auto",
    }
}

named_enum! {
    /// How the replicas of one logical rank write a shared file
    /// (the write protocols of Böhm & Engelmann 2012).
    pub enum WriteProtocol ("protocol") {
        /// No coordination: the write passes straight through.
        None = "none",
        /// A master replica writes and tells the others the result.
        #[default]
        Simple = "simple",
        /// Each replica writes a different part of the data.
        Distributed = "distributed",
        /// Like `distributed`, each part going into a separate file.
        DistributedSeparate = "distributed-separate",
        /// redio chooses per write between `simple` and `distributed`
        /// (docs/protocols.md).
        Auto = "auto",
    }
}

/// The `voting` section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Voting {
    /// Checksum the replicas compare.
    pub checksum: Checksum,
    /// Whether replicas vote at all.
    pub enabled: bool,
    /// The reaction to a disagreement, unless a rule says otherwise.
    #[serde(serialize_with = "emit::named")]
    pub on_mismatch: OnMismatch,
}

impl Default for Voting {
    fn default() -> Self {
        Voting {
            checksum: Checksum::Crc32,
            enabled: true,
            on_mismatch: OnMismatch::Correct,
        }
    }
}

named_enum! {
    /// The checksum replicas vote on.
    pub enum Checksum ("checksum") {
        /// CRC-32/IEEE (the zlib polynomial).
        #[default]
        Crc32 = "crc32",
    }
}

/// The `faults` section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Faults {
    /// How long a silent replica may stay silent before it is declared dead.
    #[serde(serialize_with = "emit::duration")]
    pub timeout: Duration,
    /// How often replicas signal that they are alive; shorter than `timeout`.
    #[serde(serialize_with = "emit::duration")]
    pub heartbeat: Duration,
    /// A directory on a file system every node sees, where each process
    /// beats every `heartbeat`: peers on other nodes whose beat stops for
    /// `timeout` are dead. `None`: such peers are bounded by deadlines only.
    pub heartbeat_dir: Option<PathBuf>,
    /// What the survivors do when a replica fails.
    pub on_replica_failure: OnReplicaFailure,
}

named_enum! {
    /// What happens to the job when a replica process dies.
    pub enum OnReplicaFailure ("on_replica_failure") {
        /// The failed replica is retired and the survivors finish the job.
        #[default]
        Continue = "continue",
        /// The whole job stops (what happens without redio).
        Abort = "abort",
    }
}

impl Faults {
    /// Whether a job of `degree` replicas outlives the death of a replica
    /// process: it needs a second replica and `on_replica_failure: continue`.
    /// The launcher, the start-up and the fail-over all decide by this.
    pub fn survive_deaths(&self, degree: u32) -> bool {
        degree >= 2 && self.on_replica_failure == OnReplicaFailure::Continue
    }
}

impl Default for Faults {
    fn default() -> Self {
        Faults {
            timeout: Duration::from_secs(10),
            heartbeat: Duration::from_secs(1),
            heartbeat_dir: None,
            on_replica_failure: OnReplicaFailure::Continue,
        }
    }
}

/// The `parity` section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Parity {
    /// Redundancy computed across ranks.
    pub scheme: ParityScheme,
    /// Ranks per redundancy set, at least 2.
    pub set_size: u32,
    /// Parity blocks per set for `rs`; at least 1 and below `set_size`.
    pub rs_parity: u32,
    /// When parity is computed.
    pub when: ParityWhen,
    /// Which files each rank protects: absolute path globs (`*`, `**`,
    /// `?`) that may contain `{rank}` and `{replica}`.
    pub files: Vec<String>,
    /// The failure group of a rank (a template with `{rank}` and
    /// `{replica}`); the host name when unset.
    pub failure_group: Option<String>,
    /// How XOR / RS parity travels between ranks.
    pub engine: ParityEngine,
    /// Where each rank's redundancy file goes (a template with `{rank}`
    /// and `{replica}`); the root of its files when unset.
    #[serde(serialize_with = "emit::escaped_opt")]
    pub dir: Option<String>,
}

impl Default for Parity {
    fn default() -> Self {
        Parity {
            scheme: ParityScheme::None,
            set_size: 8,
            rs_parity: 2,
            when: ParityWhen::Finalize,
            files: Vec::new(),
            failure_group: None,
            engine: ParityEngine::Ring,
            dir: None,
        }
    }
}

named_enum! {
    /// Redundancy computed across ranks (the schemes of redset).
    pub enum ParityScheme ("scheme") {
        /// No parity.
        #[default]
        None = "none",
        /// Metadata only, no redundant data (redset's SINGLE).
        Single = "single",
        /// A full copy on a partner rank.
        Partner = "partner",
        /// One XOR block per set: survives the loss of one rank per set.
        Xor = "xor",
        /// Reed-Solomon with `rs_parity` blocks per set.
        Rs = "rs",
    }
}

named_enum! {
    /// When parity is computed.
    pub enum ParityWhen ("when") {
        /// In `MPI_Finalize`.
        #[default]
        Finalize = "finalize",
        /// At the first application barrier after a rank closed a
        /// matching output file (and at `MPI_Finalize`).
        Close = "close",
        /// Only when the application calls `redio_protect`.
        Manual = "manual",
    }
}

named_enum! {
    /// How XOR / RS parity travels between the ranks of a set.
    pub enum ParityEngine ("engine") {
        /// The pipelined ring (redset's, receiver-driven).
        #[default]
        Ring = "ring",
        /// One `MPI_Reduce_scatter_block` per piece (Gropp et al.).
        ReduceScatter = "reduce_scatter",
    }
}

/// The `log` section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Log {
    /// The most detailed level that is written.
    pub level: LogLevel,
    /// Log file instead of stderr; may contain `{rank}` and `{replica}`.
    #[serde(serialize_with = "emit::escaped_opt")]
    pub file: Option<String>,
}

impl Default for Log {
    fn default() -> Self {
        Log {
            level: LogLevel::Warn,
            file: None,
        }
    }
}

named_enum! {
    /// Log verbosity, from least to most detailed.
    pub enum LogLevel ("level") {
        /// Only errors.
        Error = "error",
        /// Errors and warnings.
        #[default]
        Warn = "warn",
        /// Also progress information.
        Info = "info",
        /// Also details for debugging.
        Debug = "debug",
        /// Everything, including every intercepted call.
        Trace = "trace",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_replicated_job_that_continues_survives_deaths() {
        let mut faults = Faults::default();
        assert!(!faults.survive_deaths(1), "no second replica to go on");
        assert!(faults.survive_deaths(2));
        assert!(faults.survive_deaths(3));
        faults.on_replica_failure = OnReplicaFailure::Abort;
        assert!(!faults.survive_deaths(3), "the user asked to abort");
    }
}
