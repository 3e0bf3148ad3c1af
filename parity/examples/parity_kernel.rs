//! GF(2^8) kernel throughput against memcpy, at 1 MiB and 64 MiB, and
//! against Intel ISA-L's `gf_vect_mad` when built with `--features
//! isal-bench` (needs Debian `libisal-dev`).
//!
//! ```sh
//! cargo run --release -p redio-parity --example parity_kernel [--features isal-bench]
//! ```
//!
//! Every variant runs once per round, interleaved, for several rounds; the
//! median per variant is printed in GB/s (10^9 bytes of source per second).

use redio_parity::gf::kernel::{available, Kernel};
use std::hint::black_box;
use std::time::Instant;

#[cfg(feature = "isal-bench")]
mod isal {
    #[link(name = "isal")]
    extern "C" {
        fn ec_init_tables(k: i32, rows: i32, a: *const u8, gftbls: *mut u8);
        fn gf_vect_mad(
            len: i32,
            vec: i32,
            vec_i: i32,
            gftbls: *const u8,
            src: *const u8,
            dest: *mut u8,
        );
    }

    /// `dst ^= c·src` with ISA-L (len >= 64).
    pub fn mad(c: u8, src: &[u8], dst: &mut [u8]) {
        let mut tbl = [0u8; 32];
        // SAFETY: one coefficient gives a 32-byte table; buffers have `len` bytes.
        unsafe {
            ec_init_tables(1, 1, &c, tbl.as_mut_ptr());
            gf_vect_mad(
                src.len() as i32,
                1,
                0,
                tbl.as_ptr(),
                src.as_ptr(),
                dst.as_mut_ptr(),
            );
        }
    }
}

type Variant<'a> = (String, Box<dyn Fn(&[u8], &mut [u8]) + 'a>);

fn variants(kernels: &[&'static dyn Kernel]) -> Vec<Variant<'static>> {
    let mut v: Vec<Variant> = vec![(
        "memcpy".into(),
        Box::new(|s: &[u8], d: &mut [u8]| d.copy_from_slice(s)),
    )];
    for &k in kernels {
        v.push((
            format!("xor/{}", k.name()),
            Box::new(move |s, d| k.xor_acc(s, d)),
        ));
    }
    for &k in kernels {
        v.push((
            format!("mad/{}", k.name()),
            Box::new(move |s, d| k.mul_acc(0x8e, s, d)),
        ));
    }
    #[cfg(feature = "isal-bench")]
    v.push(("mad/isa-l".into(), Box::new(|s, d| isal::mad(0x8e, s, d))));
    v
}

fn main() {
    let kernels = available();
    let all = variants(&kernels);
    #[cfg(feature = "isal-bench")]
    {
        // Same results as ours before timing anything.
        let src: Vec<u8> = (0..4096u32)
            .map(|i| (i * 2654435761u32 >> 13) as u8)
            .collect();
        let mut a = vec![7u8; 4096];
        let mut b = a.clone();
        isal::mad(0x8e, &src, &mut a);
        redio_parity::gf::kernel::Scalar.mul_acc(0x8e, &src, &mut b);
        assert_eq!(a, b, "ISA-L and redio disagree");
    }
    for (size, rounds, inner) in [(1usize << 20, 15, 200), (64 << 20, 9, 3)] {
        let src: Vec<u8> = (0..size)
            .map(|i| (i as u32).wrapping_mul(2654435761) as u8)
            .collect();
        let mut dst = vec![1u8; size];
        let mut times: Vec<Vec<f64>> = vec![Vec::new(); all.len()];
        for _ in 0..rounds {
            for (i, (_, f)) in all.iter().enumerate() {
                let t = Instant::now();
                for _ in 0..inner {
                    f(black_box(&src), black_box(&mut dst));
                }
                times[i].push((size * inner) as f64 / t.elapsed().as_secs_f64() / 1e9);
            }
        }
        println!(
            "size {} MiB, {rounds} rounds x {inner} calls, median GB/s:",
            size >> 20
        );
        let memcpy = median(&mut times[0]);
        for (i, (name, _)) in all.iter().enumerate() {
            let m = median(&mut times[i]);
            println!(
                "  {name:<12} {m:7.2} GB/s  ({:4.0}% of memcpy)",
                100.0 * m / memcpy
            );
        }
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}
