#!/usr/bin/env python3
"""Plots `redio bench` results in the layout of Böhm & Engelmann (2012),
Figures 10-13: throughput against block size, one line per protocol and
degree (median of the runs), one figure per operation. The other
families of `redio bench` use the same layout; for parity the degree is the
number of ranks and the block the data per rank.

Usage: plot_bench.py RESULTS_CSV OUT_DIR [FAMILY]
"""
import csv
import os
import statistics
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main() -> None:
    results, out = sys.argv[1], sys.argv[2]
    family = sys.argv[3] if len(sys.argv) > 3 else "protocols"
    degree_label = {"protocols": "r=", "parity": "ranks="}.get(family)
    baselines = {"none", "native", "memcpy", "read"}
    rates = defaultdict(list)
    label = ""
    with open(results) as f:
        for row in csv.DictReader(f):
            key = (row["mode"], row["protocol"], int(row["degree"]), int(row["block"]))
            rates[key].append(float(row["mib_per_s"]))
            label = f"{row['kind']}, {row['topology']}"
    for mode in sorted({k[0] for k in rates}):
        fig, ax = plt.subplots(figsize=(7, 4.5))
        lines = sorted({(k[1], k[2]) for k in rates if k[0] == mode}, key=lambda p: (p[0] not in baselines, p))
        for protocol, degree in lines:
            points = sorted((k[3], statistics.median(v)) for k, v in rates.items()
                            if k[0] == mode and k[1] == protocol and k[2] == degree)
            style = "k--" if protocol in baselines else "-o"
            name = f"{protocol} {degree_label}{degree}" if degree_label else protocol
            ax.plot([b for b, _ in points], [r for _, r in points], style, markersize=3, label=name)
        ax.set_xscale("log", base=2)
        ax.set_ylim(bottom=0)
        ax.set_xlabel("data per rank (bytes)" if family == "parity" else "block size (bytes)")
        ax.set_ylabel("throughput (MiB/s)")
        ax.set_title(f"{mode} ({label})")
        ax.legend(fontsize=7, ncol=2)
        fig.tight_layout()
        path = os.path.join(out, f"bench-{mode}.png")
        fig.savefig(path, dpi=100)
        print(f"plot: {path}")


if __name__ == "__main__":
    main()
