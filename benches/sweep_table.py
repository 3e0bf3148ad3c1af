#!/usr/bin/env python3
"""One Markdown table from the results of benches/emulated_sweep.sh: per
operation, protocol and degree, the median throughput relative to None at
r=1 of the same run, for every topology and block size of one kind.

Usage: benches/sweep_table.py KIND [DIR]   (DIR: target/bench-emulated)
"""
import csv
import os
import statistics
import sys
from collections import defaultdict


def size(n):
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} B"


def main():
    kind = sys.argv[1]
    root = sys.argv[2] if len(sys.argv) > 2 else "target/bench-emulated"
    rates = defaultdict(list)
    columns = []
    for topology in ("shared", "separate"):
        path = os.path.join(root, f"{kind}-{topology}", "results.csv")
        if not os.path.exists(path):
            continue
        with open(path) as f:
            for row in csv.DictReader(f):
                block = int(row["block"])
                key = (row["mode"], row["protocol"], int(row["degree"]))
                rates[(topology, block) + key].append(float(row["mib_per_s"]))
                if (topology, block) not in columns:
                    columns.append((topology, block))
    columns.sort(key=lambda c: (c[0] != "shared", c[1]))
    rows = sorted({k[2:] for k in rates if k[3] != "none"}, key=lambda k: (k[0] != "write", k[1], k[2]))
    label = {"shared": "one server", "separate": "a server per replica"}
    print("| operation | protocol | r | " + " | ".join(f"{label[t]}: {size(b)}" for t, b in columns) + " |")
    print("|---|---|---|" + "---|" * len(columns))
    for mode, protocol, degree in rows:
        cells = []
        for topology, block in columns:
            mine = rates.get((topology, block, mode, protocol, degree))
            base = rates.get((topology, block, mode, "none", 1))
            cells.append(f"{statistics.median(mine) / statistics.median(base):.2f}" if mine and base else "–")
        print(f"| {mode} | {protocol} | {degree} | " + " | ".join(cells) + " |")
    for topology, block in columns:
        base = rates.get((topology, block, "write", "none", 1), []) + rates.get((topology, block, "read", "none", 1), [])
        if base:
            print(f"\nNone r=1, {label[topology]}, {size(block)}: {min(base):.0f}–{max(base):.0f} MiB/s", end="")
    print()


if __name__ == "__main__":
    main()
