#!/usr/bin/env python3
"""What the UCX setting of `redio exec --survive` costs the application's own
communication under MPICH (docs/benchmarks.md, "What surviving SIGKILL costs
under MPICH").

`redio exec --survive` sets UCX_RNDV_THRESH=inf for MPICH jobs (no
rendezvous, so no process_vm_readv of a peer that may die). This runs
benches/pingpong.c (2 processes, one node, plain mpiexec, no redio) with
UCX's default, with that setting, and with UCX_TLS=^cma (the other way to
keep CMA out) in interleaved rounds, and prints the median round-trip time
and bandwidth per message size with the ratio to the default.

    benches/ucx_transports.py [--rounds 5] [--plot docs/img/ucx_transports.png]
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

from bench_cli import ROOT, print_machine

SETTINGS = [
    ("UCX default", {}),
    ("UCX_RNDV_THRESH=inf (redio)", {"UCX_RNDV_THRESH": "inf"}),
    ("UCX_TLS=^cma", {"UCX_TLS": "^cma"}),
]


def run_pingpong(exe, env):
    command = ["timeout", "300", "mpiexec.mpich", "-n", "2"]
    for name, value in env.items():
        command += ["-genv", name, value]
    out = subprocess.run(command + [exe], check=True, capture_output=True, text=True).stdout
    rows = {}
    for line in out.splitlines():
        size, round_trip_us, bandwidth = line.split()
        rows[int(size)] = (float(round_trip_us), float(bandwidth))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--plot", help="write a PNG of bandwidth by size")
    args = parser.parse_args()
    build = tempfile.mkdtemp(prefix="redio-ucx-")
    exe = os.path.join(build, "pingpong")
    subprocess.run(
        ["mpicc.mpich", "-O2", "-o", exe, os.path.join(ROOT, "benches", "pingpong.c")],
        check=True,
    )
    samples = {name: {} for name, _ in SETTINGS}
    for round_number in range(args.rounds):
        for name, env in SETTINGS:
            for size, value in run_pingpong(exe, env).items():
                samples[name].setdefault(size, []).append(value)
        print(f"round {round_number + 1}/{args.rounds} done", file=sys.stderr)
    default = SETTINGS[0][0]
    sizes = sorted(samples[default])

    def median(name, size, field):
        return statistics.median(v[field] for v in samples[name][size])

    print(f"median of {args.rounds} interleaved rounds; ratio = round trip / default's\n")
    header = "| message | " + " | ".join(
        f"{name}: round trip, MB/s (ratio)" for name, _ in SETTINGS
    )
    print(header + " |")
    print("|---" * (len(SETTINGS) + 1) + "|")
    for size in sizes:
        base = median(default, size, 0)
        cells = []
        for name, _ in SETTINGS:
            rt, bw = median(name, size, 0), median(name, size, 1)
            cells.append(f"{rt:.1f} µs, {bw:.0f} ({rt / base:.2f})")
        print(f"| {size} B | " + " | ".join(cells) + " |")
    print_machine("mpich")
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(7, 4))
        for name, _ in SETTINGS:
            ax.plot(sizes, [median(name, s, 1) for s in sizes], marker="o", label=name)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("message size (bytes)")
        ax.set_ylabel("bandwidth (MB/s, median)")
        ax.set_title("MPICH 4.0.2 ping-pong on one node, by UCX setting")
        ax.legend()
        fig.tight_layout()
        fig.savefig(args.plot, dpi=100)


if __name__ == "__main__":
    main()
