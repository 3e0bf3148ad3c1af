//! `--family parity`: the collective parity jobs a user runs, timed from
//! launch to exit. `--ranks` logical ranks, one set, each with a file of
//! one block (the data per rank) under `--dir/redio-bench-parity/rank{r}`.
//! Per repetition and scheme:
//!
//! - `encode`: `redio parity encode` (all ranks' data over the wall time);
//! - `verify`: `redio parity verify` on the healthy set (must exit 0);
//! - `rebuild`: the first as many ranks as the scheme tolerates lose their
//!   directory, `redio parity rebuild` restores it (the lost data over the
//!   wall time), and every rebuilt file is checked against the lost one.

use super::results::{interleaved, Point, Sample};
use super::{drop_caches, run_checked, BenchArgs, Plan};
use redio_aligned::AlignedBuf;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// Encode, verify and rebuild per scheme and data size.
pub(super) fn sweep(args: &BenchArgs, plan: &Plan) -> Result<Vec<Sample>, String> {
    let ranks = args.ranks;
    if ranks < 2 {
        return Err(format!("--ranks {ranks}: a parity set needs at least 2"));
    }
    let base = plan.dir.join("redio-bench-parity");
    let root = format!("{}/rank{{rank}}", base.display());
    let mut samples = Vec::new();
    for scheme in &args.schemes {
        let lost = tolerance(scheme, ranks)?;
        for &block in &plan.blocks {
            let _ = std::fs::remove_dir_all(&base);
            let crcs = (0..ranks)
                .map(|rank| write_rank(&base, rank, block))
                .collect::<Result<Vec<u32>, String>>()?;
            let point = |mode, total| Point {
                mode,
                variant: scheme.clone(),
                degree: ranks,
                block,
                total,
            };
            let all = u64::from(ranks) * block;
            let mut points = vec![point("encode", all), point("verify", all)];
            if lost > 0 {
                points.push(point("rebuild", u64::from(lost) * block));
            }
            let job = |op: &str| {
                let mut command = Command::new(std::env::current_exe().map_err(|e| e.to_string())?);
                command
                    .args(["parity", op, "--mpi", plan.flavour.key(), "-n"])
                    .arg(ranks.to_string())
                    .arg("--root")
                    .arg(&root);
                if op == "encode" {
                    command
                        .args(["--scheme", scheme, "--set-size"])
                        .arg(ranks.to_string())
                        .args(["--groups", "node{rank}"]);
                }
                Ok::<_, String>(command)
            };
            samples.extend(interleaved(args.reps, &points, |p| {
                if p.mode == "rebuild" {
                    for rank in 0..lost {
                        let dir = rank_dir(&base, rank);
                        std::fs::remove_dir_all(&dir)
                            .map_err(|e| format!("{}: {e}", dir.display()))?;
                    }
                }
                if args.drop_caches {
                    drop_caches()?;
                }
                let what = format!("redio parity {} ({scheme}, {ranks} ranks)", p.mode);
                let command = job(p.mode)?;
                let start = Instant::now();
                run_checked(&command, args.timeout_seconds, &what)?;
                let seconds = start.elapsed().as_secs_f64();
                if p.mode == "rebuild" {
                    for rank in 0..lost {
                        check_rank(&base, rank, block, crcs[rank as usize])?;
                    }
                }
                Ok(seconds)
            })?);
        }
    }
    let _ = std::fs::remove_dir_all(&base);
    Ok(samples)
}

/// How many lost ranks `scheme` rebuilds (0: nothing to rebuild).
fn tolerance(scheme: &str, ranks: u32) -> Result<u32, String> {
    let lost = match scheme.split_once(':') {
        None if scheme == "xor" => 1,
        None if scheme == "single" => 0,
        Some(("rs" | "partner", k)) => k
            .parse::<u32>()
            .map_err(|_| format!("--schemes {scheme}: {k:?} is not a number"))?,
        _ => {
            return Err(format!(
                "--schemes {scheme}: use single, partner:C, xor or rs:K"
            ))
        }
    };
    if lost >= ranks {
        return Err(format!(
            "--schemes {scheme} with --ranks {ranks}: the set must be larger than the losses it survives"
        ));
    }
    Ok(lost)
}

fn rank_dir(base: &Path, rank: u32) -> PathBuf {
    base.join(format!("rank{rank}"))
}

/// The content of `rank`'s file: `len` bytes that differ per rank, in
/// 1 MiB pieces, handed to `sink`.
fn content(
    rank: u32,
    len: u64,
    mut sink: impl FnMut(&[u8]) -> Result<(), String>,
) -> Result<(), String> {
    let mut piece = AlignedBuf::zeroed(1 << 20);
    let mut done = 0u64;
    let mut state = 0x9e37_79b9_7f4a_7c15u64 ^ u64::from(rank).wrapping_mul(0x2545_f491_4f6c_dd1d);
    while done < len {
        for word in piece.chunks_exact_mut(8) {
            // xorshift64: fast, and no two ranks alike.
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            word.copy_from_slice(&state.to_le_bytes());
        }
        let n = piece
            .len()
            .min(usize::try_from(len - done).unwrap_or(usize::MAX));
        sink(&piece[..n])?;
        done += n as u64;
    }
    Ok(())
}

/// Writes `rank`'s file and returns its CRC32.
fn write_rank(base: &Path, rank: u32, len: u64) -> Result<u32, String> {
    let dir = rank_dir(base, rank);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let path = dir.join("data.bin");
    let fail = |e: std::io::Error| format!("{}: {e}", path.display());
    let mut file = std::fs::File::create(&path).map_err(fail)?;
    let mut hasher = crc32fast::Hasher::new();
    content(rank, len, |bytes| {
        hasher.update(bytes);
        file.write_all(bytes).map_err(fail)
    })?;
    file.sync_all().map_err(fail)?;
    Ok(hasher.finalize())
}

/// Fails unless `rank`'s rebuilt file has the lost file's length and CRC32.
fn check_rank(base: &Path, rank: u32, len: u64, crc: u32) -> Result<(), String> {
    let path = rank_dir(base, rank).join("data.bin");
    let bytes = std::fs::read(&path).map_err(|e| format!("rebuilt {}: {e}", path.display()))?;
    if bytes.len() as u64 != len || crc32fast::hash(&bytes) != crc {
        return Err(format!(
            "rebuilt {} differs from the lost file ({} bytes, expected {len})",
            path.display(),
            bytes.len()
        ));
    }
    Ok(())
}
