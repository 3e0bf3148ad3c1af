//! What a CRC-32 costs next to moving the same bytes: crc32fast's
//! throughput against memcpy's, for the block sizes of the protocol
//! benchmark. The protocols compute one CRC per chunk on each side of a
//! transfer, so the CRC's share of a protocol's time is about
//! `2 · n / crc_rate` over the protocol's measured time for `n` bytes.
//!
//! Run: `cargo run --release -p redio-protocols --example crc_cost`

use std::hint::black_box;
use std::time::Instant;

fn rate(bytes: usize, reps: usize, mut f: impl FnMut()) -> f64 {
    f(); // warm up (page faults, caches)
    let start = Instant::now();
    for _ in 0..reps {
        f();
    }
    (bytes * reps) as f64 / start.elapsed().as_secs_f64() / (1 << 20) as f64
}

fn main() {
    println!("| block | CRC-32 (crc32fast) | memcpy | CRC / memcpy time |");
    println!("|---|---|---|---|");
    for block in [64 << 10, 1 << 20, 16 << 20, 256 << 20] {
        let src: Vec<u8> = (0..block).map(|i| (i * 7 + 3) as u8).collect();
        let mut dst = vec![0u8; block];
        let reps = ((1usize << 30) / block).max(2);
        let crc = rate(block, reps, || {
            black_box(crc32fast::hash(black_box(&src)));
        });
        let copy = rate(block, reps, || {
            dst.copy_from_slice(black_box(&src));
            black_box(&dst);
        });
        println!(
            "| {} KiB | {crc:.0} MiB/s | {copy:.0} MiB/s | {:.2} |",
            block >> 10,
            copy / crc
        );
    }
}
