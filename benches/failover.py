#!/usr/bin/env python3
"""Fail-over benchmarks (issue 5), on MPICH with the liveness back-end.

1. Detection latency: a replica dies (REDIO_TEST_DIE) in the middle of a
   job doing coordinated I/O (tests/programs/io/io_failover.c); the latency
   is the time from its death (its last event) to the survivor of its
   replica set resuming (the survivor's fail-over event, written once the
   survivors agreed). Reported per degree and victim role.
2. Fault-free overhead: the protocol benchmark loop (benches/io_loop.c) at
   r=2 with fail-over readiness on (the default) and off
   (REDIO_BENCH_NO_LIVENESS=1: no liveness checks in waits, no watchdog),
   interleaved, median of the repetitions.

Usage: benches/failover.py [--trials N] [--reps N] [--blocks 65536,1048576,...]
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile

from interposition import MiB, REDIO, ROOT, compile_loop, human, redio, seconds
from protocols import config

OVERHEAD_CASES = [("read", "simple"), ("read", "distributed-chunked"), ("read", "chunked-chained"),
                  ("write", "simple"), ("write", "distributed")]


def compile_failover(build):
    exe = os.path.join(build, "io_failover")
    programs = os.path.join(ROOT, "tests", "programs")
    subprocess.run(["mpicc.mpich", "-O2", f"-I{programs}", f"-I{programs}/io", "-o", exe,
                    os.path.join(programs, "io", "io_failover.c")], check=True)
    return exe


def one_death(exe, work, degree, victim, seq, calls, block):
    shared = tempfile.mkdtemp(prefix="shared-", dir=work)
    cfg = config(work, f"ft-{degree}.yaml", shared, "simple", "simple")
    summary = os.path.join(work, "summary.json")
    command = [REDIO, "run", "--mpi", "mpich", "-n", "2", "-r", str(degree), "--config", cfg,
               "--summary", summary, "--", exe, shared, str(block)]
    env = {**os.environ, "REDIO_TEST_DIE": f"{victim}:{seq}:exit:{calls}"}
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    if result.returncode != 0:
        raise SystemExit(f"trial failed: {' '.join(command)}\n{result.stderr}")
    with open(summary) as f:
        data = json.load(f)
    died = min(f["reported"] for f in data["failed"] if f["world_rank"] == victim)
    resumed = [o["time"] for o in data["fail_overs"] if victim in o["failed"]]
    return min(resumed) - died


def latency(exe, work, trials, block):
    print(f"\n### Detection latency: death to the survivors resuming ({trials} trials each, "
          f"{human(block)} blocks, MPICH, liveness back-end)\n")
    print("| degree | victim | where | median | max |")
    print("|---|---|---|---|---|")
    for degree in (2, 3):
        for role, victim in (("master", 0), ("non-master", 2)):
            for where, seq, calls in (("before a write", 3, 0), ("mid-read (after its pread)", 7, 1)):
                if role == "non-master" and calls:
                    continue  # a non-master does no file call in simple read
                times = [one_death(exe, work, degree, victim, seq, calls, block) for _ in range(trials)]
                print(f"| {degree} | {role} | {where} | {statistics.median(times) * 1000:.0f} ms "
                      f"| {max(times) * 1000:.0f} ms |")


def overhead(loop, work, reps, blocks):
    shared = os.path.join(work, "shared")
    os.makedirs(shared, exist_ok=True)
    print(f"\n### Fault-free overhead of fail-over readiness, r=2 (64 MiB per run, {reps} "
          f"interleaved runs, median; local directory declared shared)\n")
    print("| operation | protocol | block | readiness off | readiness on | on / off |")
    print("|---|---|---|---|---|---|")
    ratios = []
    for mode, protocol in OVERHEAD_CASES:
        read, write = (protocol, "none") if mode == "read" else ("none", protocol)
        cfg = config(work, f"{mode}-{protocol}.yaml", shared, read, write)
        for block in blocks:
            total = max(64 * MiB, 4 * block)
            args = (mode, shared, str(block), str(total))
            if mode == "read":
                seconds(redio(loop, 1, 2, cfg, "write", shared, str(block), str(total)))
            on, off = [], []
            for _ in range(reps):
                off.append(seconds(redio(loop, 1, 2, cfg, *args), {"REDIO_BENCH_NO_LIVENESS": "1"}))
                on.append(seconds(redio(loop, 1, 2, cfg, *args)))
            ratio = statistics.median(on) / statistics.median(off)
            ratios.append(ratio)
            mbps = lambda t: f"{total / statistics.median(t) / 1e6:.0f} MB/s"
            print(f"| {mode} | {protocol} | {human(block)} | {mbps(off)} | {mbps(on)} | {ratio:.3f} |")
    print(f"\nGeometric mean of on / off: "
          f"{statistics.geometric_mean(ratios):.3f} (1.03 would be a 3% cost)")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--blocks", default=f"{64 * 1024},{MiB},{16 * MiB}")
    args = parser.parse_args()
    blocks = [int(b) for b in args.blocks.split(",")]
    # Not under /dev/shm: redio counts it node-local by default.
    work = tempfile.mkdtemp(prefix="redio-failover-")
    print(f"command: benches/failover.py --trials {args.trials} --reps {args.reps} --blocks {args.blocks}")
    latency(compile_failover(work), work, args.trials, MiB)
    overhead(compile_loop(), work, args.reps, blocks)
    subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
