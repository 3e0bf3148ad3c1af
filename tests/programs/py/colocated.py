"""Node-local files of co-located replicas from Python, with no configuration
(tests/interposition/colocated.rs): os.makedirs(exist_ok=True), a JSON file
per rank, a log per rank appended to twice, a log every rank appends to at
once (its lines in arrival order, so rank 0 prints them sorted and removes
it), a NamedTemporaryFile (a random
name, each replica's own) moved over a common name with os.replace, and a
module written and imported after MPI_Init.

    python3 colocated.py DIR
"""
import importlib
import json
import os
import sys
import tempfile

from mpi4py import MPI

rank = MPI.COMM_WORLD.Get_rank()
out = sys.argv[1]
os.makedirs(os.path.join(out, "results", "sub"), exist_ok=True)
with open(os.path.join(out, f"data.{rank}.json"), "w") as f:
    json.dump({"rank": rank, "values": list(range(1000))}, f)
for step in range(2):
    with open(os.path.join(out, f"log.{rank}.txt"), "a") as f:
        f.write(f"rank {rank} step {step}\n")
# Every rank appends to one log at once: no line may be lost.
common = os.path.join(out, "common.log")
for step in range(20):
    with open(common, "a") as f:
        f.write(f"rank {rank} step {step:02d}\n")
MPI.COMM_WORLD.Barrier()
if rank == 0:
    with open(common) as f:
        lines = sorted(f.read().splitlines())
    print(f"common.log: {len(lines)} lines, {len(set(lines))} distinct", flush=True)
    os.remove(common)
MPI.COMM_WORLD.Barrier()
with tempfile.NamedTemporaryFile("w", dir=out, delete=False, prefix=f"t{rank}.") as f:
    f.write("temporary, then moved\n")
    temporary = f.name
os.replace(temporary, os.path.join(out, f"final.{rank}"))
module = os.path.join(out, f"m{rank}.py")
with open(module, "w") as f:
    f.write(f"X = {42 + rank}\n")
sys.path.insert(0, out)
imported = importlib.import_module(f"m{rank}")
mine = sorted(name for name in os.listdir(out) if name.endswith(f"{rank}") or f".{rank}." in name)
print(f"rank {rank}: X={imported.X} mine={mine}", flush=True)
with open(os.path.join(out, f"data.{rank}.json")) as f:
    print(f"rank {rank}: read back {len(json.load(f)['values'])} values", flush=True)
print(f"rank {rank} done", flush=True)
