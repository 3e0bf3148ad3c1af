"""Python's directory helpers on SHARED_DIR under redio: every rank runs
os.makedirs(exist_ok=True) on the same nested tree at once (the mkdir race),
writes a file inside, lists the directory with os.listdir and os.scandir,
walks it with os.walk, removes a tree of its own with shutil.rmtree, and
prints what it saw (sorted, so the output is a plain run's).

Usage: python3 dirs.py SHARED_DIR
"""
import os
import shutil
import sys

from mpi4py import MPI

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
root = sys.argv[1]
tree = os.path.join(root, "py", "a", "b", "c")


def say(text):
    print(text, flush=True)


say(f"dirs.py rank {rank}")
comm.Barrier()
os.makedirs(tree, exist_ok=True)
say(f"makedirs: isdir {os.path.isdir(tree)}")
try:
    os.makedirs(tree)
    say("makedirs again: made")
except FileExistsError:
    say("makedirs again: FileExistsError")
with open(os.path.join(tree, f"f.{rank}"), "w") as f:
    f.write(f"rank {rank}\n")
comm.Barrier()
say(f"listdir: {sorted(os.listdir(tree))}")
with os.scandir(tree) as entries:
    say(f"scandir: {sorted((e.name, e.is_file()) for e in entries)}")
walked = [(os.path.relpath(d, root), sorted(ds), sorted(fs)) for d, ds, fs in os.walk(os.path.join(root, "py"))]
say(f"walk: {sorted(walked)}")
own = os.path.join(root, f"own.{rank}", "x", "y")
os.makedirs(own)
for i in range(3):
    with open(os.path.join(own, f"g{i}"), "w") as f:
        f.write("g")
say(f"own before rmtree: {sorted(os.listdir(os.path.dirname(own)))}")
shutil.rmtree(os.path.join(root, f"own.{rank}"))
say(f"own after rmtree: exists {os.path.exists(os.path.join(root, f'own.{rank}'))}")
comm.Barrier()
os.remove(os.path.join(tree, f"f.{rank}"))
comm.Barrier()
say(f"listdir after remove: {sorted(os.listdir(tree))}")
say(f"dirs.py rank {rank} done")
