//! What every family of `redio bench` produces: measured runs, repeated
//! and interleaved, then results.csv, results.json, results.md (median,
//! min–max and the ratio to the family's baseline) and the plots.

use super::machine::Machine;
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

/// What one run measured.
#[derive(Debug, Clone, Copy)]
pub(super) struct Measured {
    /// Wall time of the measured part.
    pub seconds: f64,
    /// Bytes that crossed the network to (writes) or from (reads) the
    /// storage during the run, when `--traffic` counts them.
    pub wire: Option<u64>,
}

impl From<f64> for Measured {
    fn from(seconds: f64) -> Measured {
        Measured {
            seconds,
            wire: None,
        }
    }
}

/// One measured run.
#[derive(Debug, Clone)]
pub(super) struct Sample {
    pub point: Point,
    pub seconds: f64,
    /// See [`Measured::wire`].
    pub wire: Option<u64>,
}

/// Runs every point `reps` times, interleaved (each repetition runs every
/// point once, so that slow drift of a noisy machine hits all alike), and
/// prints a progress line per run.
pub(super) fn interleaved<M: Into<Measured>>(
    reps: u32,
    points: &[Point],
    mut measure: impl FnMut(&Point) -> Result<M, String>,
) -> Result<Vec<Sample>, String> {
    let mut samples = Vec::new();
    for _ in 0..reps {
        for point in points {
            let Measured { seconds, wire } = measure(point)?.into();
            eprintln!(
                "{} {} r={} block {}: {seconds:.3} s ({:.0} MiB/s){}",
                point.mode,
                point.variant,
                point.degree,
                point.block,
                mib_per_s(point.total, seconds),
                wire.map_or(String::new(), |w| format!(", {w} bytes on the wire"))
            );
            samples.push(Sample {
                point: point.clone(),
                seconds,
                wire,
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

/// Writes results.{csv,json,md} and prints the Markdown table, below the
/// block of the machine it ran on (in results.json: `machine`, beside the
/// runs in `samples`).
pub(super) fn write(
    args: &BenchArgs,
    plan: &Plan,
    machine: &Machine,
    samples: &[Sample],
) -> Result<(), String> {
    let topology = &args.topology;
    let mut csv = String::from(
        "kind,topology,mode,protocol,degree,block,total,seconds,mib_per_s,wire_bytes\n",
    );
    let machine_json = serde_json::to_string_pretty(&machine.to_json())
        .map_err(|e| format!("results.json: {e}"))?;
    // `family` tells `redio bench --markdown` which baseline the table
    // compares with.
    let mut json = format!(
        "{{\n  \"family\": \"{}\",\n  \"machine\": {},\n  \"samples\": [\n",
        family_name(args.family),
        machine_json.replace('\n', "\n  ")
    );
    for (i, s) in samples.iter().enumerate() {
        let p = &s.point;
        let rate = mib_per_s(p.total, s.seconds);
        let wire = s.wire.map_or(String::new(), |w| w.to_string());
        let _ = writeln!(
            csv,
            "{},{topology},{},{},{},{},{},{:.6},{rate:.1},{wire}",
            args.kind, p.mode, p.variant, p.degree, p.block, p.total, s.seconds
        );
        let _ = writeln!(
            json,
            "    {{\"kind\": {:?}, \"topology\": \"{topology}\", \"mode\": \"{}\", \"protocol\": {:?}, \
             \"degree\": {}, \"block\": {}, \"total\": {}, \"seconds\": {}, \"mib_per_s\": {rate:.1}, \
             \"wire_bytes\": {}}}{}",
            args.kind,
            p.mode,
            p.variant,
            p.degree,
            p.block,
            p.total,
            s.seconds,
            if wire.is_empty() { "null" } else { &wire },
            if i + 1 < samples.len() { "," } else { "" }
        );
    }
    json.push_str("  ]\n}\n");
    // results.md is what `redio bench --markdown results.json` prints.
    let md = super::markdown::render(&json)?;
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

/// results.md: the machine block, then the table (what `redio bench
/// --markdown` prints again from results.json).
pub(super) fn markdown(family: Family, machine: &Machine, samples: &[Sample]) -> String {
    format!("{}\n{}", machine.markdown(), table(family, samples))
}

/// The family's name on the command line and in results.json.
pub(super) fn family_name(family: Family) -> String {
    format!("{family:?}").to_lowercase()
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
    let counted = samples.iter().any(|s| s.wire.is_some());
    let (wire_head, wire_rule) = if counted {
        (" wire bytes / file bytes |", "---|")
    } else {
        ("", "")
    };
    let mut md = format!(
        "| mode | block | protocol | {degree} | median MiB/s | min–max MiB/s | {base_label} |{wire_head}\n\
         |---|---|---|---|---|---|---|{wire_rule}\n"
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
    let rates = |mode: &str, block: u64, variant: &str, degree: u32| -> Vec<f64> {
        runs_of(samples, (mode, block, variant, degree))
            .map(|s| mib_per_s(s.point.total, s.seconds))
            .collect()
    };
    for (mode, block, variant, degree) in points {
        let mut mine = rates(mode, block, variant, degree);
        let (lo, hi) = mine
            .iter()
            .fold((f64::MAX, 0f64), |(lo, hi), &r| (lo.min(r), hi.max(r)));
        let m = median(&mut mine);
        // The baseline runs at degree 1 (None at r = 1: a sweep may also
        // measure None at higher degrees).
        let mut base = match baseline(family, mode).0 {
            Some(variant) => rates(mode, block, variant, 1),
            None => Vec::new(),
        };
        let ratio = if base.is_empty() {
            "–".to_string()
        } else {
            format!("{:.2}", m / median(&mut base))
        };
        let wire = if counted {
            format!(" {} |", wire_ratio(samples, (mode, block, variant, degree)))
        } else {
            String::new()
        };
        let _ = writeln!(
            md,
            "| {mode} | {} | {variant} | {degree} | {m:.0} | {lo:.0}–{hi:.0} | {ratio} |{wire}",
            crate::config::format_size(block)
        );
    }
    md
}

/// Which runs a table cell summarises: mode, block, variant and degree.
type Cell<'a> = (&'a str, u64, &'a str, u32);

/// The runs of one cell.
fn runs_of<'a>(
    samples: &'a [Sample],
    (mode, block, variant, degree): Cell<'a>,
) -> impl Iterator<Item = &'a Sample> {
    samples.iter().filter(move |s| {
        let p = &s.point;
        p.mode == mode && p.block == block && p.variant == variant && p.degree == degree
    })
}

/// The median of a cell's bytes on the wire over the bytes its runs
/// moved, or `–` when they were not counted.
fn wire_ratio(samples: &[Sample], cell: Cell<'_>) -> String {
    let mut ratios: Vec<f64> = runs_of(samples, cell)
        .filter_map(|s| Some(s.wire? as f64 / s.point.total as f64))
        .collect();
    if ratios.is_empty() {
        "–".to_string()
    } else {
        format!("{:.2}", median(&mut ratios))
    }
}

/// Renders bench-<mode>.png per mode with matplotlib.
pub(super) fn plot(args: &BenchArgs, plan: &Plan) -> Result<(), String> {
    let script = plan.out.join("plot_bench.py");
    std::fs::write(&script, PLOT_PY).map_err(|e| format!("{}: {e}", script.display()))?;
    let python = std::env::var_os("REDIO_PYTHON").unwrap_or_else(|| "python3".into());
    let family = family_name(args.family);
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
