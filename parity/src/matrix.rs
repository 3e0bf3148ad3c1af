//! Small dense matrices over GF(2^8): the Cauchy encoding matrix and the
//! inversion that decoding needs.

use crate::gf::{inv, mul};

/// A row-major matrix over GF(2^8).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Matrix {
    rows: usize,
    cols: usize,
    data: Vec<u8>,
}

/// The matrix to invert is singular (only possible for a matrix that is
/// not a square submatrix of a Cauchy matrix).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("matrix is singular over GF(2^8)")]
pub struct Singular;

impl Matrix {
    /// The `rows x cols` zero matrix.
    pub fn zero(rows: usize, cols: usize) -> Self {
        Matrix {
            rows,
            cols,
            data: vec![0; rows * cols],
        }
    }

    /// The `n x n` identity.
    pub fn identity(n: usize) -> Self {
        let mut m = Self::zero(n, n);
        for i in 0..n {
            m.set(i, i, 1);
        }
        m
    }

    /// The `k x p` Cauchy matrix `1 / (x_j + y_i)` with `x_j = p + j` and
    /// `y_i = i`: all `p + k` points are distinct, so every entry is defined
    /// and every square submatrix is itself Cauchy, hence invertible. That is
    /// exactly the property that lets any `m <= k` lost data columns be
    /// solved from any `m` surviving rows.
    ///
    /// # Panics
    /// If `p + k > 256` (callers validate the scheme first).
    pub fn cauchy(k: usize, p: usize) -> Self {
        assert!(p + k <= 256, "Cauchy matrix needs p + k <= 256");
        let mut m = Self::zero(k, p);
        for j in 0..k {
            for i in 0..p {
                let x = (p + j) as u8;
                let y = i as u8;
                m.set(j, i, inv(x ^ y).unwrap_or(0));
            }
        }
        m
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Number of columns.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// The entry at (`r`, `c`).
    pub fn get(&self, r: usize, c: usize) -> u8 {
        self.data[r * self.cols + c]
    }

    /// Sets the entry at (`r`, `c`).
    pub fn set(&mut self, r: usize, c: usize, v: u8) {
        self.data[r * self.cols + c] = v;
    }

    /// The submatrix of the given rows and columns, in that order.
    pub fn select(&self, rows: &[usize], cols: &[usize]) -> Matrix {
        let mut m = Matrix::zero(rows.len(), cols.len());
        for (a, &r) in rows.iter().enumerate() {
            for (b, &c) in cols.iter().enumerate() {
                m.set(a, b, self.get(r, c));
            }
        }
        m
    }

    /// The product `self · other`.
    ///
    /// # Panics
    /// If the inner dimensions differ.
    pub fn mul(&self, other: &Matrix) -> Matrix {
        assert_eq!(self.cols, other.rows, "matrix dimensions differ");
        let mut out = Matrix::zero(self.rows, other.cols);
        for r in 0..self.rows {
            for c in 0..other.cols {
                let mut acc = 0u8;
                for t in 0..self.cols {
                    acc ^= mul(self.get(r, t), other.get(t, c));
                }
                out.set(r, c, acc);
            }
        }
        out
    }

    /// The inverse, by Gauss-Jordan elimination.
    pub fn invert(&self) -> Result<Matrix, Singular> {
        if self.rows != self.cols {
            return Err(Singular);
        }
        let n = self.rows;
        let mut a = self.clone();
        let mut b = Matrix::identity(n);
        for col in 0..n {
            let pivot = (col..n).find(|&r| a.get(r, col) != 0).ok_or(Singular)?;
            if pivot != col {
                a.swap_rows(pivot, col);
                b.swap_rows(pivot, col);
            }
            let scale = inv(a.get(col, col)).ok_or(Singular)?;
            a.scale_row(col, scale);
            b.scale_row(col, scale);
            for r in 0..n {
                let f = a.get(r, col);
                if r != col && f != 0 {
                    a.add_scaled_row(col, r, f);
                    b.add_scaled_row(col, r, f);
                }
            }
        }
        Ok(b)
    }

    fn swap_rows(&mut self, x: usize, y: usize) {
        for c in 0..self.cols {
            self.data.swap(x * self.cols + c, y * self.cols + c);
        }
    }

    fn scale_row(&mut self, r: usize, f: u8) {
        for c in 0..self.cols {
            let v = self.get(r, c);
            self.set(r, c, mul(v, f));
        }
    }

    /// row `to` += f · row `from`.
    fn add_scaled_row(&mut self, from: usize, to: usize, f: u8) {
        for c in 0..self.cols {
            let v = self.get(to, c) ^ mul(f, self.get(from, c));
            self.set(to, c, v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// All subsets of `0..n` of size `m`, for small n.
    fn subsets(n: usize, m: usize) -> Vec<Vec<usize>> {
        (0u32..1 << n)
            .filter(|s| s.count_ones() as usize == m)
            .map(|s| (0..n).filter(|i| s & (1 << i) != 0).collect())
            .collect()
    }

    #[test]
    fn every_square_submatrix_of_a_small_cauchy_matrix_is_invertible() {
        for (k, p) in [(1, 2), (2, 4), (3, 6), (4, 8)] {
            let c = Matrix::cauchy(k, p);
            for m in 1..=k {
                for rows in subsets(k, m) {
                    for cols in subsets(p, m) {
                        let s = c.select(&rows, &cols);
                        let i = s.invert().expect("Cauchy submatrix invertible");
                        assert_eq!(s.mul(&i), Matrix::identity(m));
                    }
                }
            }
        }
    }

    #[test]
    fn largest_cauchy_matrix_is_defined() {
        let c = Matrix::cauchy(2, 254);
        assert!((0..2).all(|j| (0..254).all(|i| c.get(j, i) != 0)));
    }

    #[test]
    fn singular_matrix_is_reported() {
        let mut m = Matrix::zero(2, 2);
        m.set(0, 0, 3);
        m.set(1, 0, 3);
        assert_eq!(m.invert(), Err(Singular));
    }
}
