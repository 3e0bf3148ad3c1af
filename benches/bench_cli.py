"""Calling `redio bench` from the scripts that lay its results out as the
tables of docs/benchmarks.md (benches/protocols.py, benches/interposition.py).

`redio bench` is the one driver: it compiles benches/io_loop.c, runs every
point under `redio run` (or natively), repeats and interleaves them and
writes results.csv. These helpers run it and read that file back.
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
