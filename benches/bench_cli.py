"""Calling `redio bench` from the scripts that lay its results out as the
tables of docs/benchmarks.md (benches/protocols.py, benches/interposition.py).

`redio bench` is the one driver: it compiles benches/io_loop.c, runs every
point under `redio run` (or natively), repeats and interleaves them and
writes results.csv. These helpers run it and read that file back.

Every script whose tables go to docs/benchmarks.md imports this module
first thing and calls `print_machine` once, after its tables: the machine
block of `redio bench --machine` (docs/benchmarks.md, "Machines").
"""
import csv
import os
import statistics
import subprocess
import sys
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REDIO = os.environ.get("REDIO", os.path.join(ROOT, "target", "release", "redio"))
MiB = 1 << 20


def _loadavg():
    try:
        with open("/proc/loadavg") as f:
            return f.read().strip()
    except OSError:
        return ""


# /proc/loadavg when the script started (it imports this module first).
LOAD_AT_START = _loadavg()


def print_machine(mpi="mpich"):
    """Prints the block of `redio bench --machine` for MPI (one name, or
    several comma-separated): CPU and its AVX2/AVX-512/GFNI/CRC features,
    cores, memory, kernel, MPI version, date, redio commit, and the load
    average from the script's start to now. Never fails the script: if
    redio cannot tell, the block says so."""
    command = [REDIO, "bench", "--machine", "--mpi", mpi]
    if LOAD_AT_START:
        command += ["--load-start", LOAD_AT_START]
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=60)
        block = result.stdout if result.returncode == 0 else ""
        why = result.stderr.strip()
    except (OSError, subprocess.TimeoutExpired) as e:
        block, why = "", str(e)
    print("\n" + (block or f"Machine: unknown ({REDIO} bench --machine: {why})\n"), end="", flush=True)


def bench(out, args, env=None):
    """Runs `redio bench ARGS --out OUT` and returns the rows of its
    results.csv. Its table and calibration line go to stderr with its
    progress, so that the caller's stdout holds only the caller's tables."""
    os.makedirs(out, exist_ok=True)
    command = [REDIO, "bench", *args, "--out", out]
    result = subprocess.run(command, stdout=sys.stderr, env={**os.environ, **(env or {})})
    if result.returncode != 0:
        sys.exit(f"failed: {' '.join(command)}")
    with open(os.path.join(out, "results.csv")) as f:
        return list(csv.DictReader(f))


def by_total(blocks, total_for):
    """The blocks grouped by the bytes a run moves with them (`redio bench
    --total` is one value per invocation): [(total, [block, ...]), ...]."""
    groups = defaultdict(list)
    for block in blocks:
        groups[total_for(block)].append(block)
    return sorted(groups.items())


def medians(rows):
    """Median seconds per (mode, protocol, degree, block), with the bytes
    each run moved: {key: (seconds, total)}."""
    runs = defaultdict(list)
    for row in rows:
        key = (row["mode"], row["protocol"], int(row["degree"]), int(row["block"]))
        runs[key].append((float(row["seconds"]), int(row["total"])))
    return {key: (statistics.median(s for s, _ in values), values[0][1]) for key, values in runs.items()}


def save_plot(fig, name):
    """Writes a matplotlib figure to docs/img/NAME."""
    out = os.path.join(ROOT, "docs", "img", name)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    print(f"\nplot: {os.path.relpath(out, ROOT)}")


def human(size):
    return f"{size // MiB} MiB" if size >= MiB else f"{size // 1024} KiB"
