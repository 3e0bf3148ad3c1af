"""MPI-IO from Python (mpi4py's MPI.File) as a Python checkpoint writer
uses it: a strided view over a vector datatype, a collective write, the
shared file pointer, a collective read back.

Usage: mpi4py_mpiio.py SHARED_DIR LOCAL_DIR

Prints a deterministic log per rank (tests/io_stacks/python.rs)."""
import sys
import zlib

from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
shared = sys.argv[1]
BLOCK, BLOCKS = 1024, 32
ITEM = MPI.INT.Get_size()


def say(text):
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


data = bytearray()
for i in range(BLOCK * BLOCKS):
    data += (rank * 1000003 + i).to_bytes(ITEM, "little", signed=True)

fh = MPI.File.Open(comm, f"{shared}/python.dat", MPI.MODE_CREATE | MPI.MODE_RDWR)
filetype = MPI.INT.Create_vector(BLOCKS, BLOCK, BLOCK * size).Commit()
fh.Set_view(rank * BLOCK * ITEM, MPI.INT, filetype)
status = MPI.Status()
fh.Write_all([data, MPI.INT], status)
say(f"write_all count {status.Get_count(MPI.INT)}")
fh.Sync()
comm.Barrier()
say(f"size {fh.Get_size()}")
back = bytearray(len(data))
fh.Read_at_all(0, [back, MPI.INT], status)
say(f"read_at_all count {status.Get_count(MPI.INT)} same {int(back == data)} crc {zlib.crc32(back):08x}")
fh.Close()
filetype.Free()

log = MPI.File.Open(comm, f"{shared}/python.log", MPI.MODE_CREATE | MPI.MODE_WRONLY)
line = f"rank {rank} of {size}\n".encode()
log.Write_ordered([line, MPI.CHAR])
say(f"shared position {log.Get_position_shared()}")
log.Close()
say(f"rank {rank} done")
