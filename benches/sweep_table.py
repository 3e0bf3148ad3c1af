#!/usr/bin/env python3
"""One Markdown table from the results of benches/emulated_sweep.sh: per
operation, protocol and degree, the median throughput relative to None at
r=1 of the same run, for every topology and block size of one kind. With
--wire: the median bytes on the wire over the file's bytes instead (runs
made with `redio bench --traffic`). Then the machine each run recorded
(the block at the top of its results.md).

Usage: benches/sweep_table.py KIND [DIR] [--wire]   (DIR: target/bench-emulated)
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


def machine(path):
    """The machine block `redio bench` put at the top of results.md (the
    lines before the table), or a note that the run did not record it."""
    try:
        with open(path) as f:
            head = f.read().split("\n| ", 1)[0].strip()
    except OSError:
        return "machine not recorded (no results.md)"
    return head if head.startswith("Machine:") else "machine not recorded (a run before redio bench recorded it)"


def main():
    wire = "--wire" in sys.argv
    args = [a for a in sys.argv[1:] if a != "--wire"]
    kind = args[0]
    root = args[1] if len(args) > 1 else "target/bench-emulated"
    rates = defaultdict(list)
    wires = defaultdict(list)
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
                if row.get("wire_bytes"):
                    wires[(topology, block) + key].append(int(row["wire_bytes"]) / int(row["total"]))
                if (topology, block) not in columns:
                    columns.append((topology, block))
    columns.sort(key=lambda c: (c[0] != "shared", c[1]))
    if wire:
        rates = wires
        columns = [c for c in columns if any(k[:2] == c for k in wires)]
    rows = sorted({k[2:] for k in rates if wire or k[3] != "none"}, key=lambda k: (k[0] != "write", k[1], k[2]))
    label = {"shared": "one server", "separate": "a server per replica"}
    print("| operation | protocol | r | " + " | ".join(f"{label[t]}: {size(b)}" for t, b in columns) + " |")
    print("|---|---|---|" + "---|" * len(columns))
    for mode, protocol, degree in rows:
        cells = []
        for topology, block in columns:
            mine = rates.get((topology, block, mode, protocol, degree))
            base = [1.0] if wire else rates.get((topology, block, mode, "none", 1))
            cells.append(f"{statistics.median(mine) / statistics.median(base):.2f}" if mine and base else "–")
        print(f"| {mode} | {protocol} | {degree} | " + " | ".join(cells) + " |")
    for topology, block in [] if wire else columns:
        base = rates.get((topology, block, "write", "none", 1), []) + rates.get((topology, block, "read", "none", 1), [])
        if base:
            print(f"\nNone r=1, {label[topology]}, {size(block)}: {min(base):.0f}–{max(base):.0f} MiB/s", end="")
    print()
    for topology in dict.fromkeys(t for t, _ in columns):
        print(f"\n{label[topology]} ({kind}-{topology}):\n\n{machine(os.path.join(root, f'{kind}-{topology}', 'results.md'))}")


if __name__ == "__main__":
    main()
