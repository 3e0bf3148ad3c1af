//! `redio bench`: the protocol micro-benchmark of Böhm & Engelmann (2012,
//! section V) on any directory: one file read or written in blocks of a
//! given size, under each protocol and degree, side by side with None at
//! r = 1, repeated, with results as CSV, JSON and a Markdown table, and
//! plots in the layout of the paper's Figures 10–13.
//!
//! The directory can be node-local storage, a user's NFS/Lustre/GPFS mount,
//! or the emulated cluster's mounts (`cluster/redio-cluster`). With
//! `--replica-dir TEMPLATE` each replica reaches the file through its own
//! directory (`{replica}` in TEMPLATE), as with one server per replica.

use super::mpi::Flavour;
use crate::config::parse_size;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Duration;

/// The benchmark program (the paper's: one file, one block size).
const IO_LOOP_C: &str = include_str!("../../benches/io_loop.c");
/// The plotting script (matplotlib), run when `--plot` is given.
const PLOT_PY: &str = include_str!("../../benches/plot_bench.py");

/// Arguments of `redio bench`.
#[derive(clap::Args)]
pub struct BenchArgs {
    /// The directory the application writes and reads (its path as the
    /// application sees it).
    #[arg(long)]
    pub dir: PathBuf,
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
    /// Block sizes (comma-separated sizes, e.g. 64KiB,1MiB,16MiB,256MiB).
    #[arg(long, value_delimiter = ',', default_value = "64KiB,1MiB,16MiB,256MiB")]
    pub blocks: Vec<String>,
    /// Bytes per run (at least 2 blocks are always moved).
    #[arg(long, default_value = "256MiB")]
    pub total: String,
    /// Chunk size of the chunked protocols.
    #[arg(long, default_value = "4MiB")]
    pub chunk: String,
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
    /// MPI implementation (default: $REDIO_MPI, else mpich).
    #[arg(long, value_enum)]
    pub mpi: Option<Flavour>,
    /// Longest a single run may take.
    #[arg(long, default_value_t = 600)]
    pub timeout_seconds: u64,
}

/// One measured run.
#[derive(Debug, Clone)]
struct Sample {
    mode: &'static str,
    protocol: String,
    degree: u32,
    block: u64,
    total: u64,
    seconds: f64,
}

/// The resolved plan of a sweep.
struct Plan {
    flavour: Flavour,
    /// `--dir`, absolute.
    dir: PathBuf,
    /// `--replica-dir`, absolute.
    replica_dir: Option<String>,
    blocks: Vec<u64>,
    total: u64,
    out: PathBuf,
    exe: PathBuf,
}

/// Runs `redio bench`.
pub fn bench(args: BenchArgs) -> ExitCode {
    match sweep(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("redio bench: {message}");
            ExitCode::FAILURE
        }
    }
}

fn sweep(args: &BenchArgs) -> Result<(), String> {
    let plan = prepare(args)?;
    println!("{}", calibrate(args, &plan)?);
    let most = args.degrees.iter().copied().max().unwrap_or(1);
    let seed = config(args, &plan, "seed", "none", "none")?;
    let mut samples = Vec::new();
    for (mode, protocols) in [("write", &args.write), ("read", &args.read)] {
        if mode == "read" {
            // Every read needs the whole file on every replica's storage
            // (with a server per replica, the write protocols left parts
            // of it on each): written again with protocol none.
            run_once(
                args,
                &plan,
                &seed,
                most,
                "write",
                plan.blocks[0],
                plan.total,
            )?;
        }
        for &block in &plan.blocks {
            let total = plan.total.max(2 * block);
            let mut variants = vec![("none".to_string(), 1)];
            for protocol in protocols {
                for &degree in &args.degrees {
                    variants.push((protocol.clone(), degree));
                }
            }
            // Interleaved: every repetition runs every variant once.
            for _ in 0..args.reps {
                for (protocol, degree) in &variants {
                    let (read, write) = if mode == "read" {
                        (protocol.as_str(), "none")
                    } else {
                        ("none", protocol.as_str())
                    };
                    let cfg = config(args, &plan, &format!("{mode}-{protocol}"), read, write)?;
                    if mode == "read" && args.drop_caches {
                        drop_caches()?;
                    }
                    let seconds = run_once(args, &plan, &cfg, *degree, mode, block, total)?;
                    eprintln!(
                        "{mode} {protocol} r={degree} block {block}: {seconds:.3} s ({:.0} MiB/s)",
                        total as f64 / seconds / f64::from(1 << 20)
                    );
                    samples.push(Sample {
                        mode,
                        protocol: protocol.clone(),
                        degree: *degree,
                        block,
                        total,
                        seconds,
                    });
                }
            }
        }
    }
    write_results(args, &plan, &samples)?;
    if args.plot {
        plot(&plan)?;
    }
    Ok(())
}

fn prepare(args: &BenchArgs) -> Result<Plan, String> {
    let flavour = Flavour::resolve(args.mpi)?;
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
    let dir = absolute(&args.dir)?;
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
    let exe = compile_io_loop(flavour, &out)?;
    Ok(Plan {
        flavour,
        dir,
        replica_dir,
        blocks,
        total,
        out,
        exe,
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
}

/// Compiles the benchmark program with the flavour's `mpicc`.
fn compile_io_loop(flavour: Flavour, out: &Path) -> Result<PathBuf, String> {
    let source = out.join("io_loop.c");
    let exe = out.join(format!("io_loop.{}", flavour.key()));
    std::fs::write(&source, IO_LOOP_C).map_err(|e| format!("{}: {e}", source.display()))?;
    let mpicc = format!("mpicc.{}", flavour.key());
    let status = Command::new(&mpicc)
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

/// Writes the configuration of one variant and returns its path.
fn config(
    args: &BenchArgs,
    plan: &Plan,
    name: &str,
    read: &str,
    write: &str,
) -> Result<PathBuf, String> {
    let mut yaml = String::from("version: 1\nshared:\n  paths:\n");
    let mut dirs = vec![plan.dir.clone()];
    dirs.extend(plan.storage(args));
    for dir in dirs {
        let _ = writeln!(yaml, "    - {:?}", dir.display().to_string());
    }
    if let Some(template) = &plan.replica_dir {
        let _ = write!(
            yaml,
            "remap:\n  - prefix: {:?}\n    to: {:?}\n",
            plan.dir.display().to_string(),
            template
        );
    }
    let _ = write!(
        yaml,
        "io:\n  read: {read}\n  write: {write}\n  chunk_size: {}\n",
        args.chunk
    );
    let path = plan.out.join("configs").join(format!("{name}.yaml"));
    std::fs::write(&path, yaml).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}

/// One run; returns the slowest replica's loop time in seconds.
fn run_once(
    args: &BenchArgs,
    plan: &Plan,
    config: &Path,
    degree: u32,
    mode: &str,
    block: u64,
    total: u64,
) -> Result<f64, String> {
    let redio = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut command = Command::new("timeout");
    command
        .arg(args.timeout_seconds.to_string())
        .arg(redio)
        .args(["run", "--mpi", plan.flavour.key(), "-n", "1", "-r"])
        .arg(degree.to_string())
        .arg("--config")
        .arg(config)
        .arg("--")
        .arg(&plan.exe)
        .arg(mode)
        .arg(&plan.dir)
        .arg(block.to_string())
        .arg(total.to_string())
        .stdin(Stdio::null());
    let output = command
        .output()
        .map_err(|e| format!("cannot start redio run: {e}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        return Err(format!(
            "{mode} r={degree} block {block} with {} failed ({}):\n{stdout}{}",
            config.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    // Every replica's rank 0 prints its loop time; the run lasts as long
    // as the slowest.
    stdout
        .lines()
        .filter_map(|line| line.strip_prefix("seconds ")?.trim().parse::<f64>().ok())
        .reduce(f64::max)
        .ok_or_else(|| format!("no timing in the output of a {mode} run:\n{stdout}"))
}

fn drop_caches() -> Result<(), String> {
    // SAFETY: sync has no preconditions.
    unsafe { libc::sync() };
    std::fs::write("/proc/sys/vm/drop_caches", "3\n").map_err(|e| {
        format!("--drop-caches: cannot write /proc/sys/vm/drop_caches ({e}); run as root")
    })
}

/// One line: the throughput one client reaches alone through each storage
/// directory, writing then reading `--total` bytes (cache dropped before
/// the read when `--drop-caches`).
fn calibrate(args: &BenchArgs, plan: &Plan) -> Result<String, String> {
    let mut parts = Vec::new();
    let block = vec![0x5au8; 1 << 20];
    for dir in plan.storage(args) {
        let path = dir.join(".redio-bench-calibration");
        let mb = |seconds: f64| plan.total as f64 / seconds / 1e6;
        let start = std::time::Instant::now();
        {
            use std::io::Write;
            let mut file =
                std::fs::File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let mut done = 0;
            while done < plan.total {
                file.write_all(&block)
                    .map_err(|e| format!("{}: {e}", path.display()))?;
                done += block.len() as u64;
            }
            file.sync_all()
                .map_err(|e| format!("{}: {e}", path.display()))?;
        }
        let write = mb(start.elapsed().as_secs_f64());
        if args.drop_caches {
            drop_caches()?;
        }
        let start = std::time::Instant::now();
        let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let read = mb(start.elapsed().as_secs_f64());
        drop(bytes);
        let _ = std::fs::remove_file(&path);
        parts.push(format!(
            "{} write {write:.0} MB/s read {read:.0} MB/s",
            dir.display()
        ));
    }
    std::thread::sleep(Duration::from_millis(10));
    Ok(format!(
        "calibration: {} (1 client, {} bytes): {}",
        args.kind,
        plan.total,
        parts.join("; ")
    ))
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

fn write_results(args: &BenchArgs, plan: &Plan, samples: &[Sample]) -> Result<(), String> {
    let topology = &args.topology;
    let mut csv =
        String::from("kind,topology,mode,protocol,degree,block,total,seconds,mib_per_s\n");
    let mut json = String::from("[\n");
    for (i, s) in samples.iter().enumerate() {
        let rate = s.total as f64 / s.seconds / f64::from(1 << 20);
        let _ = writeln!(
            csv,
            "{},{topology},{},{},{},{},{},{:.6},{rate:.1}",
            args.kind, s.mode, s.protocol, s.degree, s.block, s.total, s.seconds
        );
        let _ = writeln!(
            json,
            "  {{\"kind\": {:?}, \"topology\": \"{topology}\", \"mode\": \"{}\", \"protocol\": {:?}, \
             \"degree\": {}, \"block\": {}, \"total\": {}, \"seconds\": {:.6}, \"mib_per_s\": {rate:.1}}}{}",
            args.kind,
            s.mode,
            s.protocol,
            s.degree,
            s.block,
            s.total,
            s.seconds,
            if i + 1 < samples.len() { "," } else { "" }
        );
    }
    json.push_str("]\n");
    let mut md = String::from(
        "| mode | block | protocol | r | median MiB/s | min–max MiB/s | vs None r=1 |\n\
         |---|---|---|---|---|---|---|\n",
    );
    // Each point once, in the order first measured, writes before reads.
    let mut points: Vec<(&str, u64, &str, u32)> = Vec::new();
    for s in samples {
        let point = (s.mode, s.block, s.protocol.as_str(), s.degree);
        if !points.contains(&point) {
            points.push(point);
        }
    }
    points.sort_by_key(|p| (p.0 != "write", p.1));
    let rates = |mode: &str, block: u64, protocol: &str, degree: u32| -> Vec<f64> {
        samples
            .iter()
            .filter(|s| {
                s.mode == mode && s.block == block && s.protocol == protocol && s.degree == degree
            })
            .map(|s| s.total as f64 / s.seconds / f64::from(1 << 20))
            .collect()
    };
    for (mode, block, protocol, degree) in points {
        let mut mine = rates(mode, block, protocol, degree);
        let mut base = rates(mode, block, "none", 1);
        let (lo, hi) = mine
            .iter()
            .fold((f64::MAX, 0f64), |(lo, hi), &r| (lo.min(r), hi.max(r)));
        let m = median(&mut mine);
        let b = median(&mut base);
        let _ = writeln!(
            md,
            "| {mode} | {} | {protocol} | {degree} | {m:.0} | {lo:.0}–{hi:.0} | {:.2} |",
            crate::config::format_size(block),
            m / b
        );
    }
    for (name, text) in [
        ("results.csv", &csv),
        ("results.json", &json),
        ("results.md", &md),
    ] {
        let path = plan.out.join(name);
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    println!("{md}");
    println!("results: {}/results.{{csv,json,md}}", plan.out.display());
    Ok(())
}

fn plot(plan: &Plan) -> Result<(), String> {
    let script = plan.out.join("plot_bench.py");
    std::fs::write(&script, PLOT_PY).map_err(|e| format!("{}: {e}", script.display()))?;
    let python = std::env::var_os("REDIO_PYTHON").unwrap_or_else(|| "python3".into());
    let status = Command::new(&python)
        .arg(&script)
        .arg(plan.out.join("results.csv"))
        .arg(&plan.out)
        .status()
        .map_err(|e| format!("cannot run {}: {e}", python.to_string_lossy()))?;
    if !status.success() {
        return Err("plotting failed (is matplotlib installed? pip install matplotlib)".into());
    }
    Ok(())
}
