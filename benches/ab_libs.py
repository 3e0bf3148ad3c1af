#!/usr/bin/env python3
"""Two builds (or settings) of libredio.so side by side, through `redio
bench --variant`: the protocol benchmark (benches/io_loop.c under `redio
run`) with REDIO_LIB_DIR pointing at build A or build B (each with its own
extra environment, e.g. --b-env REDIO_BENCH_NO_LIVENESS=1), interleaved
with None at r=1, repeated; prints the median throughput of each and the
ratios (B/A, and each against None r=1), then the machine block.

A build directory is laid out as REDIO_LIB_DIR expects: <dir>/<mpi>/libredio.so
(for example a copy of target/mpich/release/libredio.so in <dir>/mpich/).

Usage:
  benches/ab_libs.py --a DIR_A --b DIR_B --dir DATA_DIR [--replica-dir T]
      [--write simple] [--read ""] [--degrees 2,3] [--blocks 65536,1048576]
      [--total 67108864] [--reps 5] [--drop-caches] [--a-env K=V] [--b-env K=V]
"""
import argparse
import os
import tempfile

from bench_cli import MiB, bench, medians, print_machine


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--a", required=True)
    p.add_argument("--b", required=True)
    p.add_argument("--dir", required=True)
    p.add_argument("--replica-dir")
    p.add_argument("--write", default="simple")
    p.add_argument("--read", default="")
    p.add_argument("--degrees", default="2,3")
    p.add_argument("--blocks", default="65536,1048576")
    p.add_argument("--total", type=int, default=64 << 20)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--drop-caches", action="store_true")
    p.add_argument("--a-env", action="append", default=[])
    p.add_argument("--b-env", action="append", default=[])
    args = p.parse_args()
    variants = [
        "a:" + ",".join([f"REDIO_LIB_DIR={os.path.abspath(args.a)}", *args.a_env]),
        "b:" + ",".join([f"REDIO_LIB_DIR={os.path.abspath(args.b)}", *args.b_env]),
    ]
    blocks = [int(b) for b in args.blocks.split(",")]
    command = [
        "--family", "protocols", "--dir", args.dir,
        "--write", args.write, "--read", args.read, "--degrees", args.degrees,
        "--blocks", ",".join(str(b) for b in blocks), "--total", str(args.total),
        "--reps", str(args.reps),
    ]
    for v in variants:
        command += ["--variant", v]
    if args.replica_dir:
        command += ["--replica-dir", args.replica_dir]
    if args.drop_caches:
        command.append("--drop-caches")
    out = tempfile.mkdtemp(prefix="redio-ab-")
    median = medians(bench(out, command))
    rate = lambda key: median[key][1] / median[key][0] / MiB
    print("| mode | protocol | r | block | None r=1 MiB/s | A MiB/s | B MiB/s | A/None | B/None | B/A |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    degrees = [int(d) for d in args.degrees.split(",")]
    for mode, protocols in (("write", args.write), ("read", args.read)):
        for protocol in [x for x in protocols.split(",") if x]:
            for degree in degrees:
                for block in blocks:
                    none = rate((mode, "none", 1, block))
                    a = rate((mode, f"{protocol}@a", degree, block))
                    b = rate((mode, f"{protocol}@b", degree, block))
                    print(f"| {mode} | {protocol} | {degree} | {block} | {none:.1f} | {a:.1f} | {b:.1f} | "
                          f"{a / none:.2f} | {b / none:.2f} | {b / a:.2f} |", flush=True)
    print_machine()


if __name__ == "__main__":
    main()
