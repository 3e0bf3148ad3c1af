"""An mpi4py program with file I/O on a shared directory (issue 18).

Usage: python3 mpi4py_io.py SHARED_DIR

Prints its rank and size, runs collectives, writes one file per rank and
one file by rank 0 (the gathered lines of every rank) into SHARED_DIR,
then every rank reads every file back and prints a checksum. The output
is deterministic: the same under redio as in a plain run. SHARED_DIR must
exist (no os.makedirs: its coordination is another change).
"""

import os
import sys
import zlib

from mpi4py import MPI

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
size = comm.Get_size()
shared = sys.argv[1]
print(f"rank {rank} of {size}", flush=True)

total = comm.allreduce(rank + 1, op=MPI.SUM)
word = comm.bcast("hello from rank 0" if rank == 0 else None, root=0)
lines = comm.gather(f"rank {rank} squared {rank * rank}", root=0)
print(f"rank {rank}: allreduce {total}, bcast {word!r}", flush=True)

# 1 MiB of deterministic data per rank, written in pieces.
data = bytes((rank * 31 + i * 7 + (i >> 10)) & 0xFF for i in range(1 << 20))
with open(os.path.join(shared, f"rank-{rank}.dat"), "wb") as f:
    for start in range(0, len(data), 64 * 1024):
        f.write(data[start : start + 64 * 1024])
if rank == 0:
    with open(os.path.join(shared, "all.txt"), "w") as f:
        for line in lines:
            f.write(line + "\n")
comm.Barrier()

for name in [f"rank-{r}.dat" for r in range(size)] + ["all.txt"]:
    with open(os.path.join(shared, name), "rb") as f:
        content = f.read()
    print(f"rank {rank}: {name}: {len(content)} bytes, crc32 {zlib.crc32(content):08x}", flush=True)
with open(os.path.join(shared, "all.txt")) as f:
    print(f"rank {rank}: all.txt says {f.read().splitlines()}", flush=True)
