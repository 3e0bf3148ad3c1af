//! `redio parity`: inspect redundancy files, and encode, verify or rebuild
//! protected files offline (one process, files gathered in one place).
//!
//! Exit codes of `verify`: 0 healthy, 1 damaged but repairable, 2
//! unrecoverable, 3 error (bad arguments, I/O, a refused header path).
//! `rebuild`: 0 healthy or repaired, 2 unrecoverable (nothing written), 3
//! error. A command line the parser rejects (a missing DIR, an unknown
//! option) exits 2 as with every redio command, before anything is read.

use clap::{Args, Subcommand};
use redio_parity::format::Header;
use redio_parity::offline::{self, MemberInput, Options, Verdict};
use redio_parity::scheme::Scheme;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Exit code for errors (bad arguments, I/O, unsafe headers).
const EXIT_ERROR: u8 = 3;

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
    /// logical rank, in rank order).
    Encode(EncodeArgs),
}

/// Where the files are, for the offline operations.
#[derive(Args)]
pub struct Offline {
    /// Work in this process on files gathered in one place (the only mode
    /// offered by this command so far; the MPI job mode is planned).
    #[arg(long)]
    offline: bool,
    /// Redundancy file name prefix.
    #[arg(long, default_value = "redio-parity")]
    prefix: String,
    /// One directory for all ranks, or one per logical rank in rank order.
    #[arg(required = true)]
    dirs: Vec<PathBuf>,
}

/// Arguments of `redio parity encode --offline`.
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
    /// Failure group of each DIR, comma-separated (default: each DIR its own).
    #[arg(long, value_delimiter = ',')]
    groups: Vec<String>,
    /// Piece size in bytes (memory per pipeline buffer).
    #[arg(long, default_value_t = offline::DEFAULT_PIECE)]
    piece: usize,
}

/// Runs a `redio parity` subcommand.
pub fn run(cmd: ParityCommand) -> ExitCode {
    let place = match &cmd {
        ParityCommand::Verify(o) | ParityCommand::Rebuild(o) => Some(o),
        ParityCommand::Encode(e) => Some(&e.place),
        ParityCommand::Inspect { .. } => None,
    };
    if place.is_some_and(|o| !o.offline) {
        return fail(
            "",
            "only --offline is available so far (one process over files gathered in one place)",
        );
    }
    super::progress_bar::install();
    match cmd {
        ParityCommand::Inspect { file, json } => inspect(&file, json),
        ParityCommand::Verify(o) => verify(&o),
        ParityCommand::Rebuild(o) => rebuild(&o),
        ParityCommand::Encode(e) => encode(&e),
    }
}

fn fail(what: &str, e: impl std::fmt::Display) -> ExitCode {
    let sep = if what.is_empty() { "" } else { " " };
    eprintln!("redio parity{sep}{what}: {e}");
    ExitCode::from(EXIT_ERROR)
}

/// Progress lines every 2 s on stderr when it is not a terminal (batch
/// jobs); a bar otherwise (`progress_bar`).
const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_secs(2);

fn options(o: &Offline) -> Options {
    Options {
        prefix: o.prefix.clone(),
        progress: Some(PROGRESS_EVERY),
        ..Options::default()
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
            "files": m.files.iter().map(|f| serde_json::json!({
                "path": f.path,
                "size": f.size,
                "mode": f.mode,
                "mtime_sec": f.mtime_sec,
                "mtime_nsec": f.mtime_nsec,
                "crc32": format!("{:08x}", f.crc32),
            })).collect::<Vec<_>>(),
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
            Verdict::Repairable => "repairable (run `redio parity rebuild --offline`)",
            Verdict::Unrecoverable => "unrecoverable",
        }
    );
    ExitCode::from(verdict.exit_code())
}

fn rebuild(o: &Offline) -> ExitCode {
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
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default();
    let mut ranks = Vec::new();
    for (r, dir) in e.place.dirs.iter().enumerate() {
        let mut files = Vec::new();
        if let Err(err) = list_files(dir, dir, &e.place.prefix, &mut files) {
            return fail("encode", format!("{}: {err}", dir.display()));
        }
        files.sort();
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
        piece: e.piece,
        progress: Some(PROGRESS_EVERY),
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

/// Regular files under `dir`, relative to `root`, skipping redundancy files
/// and symlinks.
fn list_files(root: &Path, dir: &Path, prefix: &str, out: &mut Vec<String>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let ty = entry.file_type()?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if ty.is_dir() {
            list_files(root, &path, prefix, out)?;
        } else if ty.is_file()
            && !(name.starts_with(prefix) && name.ends_with(".rdp"))
            && !name.contains(".redio-tmp.")
        {
            if let Ok(rel) = path.strip_prefix(root) {
                out.push(rel.to_string_lossy().into_owned());
            }
        }
    }
    Ok(())
}
