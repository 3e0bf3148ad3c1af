//! `redio bench`: measurements side by side, repeated and interleaved, with
//! results as CSV, JSON and a Markdown table, and PNG plots. Families:
//!
//! - `protocols` (default): the micro-benchmark of Böhm & Engelmann (2012,
//!   section V), every protocol and degree against None at r = 1;
//! - `interposition`: the cost of the hooks on pass-through I/O, against
//!   the same program without redio;
//! - `crc`: the CRC32 that voting and verification pay, against a copy and
//!   against a plain read;
//! - `parity`: the collective `redio parity encode | verify | rebuild`
//!   jobs, with every rebuilt file checked against the lost one.
//!
//! The directory can be node-local storage, a user's NFS/Lustre/GPFS mount,
//! or the emulated cluster's mounts (`cluster/redio-cluster`).
//!
//! Every result records the machine it ran on ([`machine`]): results.json
//! has a `machine` object and results.md begins with the machine block,
//! which `redio bench --machine` prints alone (for the scripts in
//! `benches/` that lay out their own tables). `redio bench --markdown
//! results.json` prints an earlier run's block and table again: the
//! tables of docs/benchmarks.md come from it.

mod crc;
mod interposition;
pub mod machine;
mod markdown;
mod parity;
mod protocols;
mod results;

use super::flavour::Flavour;
use crate::config::parse_size;
use machine::{LoadAverage, Machine};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// The benchmark program (the paper's: one file, one block size).
const IO_LOOP_C: &str = include_str!("../../../benches/io_loop.c");

/// What `redio bench` measures.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// Every protocol and degree against None at r = 1 (the paper's figures).
    Protocols,
    /// Pass-through I/O under redio against the same program without it.
    Interposition,
    /// CRC32 against a copy (in memory) and against a plain read (the file).
    Crc,
    /// Collective parity encode, verify and rebuild (MPI jobs).
    Parity,
}

/// Arguments of `redio bench`.
#[derive(clap::Args)]
pub struct BenchArgs {
    /// What to measure: protocols, interposition, crc or parity.
    #[arg(long, value_enum, default_value = "protocols")]
    pub family: Family,
    /// The directory the application writes and reads (its path as the
    /// application sees it).
    #[arg(long, required_unless_present_any = ["machine", "markdown"])]
    pub dir: Option<PathBuf>,
    /// Per-replica directory, with `{replica}`: the application's `--dir`
    /// is remapped to it for each replica (one server per replica).
    #[arg(long)]
    pub replica_dir: Option<String>,
    /// Label of the storage in the results (e.g. local, nfs, sshfs).
    #[arg(long, default_value = "local")]
    pub kind: String,
    /// Label of the topology in the results (e.g. shared: one server;
    /// separate: one server per replica).
    #[arg(long, default_value = "shared")]
    pub topology: String,
    /// Read protocols to measure (comma-separated).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "simple,chunked-chained,distributed-chunked,auto"
    )]
    pub read: Vec<String>,
    /// Write protocols to measure (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "simple,distributed,auto")]
    pub write: Vec<String>,
    /// Degrees of redundancy (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "1,2,3")]
    pub degrees: Vec<u32>,
    /// Block sizes (comma-separated sizes, e.g. 64KiB,1MiB,16MiB,256MiB);
    /// with `--family parity`, the data per rank.
    #[arg(long, value_delimiter = ',', default_value = "64KiB,1MiB,16MiB,256MiB")]
    pub blocks: Vec<String>,
    /// Bytes per run (at least one block is always moved, so a 256 MiB
    /// block with the default total is one operation on a 256 MiB file).
    #[arg(long, default_value = "256MiB")]
    pub total: String,
    /// Chunk size of the chunked protocols.
    #[arg(long, default_value = "4MiB")]
    pub chunk: String,
    /// Parity schemes to measure with `--family parity` (comma-separated:
    /// xor, rs:K).
    #[arg(long, value_delimiter = ',', default_value = "xor,rs:2")]
    pub schemes: Vec<String>,
    /// Logical ranks (one set) with `--family parity`.
    #[arg(long, default_value_t = 4)]
    pub ranks: u32,
    /// Runs per point (the median is reported, with min and max).
    #[arg(long, default_value_t = 5)]
    pub reps: u32,
    /// Empty the page cache before every read run (needs root), so that
    /// reads reach the storage, as in the paper.
    #[arg(long)]
    pub drop_caches: bool,
    /// Where results go: results.csv, results.json, results.md, plots.
    #[arg(long, default_value = "target/bench")]
    pub out: PathBuf,
    /// Render PNG plots with matplotlib, run by $REDIO_PYTHON (default
    /// python3; scripts/setup.sh installs it into .venv/).
    #[arg(long)]
    pub plot: bool,
    /// MPI implementation (default: $REDIO_MPI, else mpich). With
    /// `--machine`, several may be given (comma-separated).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub mpi: Vec<Flavour>,
    /// Count the bytes on the wire: a shell command that prints two numbers,
    /// the bytes the storage has received and sent so far (on the emulated
    /// cluster: `cluster/redio-cluster traffic --root ROOT`; elsewhere e.g.
    /// a server's NIC counters). Each protocol run records the difference,
    /// received for writes and sent for reads.
    #[arg(long, value_name = "COMMAND")]
    pub traffic: Option<String>,
    /// With `--family protocols`: measure every protocol point once per
    /// variant, a name and the environment of its runs, e.g.
    /// `--variant a:REDIO_LIB_DIR=/builds/a --variant b:REDIO_LIB_DIR=/builds/b`
    /// (two builds of libredio.so) or `--variant novote:REDIO_VOTING_ENABLED=false`
    /// (`NAME:KEY=VALUE[,KEY=VALUE…]`; `NAME:` alone is the plain
    /// environment). Results name them `protocol@NAME`; None at r = 1
    /// runs once, in the plain environment, interleaved with them all.
    #[arg(long = "variant", value_name = "NAME:KEY=VALUE,…")]
    pub variants: Vec<String>,
    /// Longest a single run may take.
    #[arg(long, default_value_t = 600)]
    pub timeout_seconds: u64,
    /// Print the machine block (CPU, its AVX2/AVX-512/GFNI/CRC features,
    /// cores, memory, kernel, MPI version, date, redio commit, load
    /// average) and measure nothing; every benchmark's results.md begins
    /// with the same block.
    #[arg(long)]
    pub machine: bool,
    /// With `--machine`: the load average when the caller's measurement
    /// started (the first numbers of /proc/loadavg then), printed as
    /// "start → now".
    #[arg(long, requires = "machine", value_name = "LOADAVG")]
    pub load_start: Option<String>,
    /// Measure nothing: print the Markdown (machine block and table) of an
    /// earlier run from the results.json it wrote, as pasted into
    /// docs/benchmarks.md.
    #[arg(long, value_name = "RESULTS_JSON", conflicts_with = "machine")]
    pub markdown: Option<PathBuf>,
}

/// One `--variant`: a name and the environment its runs get.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Variant {
    name: String,
    env: Vec<(String, String)>,
}

impl Variant {
    /// Parses `NAME:KEY=VALUE[,KEY=VALUE…]`.
    fn parse(text: &str) -> Result<Variant, String> {
        let bad = |why: &str| format!("--variant {text:?}: {why} (expected NAME:KEY=VALUE,…)");
        let (name, settings) = text.split_once(':').ok_or_else(|| bad("no ':'"))?;
        let name_ok = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !name_ok {
            return Err(bad("the name must be letters, digits, '-' or '_'"));
        }
        let env = settings
            .split(',')
            .filter(|s| !s.is_empty())
            .map(|s| {
                s.split_once('=')
                    .filter(|(k, _)| !k.is_empty())
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .ok_or_else(|| bad(&format!("{s:?} is not KEY=VALUE")))
            })
            .collect::<Result<_, _>>()?;
        Ok(Variant {
            name: name.to_string(),
            env,
        })
    }
}

/// The checked arguments every family works from.
struct Plan {
    flavour: Flavour,
    /// `--dir`, absolute.
    dir: PathBuf,
    /// `--replica-dir`, absolute.
    replica_dir: Option<String>,
    blocks: Vec<u64>,
    total: u64,
    out: PathBuf,
    /// `--variant`s, in order (names unique).
    variants: Vec<Variant>,
}

/// Runs `redio bench`.
pub fn bench(args: BenchArgs) -> ExitCode {
    if args.machine {
        return print_machine(&args);
    }
    if let Some(path) = &args.markdown {
        return match markdown::from_results(path) {
            Ok(md) => {
                print!("{md}");
                ExitCode::SUCCESS
            }
            Err(message) => {
                eprintln!("redio bench: {message}");
                ExitCode::FAILURE
            }
        };
    }
    let outcome = prepare(&args).and_then(|plan| {
        let mut machine = Machine::collect(&[plan.flavour]);
        let samples = match args.family {
            Family::Protocols => protocols::sweep(&args, &plan),
            Family::Interposition => interposition::sweep(&args, &plan),
            Family::Crc => crc::sweep(&args, &plan),
            Family::Parity => parity::sweep(&args, &plan),
        }?;
        machine.finish();
        results::write(&args, &plan, &machine, &samples)?;
        if args.plot {
            results::plot(&args, &plan)?;
        }
        Ok(())
    });
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("redio bench: {message}");
            ExitCode::FAILURE
        }
    }
}

/// `redio bench --machine`: the machine block of `--mpi` (all of them
/// given; else the one a benchmark would use), with the load since
/// `--load-start` if given.
fn print_machine(args: &BenchArgs) -> ExitCode {
    let flavours = if args.mpi.is_empty() {
        match Flavour::resolve(None) {
            Ok(flavour) => vec![flavour],
            Err(message) => {
                eprintln!("redio bench: {message}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        args.mpi.clone()
    };
    let mut machine = Machine::collect(&flavours);
    if let Some(start) = &args.load_start {
        let Some(load) = LoadAverage::parse(start) else {
            eprintln!(
                "redio bench: --load-start {start:?}: expected the three numbers of /proc/loadavg"
            );
            return ExitCode::FAILURE;
        };
        machine.load_start = Some(load);
        machine.finish();
    }
    print!("{}", machine.markdown());
    ExitCode::SUCCESS
}

fn prepare(args: &BenchArgs) -> Result<Plan, String> {
    let flavour = match args.mpi.as_slice() {
        [] => Flavour::resolve(None)?,
        [flavour] => *flavour,
        _ => {
            return Err(
                "--mpi: one implementation per benchmark (several only with --machine)".into(),
            )
        }
    };
    if args.reps == 0 {
        return Err("--reps must be at least 1".into());
    }
    if args.degrees.iter().any(|d| !(1..=3).contains(d)) {
        return Err(format!(
            "--degrees {:?}: each must be 1, 2 or 3",
            args.degrees
        ));
    }
    let size =
        |what: &str, text: &str| parse_size(text).map_err(|e| format!("{what} {text:?}: {e}"));
    let blocks = args
        .blocks
        .iter()
        .map(|b| size("--blocks", b))
        .collect::<Result<Vec<_>, _>>()?;
    if blocks.is_empty() || blocks.contains(&0) {
        return Err("--blocks: give at least one block size above 0".into());
    }
    let total = size("--total", &args.total)?;
    size("--chunk", &args.chunk)?;
    let absolute =
        |path: &Path| std::path::absolute(path).map_err(|e| format!("{}: {e}", path.display()));
    let dir = absolute(args.dir.as_deref().ok_or("--dir is required")?)?;
    let replica_dir = match &args.replica_dir {
        Some(template) if !template.contains("{replica}") => {
            return Err(format!(
                "--replica-dir {template:?} must contain {{replica}}"
            ));
        }
        Some(template) => Some(absolute(Path::new(template))?.display().to_string()),
        None => None,
    };
    let most = args.degrees.iter().copied().max().unwrap_or(1);
    for dir in storage_dirs(&dir, replica_dir.as_deref(), most) {
        if !dir.is_dir() {
            return Err(format!("{}: not a directory", dir.display()));
        }
    }
    std::fs::create_dir_all(args.out.join("configs"))
        .map_err(|e| format!("{}: {e}", args.out.display()))?;
    let out =
        std::fs::canonicalize(&args.out).map_err(|e| format!("{}: {e}", args.out.display()))?;
    let variants = args
        .variants
        .iter()
        .map(|v| Variant::parse(v))
        .collect::<Result<Vec<_>, _>>()?;
    for (i, v) in variants.iter().enumerate() {
        if variants[..i].iter().any(|w| w.name == v.name) {
            return Err(format!("--variant {}: the name is given twice", v.name));
        }
    }
    if !variants.is_empty() && args.family != Family::Protocols {
        return Err("--variant: only with --family protocols".into());
    }
    Ok(Plan {
        flavour,
        dir,
        replica_dir,
        blocks,
        total,
        out,
        variants,
    })
}

/// The directories the storage is reached through: `dir`, or one per
/// replica (of `degree`) with a `replica_dir` template.
fn storage_dirs(dir: &Path, replica_dir: Option<&str>, degree: u32) -> Vec<PathBuf> {
    match replica_dir {
        None => vec![dir.to_path_buf()],
        Some(template) => (0..degree)
            .map(|k| PathBuf::from(template.replace("{replica}", &k.to_string())))
            .collect(),
    }
}

impl Plan {
    /// [`storage_dirs`] for the highest degree of the sweep.
    fn storage(&self, args: &BenchArgs) -> Vec<PathBuf> {
        let most = args.degrees.iter().copied().max().unwrap_or(1);
        storage_dirs(&self.dir, self.replica_dir.as_deref(), most)
    }

    /// The bytes one run moves with blocks of `block` bytes.
    fn total_for(&self, block: u64) -> u64 {
        self.total.max(block)
    }
}

/// Compiles the benchmark program with the flavour's `mpicc`.
fn compile_io_loop(flavour: Flavour, out: &Path) -> Result<PathBuf, String> {
    let source = out.join("io_loop.c");
    let exe = out.join(format!("io_loop.{}", flavour.key()));
    std::fs::write(&source, IO_LOOP_C).map_err(|e| format!("{}: {e}", source.display()))?;
    let mpicc = flavour.compiler()?;
    let mpicc = mpicc.display();
    let status = Command::new(mpicc.to_string())
        .args(["-O2", "-o"])
        .arg(&exe)
        .arg(&source)
        .status()
        .map_err(|e| format!("cannot run {mpicc}: {e} (run scripts/setup.sh)"))?;
    if !status.success() {
        return Err(format!("{mpicc} failed to compile {}", source.display()));
    }
    Ok(exe)
}

/// `command` bounded by `timeout SECONDS`, so that a hung run fails.
fn bounded(command: &Command, seconds: u64) -> Command {
    let mut bounded = Command::new("timeout");
    bounded
        .arg(seconds.to_string())
        .arg(command.get_program())
        .args(command.get_args())
        .stdin(std::process::Stdio::null());
    for (name, value) in command.get_envs() {
        match value {
            Some(value) => bounded.env(name, value),
            None => bounded.env_remove(name),
        };
    }
    bounded
}

/// Runs `command` (bounded) and returns its output, or an error naming
/// `what` with everything the command printed.
fn run_checked(command: &Command, seconds: u64, what: &str) -> Result<String, String> {
    let output = bounded(command, seconds)
        .output()
        .map_err(|e| format!("{what}: cannot start {:?}: {e}", command.get_program()))?;
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    if !output.status.success() {
        return Err(format!(
            "{what} failed ({}):\n{stdout}{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(stdout)
}

/// The loop time the benchmark program printed: every replica's rank 0
/// prints one, and the run lasts as long as the slowest.
fn loop_seconds(stdout: &str, what: &str) -> Result<f64, String> {
    stdout
        .lines()
        .filter_map(|line| line.strip_prefix("seconds ")?.trim().parse::<f64>().ok())
        .reduce(f64::max)
        .ok_or_else(|| format!("no timing in the output of {what}:\n{stdout}"))
}

/// Empties the page cache (root only).
fn drop_caches() -> Result<(), String> {
    // SAFETY: sync has no preconditions.
    unsafe { libc::sync() };
    std::fs::write("/proc/sys/vm/drop_caches", "3\n").map_err(|e| {
        format!("--drop-caches: cannot write /proc/sys/vm/drop_caches ({e}); run as root")
    })
}

#[cfg(test)]
mod tests {
    use super::Variant;

    #[test]
    fn a_variant_is_a_name_and_its_environment() {
        let v = Variant::parse("b:REDIO_LIB_DIR=/builds/b,REDIO_VOTING_ENABLED=false").unwrap();
        assert_eq!(v.name, "b");
        assert_eq!(
            v.env,
            [
                ("REDIO_LIB_DIR".to_string(), "/builds/b".to_string()),
                ("REDIO_VOTING_ENABLED".to_string(), "false".to_string())
            ]
        );
        assert_eq!(Variant::parse("plain:").unwrap().env, []);
        for bad in ["noname", ":K=V", "a b:K=V", "a:K", "a:=V"] {
            let e = Variant::parse(bad).unwrap_err();
            assert!(e.contains("--variant") && e.contains(bad), "{bad}: {e}");
        }
    }
}
