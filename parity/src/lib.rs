//! redio-parity: lazy redundancy across ranks, without MPI.
//!
//! After the replicas of a job have closed their node-local output, redio
//! computes redundancy data across the ranks of one replica world, so that
//! the files of lost nodes can be rebuilt (Gropp, Ross & Miller 2004; the
//! SINGLE, PARTNER, XOR and RS schemes of LLNL's redset). This crate holds
//! everything that does not need MPI:
//!
//! - [`gf`]: GF(2^8) arithmetic and the bulk kernels (scalar, AVX2, GFNI);
pub mod gf;
