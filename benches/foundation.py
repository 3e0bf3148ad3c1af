#!/usr/bin/env python3
"""Benchmarks of the replication runtime (issue 2), measured side by side.

start-up: wall time of a 6-process job of the smallest MPI program, plain
          (`mpiexec -n 6 hello`) against redio (`redio run -n 2 -r 3 -- hello`,
          and the manual form `mpiexec -n 6 redio exec -- hello`). Runs are
          interleaved so that machine noise hits every variant alike.
oversubscription: compute time of world rank 0 while its 5 peers wait:
          plain MPICH with the peers in MPI_Barrier (busy-polling, for
          contrast) or in MPI_Finalize, and under redio with the peers in
          redio's own coordination (the polled finalize all-reduce), against
          the rank alone.

Usage: benches/foundation.py [--reps N] [--work ITERATIONS]
Prints markdown tables; paste them into docs/benchmarks.md.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

from bench_cli import REDIO, ROOT, print_machine

BUILD = os.path.join(ROOT, "target", "bench")
TIMEOUT = 300


def compile_program(name):
    os.makedirs(BUILD, exist_ok=True)
    exe = os.path.join(BUILD, name)
    subprocess.run(["mpicc.mpich", "-O2", "-o", exe, os.path.join(ROOT, "benches", name + ".c")], check=True)
    return exe


def timed(command):
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(f"failed: {' '.join(command)}\n{result.stderr}")
    return elapsed, result.stdout


def startup(reps):
    hello = compile_program("hello")
    variants = {
        "plain `mpiexec -n 6 hello`": ["mpiexec.mpich", "-n", "6", hello],
        "`redio run -n 2 -r 3 -- hello`": [REDIO, "run", "--mpi", "mpich", "-n", "2", "-r", "3", "--", hello],
        "`mpiexec -n 6 redio exec -- hello`": ["mpiexec.mpich", "-n", "6", "-genv", "REDIO_REPLICATION_DEGREE", "3",
                                               REDIO, "exec", "--mpi", "mpich", "--", hello],
    }
    times = {name: [] for name in variants}
    for _ in range(2):  # warm the page cache
        for command in variants.values():
            timed(command)
    for _ in range(reps):
        for name, command in variants.items():
            times[name].append(timed(command)[0])
    base = statistics.median(times["plain `mpiexec -n 6 hello`"])
    print(f"\n### Start-up of a 6-process job ({reps} interleaved runs each, MPICH)\n")
    print("| variant | median wall time | extra over plain |")
    print("|---|---|---|")
    for name, samples in times.items():
        median = statistics.median(samples)
        print(f"| {name} | {median * 1000:.0f} ms | {(median - base) * 1000:+.0f} ms |")


def compute_seconds(stdout):
    for line in stdout.splitlines():
        if line.startswith("compute_seconds"):
            return float(line.split()[1])
    sys.exit(f"no compute_seconds in output:\n{stdout}")


def oversubscription(reps, work):
    busy = compile_program("busy")
    variants = {
        "rank alone (`mpiexec -n 1`)": ["mpiexec.mpich", "-n", "1", busy, str(work)],
        "plain, 5 peers in MPI_Barrier (`mpiexec -n 6`, busy-polling)": ["mpiexec.mpich", "-n", "6", busy, str(work), "barrier"],
        "plain, 5 peers in MPI_Finalize (`mpiexec -n 6`)": ["mpiexec.mpich", "-n", "6", busy, str(work)],
        "redio, 5 peers in redio's finalize (`redio run -n 6 -r 1`)": [REDIO, "run", "--mpi", "mpich", "-n", "6", "-r", "1", "--", busy, str(work)],
    }
    times = {name: [] for name in variants}
    for _ in range(reps):
        for name, command in variants.items():
            times[name].append(compute_seconds(timed(command)[1]))
    base = statistics.median(times["rank alone (`mpiexec -n 1`)"])
    print(f"\n### Compute time of a busy rank while its peers wait ({reps} interleaved runs each, MPICH, 2 cores)\n")
    print("| variant | median compute time | ratio to alone |")
    print("|---|---|---|")
    for name, samples in times.items():
        median = statistics.median(samples)
        print(f"| {name} | {median:.3f} s | {median / base:.2f}x |")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--work", type=int, default=300_000_000)
    args = parser.parse_args()
    startup(args.reps)
    oversubscription(max(3, args.reps // 3), args.work)
    print_machine("mpich")


if __name__ == "__main__":
    main()
