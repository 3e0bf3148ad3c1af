//! Arithmetic in GF(2^8) with the polynomial x^8 + x^4 + x^3 + x^2 + 1
//! (0x11d), the field of redset, reed-solomon-erasure and ISA-L.
//!
//! Addition is XOR. Multiplication uses log/exp tables built at compile
//! time; the bulk kernels (`dst ^= c·src` over whole buffers) live in
//! [`kernel`] and never go through these per-byte functions on their SIMD
//! paths.

pub mod kernel;

/// The field polynomial, with the x^8 bit.
pub const POLY: u16 = 0x11d;

/// `EXP[i] = g^i` for the generator g = 2, doubled in length so that
/// `EXP[LOG[a] + LOG[b]]` needs no reduction modulo 255.
const EXP: [u8; 512] = build_exp();
/// `LOG[a]` for a != 0 (`LOG[0]` is unused).
const LOG: [u8; 256] = build_log();

const fn build_exp() -> [u8; 512] {
    let mut exp = [0u8; 512];
    let mut x: u16 = 1;
    let mut i = 0;
    while i < 512 {
        exp[i] = x as u8;
        x <<= 1;
        if x & 0x100 != 0 {
            x ^= POLY;
        }
        i += 1;
    }
    exp
}

const fn build_log() -> [u8; 256] {
    let exp = build_exp();
    let mut log = [0u8; 256];
    let mut i = 0;
    while i < 255 {
        log[exp[i] as usize] = i as u8;
        i += 1;
    }
    log
}

/// The product `a·b` in GF(2^8).
#[inline]
pub fn mul(a: u8, b: u8) -> u8 {
    if a == 0 || b == 0 {
        return 0;
    }
    EXP[LOG[a as usize] as usize + LOG[b as usize] as usize]
}

/// The multiplicative inverse of `a`, or `None` for 0.
#[inline]
pub fn inv(a: u8) -> Option<u8> {
    if a == 0 {
        None
    } else {
        Some(EXP[255 - LOG[a as usize] as usize])
    }
}

/// `a / b`, or `None` when `b` is 0.
#[inline]
pub fn div(a: u8, b: u8) -> Option<u8> {
    inv(b).map(|ib| mul(a, ib))
}

/// The 256-entry row of products `c·x` for every x: the scalar kernel's
/// lookup table for one coefficient.
pub fn mul_row(c: u8) -> [u8; 256] {
    let mut row = [0u8; 256];
    for (x, out) in row.iter_mut().enumerate() {
        *out = mul(c, x as u8);
    }
    row
}

/// Carry-less "Russian peasant" multiplication, independent of the tables:
/// the reference the tests check the tables against.
pub fn mul_slow(mut a: u8, mut b: u8) -> u8 {
    let mut p = 0u8;
    while b != 0 {
        if b & 1 != 0 {
            p ^= a;
        }
        let carry = a & 0x80 != 0;
        a <<= 1;
        if carry {
            a ^= (POLY & 0xff) as u8;
        }
        b >>= 1;
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_match_slow_multiplication_for_every_pair() {
        for a in 0..=255u8 {
            for b in 0..=255u8 {
                assert_eq!(mul(a, b), mul_slow(a, b), "{a}·{b}");
            }
        }
    }

    #[test]
    fn every_nonzero_element_has_an_inverse() {
        assert_eq!(inv(0), None);
        for a in 1..=255u8 {
            let i = inv(a).unwrap();
            assert_eq!(mul(a, i), 1, "inverse of {a}");
            assert_eq!(div(a, a), Some(1));
        }
    }

    #[test]
    fn generator_two_has_order_255() {
        let mut seen = [false; 256];
        for &e in &EXP[..255] {
            assert!(!seen[e as usize], "{e} repeats before 255 steps");
            seen[e as usize] = true;
        }
        assert!(!seen[0]);
    }

    #[test]
    fn known_products_of_0x11d() {
        // 0x80·2 wraps through the polynomial: 0x100 ^ 0x11d = 0x1d.
        assert_eq!(mul(0x80, 2), 0x1d);
        assert_eq!(mul(3, 7), 9);
    }
}
