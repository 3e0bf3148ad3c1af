#!/usr/bin/env python3
"""Benchmark of every coordination protocol (issue 4), measured side by side.

One logical rank reads or writes 64 MiB (4 blocks when blocks are larger)
to a local directory declared shared, under each protocol at r = 1, 2, 3,
against None at r=1 in the same interleaved loop. Reports throughput and the
time relative to None r=1; writes docs/img/protocols.png.

Usage: benches/protocols.py [--reps N] [--blocks 65536,1048576,...] [--cold] [--plot NAME]
                            [--mpi mpich|openmpi|openmpi5] [--only read:NAME,write:NAME,...]
                            [--degrees 1,2,3]
"""
import argparse
import os
import statistics
import subprocess
import tempfile

from interposition import MiB, ROOT, compile_loop, human, redio, seconds

# "NAME:novote" runs NAME with voting.enabled false: the difference to NAME
# is what checksums cost.
READS = ["simple", "extended-simple", "read-distribute", "read-distribute:novote", "chained",
         "chunked-chained", "distributed-chunked", "distributed-chunked:novote", "auto"]
WRITES = ["simple", "distributed", "distributed-separate", "auto"]
CHUNK = "4MiB"


def config(directory, name, shared, read, write):
    path = os.path.join(directory, name.replace(":", "-"))
    novote = read.endswith(":novote") or write.endswith(":novote")
    read, write = read.split(":")[0], write.split(":")[0]
    with open(path, "w") as f:
        f.write(f"version: 1\nshared:\n  paths: [{shared}]\n")
        f.write(f"io:\n  read: {read}\n  write: {write}\n  chunk_size: {CHUNK}\n")
        if novote:
            f.write("voting:\n  enabled: false\n")
    return path


def drop_caches():
    """Empties the page cache, so that the next read comes from the disk."""
    subprocess.run(["sync"], check=True)
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def measure(exe, work, reps, blocks, cold=False, mpi="mpich", only=None, degrees=(1, 2, 3)):
    shared = os.path.join(work, "shared")
    os.makedirs(shared)
    baseline = config(work, "none.yaml", shared, "none", "none")
    rows = []
    for mode, protocols in [("read", READS), ("write", WRITES)]:
        if only is not None:
            protocols = [p for p in protocols if f"{mode}:{p}" in only]
            if not protocols:
                continue
        for block in blocks:
            total = max(64 * MiB, 4 * block)
            args = (mode, shared, str(block), str(total))
            if mode == "read":
                seconds(redio(exe, 1, 1, baseline, "write", shared, str(block), str(total), mpi=mpi))
            variants = [("none", 1, baseline)]
            for protocol in protocols:
                read, write = (protocol, "none") if mode == "read" else ("none", protocol)
                for degree in degrees:
                    variants.append((protocol, degree, config(work, f"{protocol}-{mode}.yaml", shared, read, write)))
            samples = {(p, d): [] for p, d, _ in variants}
            for _ in range(reps):
                for protocol, degree, path in variants:
                    if cold and mode == "read":
                        drop_caches()
                    samples[(protocol, degree)].append(seconds(redio(exe, 1, degree, path, *args, mpi=mpi)))
            medians = {key: statistics.median(values) for key, values in samples.items()}
            rows.append((mode, block, total, medians))
    return rows


def report(rows, cold, mpi="mpich", degrees=(1, 2, 3)):
    source = "from the disk, page cache dropped before every read" if cold else "reads from the page cache"
    print(f"\n### Every protocol against None at r=1 ({mpi}; {source}; chunk {CHUNK}; "
          "time relative to None r=1, lower is better)\n")
    print("| operation | block | protocol | " + " | ".join(f"r={d}" for d in degrees) + " | None r=1 |")
    print("|---|---|---|" + "---|" * len(degrees) + "---|")
    for mode, block, total, m in rows:
        base = m[("none", 1)]
        for protocol in sorted({p for p, _ in m if p != "none"}, key=(READS + WRITES).index):
            ratios = " | ".join(f"{m[(protocol, d)] / base:.2f}x" for d in degrees)
            print(f"| {mode} | {human(block)} | {protocol} | {ratios} | {total / base / MiB:.0f} MiB/s |")


def plot(rows, name, degree=2):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for ax, mode in zip(axes, ["read", "write"]):
        mine = [(block, m) for md, block, _, m in rows if md == mode]
        for protocol in (READS if mode == "read" else WRITES):
            if mine and (protocol, degree) not in mine[0][1]:
                continue
            ax.plot([b for b, _ in mine], [m[(protocol, degree)] / m[("none", 1)] for _, m in mine],
                    marker="o", label=protocol)
        ax.axhline(1.0, color="grey", linewidth=0.8)
        ax.set_xscale("log", base=2)
        ax.set_title(f"{mode}, r={degree}")
        ax.set_xlabel("block size (bytes)")
    axes[0].set_ylabel("time relative to None at r=1")
    for ax in axes:
        ax.legend(fontsize=8)
    out = os.path.join(ROOT, "docs", "img", name)
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    print(f"\nplot: {os.path.relpath(out, ROOT)}")


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
    args = parser.parse_args()
    only = set(args.only.split(",")) if args.only else None
    degrees = tuple(int(d) for d in args.degrees.split(","))
    exe = compile_loop(args.mpi)
    with tempfile.TemporaryDirectory(dir=os.path.join(ROOT, "target")) as work:
        rows = measure(exe, work, args.reps, [int(b) for b in args.blocks.split(",")], args.cold,
                       args.mpi, only, degrees)
    report(rows, args.cold, args.mpi, degrees)
    if args.plot:
        plot(rows, args.plot, 2 if 2 in degrees else degrees[0])


if __name__ == "__main__":
    main()
