//! The bulk GF(2^8) kernels: `dst ^= c·src` (multiply-accumulate),
//! `dst = c·src` (multiply, for the first term of a sum: no zero-fill
//! before it) and `dst ^= src`, behind one small trait so that a faster
//! kernel can replace another without touching the codes.
//!
//! Three implementations, chosen once at run time by [`best`]:
//! - [`Scalar`]: portable, one table lookup per byte (what redset does);
//! - `Avx2Shuffle` (x86-64 with AVX2): the split-nibble method, two 16-entry
//!   tables and `vpshufb`, 32 bytes per instruction;
//! - `GfniAffine` (x86-64 with GFNI and AVX2): multiplication by a constant
//!   is linear over GF(2), so it is one 8x8 bit-matrix per coefficient and
//!   one `vgf2p8affineqb` per 32 bytes. (GFNI's own `gf2p8mulb` uses the AES
//!   polynomial 0x11b, not ours, so the affine form is the one that fits.)
//!
//! `REDIO_PARITY_KERNEL=scalar|avx2|gfni` forces one (for benchmarks and
//! comparisons); an unavailable choice falls back to the best one.

use super::{mul, mul_row};
use std::sync::OnceLock;

/// A bulk GF(2^8) kernel. Implementations must give results identical to
/// [`Scalar`] for every input (the property tests check it).
pub trait Kernel: Send + Sync {
    /// A short name for logs and benchmarks (`scalar`, `avx2`, `gfni`).
    fn name(&self) -> &'static str;

    /// `dst[i] ^= c·src[i]` for every i.
    ///
    /// # Panics
    /// If the lengths differ: callers slice both to the same piece.
    fn mul_acc(&self, c: u8, src: &[u8], dst: &mut [u8]);

    /// `dst[i] = c·src[i]` for every i: the first term of a sum, written
    /// over whatever `dst` held (issue 20: a zero-fill and a read of `dst`
    /// fewer per sum).
    ///
    /// # Panics
    /// If the lengths differ.
    fn mul(&self, c: u8, src: &[u8], dst: &mut [u8]);

    /// `dst[i] ^= src[i]` for every i.
    ///
    /// # Panics
    /// If the lengths differ.
    fn xor_acc(&self, src: &[u8], dst: &mut [u8]);
}

/// `dst = c·src` where the coefficient needs no multiplication (0 or 1);
/// false when it does.
fn trivial_mul(c: u8, src: &[u8], dst: &mut [u8]) -> bool {
    match c {
        0 => dst.fill(0),
        1 => dst.copy_from_slice(src),
        _ => return false,
    }
    true
}

fn check_lengths(src: &[u8], dst: &[u8]) {
    assert_eq!(
        src.len(),
        dst.len(),
        "GF kernel: source and destination lengths differ"
    );
}

/// The portable kernel: a 256-byte product table per coefficient.
#[derive(Debug, Default, Clone, Copy)]
pub struct Scalar;

impl Kernel for Scalar {
    fn name(&self) -> &'static str {
        "scalar"
    }

    fn mul_acc(&self, c: u8, src: &[u8], dst: &mut [u8]) {
        check_lengths(src, dst);
        match c {
            0 => {}
            1 => self.xor_acc(src, dst),
            _ => {
                let row = mul_row(c);
                for (d, s) in dst.iter_mut().zip(src) {
                    *d ^= row[*s as usize];
                }
            }
        }
    }

    fn mul(&self, c: u8, src: &[u8], dst: &mut [u8]) {
        check_lengths(src, dst);
        let row = mul_row(c);
        for (d, s) in dst.iter_mut().zip(src) {
            *d = row[*s as usize];
        }
    }

    fn xor_acc(&self, src: &[u8], dst: &mut [u8]) {
        check_lengths(src, dst);
        let mut d_words = dst.chunks_exact_mut(8);
        let mut s_words = src.chunks_exact(8);
        for (d, s) in (&mut d_words).zip(&mut s_words) {
            let x = u64::from_ne_bytes(d.try_into().unwrap_or([0; 8]))
                ^ u64::from_ne_bytes(s.try_into().unwrap_or([0; 8]));
            d.copy_from_slice(&x.to_ne_bytes());
        }
        for (d, s) in d_words.into_remainder().iter_mut().zip(s_words.remainder()) {
            *d ^= *s;
        }
    }
}

/// `dst = Σ c·piece` over `terms` (each piece as long as `dst`): the
/// first term with a nonzero coefficient is written over `dst` and the
/// others added, so a sum needs no zero-filled accumulator; no such term
/// leaves `dst` zero.
pub fn linear_combination<'a>(
    kernel: &dyn Kernel,
    terms: impl IntoIterator<Item = (u8, &'a [u8])>,
    dst: &mut [u8],
) {
    let mut written = false;
    for (c, piece) in terms.into_iter().filter(|&(c, _)| c != 0) {
        if written {
            kernel.mul_acc(c, piece, dst);
        } else {
            kernel.mul(c, piece, dst);
            written = true;
        }
    }
    if !written {
        dst.fill(0);
    }
}

/// The 8x8 bit-matrix of "multiply by `c`" in the layout `vgf2p8affineqb`
/// expects: output bit i is the parity of `x AND byte[7 - i]`, so byte
/// `7 - i` holds, at bit j, bit i of `c·2^j`.
pub fn affine_matrix(c: u8) -> u64 {
    let mut m = 0u64;
    for i in 0..8 {
        let mut row = 0u8;
        for j in 0..8 {
            if (mul(c, 1 << j) >> i) & 1 != 0 {
                row |= 1 << j;
            }
        }
        m |= (row as u64) << ((7 - i) * 8);
    }
    m
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{affine_matrix, check_lengths, trivial_mul, Kernel, Scalar};
    use crate::gf::mul;
    use std::arch::x86_64::*;

    /// AVX2 split-nibble kernel. Only constructed when AVX2 was detected.
    #[derive(Debug)]
    pub struct Avx2Shuffle(());

    impl Avx2Shuffle {
        pub fn detect() -> Option<Self> {
            is_x86_feature_detected!("avx2").then_some(Avx2Shuffle(()))
        }
    }

    /// GFNI affine kernel. Only constructed when GFNI and AVX2 were detected.
    #[derive(Debug)]
    pub struct GfniAffine(());

    impl GfniAffine {
        pub fn detect() -> Option<Self> {
            (is_x86_feature_detected!("avx2") && has_gfni()).then_some(GfniAffine(()))
        }
    }

    /// CPUID leaf 7, ECX bit 8. Read directly: the `gfni` name in
    /// `is_x86_feature_detected!` is newer than our MSRV.
    pub(super) fn has_gfni() -> bool {
        #[allow(unused_unsafe)] // `__cpuid_count` became safe in later Rust
        // SAFETY: CPUID exists on every x86-64 CPU; leaf 7 exists when the
        // maximum leaf (leaf 0, EAX) is at least 7, which is checked first.
        unsafe {
            if __cpuid(0).eax < 7 {
                return false;
            }
            __cpuid_count(7, 0).ecx & (1 << 8) != 0
        }
    }

    impl Kernel for Avx2Shuffle {
        fn name(&self) -> &'static str {
            "avx2"
        }

        fn mul_acc(&self, c: u8, src: &[u8], dst: &mut [u8]) {
            check_lengths(src, dst);
            match c {
                0 => {}
                1 => self.xor_acc(src, dst),
                // SAFETY: AVX2 was detected when this value was built.
                _ => unsafe { shuffle_mul::<true>(c, src, dst) },
            }
        }

        fn mul(&self, c: u8, src: &[u8], dst: &mut [u8]) {
            check_lengths(src, dst);
            if !trivial_mul(c, src, dst) {
                // SAFETY: AVX2 was detected when this value was built.
                unsafe { shuffle_mul::<false>(c, src, dst) }
            }
        }

        fn xor_acc(&self, src: &[u8], dst: &mut [u8]) {
            check_lengths(src, dst);
            // SAFETY: AVX2 was detected when this value was built.
            unsafe { avx2_xor(src, dst) }
        }
    }

    impl Kernel for GfniAffine {
        fn name(&self) -> &'static str {
            "gfni"
        }

        fn mul_acc(&self, c: u8, src: &[u8], dst: &mut [u8]) {
            check_lengths(src, dst);
            match c {
                0 => {}
                1 => self.xor_acc(src, dst),
                // SAFETY: GFNI and AVX2 were detected when this value was built.
                _ => unsafe { affine_mul::<true>(c, src, dst) },
            }
        }

        fn mul(&self, c: u8, src: &[u8], dst: &mut [u8]) {
            check_lengths(src, dst);
            if !trivial_mul(c, src, dst) {
                // SAFETY: GFNI and AVX2 were detected when this value was built.
                unsafe { affine_mul::<false>(c, src, dst) }
            }
        }

        fn xor_acc(&self, src: &[u8], dst: &mut [u8]) {
            check_lengths(src, dst);
            // SAFETY: AVX2 was detected when this value was built.
            unsafe { avx2_xor(src, dst) }
        }
    }

    #[target_feature(enable = "avx2")]
    unsafe fn avx2_xor(src: &[u8], dst: &mut [u8]) {
        let n = src.len() / 64 * 64;
        let (s, d) = (src.as_ptr(), dst.as_mut_ptr());
        let mut i = 0;
        while i < n {
            let a0 = _mm256_loadu_si256(s.add(i) as *const __m256i);
            let a1 = _mm256_loadu_si256(s.add(i + 32) as *const __m256i);
            let b0 = _mm256_loadu_si256(d.add(i) as *const __m256i);
            let b1 = _mm256_loadu_si256(d.add(i + 32) as *const __m256i);
            _mm256_storeu_si256(d.add(i) as *mut __m256i, _mm256_xor_si256(a0, b0));
            _mm256_storeu_si256(d.add(i + 32) as *mut __m256i, _mm256_xor_si256(a1, b1));
            i += 64;
        }
        Scalar.xor_acc(&src[n..], &mut dst[n..]);
    }

    /// `dst ^= c·src` (`ACC`) or `dst = c·src`.
    #[target_feature(enable = "avx2")]
    unsafe fn shuffle_mul<const ACC: bool>(c: u8, src: &[u8], dst: &mut [u8]) {
        let mut lo = [0u8; 16];
        let mut hi = [0u8; 16];
        for i in 0..16u8 {
            lo[i as usize] = mul(c, i);
            hi[i as usize] = mul(c, i << 4);
        }
        let tlo = _mm256_broadcastsi128_si256(_mm_loadu_si128(lo.as_ptr() as *const __m128i));
        let thi = _mm256_broadcastsi128_si256(_mm_loadu_si128(hi.as_ptr() as *const __m128i));
        let mask = _mm256_set1_epi8(0x0f);
        let n = src.len() / 32 * 32;
        let (s, d) = (src.as_ptr(), dst.as_mut_ptr());
        let mut i = 0;
        while i < n {
            let x = _mm256_loadu_si256(s.add(i) as *const __m256i);
            let xl = _mm256_and_si256(x, mask);
            let xh = _mm256_and_si256(_mm256_srli_epi16(x, 4), mask);
            let prod = _mm256_xor_si256(_mm256_shuffle_epi8(tlo, xl), _mm256_shuffle_epi8(thi, xh));
            _mm256_storeu_si256(d.add(i) as *mut __m256i, accumulated::<ACC>(d.add(i), prod));
            i += 32;
        }
        scalar_tail::<ACC>(c, &src[n..], &mut dst[n..]);
    }

    /// `prod`, XORed with the 32 bytes at `d` when accumulating.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn accumulated<const ACC: bool>(d: *const u8, prod: __m256i) -> __m256i {
        if ACC {
            _mm256_xor_si256(_mm256_loadu_si256(d as *const __m256i), prod)
        } else {
            prod
        }
    }

    /// The bytes past the last whole vector.
    fn scalar_tail<const ACC: bool>(c: u8, src: &[u8], dst: &mut [u8]) {
        if ACC {
            Scalar.mul_acc(c, src, dst)
        } else {
            Scalar.mul(c, src, dst)
        }
    }

    /// `vgf2p8affineqb` through inline assembly: its intrinsic is newer
    /// than our MSRV. Intel operand order: destination, data, matrix, imm.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn affine(x: __m256i, matrix: __m256i) -> __m256i {
        let out: __m256i;
        std::arch::asm!(
            "vgf2p8affineqb {out}, {x}, {m}, 0",
            out = lateout(ymm_reg) out,
            x = in(ymm_reg) x,
            m = in(ymm_reg) matrix,
            options(pure, nomem, nostack, preserves_flags),
        );
        out
    }

    /// `dst ^= c·src` (`ACC`) or `dst = c·src`.
    #[target_feature(enable = "avx2")]
    unsafe fn affine_mul<const ACC: bool>(c: u8, src: &[u8], dst: &mut [u8]) {
        let m = _mm256_set1_epi64x(affine_matrix(c) as i64);
        let n = src.len() / 64 * 64;
        let (s, d) = (src.as_ptr(), dst.as_mut_ptr());
        let mut i = 0;
        while i < n {
            let x0 = _mm256_loadu_si256(s.add(i) as *const __m256i);
            let x1 = _mm256_loadu_si256(s.add(i + 32) as *const __m256i);
            let p0 = accumulated::<ACC>(d.add(i), affine(x0, m));
            let p1 = accumulated::<ACC>(d.add(i + 32), affine(x1, m));
            _mm256_storeu_si256(d.add(i) as *mut __m256i, p0);
            _mm256_storeu_si256(d.add(i + 32) as *mut __m256i, p1);
            i += 64;
        }
        scalar_tail::<ACC>(c, &src[n..], &mut dst[n..]);
    }
}

/// Every kernel this CPU can run, the portable one first.
pub fn available() -> Vec<&'static dyn Kernel> {
    let mut out: Vec<&'static dyn Kernel> = vec![&Scalar];
    #[cfg(target_arch = "x86_64")]
    {
        static AVX2: OnceLock<Option<x86::Avx2Shuffle>> = OnceLock::new();
        static GFNI: OnceLock<Option<x86::GfniAffine>> = OnceLock::new();
        if let Some(k) = AVX2.get_or_init(x86::Avx2Shuffle::detect) {
            out.push(k);
        }
        if let Some(k) = GFNI.get_or_init(x86::GfniAffine::detect) {
            out.push(k);
        }
    }
    out
}

/// The variable that forces a kernel by name (`scalar`, `avx2`, `gfni`).
pub const KERNEL_ENV: &str = "REDIO_PARITY_KERNEL";

/// The kernel to use: [`KERNEL_ENV`] if set and available, else the
/// fastest available (GFNI, then AVX2, then scalar). Decided once.
pub fn best() -> &'static dyn Kernel {
    static BEST: OnceLock<&'static dyn Kernel> = OnceLock::new();
    *BEST.get_or_init(|| {
        let all = available();
        let wanted = std::env::var(KERNEL_ENV).ok();
        wanted
            .and_then(|w| all.iter().copied().find(|k| k.name() == w))
            .or_else(|| all.last().copied())
            .unwrap_or(&Scalar)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(n: usize, seed: u32) -> Vec<u8> {
        let mut x = seed.wrapping_mul(2654435761).wrapping_add(1);
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x as u8
            })
            .collect()
    }

    #[test]
    fn scalar_mul_acc_is_bytewise_multiplication() {
        let src = bytes(1000, 1);
        let orig = bytes(1000, 2);
        for c in [0u8, 1, 2, 0x1d, 0x80, 0xff] {
            let mut dst = orig.clone();
            Scalar.mul_acc(c, &src, &mut dst);
            for i in 0..src.len() {
                assert_eq!(dst[i], orig[i] ^ mul(c, src[i]));
            }
        }
    }

    #[test]
    fn every_kernel_matches_scalar_for_every_coefficient_and_odd_lengths() {
        let kernels = available();
        for len in [0usize, 1, 31, 32, 33, 63, 64, 65, 1000, 4099] {
            let src = bytes(len, len as u32);
            let orig = bytes(len, 7 + len as u32);
            for c in 0..=255u8 {
                let mut want = orig.clone();
                Scalar.mul_acc(c, &src, &mut want);
                for k in &kernels {
                    let mut got = orig.clone();
                    k.mul_acc(c, &src, &mut got);
                    assert_eq!(got, want, "kernel {} c={c} len={len}", k.name());
                }
            }
            for c in 0..=255u8 {
                let want: Vec<u8> = src.iter().map(|&s| mul(c, s)).collect();
                for k in &kernels {
                    // Over arbitrary bytes: nothing of `dst` may survive.
                    let mut got = orig.clone();
                    k.mul(c, &src, &mut got);
                    assert_eq!(got, want, "kernel {} mul c={c} len={len}", k.name());
                }
            }
            let mut want = orig.clone();
            Scalar.xor_acc(&src, &mut want);
            for k in &kernels {
                let mut got = orig.clone();
                k.xor_acc(&src, &mut got);
                assert_eq!(got, want, "kernel {} xor len={len}", k.name());
            }
        }
    }

    #[test]
    fn a_linear_combination_overwrites_what_the_buffer_held() {
        let (a, b) = (bytes(100, 1), bytes(100, 2));
        let want: Vec<u8> = a.iter().zip(&b).map(|(&x, &y)| mul(3, x) ^ y).collect();
        for k in available() {
            let mut dst = bytes(100, 9);
            linear_combination(k, [(0, &b[..]), (3, &a[..]), (1, &b[..])], &mut dst);
            assert_eq!(dst, want, "kernel {}", k.name());
            // Only zero coefficients (or none): zeros, not the old bytes.
            linear_combination(k, [(0, &a[..])], &mut dst);
            assert_eq!(dst, vec![0; 100], "kernel {}", k.name());
        }
    }

    #[test]
    fn affine_matrix_of_one_is_identity() {
        // Output bit i reads input bit i: byte 7-i has bit i set.
        assert_eq!(affine_matrix(1), 0x0102_0408_1020_4080);
    }

    #[test]
    #[should_panic(expected = "lengths differ")]
    fn unequal_lengths_are_refused() {
        Scalar.mul_acc(3, &[1, 2], &mut [0]);
    }

    #[test]
    #[should_panic(expected = "lengths differ")]
    fn unequal_lengths_are_refused_by_mul() {
        best().mul(1, &[1, 2], &mut [0]);
    }

    #[test]
    fn this_machine_offers_a_simd_kernel_when_the_cpu_has_one() {
        #[cfg(target_arch = "x86_64")]
        if is_x86_feature_detected!("avx2") {
            assert!(available().iter().any(|k| k.name() == "avx2"));
            if x86::has_gfni() {
                assert!(available().iter().any(|k| k.name() == "gfni"));
                if std::env::var_os(KERNEL_ENV).is_none() {
                    assert_eq!(best().name(), "gfni");
                }
            }
        }
        assert!(!best().name().is_empty());
    }
}
