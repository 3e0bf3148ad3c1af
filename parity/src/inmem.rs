//! Whole-set encode and rebuild on buffers in memory: the reference that the
//! streaming (file and MPI) paths are tested against, and small enough to
//! read as the definition of the code.

use crate::gf::kernel::Kernel;
use crate::stripe::{RowPieces, RowUnrecoverable, StripeCode};

/// Chunk `d` of a logical file, padded with zeros to `chunk` bytes.
pub fn data_chunk(file: &[u8], d: usize, chunk: usize) -> Vec<u8> {
    let mut out = vec![0u8; chunk];
    let start = (d * chunk).min(file.len());
    let end = ((d + 1) * chunk).min(file.len());
    out[..end - start].copy_from_slice(&file[start..end]);
    out
}

/// The chunk size and every member's parity chunks (`parity[m][j]`) for
/// the logical files `files` (one per member, any lengths).
pub fn encode(
    code: &StripeCode,
    kernel: &dyn Kernel,
    files: &[&[u8]],
) -> (usize, Vec<Vec<Vec<u8>>>) {
    let p = code.members();
    let max = files.iter().map(|f| f.len()).max().unwrap_or(0);
    let chunk = code.chunk_size(max as u64) as usize;
    let mut parity = vec![vec![vec![0u8; chunk]; code.parity_count()]; p];
    for r in 0..p {
        let data: Vec<Vec<u8>> = (0..p)
            .map(|m| match code.data_chunk(m, r) {
                Some(d) => data_chunk(files[m], d, chunk),
                None => Vec::new(),
            })
            .collect();
        let refs: Vec<&[u8]> = data.iter().map(Vec::as_slice).collect();
        let mut row = vec![vec![0u8; chunk]; code.parity_count()];
        code.encode_row(kernel, r, &refs, &mut row);
        for (j, c) in row.into_iter().enumerate() {
            parity[code.parity_holder(r, j)][j] = c;
        }
    }
    (chunk, parity)
}

/// Rebuilds lost logical files (`files[m] == None`, restored to `lens[m]`
/// bytes) and lost parity (`parity[m] == None`) in place.
pub fn rebuild(
    code: &StripeCode,
    kernel: &dyn Kernel,
    chunk: usize,
    lens: &[usize],
    files: &mut [Option<Vec<u8>>],
    parity: &mut [Option<Vec<Vec<u8>>>],
) -> Result<(), RowUnrecoverable> {
    let p = code.members();
    let lost_data: Vec<bool> = files.iter().map(Option::is_none).collect();
    let lost_parity: Vec<bool> = parity.iter().map(Option::is_none).collect();
    let plans = (0..p)
        .map(|r| code.plan_row(r, &lost_data, &lost_parity))
        .collect::<Result<Vec<_>, _>>()?;
    let mut new_files: Vec<Vec<u8>> = (0..p)
        .map(|_| vec![0u8; code.data_chunks() * chunk])
        .collect();
    let mut new_parity: Vec<Vec<Vec<u8>>> = vec![vec![Vec::new(); code.parity_count()]; p];
    for plan in &plans {
        let r = plan.row;
        let data: Vec<Option<Vec<u8>>> = (0..p)
            .map(|m| match (code.data_chunk(m, r), &files[m]) {
                (Some(d), Some(f)) => Some(data_chunk(f, d, chunk)),
                _ => None,
            })
            .collect();
        let data_refs: Vec<Option<&[u8]>> = data.iter().map(|d| d.as_deref()).collect();
        let par: Vec<Option<&[u8]>> = (0..code.parity_count())
            .map(|j| {
                parity[code.parity_holder(r, j)]
                    .as_ref()
                    .map(|c| c[j].as_slice())
            })
            .collect();
        let row = RowPieces {
            plan,
            data: &data_refs,
            parity: &par,
            len: chunk,
        };
        let (solved, reparity) = code.solve_piece(kernel, row);
        for (m, bytes) in plan.lost_data.iter().zip(solved) {
            let d = code.data_chunk(*m, r).unwrap_or(0);
            new_files[*m][d * chunk..(d + 1) * chunk].copy_from_slice(&bytes);
        }
        for (j, bytes) in plan.lost_parity.iter().zip(reparity) {
            new_parity[code.parity_holder(r, *j)][*j] = bytes;
        }
    }
    for m in 0..p {
        if lost_data[m] {
            let mut f = std::mem::take(&mut new_files[m]);
            f.truncate(lens[m]);
            files[m] = Some(f);
        }
        if lost_parity[m] {
            parity[m] = Some(std::mem::take(&mut new_parity[m]));
        }
    }
    Ok(())
}
