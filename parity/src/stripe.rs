//! The XOR and Reed-Solomon codes over one set, with the rotating layout of
//! redset and Gropp et al.
//!
//! A set of `p` members with `k` parity chunks per row (XOR: `k = 1`).
//! Every member's logical file is padded to `p - k` chunks of `chunk` bytes.
//! There are `p` rows. In row `r`:
//! - member `(r + j) mod p` holds parity equation `j`, for `j < k`, and
//!   contributes zeros as data (so it stores no data in that row);
//! - every other member `m` contributes its data chunk `d`, where
//!   `r = (m + 1 + d) mod p`.
//!
//! So each member stores exactly `k` parity chunks (for rows `m, m-1, …,
//! m-k+1`) and every row holds `p - k` data chunks and `k` parity chunks:
//! storage overhead `k / (p - k)` and balanced work.
//!
//! Parity equation `j` of a row is `Σ_i E[j][i] · d_i` over the data members
//! `i` of that row, with `E` all ones for XOR and the Cauchy matrix for RS.
//! Because the sum is a XOR, it can be built from per-member contributions
//! `E[j][i] · d_i` in any order: that is what the ring reduce-scatter does.
//!
//! Decoding a row: the unknowns are the lost data chunks; each surviving
//! parity chunk is one equation. Any square submatrix of `E` is invertible,
//! so the row is solvable exactly when the lost data chunks are no more than
//! the surviving parity chunks; lost parity chunks are then re-encoded.

use crate::gf::kernel::{linear_combination, Kernel};
use crate::matrix::{Matrix, Singular};
use crate::scheme::{Scheme, SchemeError};
use redio_aligned::AlignedBuf;
use std::ops::DerefMut;

/// The code of one set: its size, parity count and coefficients.
#[derive(Debug, Clone)]
pub struct StripeCode {
    p: usize,
    k: usize,
    coef: Matrix,
}

/// How one row is rebuilt: which data members are unknown, which parity
/// equations solve them, with the inverse of their coefficients, and which
/// parity chunks must be re-encoded.
#[derive(Debug, Clone)]
pub struct RowPlan {
    /// The row.
    pub row: usize,
    /// Data members of the row whose chunk is lost, ascending.
    pub lost_data: Vec<usize>,
    /// The parity equations used, one per lost data member.
    pub equations: Vec<usize>,
    /// Inverse of `E[equations][lost_data]`.
    pub inverse: Matrix,
    /// Parity equations of the row whose chunk is lost.
    pub lost_parity: Vec<usize>,
}

/// A row with more lost data chunks than surviving parity chunks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("row {row}: {lost_data} data chunk(s) lost but only {parity_left} parity chunk(s) survive")]
pub struct RowUnrecoverable {
    /// The row.
    pub row: usize,
    /// Lost data chunks.
    pub lost_data: usize,
    /// Surviving parity chunks.
    pub parity_left: usize,
}

impl StripeCode {
    /// The code of `scheme` (XOR or RS) over `p` members.
    pub fn new(scheme: Scheme, p: usize) -> Result<Self, SchemeError> {
        scheme.validate(p)?;
        match scheme {
            Scheme::Xor => {
                let mut coef = Matrix::zero(1, p);
                for i in 0..p {
                    coef.set(0, i, 1);
                }
                Ok(StripeCode { p, k: 1, coef })
            }
            Scheme::Rs { k } => Ok(StripeCode {
                p,
                k: k as usize,
                coef: Matrix::cauchy(k as usize, p),
            }),
            other => Err(SchemeError {
                scheme: other.to_string(),
                size: p,
                why: "not a parity code (XOR or RS)".into(),
            }),
        }
    }

    /// Set size.
    pub fn members(&self) -> usize {
        self.p
    }

    /// Parity chunks per row.
    pub fn parity_count(&self) -> usize {
        self.k
    }

    /// Data chunks per member (`p - k`).
    pub fn data_chunks(&self) -> usize {
        self.p - self.k
    }

    /// The coefficient of member `i` in parity equation `j`.
    pub fn coefficient(&self, j: usize, i: usize) -> u8 {
        self.coef.get(j, i)
    }

    /// The chunk size for a set whose largest logical file is `max_len`
    /// bytes: the smallest size with `p - k` chunks covering it.
    pub fn chunk_size(&self, max_len: u64) -> u64 {
        max_len.div_ceil(self.data_chunks() as u64)
    }

    /// The member holding parity equation `j` of row `r`.
    pub fn parity_holder(&self, r: usize, j: usize) -> usize {
        (r + j) % self.p
    }

    /// The row of member `m`'s parity chunk `j`.
    pub fn parity_row(&self, m: usize, j: usize) -> usize {
        (m + self.p - j) % self.p
    }

    /// Which parity equation member `m` holds in row `r`, if any.
    pub fn parity_slot(&self, m: usize, r: usize) -> Option<usize> {
        let j = (m + self.p - r) % self.p;
        (j < self.k).then_some(j)
    }

    /// The row of member `m`'s data chunk `d`.
    pub fn data_row(&self, m: usize, d: usize) -> usize {
        (m + 1 + d) % self.p
    }

    /// Which data chunk member `m` contributes to row `r`, if any.
    pub fn data_chunk(&self, m: usize, r: usize) -> Option<usize> {
        let t = (r + self.p - m) % self.p; // r = m + t
        (t >= 1 && t <= self.data_chunks()).then(|| t - 1)
    }

    /// The data members of row `r`, ascending.
    pub fn data_members(&self, r: usize) -> Vec<usize> {
        (0..self.p)
            .filter(|&m| self.data_chunk(m, r).is_some())
            .collect()
    }

    /// Adds member `i`'s contribution to parity equation `j`:
    /// `acc ^= E[j][i] · data`.
    pub fn contribute(&self, kernel: &dyn Kernel, j: usize, i: usize, data: &[u8], acc: &mut [u8]) {
        kernel.mul_acc(self.coefficient(j, i), data, acc);
    }

    /// Encodes row `r`: `parity[j]` becomes equation `j` over `data`, which
    /// is indexed by member (entries of non-data members are ignored).
    pub fn encode_row<B: DerefMut<Target = [u8]>>(
        &self,
        kernel: &dyn Kernel,
        r: usize,
        data: &[&[u8]],
        parity: &mut [B],
    ) {
        let members = self.data_members(r);
        for (j, out) in parity.iter_mut().enumerate().take(self.k) {
            let terms = members.iter().map(|&i| (self.coefficient(j, i), data[i]));
            linear_combination(kernel, terms, out);
        }
    }

    /// Plans the rebuild of row `r` given which members' data and parity
    /// chunks are lost (`lost_data[m]`, `lost_parity[m]`, by member).
    pub fn plan_row(
        &self,
        r: usize,
        lost_data: &[bool],
        lost_parity: &[bool],
    ) -> Result<RowPlan, RowUnrecoverable> {
        let ld: Vec<usize> = self
            .data_members(r)
            .into_iter()
            .filter(|&m| lost_data[m])
            .collect();
        let (mut alive, mut lost) = (Vec::new(), Vec::new());
        for j in 0..self.k {
            if lost_parity[self.parity_holder(r, j)] {
                lost.push(j);
            } else {
                alive.push(j);
            }
        }
        if ld.len() > alive.len() {
            return Err(RowUnrecoverable {
                row: r,
                lost_data: ld.len(),
                parity_left: alive.len(),
            });
        }
        let equations: Vec<usize> = alive.into_iter().take(ld.len()).collect();
        let inverse = self
            .coef
            .select(&equations, &ld)
            .invert()
            .map_err(|Singular| RowUnrecoverable {
                row: r,
                lost_data: ld.len(),
                parity_left: equations.len(),
            })?;
        Ok(RowPlan {
            row: r,
            lost_data: ld,
            equations,
            inverse,
            lost_parity: lost,
        })
    }

    /// Rebuilds one piece of a row from `row`'s pieces. Returns the pieces
    /// of `row.plan.lost_data` then of `row.plan.lost_parity`, in plan
    /// order.
    pub fn solve_piece(
        &self,
        kernel: &dyn Kernel,
        row: RowPieces<'_>,
    ) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
        let mut bufs = PieceBuffers::default();
        self.solve_piece_into(kernel, row, true, &mut bufs);
        let mut solved: Vec<Vec<u8>> = bufs.solved.iter().map(|b| b.to_vec()).collect();
        let mut parity_out: Vec<Vec<u8>> = bufs.parity.iter().map(|b| b.to_vec()).collect();
        solved.truncate(row.plan.lost_data.len());
        parity_out.truncate(row.plan.lost_parity.len());
        (solved, parity_out)
    }

    /// [`StripeCode::solve_piece`] into reused buffers: afterwards
    /// `bufs.solved[l][..len]` is lost data member `plan.lost_data[l]` and,
    /// if `with_parity`, `bufs.parity[e][..len]` is `plan.lost_parity[e]`.
    pub fn solve_piece_into(
        &self,
        kernel: &dyn Kernel,
        row: RowPieces<'_>,
        with_parity: bool,
        bufs: &mut PieceBuffers,
    ) {
        let RowPieces {
            plan, data, len, ..
        } = row;
        let lost = plan.lost_data.len();
        sized(&mut bufs.solved, lost, len);
        for (l, x) in bufs.solved.iter_mut().take(lost).enumerate() {
            self.solve_lost(kernel, &row, l, x);
        }
        if !with_parity {
            return;
        }
        // Re-encode the lost parity from the now complete data.
        let members = self.data_members(plan.row);
        sized(&mut bufs.parity, plan.lost_parity.len(), len);
        let solved = &bufs.solved;
        for (out, &j) in bufs.parity.iter_mut().zip(&plan.lost_parity) {
            let terms = members.iter().filter_map(|&i| {
                let d = match plan.lost_data.iter().position(|&m| m == i) {
                    Some(l) => Some(&solved[l][..]),
                    None => data[i],
                };
                d.map(|d| (self.coefficient(j, i), d))
            });
            linear_combination(kernel, terms, out);
        }
    }

    /// Lost data member `row.plan.lost_data[l]` alone, into
    /// `bufs.solved[0]`, which it returns: what a rebuilder that lost that
    /// member needs, where [`solve_piece_into`](Self::solve_piece_into)
    /// would solve every lost member of the row.
    pub fn solve_data_piece_into<'b>(
        &self,
        kernel: &dyn Kernel,
        row: RowPieces<'_>,
        l: usize,
        bufs: &'b mut PieceBuffers,
    ) -> &'b [u8] {
        sized(&mut bufs.solved, 1, row.len);
        self.solve_lost(kernel, &row, l, &mut bufs.solved[0]);
        &bufs.solved[0][..row.len]
    }

    /// Writes lost data member `plan.lost_data[l]` into `x`, straight from
    /// the row's pieces. With `b_e` the parity of equation
    /// `plan.equations[e]` plus the known data's contributions to it,
    /// `x_l = Σ_e A⁻¹[l][e] · b_e`, which expands to
    /// `Σ_e A⁻¹[l][e] · c_e + Σ_i (Σ_e A⁻¹[l][e] · E[e][i]) · d_i`: one pass
    /// per surviving piece with a combined coefficient, no `b_e` buffers,
    /// and the first pass written over `x` (issue 20: zero-filled buffers
    /// were 10% of a two-member rebuild).
    fn solve_lost(&self, kernel: &dyn Kernel, row: &RowPieces<'_>, l: usize, x: &mut [u8]) {
        let plan = row.plan;
        let from_parity = plan
            .equations
            .iter()
            .enumerate()
            .filter_map(|(e, &j)| row.parity[j].map(|c| (plan.inverse.get(l, e), c)));
        let from_data = self
            .data_members(plan.row)
            .into_iter()
            .filter(|i| !plan.lost_data.contains(i))
            .filter_map(|i| {
                let coefficient = plan.equations.iter().enumerate().fold(0u8, |sum, (e, &j)| {
                    sum ^ crate::gf::mul(plan.inverse.get(l, e), self.coefficient(j, i))
                });
                row.data[i].map(|d| (coefficient, d))
            });
        linear_combination(kernel, from_parity.chain(from_data), x);
    }
}

/// The pieces of one row a solve starts from, each `len` bytes:
/// `data[m]` is member m's data piece (`None` if lost or m is not a data
/// member of the row), `parity[j]` the piece of parity equation j (`None`
/// if lost or not sent).
#[derive(Clone, Copy)]
pub struct RowPieces<'a> {
    /// The row's plan (what is lost, which equations solve it).
    pub plan: &'a RowPlan,
    /// By member.
    pub data: &'a [Option<&'a [u8]>],
    /// By parity equation.
    pub parity: &'a [Option<&'a [u8]>],
    /// Bytes of each piece.
    pub len: usize,
}

/// The first `n` buffers of `v`, each `len` bytes long, their contents
/// unspecified: every byte is written by a [`linear_combination`].
fn sized(v: &mut Vec<AlignedBuf>, n: usize, len: usize) {
    v.resize_with(n.max(v.len()), AlignedBuf::new);
    for b in v.iter_mut().take(n) {
        b.clear();
        b.resize_for_overwrite(len);
    }
}

/// Buffers of [`StripeCode::solve_piece_into`], kept across pieces.
#[derive(Debug, Default)]
pub struct PieceBuffers {
    /// Solved data pieces, in `plan.lost_data` order.
    pub solved: Vec<AlignedBuf>,
    /// Re-encoded parity pieces, in `plan.lost_parity` order.
    pub parity: Vec<AlignedBuf>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_gives_every_member_k_parity_and_p_minus_k_data_chunks() {
        for (scheme, p) in [
            (Scheme::Xor, 2),
            (Scheme::Xor, 5),
            (Scheme::Rs { k: 2 }, 4),
            (Scheme::Rs { k: 3 }, 7),
        ] {
            let c = StripeCode::new(scheme, p).unwrap();
            for m in 0..p {
                let parity_rows: Vec<_> =
                    (0..p).filter(|&r| c.parity_slot(m, r).is_some()).collect();
                let data_rows: Vec<_> = (0..p).filter(|&r| c.data_chunk(m, r).is_some()).collect();
                assert_eq!(parity_rows.len(), c.parity_count());
                assert_eq!(data_rows.len(), c.data_chunks());
                assert!(parity_rows.iter().all(|r| !data_rows.contains(r)));
                for d in 0..c.data_chunks() {
                    assert_eq!(c.data_chunk(m, c.data_row(m, d)), Some(d));
                }
                for j in 0..c.parity_count() {
                    let r = c.parity_row(m, j);
                    assert_eq!(c.parity_holder(r, j), m);
                    assert_eq!(c.parity_slot(m, r), Some(j));
                }
            }
            for r in 0..p {
                assert_eq!(c.data_members(r).len(), p - c.parity_count());
            }
        }
    }

    #[test]
    fn xor_parity_of_two_members_is_the_other_member() {
        // p = 2: row r has one data member, so its parity is a copy.
        let c = StripeCode::new(Scheme::Xor, 2).unwrap();
        let a = [1u8, 2, 3];
        let b = [9u8, 8, 7];
        let mut parity = vec![vec![0u8; 3]];
        c.encode_row(&crate::gf::kernel::Scalar, 0, &[&a, &b], &mut parity);
        assert_eq!(parity[0], b);
    }

    #[test]
    fn too_many_losses_in_a_row_are_reported() {
        let c = StripeCode::new(Scheme::Rs { k: 2 }, 5).unwrap();
        let lost = [true, true, true, false, false];
        let e = c.plan_row(0, &lost, &lost).unwrap_err();
        assert!(e.to_string().contains("row 0"), "{e}");
    }

    #[test]
    fn every_lost_data_piece_is_solved_alone_and_with_the_others() {
        use crate::gf::kernel::Scalar;
        // RS(2) over 5 members, every row and every pair of lost members:
        // each lost data piece, solved alone or with the rest of its row,
        // is the original, and the re-encoded parity is the stored one.
        let c = StripeCode::new(Scheme::Rs { k: 2 }, 5).unwrap();
        let p = 5;
        let len = 37;
        let data: Vec<Vec<u8>> = (0..p)
            .map(|m| (0..len).map(|b| (m * 31 + b * 7 + 3) as u8).collect())
            .collect();
        for r in 0..p {
            let refs: Vec<&[u8]> = data.iter().map(Vec::as_slice).collect();
            let mut parity = vec![vec![0u8; len]; 2];
            c.encode_row(&Scalar, r, &refs, &mut parity);
            for a in 0..p {
                for b in a + 1..p {
                    let lost: Vec<bool> = (0..p).map(|m| m == a || m == b).collect();
                    let plan = c.plan_row(r, &lost, &lost).unwrap();
                    let known: Vec<Option<&[u8]>> =
                        (0..p).map(|m| (!lost[m]).then_some(refs[m])).collect();
                    let stored: Vec<Option<&[u8]>> = (0..2)
                        .map(|j| (!lost[c.parity_holder(r, j)]).then_some(&parity[j][..]))
                        .collect();
                    let mut bufs = PieceBuffers::default();
                    let row = RowPieces {
                        plan: &plan,
                        data: &known,
                        parity: &stored,
                        len,
                    };
                    c.solve_piece_into(&Scalar, row, true, &mut bufs);
                    for (l, &m) in plan.lost_data.iter().enumerate() {
                        assert_eq!(
                            &bufs.solved[l][..len],
                            &data[m][..],
                            "row {r}, lost {a} {b}"
                        );
                    }
                    for (e, &j) in plan.lost_parity.iter().enumerate() {
                        assert_eq!(
                            &bufs.parity[e][..len],
                            &parity[j][..],
                            "row {r}, lost {a} {b}"
                        );
                    }
                    for (l, &m) in plan.lost_data.iter().enumerate() {
                        let alone = c.solve_data_piece_into(&Scalar, row, l, &mut bufs);
                        assert_eq!(alone, &data[m][..], "row {r}, lost {a} {b}, alone");
                    }
                }
            }
        }
    }

    #[test]
    fn single_and_partner_are_not_stripe_codes() {
        assert!(StripeCode::new(Scheme::Single, 3).is_err());
        assert!(StripeCode::new(Scheme::Partner { copies: 1 }, 3).is_err());
    }
}
