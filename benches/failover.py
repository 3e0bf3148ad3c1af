#!/usr/bin/env python3
"""Fail-over benchmarks (issue 5).

1. Detection latency, per back-end (--mpi): a replica dies (REDIO_TEST_DIE)
   in the middle of a job doing coordinated I/O
   (tests/programs/io/io_failover.c); the latency is the time from its
   death (its last event) to the survivor of its replica set resuming (the
   survivor's fail-over event, written once the survivors agreed).
   Reported per degree and victim role. MPICH and Open MPI 4.1 use the
   liveness back-end (the victim exits); Open MPI 5 uses ULFM (the victim
   SIGKILLs itself: Open MPI does not report a non-zero exit).
2. Fault-free overhead: the protocol benchmark loop (benches/io_loop.c) at
   r=2 with fail-over readiness on (the default) and off
   (REDIO_BENCH_NO_LIVENESS=1: no liveness checks in waits, no watchdog),
   interleaved, median of the repetitions.

Usage: benches/failover.py [--trials N] [--reps N] [--blocks 65536,1048576,...]
                           [--mpi mpich,openmpi,openmpi5] [--no-overhead]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

from bench_cli import MiB, REDIO, ROOT, bench, by_total, human, medians, print_machine

# The C compiler wrapper of each MPI redio runs on (Open MPI 5 lives in the
# project's venv, installed by scripts/setup.sh).
MPICC = {
    "mpich": "mpicc.mpich",
    "openmpi": "mpicc.openmpi",
    "openmpi5": os.path.join(ROOT, ".venv", "bin", "mpicc"),
}

def redio(exe, ranks, degree, config, *args, mpi="mpich"):
    return [REDIO, "run", "--mpi", mpi, "-n", str(ranks), "-r", str(degree), "--config", config, "--", exe, *args]


def config(directory, name, shared, read, write):
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        f.write(f"version: 1\nshared:\n  paths: [{shared}]\n")
        f.write(f"io:\n  read: {read}\n  write: {write}\n  chunk_size: 4MiB\n")
    return path

OVERHEAD_CASES = [("read", "simple"), ("read", "distributed-chunked"), ("read", "chunked-chained"),
                  ("write", "simple"), ("write", "distributed")]


# Per MPI: how the victim dies, the back-end's name.
FLAVOURS = {
    "mpich": ("exit", "liveness"),
    "openmpi": ("exit", "liveness"),
    "openmpi5": ("kill", "ULFM"),
}


def compile_failover(build, mpi):
    exe = os.path.join(build, f"io_failover-{mpi}")
    programs = os.path.join(ROOT, "tests", "programs")
    subprocess.run([MPICC[mpi], "-O2", f"-I{programs}", f"-I{programs}/io", "-o", exe,
                    os.path.join(programs, "io", "io_failover.c")], check=True)
    return exe


def one_death(mpi, exe, work, degree, victim, seq, calls, block):
    shared = tempfile.mkdtemp(prefix="shared-", dir=work)
    cfg = config(work, f"ft-{degree}.yaml", shared, "simple", "simple")
    summary = os.path.join(work, "summary.json")
    command = [REDIO, "run", "--mpi", mpi, "-n", "2", "-r", str(degree), "--config", cfg,
               "--summary", summary, "--", exe, shared, str(block)]
    how = FLAVOURS[mpi][0]
    env = {**os.environ, "REDIO_TEST_DIE": f"{victim}:{seq}:{how}:{calls}"}
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    if result.returncode != 0:
        raise SystemExit(f"trial failed: {' '.join(command)}\n{result.stderr}")
    with open(summary) as f:
        data = json.load(f)
    died = min(f["reported"] for f in data["failed"] if f["world_rank"] == victim)
    resumed = [o["time"] for o in data["fail_overs"] if victim in o["failed"]]
    return min(resumed) - died


def latency(mpi, work, trials, block):
    exe = compile_failover(work, mpi)
    print(f"\n### Detection latency, {mpi} ({FLAVOURS[mpi][1]} back-end, victim: "
          f"{FLAVOURS[mpi][0]}): death to the survivors resuming ({trials} trials each, "
          f"{human(block)} blocks)\n")
    print("| degree | victim | where | median | max |")
    print("|---|---|---|---|---|")
    for degree in (2, 3):
        for role, victim in (("master", 0), ("non-master", 2)):
            for where, seq, calls in (("before a write", 3, 0), ("mid-read (after its pread)", 7, 1)):
                if role == "non-master" and calls:
                    continue  # a non-master does no file call in simple read
                times = [one_death(mpi, exe, work, degree, victim, seq, calls, block)
                         for _ in range(trials)]
                print(f"| {degree} | {role} | {where} | {statistics.median(times) * 1000:.0f} ms "
                      f"| {max(times) * 1000:.0f} ms |")


def overhead(work, reps, blocks):
    """Readiness on and off, as two `redio bench --variant`s of the protocol
    benchmark (None r=1 interleaved with them, not printed)."""
    shared = os.path.join(work, "shared")
    os.makedirs(shared, exist_ok=True)
    print(f"\n### Fault-free overhead of fail-over readiness, r=2 (at least 64 MiB per run, {reps} "
          f"interleaved runs, median; local directory declared shared)\n")
    print("| operation | protocol | block | readiness off | readiness on | on / off |")
    print("|---|---|---|---|---|---|")
    reads = ",".join(p for m, p in OVERHEAD_CASES if m == "read")
    writes = ",".join(p for m, p in OVERHEAD_CASES if m == "write")
    median = {}
    for total, group in by_total(blocks, lambda block: max(64 * MiB, 4 * block)):
        rows = bench(os.path.join(work, f"bench-{total}"), [
            "--family", "protocols", "--dir", shared, "--read", reads, "--write", writes,
            "--degrees", "2", "--blocks", ",".join(map(str, group)), "--total", str(total),
            "--reps", str(reps), "--variant", "off:REDIO_BENCH_NO_LIVENESS=1", "--variant", "on:"])
        median.update(medians(rows))
    ratios = []
    for mode, protocol in OVERHEAD_CASES:
        for block in blocks:
            (off, total), (on, _) = (median[(mode, f"{protocol}@{v}", 2, block)] for v in ("off", "on"))
            ratio = on / off
            ratios.append(ratio)
            mbps = lambda t: f"{total / t / 1e6:.0f} MB/s"
            print(f"| {mode} | {protocol} | {human(block)} | {mbps(off)} | {mbps(on)} | {ratio:.3f} |")
    print(f"\nGeometric mean of on / off: "
          f"{statistics.geometric_mean(ratios):.3f} (1.03 would be a 3% cost)")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--blocks", default=f"{64 * 1024},{MiB},{16 * MiB}")
    parser.add_argument("--mpi", default="mpich,openmpi5",
                        help="MPIs whose detection latency to measure (mpich, openmpi, openmpi5)")
    parser.add_argument("--no-overhead", action="store_true",
                        help="skip the fault-free overhead (MPICH)")
    args = parser.parse_args()
    blocks = [int(b) for b in args.blocks.split(",")]
    # Not under /dev/shm: redio counts it node-local by default.
    work = tempfile.mkdtemp(prefix="redio-failover-")
    print(f"command: benches/failover.py --trials {args.trials} --reps {args.reps} "
          f"--blocks {args.blocks} --mpi {args.mpi}" + (" --no-overhead" if args.no_overhead else ""))
    for mpi in filter(None, args.mpi.split(",")):  # --mpi '': the overhead alone
        latency(mpi, work, args.trials, MiB)
    if not args.no_overhead:
        overhead(work, args.reps, blocks)
    subprocess.run(["rm", "-rf", work])
    # The overhead runs on MPICH.
    mpis = list(dict.fromkeys(filter(None, args.mpi.split(","))))
    if not args.no_overhead and "mpich" not in mpis:
        mpis.append("mpich")
    print_machine(",".join(mpis))


if __name__ == "__main__":
    main()
