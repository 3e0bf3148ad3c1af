#!/usr/bin/env python3
"""Every coordination protocol (issue 4) against None at r=1, as the table of
docs/benchmarks.md ("Every protocol on local storage"), measured by
`redio bench --family protocols`.

One logical rank reads or writes 64 MiB (4 blocks when blocks are larger)
to a local directory declared shared, under each protocol at r = 1, 2, 3,
against None at r=1 in the same interleaved loop. Reports the time
relative to None r=1; writes docs/img/protocols.png.

`NAME:novote` is NAME with `voting.enabled: false`: those two run in a
second invocation with REDIO_VOTING_ENABLED=false, alternated with the
first repetition by repetition (each with its own None r=1, pooled); a
`redio bench --variant` would measure every protocol under both settings.

Usage: benches/protocols.py [--reps N] [--blocks 65536,1048576,...] [--cold] [--plot NAME]
                            [--mpi mpich|openmpi|openmpi5] [--only read:NAME,write:NAME,...]
                            [--degrees 1,2,3] [--out DIR]
"""
import argparse
import os
import tempfile

from bench_cli import MiB, ROOT, bench, by_total, human, medians, print_machine, save_plot

READS = ["simple", "extended-simple", "read-distribute", "read-distribute:novote", "chained",
         "chunked-chained", "distributed-chunked", "distributed-chunked:novote", "auto"]
WRITES = ["simple", "distributed", "distributed-separate", "auto"]
CHUNK = "4MiB"
NOVOTE = ":novote"


def measure(work, out, reps, blocks, cold=False, mpi="mpich", only=None, degrees=(1, 2, 3)):
    chosen = {mode: [p for p in protocols if only is None or f"{mode}:{p}" in only]
              for mode, protocols in (("read", READS), ("write", WRITES))}
    settings = []  # (suffix, {mode: protocols}, environment)
    for suffix, env in (("", {}), (NOVOTE, {"REDIO_VOTING_ENABLED": "false"})):
        lists = {mode: [p.removesuffix(NOVOTE) for p in ps if p.endswith(NOVOTE) == bool(suffix)]
                 for mode, ps in chosen.items()}
        if any(lists.values()):
            settings.append((suffix, lists, env))
    # One invocation repeats and interleaves by itself; two alternate.
    rounds, reps_each = (reps, 1) if len(settings) > 1 else (1, reps)
    rows = []
    for round_ in range(rounds):
        for suffix, lists, env in settings:
            for total, group in by_total(blocks, lambda block: max(64 * MiB, 4 * block)):
                args = ["--family", "protocols", "--dir", work, "--mpi", mpi,
                        "--read", ",".join(lists["read"]), "--write", ",".join(lists["write"]),
                        "--degrees", ",".join(map(str, degrees)), "--blocks", ",".join(map(str, group)),
                        "--total", str(total), "--chunk", CHUNK, "--reps", str(reps_each)]
                if cold:
                    args.append("--drop-caches")
                name = f"round{round_}{suffix.replace(':', '-')}-total{total}"
                for row in bench(os.path.join(out, name), args, env):
                    if row["protocol"] != "none":
                        row["protocol"] += suffix
                    rows.append(row)
    return medians(rows)


def report(m, cold, mpi="mpich", degrees=(1, 2, 3)):
    source = "from the disk, page cache dropped before every read" if cold else "reads from the page cache"
    print(f"\n### Every protocol against None at r=1 ({mpi}; {source}; chunk {CHUNK}; "
          "time relative to None r=1, lower is better)\n")
    print("| operation | block | protocol | " + " | ".join(f"r={d}" for d in degrees) + " | None r=1 |")
    print("|---|---|---|" + "---|" * len(degrees) + "---|")
    for mode in ("read", "write"):
        for block in sorted({k[3] for k in m if k[0] == mode}):
            base, total = m[(mode, "none", 1, block)]
            protocols = {k[1] for k in m if k[0] == mode and k[3] == block and k[1] != "none"}
            for protocol in sorted(protocols, key=(READS + WRITES).index):
                ratios = " | ".join(f"{m[(mode, protocol, d, block)][0] / base:.2f}x" for d in degrees)
                print(f"| {mode} | {human(block)} | {protocol} | {ratios} | {total / base / MiB:.0f} MiB/s |")


def plot(m, name, degree=2):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for ax, mode in zip(axes, ["read", "write"]):
        blocks = sorted({k[3] for k in m if k[0] == mode})
        for protocol in (READS if mode == "read" else WRITES):
            if not blocks or (mode, protocol, degree, blocks[0]) not in m:
                continue
            ax.plot(blocks, [m[(mode, protocol, degree, b)][0] / m[(mode, "none", 1, b)][0] for b in blocks],
                    marker="o", label=protocol)
        ax.axhline(1.0, color="grey", linewidth=0.8)
        ax.set_xscale("log", base=2)
        ax.set_title(f"{mode}, r={degree}")
        ax.set_xlabel("block size (bytes)")
    axes[0].set_ylabel("time relative to None at r=1")
    for ax in axes:
        ax.legend(fontsize=8)
    save_plot(fig, name)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--blocks", default=f"{64 * 1024},{MiB},{16 * MiB}")
    parser.add_argument("--cold", action="store_true",
                        help="drop the page cache before every read run (needs root): reads come from the disk")
    parser.add_argument("--plot", default="protocols.png", help="file name under docs/img/ ('' for none)")
    parser.add_argument("--mpi", default="mpich", choices=["mpich", "openmpi", "openmpi5"])
    parser.add_argument("--only", default=None,
                        help="measure only these, e.g. read:chunked-chained,write:distributed")
    parser.add_argument("--degrees", default="1,2,3", help="replication degrees to measure")
    parser.add_argument("--out", default=os.path.join(ROOT, "target", "bench-protocols"),
                        help="where each `redio bench` invocation leaves its results")
    args = parser.parse_args()
    only = set(args.only.split(",")) if args.only else None
    degrees = tuple(int(d) for d in args.degrees.split(","))
    with tempfile.TemporaryDirectory(dir=os.path.join(ROOT, "target")) as work:
        m = measure(work, args.out, args.reps, [int(b) for b in args.blocks.split(",")], args.cold,
                    args.mpi, only, degrees)
    report(m, args.cold, args.mpi, degrees)
    print_machine(args.mpi)
    if args.plot:
        plot(m, args.plot, 2 if 2 in degrees else degrees[0])


if __name__ == "__main__":
    main()
