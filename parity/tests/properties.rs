//! Property tests of the codes and kernels (proptest).

use proptest::collection::vec;
use proptest::prelude::*;
use redio_parity::gf::kernel::{available, best, Kernel, Scalar};
use redio_parity::inmem;
use redio_parity::scheme::Scheme;
use redio_parity::stripe::StripeCode;

/// A scheme and set size: XOR or RS(k) with 1 <= k < p.
fn code() -> impl Strategy<Value = StripeCode> {
    (2usize..9)
        .prop_flat_map(|p| (Just(p), 0usize..p))
        .prop_map(|(p, k)| {
            let scheme = if k == 0 {
                Scheme::Xor
            } else {
                Scheme::Rs { k: k as u8 }
            };
            StripeCode::new(scheme, p).expect("valid scheme")
        })
}

/// Logical files for `p` members with lengths that include 0, 1, odd and
/// unequal sizes.
fn files(p: usize) -> impl Strategy<Value = Vec<Vec<u8>>> {
    vec(
        prop_oneof![
            Just(0usize),
            Just(1usize),
            1usize..300,
            (0usize..40).prop_map(|x| 2 * x + 1)
        ]
        .prop_flat_map(|len| vec(any::<u8>(), len)),
        p,
    )
}

fn code_and_files() -> impl Strategy<Value = (StripeCode, Vec<Vec<u8>>)> {
    code().prop_flat_map(|c| {
        let p = c.members();
        (Just(c), files(p))
    })
}

fn refs(files: &[Vec<u8>]) -> Vec<&[u8]> {
    files.iter().map(Vec::as_slice).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// encode(a ^ b) = encode(a) ^ encode(b), for equal-length inputs.
    #[test]
    fn encoding_is_linear((c, a) in code_and_files(), seed in any::<u64>()) {
        let max = a.iter().map(Vec::len).max().unwrap_or(0);
        let a: Vec<Vec<u8>> = a.into_iter().map(|mut f| { f.resize(max, 0); f }).collect();
        let b: Vec<Vec<u8>> = a.iter().enumerate().map(|(m, f)| {
            f.iter().enumerate().map(|(i, x)| x.rotate_left(3) ^ (seed.wrapping_mul(i as u64 + 1) >> (m % 8)) as u8).collect()
        }).collect();
        let sum: Vec<Vec<u8>> = a.iter().zip(&b).map(|(x, y)| x.iter().zip(y).map(|(p, q)| p ^ q).collect()).collect();
        let (_, pa) = inmem::encode(&c, best(), &refs(&a));
        let (_, pb) = inmem::encode(&c, best(), &refs(&b));
        let (_, ps) = inmem::encode(&c, best(), &refs(&sum));
        for m in 0..c.members() {
            for j in 0..c.parity_count() {
                let want: Vec<u8> = pa[m][j].iter().zip(&pb[m][j]).map(|(x, y)| x ^ y).collect();
                prop_assert_eq!(&ps[m][j], &want);
            }
        }
    }

    /// XOR-folding every member's own contribution `E[j][i]·d_i` (what a
    /// rank sends in the reduce-scatter) gives the whole-set encoding.
    #[test]
    fn fold_of_per_rank_contributions_equals_whole_set_encode((c, f) in code_and_files()) {
        let (chunk, whole) = inmem::encode(&c, best(), &refs(&f));
        for r in 0..c.members() {
            for j in 0..c.parity_count() {
                let mut acc = vec![0u8; chunk];
                for (i, fi) in f.iter().enumerate() {
                    // Each rank computes its contribution alone, in its own buffer.
                    let mut mine = vec![0u8; chunk];
                    if let Some(d) = c.data_chunk(i, r) {
                        c.contribute(&Scalar, j, i, &inmem::data_chunk(fi, d, chunk), &mut mine);
                    }
                    Scalar.xor_acc(&mine, &mut acc);
                }
                prop_assert_eq!(&acc, &whole[c.parity_holder(r, j)][j]);
            }
        }
    }

    /// Any erasure of up to k members (data, parity or both) rebuilds
    /// byte-identical files and parity.
    #[test]
    fn any_k_or_fewer_erasures_reconstruct((c, f) in code_and_files(), pick in any::<u64>(), mode in 0u8..3) {
        let p = c.members();
        let (chunk, parity) = inmem::encode(&c, best(), &refs(&f));
        let lens: Vec<usize> = f.iter().map(Vec::len).collect();
        // Choose up to k distinct members from the random bits.
        let want = (pick as usize % c.parity_count()) + 1;
        // A random permutation of the members (Fisher-Yates on an LCG).
        let mut order: Vec<usize> = (0..p).collect();
        let mut bits = pick;
        for i in (1..p).rev() {
            bits = bits.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            order.swap(i, (bits >> 33) as usize % (i + 1));
        }
        let lost = &order[..want];
        let mut files: Vec<Option<Vec<u8>>> = f.iter().cloned().map(Some).collect();
        let mut par: Vec<Option<Vec<Vec<u8>>>> = parity.iter().cloned().map(Some).collect();
        for &m in lost {
            if mode != 1 { files[m] = None; }
            if mode != 0 { par[m] = None; }
        }
        inmem::rebuild(&c, best(), chunk, &lens, &mut files, &mut par).expect("within tolerance");
        for m in 0..p {
            prop_assert_eq!(files[m].as_ref().unwrap(), &f[m]);
            prop_assert_eq!(par[m].as_ref().unwrap(), &parity[m]);
        }
    }

    /// One more whole-member loss than tolerated is refused.
    #[test]
    fn more_than_k_erasures_are_refused((c, f) in code_and_files()) {
        let (chunk, parity) = inmem::encode(&c, best(), &refs(&f));
        prop_assume!(chunk > 0);
        let lens: Vec<usize> = f.iter().map(Vec::len).collect();
        let mut files: Vec<Option<Vec<u8>>> = f.into_iter().map(Some).collect();
        let mut par: Vec<Option<Vec<Vec<u8>>>> = parity.into_iter().map(Some).collect();
        for m in 0..=c.parity_count() {
            files[m] = None;
            par[m] = None;
        }
        prop_assert!(inmem::rebuild(&c, best(), chunk, &lens, &mut files, &mut par).is_err());
    }

    /// Every SIMD kernel equals the scalar one on random input.
    #[test]
    fn simd_kernels_equal_scalar(c in any::<u8>(), src in vec(any::<u8>(), 0..2000), seed in any::<u8>()) {
        let orig: Vec<u8> = (0..src.len()).map(|i| (i as u8).wrapping_mul(31) ^ seed).collect();
        let mut want = orig.clone();
        Scalar.mul_acc(c, &src, &mut want);
        let mut want_xor = orig.clone();
        Scalar.xor_acc(&src, &mut want_xor);
        for k in available() {
            let mut got = orig.clone();
            k.mul_acc(c, &src, &mut got);
            prop_assert_eq!(&got, &want, "kernel {}", k.name());
            let mut got = orig.clone();
            k.xor_acc(&src, &mut got);
            prop_assert_eq!(&got, &want_xor, "kernel {} xor", k.name());
        }
    }
}

mod format_props {
    use proptest::collection::vec;
    use proptest::prelude::*;
    use redio_parity::format::{ChunkMeta, FileMeta, Header, MemberMeta};
    use redio_parity::scheme::Scheme;

    fn member() -> impl Strategy<Value = MemberMeta> {
        (
            any::<u32>(),
            "[a-z0-9._-]{0,12}",
            ".{0,8}",
            vec(
                (
                    // File names are bytes, UTF-8 or not.
                    vec(any::<u8>(), 1..30),
                    0u64..1 << 40,
                    any::<u32>(),
                    any::<i64>(),
                    0u32..1_000_000_000,
                    any::<u32>(),
                ),
                0..4,
            ),
        )
            .prop_map(|(world, group, host, files)| MemberMeta {
                world_rank: world,
                logical_rank: 0,
                failure_group: group,
                host,
                // A valid header names each file of a member once
                // (format::validate): repeated paths are dropped.
                files: files
                    .into_iter()
                    .scan(std::collections::HashSet::new(), |seen, file| {
                        Some(seen.insert(file.0.clone()).then_some(file))
                    })
                    .flatten()
                    .map(
                        |(path, size, mode, mtime_sec, mtime_nsec, crc32)| FileMeta {
                            path,
                            size,
                            mode,
                            mtime_sec,
                            mtime_nsec,
                            crc32,
                        },
                    )
                    .collect(),
            })
    }

    proptest! {
        /// Any valid header survives encode and decode unchanged.
        #[test]
        fn headers_round_trip(mut members in vec(member(), 2..7), k in 1u8..3, crcs in vec(any::<u32>(), 2)) {
            let p = members.len();
            prop_assume!((k as usize) < p);
            for (i, m) in members.iter_mut().enumerate() {
                m.logical_rank = i as u32;
            }
            let scheme = if k == 1 { Scheme::Xor } else { Scheme::Rs { k } };
            let max = members.iter().map(MemberMeta::logical_len).max().unwrap_or(0);
            let chunk = max.div_ceil((p - k as usize) as u64);
            let h = Header {
                scheme,
                set_id: 1,
                set_count: 2,
                logical_ranks: p as u32,
                member: (p - 1) as u16,
                chunk_size: chunk,
                members,
                payload: (0..k as usize).map(|j| ChunkMeta { len: chunk, crc32: crcs[j] }).collect(),
            };
            let bytes = h.encode();
            prop_assert_eq!(Header::decode(&bytes).unwrap(), h);
        }
    }
}
