"""MPICH from Python the way mpi4py loads MPI, without mpi4py (issue 18).

Usage: python3 ctypes_mpich.py SHARED_DIR

Python has no MPICH build of mpi4py here; this program loads libmpich
with dlopen(RTLD_LOCAL) (ctypes' default, as Python loads an extension
module and its libmpi), then calls MPI_Init, MPI_Comm_rank, ... by their
global names: under redio those are libredio.so's wrappers, which must
find PMPI_* in that RTLD_LOCAL library. Prints rank, size and an
allreduce; writes one file per rank into SHARED_DIR and reads them back.
"""

import ctypes
import os
import sys
import zlib

# MPICH's handles are integer constants (mpi.h).
MPI_COMM_WORLD = 0x44000000
MPI_INT = 0x4C000405
MPI_SUM = 0x58000003

mpich = ctypes.CDLL("libmpich.so.12", mode=os.RTLD_LAZY | os.RTLD_LOCAL)
glob = ctypes.CDLL(None)
# Under redio the global names are libredio.so's; in a plain run there is
# no global MPI_Init (RTLD_LOCAL), so call the library's own.
api = glob if hasattr(glob, "MPI_Init") else mpich

if api.MPI_Init(None, None) != 0:
    sys.exit("MPI_Init failed")
rank, size = ctypes.c_int(), ctypes.c_int()
api.MPI_Comm_rank(MPI_COMM_WORLD, ctypes.byref(rank))
api.MPI_Comm_size(MPI_COMM_WORLD, ctypes.byref(size))
mine, total = ctypes.c_int(rank.value + 1), ctypes.c_int()
api.MPI_Allreduce(ctypes.byref(mine), ctypes.byref(total), 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD)
print(f"rank {rank.value} of {size.value}: allreduce {total.value}", flush=True)

shared = sys.argv[1]
data = bytes((rank.value * 17 + i) & 0xFF for i in range(256 * 1024))
with open(os.path.join(shared, f"rank-{rank.value}.dat"), "wb") as f:
    f.write(data)
api.MPI_Barrier(MPI_COMM_WORLD)
for r in range(size.value):
    with open(os.path.join(shared, f"rank-{r}.dat"), "rb") as f:
        content = f.read()
    print(f"rank {rank.value}: rank-{r}.dat {len(content)} bytes, crc32 {zlib.crc32(content):08x}", flush=True)
api.MPI_Finalize()
