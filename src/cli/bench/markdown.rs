//! `redio bench --markdown RESULTS.json`: the Markdown of an earlier run
//! (its machine block and its table), printed again from the results.json
//! it wrote. The tables of docs/benchmarks.md are pasted from this output,
//! so the page shows what the code measured, in the code's layout.

use super::machine::Machine;
use super::results::{self, Point, Sample};
use super::Family;
use serde_json::Value;
use std::path::Path;

/// The modes the families measure: `Point::mode` is one of these.
const MODES: [&str; 6] = ["write", "read", "memory", "encode", "verify", "rebuild"];

/// Reads `path` (a results.json of `redio bench`) and returns the Markdown
/// that run printed: the machine block, a blank line, the table.
pub(super) fn from_results(path: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    render(&text).map_err(|why| format!("{}: {why}", path.display()))
}

/// The Markdown of the results.json text `text`. `redio bench` renders
/// its results.md through this too, from the JSON it is about to write,
/// so the two cannot differ.
pub(super) fn render(text: &str) -> Result<String, String> {
    let json: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let samples = json["samples"]
        .as_array()
        .ok_or("no \"samples\" array")?
        .iter()
        .enumerate()
        .map(|(i, s)| sample(s).map_err(|why| format!("sample {i}: {why}")))
        .collect::<Result<Vec<_>, _>>()?;
    if samples.is_empty() {
        return Err("no samples".into());
    }
    let family = match json["family"].as_str() {
        Some(name) => <Family as clap::ValueEnum>::from_str(name, false)
            .map_err(|_| format!("unknown family {name:?}"))?,
        None => guess_family(&samples),
    };
    Ok(results::markdown(
        family,
        &Machine::from_json(&json["machine"]),
        &samples,
    ))
}

/// One run of `samples`, as `results::write` recorded it.
fn sample(value: &Value) -> Result<Sample, String> {
    let field = |name: &str| {
        value
            .get(name)
            .filter(|v| !v.is_null())
            .ok_or(format!("no {name:?}"))
    };
    let number = |name: &str| {
        field(name)?
            .as_u64()
            .ok_or(format!("{name:?}: not a count"))
    };
    let text = |name: &str| field(name)?.as_str().ok_or(format!("{name:?}: not text"));
    let mode = text("mode")?;
    let mode = MODES
        .into_iter()
        .find(|m| *m == mode)
        .ok_or(format!("unknown mode {mode:?}"))?;
    let seconds = field("seconds")?
        .as_f64()
        .filter(|s| *s > 0.0)
        .ok_or("\"seconds\": not a positive number")?;
    Ok(Sample {
        point: Point {
            mode,
            variant: text("protocol")?.to_string(),
            degree: u32::try_from(number("degree")?).map_err(|e| e.to_string())?,
            block: number("block")?,
            total: number("total")?,
        },
        seconds,
        wire: value["wire_bytes"].as_u64(),
    })
}

/// The family of a results.json written before it recorded one, from its
/// modes and variants.
fn guess_family(samples: &[Sample]) -> Family {
    let any = |f: &dyn Fn(&Sample) -> bool| samples.iter().any(f);
    if any(&|s| s.point.mode == "memory") {
        Family::Crc
    } else if any(&|s| ["encode", "verify", "rebuild"].contains(&s.point.mode)) {
        Family::Parity
    } else if any(&|s| s.point.variant == "native") {
        Family::Interposition
    } else {
        Family::Protocols
    }
}
