//! `--family interposition`: what the hooks cost on I/O they pass through.
//! The benchmark program writes, then reads back, its file under `--dir`
//! in blocks, natively (`mpiexec -n 1`, no redio) and under `redio run -n 1
//! -r 1` with `--dir` declared node-local, interleaved. Small blocks show
//! the per-call cost, large ones that nothing is copied.

use super::protocols::Run;
use super::results::{interleaved, Point, Sample};
use super::{compile_io_loop, drop_caches, loop_seconds, run_checked, BenchArgs, Plan};
use crate::cli::flavour::launcher_command;

/// Native against pass-through, writes then reads, per block size.
pub(super) fn sweep(args: &BenchArgs, plan: &Plan) -> Result<Vec<Sample>, String> {
    let exe = compile_io_loop(plan.flavour, &plan.out)?;
    // Node-local: every call passes through (local wins over shared).
    let config = plan.out.join("configs").join("pass-through.yaml");
    let yaml = format!(
        "version: 1\nlocal:\n  paths:\n    - {:?}\n",
        plan.dir.display().to_string()
    );
    std::fs::write(&config, yaml).map_err(|e| format!("{}: {e}", config.display()))?;
    let mut samples = Vec::new();
    // Per block, writes then reads: each read finds the file its block's
    // writes left.
    for &block in &plan.blocks {
        for mode in ["write", "read"] {
            let total = plan.total_for(block);
            let points: Vec<Point> = ["native", "pass-through"]
                .into_iter()
                .map(|variant| Point {
                    mode,
                    variant: variant.into(),
                    degree: 1,
                    block,
                    total,
                })
                .collect();
            samples.extend(interleaved(args.reps, &points, |p| {
                if mode == "read" && args.drop_caches {
                    drop_caches()?;
                }
                if p.variant == "native" {
                    let mut command =
                        launcher_command(plan.flavour, 1, false, &[], &plan.out.join("launcher"))?;
                    command
                        .arg(&exe)
                        .arg(mode)
                        .arg(&plan.dir)
                        .arg(block.to_string())
                        .arg(total.to_string());
                    let what = format!("native {mode} block {block}");
                    let stdout = run_checked(&command, args.timeout_seconds, &what)?;
                    loop_seconds(&stdout, &what)
                } else {
                    let run = Run {
                        exe: &exe,
                        config: &config,
                        degree: 1,
                        mode,
                        env: &[],
                    };
                    run.seconds(args, plan, block, total)
                }
            })?);
        }
    }
    let _ = std::fs::remove_file(plan.dir.join("bench.0"));
    Ok(samples)
}
