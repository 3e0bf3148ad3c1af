//! `--family crc`: the CRC32 that voting, end-to-end checks and parity
//! verification pay, in the crate the protocols use (`crc32fast`).
//!
//! - `memory`: CRC32 of an in-memory buffer against a copy of it (a relay
//!   copies each byte once), in blocks, `--total` bytes per run;
//! - `read`: reading a file of `--total` bytes under `--dir` in blocks
//!   against reading it and computing its CRC32 (the page cache is dropped
//!   before each run with `--drop-caches`, else the file is cached and the
//!   ratio is the worst case).

use super::results::{interleaved, Point, Sample};
use super::{drop_caches, BenchArgs, Plan};
use redio_aligned::AlignedBuf;
use std::hint::black_box;
use std::io::{Read, Write};
use std::time::Instant;

/// Memory then file, per block size.
pub(super) fn sweep(args: &BenchArgs, plan: &Plan) -> Result<Vec<Sample>, String> {
    let file = plan.dir.join("redio-bench-crc.dat");
    let largest = plan.blocks.iter().copied().max().unwrap_or(1);
    write_file(&file, plan.total_for(largest))?;
    let mut samples = Vec::new();
    for (mode, variants) in [("memory", ["memcpy", "crc32"]), ("read", ["read", "crc32"])] {
        for &block in &plan.blocks {
            let total = plan.total_for(block);
            let points: Vec<Point> = variants
                .iter()
                .map(|variant| Point {
                    mode,
                    variant: variant.to_string(),
                    degree: 1,
                    block,
                    total,
                })
                .collect();
            // Page-aligned, as redio's own I/O buffers (issue 20).
            let mut buffer = AlignedBuf::zeroed(usize::try_from(block).map_err(|e| e.to_string())?);
            samples.extend(interleaved(args.reps, &points, |p| {
                let checksum = p.variant == "crc32";
                if mode == "memory" {
                    Ok(in_memory(&mut buffer, total, checksum))
                } else {
                    if args.drop_caches {
                        drop_caches()?;
                    }
                    from_file(&file, &mut buffer, total, checksum)
                }
            })?);
        }
    }
    let _ = std::fs::remove_file(&file);
    Ok(samples)
}

/// `total` bytes of varied content (a CRC of zeros could be special-cased).
fn write_file(path: &std::path::Path, total: u64) -> Result<(), String> {
    let fail = |e: std::io::Error| format!("{}: {e}", path.display());
    let mut file = std::fs::File::create(path).map_err(fail)?;
    let piece: Vec<u8> = (0..1u32 << 20).map(|i| (i * 7 + i / 4093) as u8).collect();
    let mut done = 0;
    while done < total {
        let n = piece
            .len()
            .min(usize::try_from(total - done).unwrap_or(usize::MAX));
        file.write_all(&piece[..n]).map_err(fail)?;
        done += n as u64;
    }
    file.sync_all().map_err(fail)
}

/// Seconds to checksum (or copy) `buffer` until `total` bytes are done.
fn in_memory(buffer: &mut [u8], total: u64, checksum: bool) -> f64 {
    for (i, byte) in buffer.iter_mut().enumerate() {
        *byte = (i * 13 + i / 251) as u8;
    }
    // Touched before the clock starts: a fresh allocation's first writes
    // are page faults, not copying.
    let mut copy = AlignedBuf::zeroed(buffer.len());
    copy.fill(2);
    let start = Instant::now();
    let mut done = 0u64;
    while done < total {
        if checksum {
            black_box(crc32fast::hash(black_box(&*buffer)));
        } else {
            copy.copy_from_slice(black_box(&*buffer));
            black_box(&mut copy);
        }
        done += buffer.len() as u64;
    }
    start.elapsed().as_secs_f64()
}

/// Seconds to read `path` in blocks of `buffer.len()` (and checksum it).
fn from_file(
    path: &std::path::Path,
    buffer: &mut [u8],
    total: u64,
    checksum: bool,
) -> Result<f64, String> {
    let fail = |e: std::io::Error| format!("{}: {e}", path.display());
    let start = Instant::now();
    let mut file = std::fs::File::open(path).map_err(fail)?;
    let mut hasher = crc32fast::Hasher::new();
    let mut done = 0u64;
    while done < total {
        let n = file.read(buffer).map_err(fail)?;
        if n == 0 {
            return Err(format!("{}: shorter than {total} bytes", path.display()));
        }
        if checksum {
            hasher.update(&buffer[..n]);
        }
        done += n as u64;
    }
    black_box(hasher.finalize());
    Ok(start.elapsed().as_secs_f64())
}
