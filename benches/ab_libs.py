#!/usr/bin/env python3
"""Two builds (or settings) of libredio.so side by side: the same `redio
run` of the benchmark program (benches/io_loop.c) with REDIO_LIB_DIR
pointing at build A or build B (each with its own extra environment, e.g.
--b-env REDIO_BENCH_NO_LIVENESS=1), interleaved with None at r=1, repeated;
prints the median throughput of each and the ratios (B/A, and each against
None r=1).

A build directory is laid out as REDIO_LIB_DIR expects: <dir>/<mpi>/libredio.so
(for example a copy of target/mpich/release/libredio.so in <dir>/mpich/).

Usage:
  benches/ab_libs.py --a DIR_A --b DIR_B --dir DATA_DIR [--replica-dir T]
      [--write simple] [--read ""] [--degrees 2,3] [--blocks 65536,1048576]
      [--total 67108864] [--reps 5] [--drop-caches] [--a-env K=V] [--b-env K=V]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

from bench_cli import REDIO, ROOT, print_machine


def config(tmp, name, data_dir, replica_dir, read, write):
    path = os.path.join(tmp, f"{name}.yaml")
    dirs = [data_dir] + ([replica_dir.replace("{replica}", str(k)) for k in range(3)] if replica_dir else [])
    with open(path, "w") as f:
        f.write("version: 1\nshared:\n  paths:\n")
        for d in dirs:
            f.write(f'    - "{d}"\n')
        if replica_dir:
            f.write(f'remap:\n  - prefix: "{data_dir}"\n    to: "{replica_dir}"\n')
        f.write(f"io:\n  read: {read}\n  write: {write}\n  chunk_size: 4MiB\n")
    return path


def seconds(lib_dir, cfg, degree, exe, mode, data_dir, block, total, extra=()):
    env = {**os.environ, "REDIO_LIB_DIR": lib_dir, **dict(kv.split("=", 1) for kv in extra)}
    cmd = ["timeout", "600", REDIO, "run", "--mpi", "mpich", "-n", "1", "-r", str(degree),
           "--config", cfg, "--", exe, mode, data_dir, str(block), str(total)]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{out.stdout}\n{out.stderr}")
    return max(float(l.split()[1]) for l in out.stdout.splitlines() if l.startswith("seconds "))


def drop_caches():
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


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
    tmp = tempfile.mkdtemp(prefix="redio-ab-")
    exe = os.path.join(tmp, "io_loop")
    subprocess.run(["mpicc.mpich", "-O2", "-o", exe, os.path.join(ROOT, "benches", "io_loop.c")], check=True)
    degrees = [int(d) for d in args.degrees.split(",")]
    blocks = [int(b) for b in args.blocks.split(",")]
    seed = config(tmp, "seed", args.dir, args.replica_dir, "none", "none")
    print("| mode | protocol | r | block | None r=1 MiB/s | A MiB/s | B MiB/s | A/None | B/None | B/A |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for mode, protocols in (("write", args.write), ("read", args.read)):
        protocols = [x for x in protocols.split(",") if x]
        if not protocols:
            continue
        if mode == "read":
            seconds(args.a, seed, max(degrees), exe, "write", args.dir, max(blocks), max(args.total, max(blocks)))
        for block in blocks:
            total = max(args.total, block)
            variants = [("none", 1, "a")] + [(x, d, lib) for x in protocols for d in degrees for lib in ("a", "b")]
            rates = {v: [] for v in variants}
            for _ in range(args.reps):
                for v in variants:
                    protocol, degree, lib = v
                    read, write = (protocol, "none") if mode == "read" else ("none", protocol)
                    cfg = config(tmp, f"{mode}-{protocol}", args.dir, args.replica_dir, read, write)
                    if mode == "read" and args.drop_caches:
                        drop_caches()
                    lib_dir, extra = (args.a, args.a_env) if lib == "a" else (args.b, args.b_env)
                    s = seconds(lib_dir, cfg, degree, exe, mode, args.dir, block, total, extra)
                    rates[v].append(total / s / (1 << 20))
                    print(f"{mode} {protocol} r={degree} {lib} block {block}: {rates[v][-1]:.1f} MiB/s", file=sys.stderr)
            none = statistics.median(rates[("none", 1, "a")])
            for protocol in protocols:
                for degree in degrees:
                    a = statistics.median(rates[(protocol, degree, "a")])
                    b = statistics.median(rates[(protocol, degree, "b")])
                    print(f"| {mode} | {protocol} | {degree} | {block} | {none:.1f} | {a:.1f} | {b:.1f} | "
                          f"{a / none:.2f} | {b / none:.2f} | {b / a:.2f} |", flush=True)
    print_machine("mpich")


if __name__ == "__main__":
    main()
