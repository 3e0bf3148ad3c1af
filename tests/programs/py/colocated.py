"""Node-local files of co-located replicas from Python, with no configuration
(tests/interposition/colocated.rs): os.makedirs(exist_ok=True), a JSON file
per rank, a log per rank appended to twice, a NamedTemporaryFile (a random
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
# Each rank its own log, appended to twice: appends of several ranks to one
# file are not atomic under redio (docs/interposition.md, "Limits").
for step in range(2):
    with open(os.path.join(out, f"log.{rank}.txt"), "a") as f:
        f.write(f"rank {rank} step {step}\n")
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
