#!/usr/bin/env python3
"""Node-local files of co-located replicas (issue 18): what coordinating
them costs a metadata-heavy program (a Python program's imports, small
files, os.stat) when every replica of a rank runs on one node.

benches/meta_loop.c (2 logical ranks by default, each on its own files in
a node-local directory) times three loops: create (open O_CREAT|O_WRONLY,
write 100 bytes, close, stat), stat of an existing file, and open/read
4 KiB/close. It runs in these variants, interleaved in every repetition
(the order rotates):

- plain: `mpiexec.mpich -n N`, no redio;
- r1: `redio run -r 1` (no replica shares a node with another of its rank:
  every call passes through);
- r2-coordinated: `redio run -r 2`, no configuration: the replicas of a
  rank share the node, so before each path call they run one round
  (`same_path_everywhere`), find the same name, and coordinate the call
  (the leader makes it, the others get its result);
- r2-remap: `redio run -r 2` with a `remap` rule giving each replica its
  own copy of the directory: no round, every call passes through (the
  r=2 baseline: the same processes on the same cores);
- r2-pid: `redio run -r 2`, no configuration, files named after the
  process id: the round runs, finds different names, and every call
  passes through (the round's own cost).

The directory is on the file system of target/ (ext4, as the runs in
docs/benchmarks.md; /dev/shm, node-local tmpfs, would be coordinated the
same way since redio manages it). Prints the median
microseconds per call (a loop's time per iteration over its calls) with
min-max, the ratios, then the machine block.

Usage (after scripts/build.sh):
  benches/colocated.py [--reps 5] [--iterations 500] [--ranks 2]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

from bench_cli import REDIO, ROOT, print_machine

TIMEOUT = 300
LOOPS = [  # name in meta_loop's output, what it does
    ("create", "open(O_CREAT)+write 100 B+close+stat"),
    ("stat", "stat"),
    ("read", "open+read 4 KiB+close"),
]
VARIANTS = ["plain", "r1", "r2-coordinated", "r2-remap", "r2-pid"]


def command(variant, exe, directory, iterations, ranks, remap):
    naming = "pid" if variant == "r2-pid" else "same"
    app = [exe, directory, str(iterations), naming]
    if variant == "plain":
        return ["mpiexec.mpich", "-n", str(ranks), *app]
    degree = "1" if variant == "r1" else "2"
    config = ["--config", remap] if variant == "r2-remap" else []
    return [REDIO, "run", "--mpi", "mpich", "-n", str(ranks), "-r", degree, *config, "--", *app]


def run(args):
    # No configuration from the environment: the variants set their own.
    env = {k: v for k, v in os.environ.items() if not k.startswith("REDIO_")}
    result = subprocess.run(["timeout", str(TIMEOUT), *args], capture_output=True, text=True, env=env)
    if result.returncode != 0:
        sys.exit(f"failed ({result.returncode}): {' '.join(args)}\n{result.stdout}{result.stderr}")
    times = {}
    for line in result.stdout.splitlines():
        words = line.split()
        if len(words) == 4 and words[2] == "calls":
            times[words[0]] = float(words[1]) / int(words[3])
    if set(times) != {name for name, _ in LOOPS}:
        sys.exit(f"no timings from: {' '.join(args)}\n{result.stdout}{result.stderr}")
    return times


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=500, help="iterations of each loop per run")
    parser.add_argument("--ranks", type=int, default=2, help="logical ranks (processes: ranks x r)")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="bench-colocated-", dir=os.path.join(ROOT, "target"))
    try:
        exe = os.path.join(work, "meta_loop")
        subprocess.run(["mpicc.mpich", "-O2", "-o", exe, os.path.join(ROOT, "benches", "meta_loop.c")], check=True)
        directory = os.path.join(work, "files")
        for d in ["files", "replica0", "replica1"]:
            os.makedirs(os.path.join(work, d))
        remap = os.path.join(work, "remap.yaml")
        with open(remap, "w") as f:
            f.write(f"version: 1\nremap:\n  - prefix: {directory}\n    to: {work}/replica{{replica}}\n")
        times = {(v, loop): [] for v in VARIANTS for loop, _ in LOOPS}
        for rep in range(args.reps):
            order = VARIANTS[rep % len(VARIANTS):] + VARIANTS[:rep % len(VARIANTS)]
            for variant in order:
                got = run(command(variant, exe, directory, args.iterations, args.ranks, remap))
                for loop, us in got.items():
                    times[(variant, loop)].append(us)
            print(f"repetition {rep + 1} of {args.reps} done", file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    med = {key: statistics.median(t) for key, t in times.items()}
    print(f"\n{args.ranks} ranks, MPICH, {args.iterations} iterations per loop, {args.reps} interleaved "
          "repetitions: median microseconds per call (min-max)\n")
    print("| loop | " + " | ".join(VARIANTS) + " |")
    print("|---|" + "---|" * len(VARIANTS))
    for loop, what in LOOPS:
        cells = [f"{med[(v, loop)]:.1f} ({min(times[(v, loop)]):.1f}-{max(times[(v, loop)]):.1f})" for v in VARIANTS]
        print(f"| {loop}: {what} | " + " | ".join(cells) + " |")
    print("\nRatios of the medians\n")
    ratios = [("r1 / plain", "r1", "plain"), ("r2-remap / plain", "r2-remap", "plain"),
              ("r2-coordinated / r2-remap", "r2-coordinated", "r2-remap"),
              ("r2-pid / r2-remap", "r2-pid", "r2-remap"),
              ("r2-coordinated / plain", "r2-coordinated", "plain")]
    print("| loop | " + " | ".join(name for name, _, _ in ratios) + " |")
    print("|---|" + "---|" * len(ratios))
    for loop, _ in LOOPS:
        print(f"| {loop} | " + " | ".join(f"{med[(a, loop)] / med[(b, loop)]:.1f}x" for _, a, b in ratios) + " |")
    print()
    print_machine("mpich")


if __name__ == "__main__":
    main()
