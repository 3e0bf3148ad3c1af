//! What every family of `redio bench` produces: measured runs, repeated
//! and interleaved, then results.csv, results.json, results.md (median,
//! min–max and the ratio to the family's baseline) and the plots.

use super::{BenchArgs, Family, Plan};
use std::fmt::Write as _;
use std::process::Command;

/// The plotting script (matplotlib), run when `--plot` is given.
const PLOT_PY: &str = include_str!("../../../benches/plot_bench.py");

/// One point of a sweep: what is measured, before it is run.
#[derive(Debug, Clone)]
pub(super) struct Point {
    /// The operation (write, read, memory, encode, …): one plot each.
    pub mode: &'static str,
    /// The protocol or variant (one line per variant and degree).
    pub variant: String,
    /// The degree of redundancy; for parity, the ranks in the set.
    pub degree: u32,
    /// Block size; for parity, the data per rank.
    pub block: u64,
    /// The bytes the throughput is counted over.
    pub total: u64,
}

/// One measured run.
#[derive(Debug, Clone)]
pub(super) struct Sample {
    pub point: Point,
    pub seconds: f64,
}

/// Runs every point `reps` times, interleaved (each repetition runs every
/// point once, so that slow drift of a noisy machine hits all alike), and
/// prints a progress line per run.
pub(super) fn interleaved(
    reps: u32,
    points: &[Point],
    mut measure: impl FnMut(&Point) -> Result<f64, String>,
) -> Result<Vec<Sample>, String> {
    let mut samples = Vec::new();
    for _ in 0..reps {
        for point in points {
            let seconds = measure(point)?;
            eprintln!(
                "{} {} r={} block {}: {seconds:.3} s ({:.0} MiB/s)",
                point.mode,
                point.variant,
                point.degree,
                point.block,
                mib_per_s(point.total, seconds)
            );
            samples.push(Sample {
                point: point.clone(),
                seconds,
            });
        }
    }
    Ok(samples)
}

fn mib_per_s(bytes: u64, seconds: f64) -> f64 {
    bytes as f64 / seconds / f64::from(1 << 20)
}

/// The variant every other one of the same mode and block is compared
/// with, and the heading of that column.
fn baseline(family: Family, mode: &str) -> (Option<&'static str>, &'static str) {
    match (family, mode) {
        (Family::Protocols, _) => (Some("none"), "vs None r=1"),
        (Family::Interposition, _) => (Some("native"), "vs native"),
        (Family::Crc, "memory") => (Some("memcpy"), "vs memcpy (memory) or read (file)"),
        (Family::Crc, _) => (Some("read"), "vs memcpy (memory) or read (file)"),
        (Family::Parity, _) => (None, "vs baseline"),
    }
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

/// Writes results.{csv,json,md} and prints the Markdown table.
pub(super) fn write(args: &BenchArgs, plan: &Plan, samples: &[Sample]) -> Result<(), String> {
    let topology = &args.topology;
    let mut csv =
        String::from("kind,topology,mode,protocol,degree,block,total,seconds,mib_per_s\n");
    let mut json = String::from("[\n");
    for (i, s) in samples.iter().enumerate() {
        let p = &s.point;
        let rate = mib_per_s(p.total, s.seconds);
        let _ = writeln!(
            csv,
            "{},{topology},{},{},{},{},{},{:.6},{rate:.1}",
            args.kind, p.mode, p.variant, p.degree, p.block, p.total, s.seconds
        );
        let _ = writeln!(
            json,
            "  {{\"kind\": {:?}, \"topology\": \"{topology}\", \"mode\": \"{}\", \"protocol\": {:?}, \
             \"degree\": {}, \"block\": {}, \"total\": {}, \"seconds\": {:.6}, \"mib_per_s\": {rate:.1}}}{}",
            args.kind,
            p.mode,
            p.variant,
            p.degree,
            p.block,
            p.total,
            s.seconds,
            if i + 1 < samples.len() { "," } else { "" }
        );
    }
    json.push_str("]\n");
    let md = table(args.family, samples);
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

/// The Markdown table: one row per point, in the order first measured,
/// grouped by mode (writes before reads) and block.
fn table(family: Family, samples: &[Sample]) -> String {
    let degree = if family == Family::Parity {
        "ranks"
    } else {
        "r"
    };
    let (_, base_label) = baseline(family, "");
    let mut md = format!(
        "| mode | block | protocol | {degree} | median MiB/s | min–max MiB/s | {base_label} |\n\
         |---|---|---|---|---|---|---|\n"
    );
    let mut points: Vec<(&str, u64, &str, u32)> = Vec::new();
    for s in samples {
        let p = &s.point;
        let key = (p.mode, p.block, p.variant.as_str(), p.degree);
        if !points.contains(&key) {
            points.push(key);
        }
    }
    points.sort_by_key(|p| (p.0 != "write", p.0, p.1));
    let rates = |mode: &str, block: u64, variant: &str, degree: Option<u32>| -> Vec<f64> {
        samples
            .iter()
            .map(|s| &s.point)
            .zip(samples.iter().map(|s| s.seconds))
            .filter(|(p, _)| {
                p.mode == mode
                    && p.block == block
                    && p.variant == variant
                    && degree.is_none_or(|d| p.degree == d)
            })
            .map(|(p, seconds)| mib_per_s(p.total, seconds))
            .collect()
    };
    for (mode, block, variant, degree) in points {
        let mut mine = rates(mode, block, variant, Some(degree));
        let (lo, hi) = mine
            .iter()
            .fold((f64::MAX, 0f64), |(lo, hi), &r| (lo.min(r), hi.max(r)));
        let m = median(&mut mine);
        let mut base = match baseline(family, mode).0 {
            Some(variant) => rates(mode, block, variant, None),
            None => Vec::new(),
        };
        let ratio = if base.is_empty() {
            "–".to_string()
        } else {
            format!("{:.2}", m / median(&mut base))
        };
        let _ = writeln!(
            md,
            "| {mode} | {} | {variant} | {degree} | {m:.0} | {lo:.0}–{hi:.0} | {ratio} |",
            crate::config::format_size(block)
        );
    }
    md
}

/// Renders bench-<mode>.png per mode with matplotlib.
pub(super) fn plot(args: &BenchArgs, plan: &Plan) -> Result<(), String> {
    let script = plan.out.join("plot_bench.py");
    std::fs::write(&script, PLOT_PY).map_err(|e| format!("{}: {e}", script.display()))?;
    let python = std::env::var_os("REDIO_PYTHON").unwrap_or_else(|| "python3".into());
    let family = format!("{:?}", args.family).to_lowercase();
    let status = Command::new(&python)
        .arg(&script)
        .arg(plan.out.join("results.csv"))
        .arg(&plan.out)
        .arg(family)
        .status()
        .map_err(|e| format!("cannot run {}: {e}", python.to_string_lossy()))?;
    if !status.success() {
        return Err("plotting failed (is matplotlib installed? pip install matplotlib)".into());
    }
    Ok(())
}
