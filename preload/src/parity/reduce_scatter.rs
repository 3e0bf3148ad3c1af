//! The alternative XOR / RS encode of Gropp, Ross & Miller: one
//! `MPI_Ireduce_scatter_block` with `MPI_BXOR` per piece, on a communicator
//! of the set, instead of the ring of `redio_parity::ring`. Built to compare
//! the two (`REDIO_PARITY_ENGINE=reduce-scatter`); the ring is the default.
//!
//! Per piece, member `m` fills block `h` of its send buffer (k pieces) with
//! its contributions to the parity chunks that member `h` holds: chunk `j`
//! of `h` belongs to row `parity_row(h, j)`. XOR-reducing block `h` over
//! all members leaves exactly `h`'s parity pieces with `h`, the same bytes
//! as the ring. Memory is `p·k` pieces per member, not `2k + 1`.

use crate::parity::collective::ok;

use crate::comm::collective;
use crate::comm::ffi;
use crate::comm::request::Op;
use crate::parity::collective::rank_and_size;
use redio_aligned::AlignedBuf;
use redio_parity::gf::kernel::Kernel;
use redio_parity::ring::{ReadChunk, Traffic, WriteParity};
use redio_parity::stripe::StripeCode;

/// This member's part of the encode; `comm` holds exactly the set, member
/// `i` at rank `i` (so its rank is the member index). `read` and `write` as for `ring::encode`.
pub(crate) fn encode(
    comm: ffi::MPI_Comm,
    code: &StripeCode,
    kernel: &dyn Kernel,
    chunk: u64,
    piece: usize,
    read: &mut ReadChunk<'_>,
    write: &mut WriteParity<'_>,
) -> Result<Traffic, String> {
    let (p, k) = (code.members(), code.parity_count());
    let (member, size) = rank_and_size(comm)?;
    if size != p {
        return Err(format!("set communicator has {size} ranks, the code {p}"));
    }
    let piece = piece.max(1);
    let mut traffic = Traffic::default();
    // Page-aligned and reused piece after piece (issue 20); only `send`,
    // which the contributions accumulate into, is zeroed per piece.
    let (mut send, mut recv, mut data) = (AlignedBuf::new(), AlignedBuf::new(), AlignedBuf::new());
    let mut off = 0u64;
    while off < chunk {
        let len = piece.min((chunk - off) as usize);
        let block = k * len;
        // An MPI count is an int.
        i32::try_from(block).map_err(|_| "parity piece over 2 GiB")?;
        send.clear();
        send.resize(p * block, 0);
        recv.resize_for_overwrite(block);
        data.resize_for_overwrite(len);
        for r in 0..p {
            let Some(d) = code.data_chunk(member, r) else {
                continue;
            };
            read(d, off, &mut data)?;
            traffic.read += len as u64;
            for j in 0..k {
                let at = code.parity_holder(r, j) * block + j * len;
                code.contribute(kernel, j, member, &data, &mut send[at..at + len]);
            }
        }
        // Waited for as moving the whole send buffer.
        ok(
            collective::reduce_scatter_block(&send, &mut recv, Op::BitXor, comm),
            "MPI_Ireduce_scatter_block",
        )?;
        // What a reduce-scatter moves at least, whatever MPI's algorithm.
        traffic.sent += ((p - 1) * block) as u64;
        traffic.received += ((p - 1) * block) as u64;
        for j in 0..k {
            write(j, off, &recv[j * len..(j + 1) * len])?;
        }
        off += len as u64;
    }
    Ok(traffic)
}
