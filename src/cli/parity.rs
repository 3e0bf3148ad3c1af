//! `redio parity`: inspect redundancy files, and encode, verify or rebuild
//! protected files, either as an MPI job of one process per logical rank
//! (each on its own root directory, see [`super::parity_job`]) or offline
//! (`--offline`: one process, files gathered in one place).
//!
//! Exit codes of `verify`: 0 healthy, 1 damaged but repairable, 2
//! unrecoverable, 3 error (bad arguments, I/O, a refused header path).
//! `rebuild`: 0 healthy or repaired, 2 unrecoverable (nothing written), 3
//! error. A command line the parser rejects (a missing DIR, an unknown
//! option) exits 2 as with every redio command, before anything is read.

use super::flavour::Flavour;
use super::parity_workers;
use clap::{Args, Subcommand};
use redio_parity::format::Header;
use redio_parity::offline::{self, MemberInput, Options, Verdict};
use redio_parity::scheme::Scheme;
use redio_parity::worker_args::Operation;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Exit code for errors (bad arguments, I/O, unsafe headers).
pub const EXIT_ERROR: u8 = 3;

/// The `redio parity` subcommands.
#[derive(Subcommand)]
pub enum ParityCommand {
    /// Print a redundancy file's header.
    Inspect {
        /// The redundancy file (`*.rdp`).
        file: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Check every protected file and redundancy file; exit 0 healthy,
    /// 1 repairable, 2 unrecoverable, 3 error.
    Verify(Offline),
    /// Rebuild damaged or missing files within the scheme's tolerance;
    /// writes nothing if that is exceeded.
    Rebuild(Offline),
    /// Compute redundancy files for the files under each DIR (one DIR per
    /// logical rank, in rank order) or each rank's --root.
    Encode(EncodeArgs),
    /// The MPI worker process of the collective job (started by the
    /// commands above through the MPI launcher; not for direct use).
    #[command(hide = true)]
    Worker {
        /// The job's KEY=VALUE words.
        #[arg(last = true)]
        args: Vec<String>,
    },
}

/// Where the files are, and how the operation runs.
#[derive(Args)]
pub struct Offline {
    /// Work in this process on files gathered in one place, instead of as
    /// an MPI job of one process per logical rank.
    #[arg(long)]
    pub offline: bool,
    /// Redundancy file name prefix.
    #[arg(long, default_value = "redio-parity")]
    pub prefix: String,
    /// Piece size in bytes (memory per pipeline buffer).
    #[arg(long, default_value_t = offline::DEFAULT_PIECE)]
    pub piece: usize,
    /// MPI job: logical ranks (default: the number of DIRs).
    #[arg(short = 'n', long = "ranks")]
    pub ranks: Option<u32>,
    /// MPI job: each rank's root directory, `{rank}` replaced by its
    /// logical rank (e.g. `/scratch/local/ckpt/r0/rank{rank}`), instead of DIRs.
    #[arg(long, conflicts_with = "dirs")]
    pub root: Option<String>,
    /// MPI job: the directory of each rank's redundancy file, `{rank}`
    /// replaced (as `parity.dir` of the run); default: the rank's root.
    #[arg(long, conflicts_with = "offline")]
    pub parity_dir: Option<String>,
    /// MPI job: MPI implementation to launch with (default: $REDIO_MPI, else mpich).
    #[arg(long, value_enum)]
    pub mpi: Option<Flavour>,
    /// MPI job: extra argument for the launcher, e.g. a host file (repeatable).
    #[arg(long = "launcher-arg", allow_hyphen_values = true)]
    pub launcher_args: Vec<std::ffi::OsString>,
    /// One directory for all ranks, or one per logical rank in rank order.
    #[arg(required_unless_present = "root")]
    pub dirs: Vec<PathBuf>,
}

/// Arguments of `redio parity encode`.
#[derive(Args)]
pub struct EncodeArgs {
    #[command(flatten)]
    place: Offline,
    /// single, partner:C, xor or rs:K.
    #[arg(long, default_value = "xor")]
    scheme: String,
    /// Wanted members per set.
    #[arg(long, default_value_t = 8)]
    set_size: usize,
    /// Offline: failure group of each DIR, comma-separated (default: each
    /// DIR its own). MPI job: one template, `{rank}` replaced (default: the
    /// host name), e.g. `node{rank}`.
    #[arg(long, value_delimiter = ',')]
    groups: Vec<String>,
}

/// Runs a `redio parity` subcommand.
pub fn run(cmd: ParityCommand) -> ExitCode {
    let place = match &cmd {
        ParityCommand::Verify(o) | ParityCommand::Rebuild(o) => Some(o),
        ParityCommand::Encode(e) => Some(&e.place),
        _ => None,
    };
    if let Some(Err(e)) = place.map(|o| redio_parity::files::check_prefix(&o.prefix)) {
        return fail("", format!("--prefix: {e}"));
    }
    match &cmd {
        ParityCommand::Verify(o) if !o.offline => {
            return parity_workers::launch(Operation::Verify, o, None)
        }
        ParityCommand::Rebuild(o) if !o.offline => {
            return parity_workers::launch(Operation::Rebuild, o, None)
        }
        ParityCommand::Encode(e) if !e.place.offline => {
            let extra = (e.scheme.clone(), e.set_size, e.groups.join(","));
            return parity_workers::launch(Operation::Encode, &e.place, Some(extra));
        }
        ParityCommand::Worker { args } => return parity_workers::worker(args),
        _ => {}
    }
    super::progress_bar::install();
    match cmd {
        ParityCommand::Inspect { file, json } => inspect(&file, json),
        ParityCommand::Verify(o) => verify(&o),
        ParityCommand::Rebuild(o) => rebuild(&o),
        ParityCommand::Encode(e) => encode(&e),
        ParityCommand::Worker { .. } => ExitCode::from(EXIT_ERROR),
    }
}

fn fail(what: &str, e: impl std::fmt::Display) -> ExitCode {
    let sep = if what.is_empty() { "" } else { " " };
    eprintln!("redio parity{sep}{what}: {e}");
    ExitCode::from(EXIT_ERROR)
}

fn options(o: &Offline) -> Options {
    Options {
        prefix: o.prefix.clone(),
        piece: o.piece,
        // Lines on stderr when it is not a terminal (batch jobs), a bar
        // otherwise (`progress_bar`).
        progress: redio_parity::progress::interval(),
    }
}

fn inspect(file: &Path, json: bool) -> ExitCode {
    let parsed = match offline::inspect(file) {
        Ok(p) => p,
        Err(e) => return fail("inspect", e),
    };
    if let Some(e) = &parsed.copy_a_error {
        eprintln!("redio parity inspect: warning: header copy A is damaged ({e}); showing copy B");
    }
    if json {
        println!("{}", header_json(&parsed.header));
    } else {
        print!("{}", parsed.header.describe());
    }
    ExitCode::SUCCESS
}

/// The header as JSON, for scripts.
fn header_json(h: &Header) -> serde_json::Value {
    serde_json::json!({
        "version": redio_parity::format::VERSION,
        "scheme": match h.scheme {
            Scheme::Single => "single",
            Scheme::Partner { .. } => "partner",
            Scheme::Xor => "xor",
            Scheme::Rs { .. } => "rs",
        },
        "param": h.scheme.param(),
        "tolerance": h.scheme.tolerance(),
        "set_id": h.set_id,
        "set_count": h.set_count,
        "logical_ranks": h.logical_ranks,
        "member": h.member,
        "chunk_size": h.chunk_size,
        "members": h.members.iter().map(|m| serde_json::json!({
            "world_rank": m.world_rank,
            "logical_rank": m.logical_rank,
            "failure_group": m.failure_group,
            "host": m.host,
            // A name that is not UTF-8 is shown with `\xNN` escapes; its
            // exact bytes are in `path_hex` then.
            "files": m.files.iter().map(|f| {
                let mut j = serde_json::json!({
                "path": f.shown(),
                "size": f.size,
                "mode": f.mode,
                "mtime_sec": f.mtime_sec,
                "mtime_nsec": f.mtime_nsec,
                "crc32": format!("{:08x}", f.crc32),
                });
                if std::str::from_utf8(&f.path).is_err() {
                    j["path_hex"] = f.path.iter().map(|b| format!("{b:02x}")).collect::<String>().into();
                }
                j
            }).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "payload": h.payload.iter().map(|c| serde_json::json!({
            "len": c.len,
            "crc32": format!("{:08x}", c.crc32),
        })).collect::<Vec<_>>(),
    })
}

fn print_assessment(a: &offline::Assessment) {
    for f in &a.findings {
        println!("{f}");
    }
    for s in &a.sets {
        for f in &s.findings {
            println!("set {}: {f}", s.set_id);
        }
        let scheme = s
            .header
            .as_ref()
            .map(|h| h.scheme.to_string())
            .unwrap_or_default();
        println!("set {}: {scheme} {:?}", s.set_id, s.verdict);
    }
}

fn verify(o: &Offline) -> ExitCode {
    let opts = options(o);
    let a = match offline::assess(&o.dirs, &opts) {
        Ok(a) => a,
        Err(e) => return fail("verify", e),
    };
    let mut verdict = a.verdict;
    print_assessment(&a);
    for s in &a.sets {
        match offline::recompute_mismatches(s, redio_parity::gf::kernel::best(), &opts) {
            Ok(bad) => {
                for b in &bad {
                    println!("set {}: {b}", s.set_id);
                }
                if !bad.is_empty() {
                    verdict = verdict.max(Verdict::Repairable);
                }
            }
            Err(e) => return fail("verify", e),
        }
    }
    println!(
        "verdict: {}",
        match verdict {
            Verdict::Healthy => "healthy",
            Verdict::Repairable => "repairable (run `redio parity rebuild`)",
            Verdict::Unrecoverable => "unrecoverable",
        }
    );
    ExitCode::from(verdict.exit_code())
}

/// Removes the temporary files that dead runs left under `dirs`, saying
/// so on stderr (issue 44; a live run's are left: `redio_parity::stale`).
fn sweep_stale(op: &str, dirs: &[std::path::PathBuf]) {
    for d in dirs {
        for r in redio_parity::stale::sweep(d, true) {
            eprintln!("redio parity {op}: {r}");
        }
    }
}

fn rebuild(o: &Offline) -> ExitCode {
    sweep_stale("rebuild", &o.dirs);
    match offline::rebuild(&o.dirs, &options(o)) {
        Ok((a, report)) => {
            print_assessment(&a);
            for w in &report.written {
                println!("rebuilt {}", w.display());
            }
            println!("rebuilt {} file(s)", report.written.len());
            ExitCode::SUCCESS
        }
        Err(offline::Error::Unrecoverable(why)) => {
            eprintln!("redio parity rebuild: refused, nothing written: more damage than the scheme tolerates\n{why}");
            ExitCode::from(Verdict::Unrecoverable.exit_code())
        }
        Err(e) => fail("rebuild", e),
    }
}

fn encode(e: &EncodeArgs) -> ExitCode {
    let scheme = match Scheme::parse(&e.scheme) {
        Ok(s) => s,
        Err(err) => return fail("encode", err),
    };
    if !e.groups.is_empty() && e.groups.len() != e.place.dirs.len() {
        return fail(
            "encode",
            format!(
                "--groups has {} entries for {} directories",
                e.groups.len(),
                e.place.dirs.len()
            ),
        );
    }
    sweep_stale("encode", &e.place.dirs);
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default();
    let mut ranks = Vec::new();
    for (r, dir) in e.place.dirs.iter().enumerate() {
        let files = match redio_parity::files::list_protectable(dir, &e.place.prefix) {
            Ok(f) => f,
            Err(err) => return fail("encode", err),
        };
        ranks.push(MemberInput {
            root: dir.clone(),
            files,
            world_rank: r as u32,
            logical_rank: r as u32,
            failure_group: e
                .groups
                .get(r)
                .cloned()
                .unwrap_or_else(|| dir.display().to_string()),
            host: host.clone(),
        });
    }
    let opts = Options {
        prefix: e.place.prefix.clone(),
        piece: e.place.piece,
        // Lines on stderr when it is not a terminal (batch jobs), a bar
        // otherwise (`progress_bar`).
        progress: redio_parity::progress::interval(),
    };
    match offline::encode_job(scheme, e.set_size, &ranks, &opts) {
        Ok(sets) => {
            for (i, s) in sets.iter().enumerate() {
                println!("set {i}: {scheme}, logical ranks {s:?}");
            }
            ExitCode::SUCCESS
        }
        Err(err) => fail("encode", err),
    }
}
