//! `--family protocols`: the micro-benchmark of Böhm & Engelmann (2012,
//! section V): one file read or written in blocks of a given size, under
//! each protocol and degree, side by side with None at r = 1, for plots in
//! the layout of the paper's Figures 10–13.
//!
//! With `--replica-dir TEMPLATE` each replica reaches the file through its
//! own directory (`{replica}` in TEMPLATE), as with one server per replica.

use super::results::{interleaved, Measured, Point, Sample};
use super::{compile_io_loop, drop_caches, loop_seconds, run_checked, BenchArgs, Plan};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Every protocol and degree, with None at r = 1 interleaved, writes then
/// reads, per block size.
pub(super) fn sweep(args: &BenchArgs, plan: &Plan) -> Result<Vec<Sample>, String> {
    let exe = compile_io_loop(plan.flavour, &plan.out)?;
    println!("{}", calibrate(args, plan)?);
    let most = args.degrees.iter().copied().max().unwrap_or(1);
    let seed = config(args, plan, "seed", "none", "none")?;
    let mut samples = Vec::new();
    for (mode, protocols) in [("write", &args.write), ("read", &args.read)] {
        // `--read ''` (or `--write ''`) measures the other mode alone.
        let protocols: Vec<&String> = protocols.iter().filter(|p| !p.is_empty()).collect();
        if protocols.is_empty() {
            continue;
        }
        if mode == "read" {
            // Every read needs the whole file on every replica's storage
            // (with a server per replica, the write protocols left parts
            // of it on each): written again with protocol none, as long
            // as the longest read.
            let run = Run {
                exe: &exe,
                config: &seed,
                degree: most,
                mode: "write",
                env: &[],
            };
            let largest = plan.blocks.iter().copied().max().unwrap_or(1);
            run.seconds(args, plan, largest, plan.total_for(largest))?;
        }
        for &block in &plan.blocks {
            let total = plan.total_for(block);
            let point = |variant: &str, degree| Point {
                mode,
                variant: variant.to_string(),
                degree,
                block,
                total,
            };
            let mut points = vec![point("none", 1)];
            for protocol in &protocols {
                for &degree in &args.degrees {
                    if plan.variants.is_empty() {
                        points.push(point(protocol, degree));
                    }
                    for v in &plan.variants {
                        points.push(point(&format!("{protocol}@{}", v.name), degree));
                    }
                }
            }
            samples.extend(interleaved(args.reps, &points, |p| {
                // `protocol@variant`: the variant's environment for this run.
                let (protocol, env) = match p.variant.split_once('@') {
                    Some((protocol, name)) => {
                        let v = plan.variants.iter().find(|v| v.name == name);
                        (protocol, v.map_or(&[][..], |v| v.env.as_slice()))
                    }
                    None => (p.variant.as_str(), &[][..]),
                };
                let (read, write) = if mode == "read" {
                    (protocol, "none")
                } else {
                    ("none", protocol)
                };
                let cfg = config(args, plan, &format!("{mode}-{protocol}"), read, write)?;
                if mode == "read" && args.drop_caches {
                    drop_caches()?;
                }
                let run = Run {
                    exe: &exe,
                    config: &cfg,
                    degree: p.degree,
                    mode,
                    env,
                };
                let before = traffic(args)?;
                let seconds = run.seconds(args, plan, block, total)?;
                let after = traffic(args)?;
                let wire = before.zip(after).map(|((rx0, tx0), (rx1, tx1))| {
                    if mode == "write" {
                        rx1.saturating_sub(rx0)
                    } else {
                        tx1.saturating_sub(tx0)
                    }
                });
                Ok(Measured { seconds, wire })
            })?);
        }
    }
    // The benchmark file (up to the largest block) must not stay on the
    // user's storage.
    for dir in every_dir(args, plan) {
        let _ = std::fs::remove_file(dir.join("bench.0"));
    }
    Ok(samples)
}

/// `--dir` and every storage directory behind it: the paths the runs'
/// configurations declare shared, and where the benchmark file lands.
fn every_dir(args: &BenchArgs, plan: &Plan) -> Vec<PathBuf> {
    let mut dirs = vec![plan.dir.clone()];
    dirs.extend(plan.storage(args));
    dirs
}

/// The storage's (received, sent) byte counters from `--traffic`, if given.
fn traffic(args: &BenchArgs) -> Result<Option<(u64, u64)>, String> {
    let Some(command) = &args.traffic else {
        return Ok(None);
    };
    let mut shell = Command::new("sh");
    shell.arg("-c").arg(command);
    let what = format!("--traffic {command:?}");
    let stdout = run_checked(&shell, 60, &what)?;
    let numbers: Vec<u64> = stdout
        .split_whitespace()
        .map(str::parse)
        .collect::<Result<_, _>>()
        .map_err(|_| format!("{what} printed {stdout:?}, not two byte counts"))?;
    match numbers[..] {
        [received, sent] => Ok(Some((received, sent))),
        _ => Err(format!("{what} printed {stdout:?}, not two byte counts")),
    }
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
    for dir in every_dir(args, plan) {
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

/// One run of the benchmark program under `redio run -n 1`.
pub(super) struct Run<'a> {
    /// The compiled benchmark program.
    pub exe: &'a Path,
    /// The redio configuration of the run.
    pub config: &'a Path,
    /// Replicas.
    pub degree: u32,
    /// `write` or `read`.
    pub mode: &'static str,
    /// Extra environment of the run (a `--variant`'s).
    pub env: &'a [(String, String)],
}

impl Run<'_> {
    /// Runs it on `plan.dir` and returns the slowest replica's loop time.
    pub fn seconds(
        &self,
        args: &BenchArgs,
        plan: &Plan,
        block: u64,
        total: u64,
    ) -> Result<f64, String> {
        let redio = std::env::current_exe().map_err(|e| e.to_string())?;
        let mut command = Command::new(redio);
        command
            .args(["run", "--mpi", plan.flavour.key(), "-n", "1", "-r"])
            .arg(self.degree.to_string())
            .arg("--config")
            .arg(self.config)
            .arg("--")
            .arg(self.exe)
            .arg(self.mode)
            .arg(&plan.dir)
            .arg(block.to_string())
            .arg(total.to_string());
        command.envs(self.env.iter().map(|(k, v)| (k, v)));
        let what = format!(
            "{} r={} block {block} with {}",
            self.mode,
            self.degree,
            self.config.display()
        );
        let stdout = run_checked(&command, args.timeout_seconds, &what)?;
        loop_seconds(&stdout, &what)
    }
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
