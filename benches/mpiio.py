#!/usr/bin/env python3
"""MPI-IO collective write and read under redio on the emulated NFS cluster
(issue 18).

benches/mpiio_loop.c (2 ranks by default, interleaved 1 MiB stripes through a vector
file view, MPI_File_write_all + sync, then MPI_File_read_all of the same
file after the page cache is dropped) runs under `redio run` in these
variants, interleaved in every repetition (the order rotates):

- none-r1: r=1, read and write protocol none (the plain program's I/O);
- simple-r2: r=2, Simple Read and Simple Write (one replica writes); one
  server only: with a server per replica, Simple Write fills replica 0's
  copy alone (docs/protocols.md, "One server per replica");
- auto-r2: r=2, read and write `auto` (Distributed Write and Distributed
  Chunked Read where every replica has its own server);
- with `--before DIR`, simple-r2-before and auto-r2-before: the same with
  an earlier build of libredio.so (`DIR/mpich/libredio.so`, through
  REDIO_LIB_DIR), to measure a change side by side;
- with `--ucx-default`, simple-r2-ucx and auto-r2-ucx: the same with UCX's
  own rendezvous threshold (`UCX_RNDV_THRESH=auto`) instead of the eager-only
  setting `redio exec --survive` gives replicated MPICH jobs
  (docs/fault-tolerance.md, "Launching"): what surviving SIGKILL costs
  each protocol.

Each replica reaches the file through its own node's mount (remap of
/redio-bench to ROOT/replica{replica}). Two cluster shapes: one NFS server
for all (`shared`), and a server per replica (`separate`). Prints the
median seconds (of the slowest process of every replica), min-max and
throughput relative to none-r1 of the same run; then the CPU-seconds the
job's processes used in the timed part and the emulated file system's
servers and clients used in the run (on a small machine they compete for
the same cores); then the machine block.

Usage (as root, after scripts/setup.sh and scripts/build.sh):
  benches/mpiio.py [--reps 5] [--total-mib 32] [--ranks 2] [--rate 400mbit] [--topologies shared,separate]
                   [--before DIR] [--ucx-default]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

from bench_cli import MiB, REDIO, ROOT, print_machine

CLUSTER = os.path.join(ROOT, "cluster", "redio-cluster")
VARIANTS = [  # name, degree, read, write
    ("none-r1", 1, "none", "none"),
    ("simple-r2", 2, "simple", "simple"),
    ("auto-r2", 2, "auto", "auto"),
]
BLOCK = MiB


def sh(args, **kw):
    return subprocess.run(args, check=True, text=True, capture_output=True, **kw).stdout


def config(directory, name, root, read, write):
    path = os.path.join(directory, f"{name}.yaml")
    with open(path, "w") as f:
        f.write("version: 1\nshared:\n  paths:\n    - /redio-bench\n")
        for k in range(2):
            f.write(f"    - {root}/replica{k}\n")
        f.write(f"remap:\n  - prefix: /redio-bench\n    to: {root}/replica{{replica}}\n")
        f.write(f"io:\n  read: {read}\n  write: {write}\n  chunk_size: 4MiB\n")
    return path


def drop_caches():
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def cluster_cpu(root):
    """CPU-seconds the emulated file system's servers and clients used so far."""
    return float(sh([CLUSTER, "cpu", "--root", root]))


def run(exe, cfg, ranks, degree, total, mode, root, cpu, lib_dir=None, ucx_default=False):
    """One run; returns the slowest process's seconds, and adds to `cpu` (a
    dict of lists) the CPU-seconds all processes used in the timed part
    ("job") and those the file system's servers and clients used during the
    run ("fs")."""
    fs0 = cluster_cpu(root)
    env = dict(os.environ)
    if lib_dir:
        env["REDIO_LIB_DIR"] = lib_dir
    if ucx_default:
        env["UCX_RNDV_THRESH"] = "auto"  # a user's setting wins over redio exec's
    out = sh(["timeout", "300", REDIO, "run", "--mpi", "mpich", "-n", str(ranks), "-r", str(degree),
              "--output", "all", "--config", cfg, "--",
              exe, "/redio-bench/mpiio.dat", str(total), str(BLOCK), mode], env=env)
    cpu["fs"].append(cluster_cpu(root) - fs0)
    # One line per replica (`--output all` prefixes "[replica K] ").
    lines = [l.split("] ", 1)[-1] for l in out.splitlines()]
    lines = [l.split() for l in lines if l.startswith(mode + " ")]
    if len(lines) != degree:
        sys.exit(f"{mode} under {cfg}: {len(lines)} result lines for {degree} replicas:\n{out}")
    for words in lines:
        if words[5] != "1":
            sys.exit(f"{mode} under {cfg}: the data read back differs: {' '.join(words)}")
    cpu["job"].append(sum(float(words[7]) for words in lines))
    return max(float(words[1]) for words in lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--total-mib", type=int, default=32, help="bytes per rank, MiB")
    parser.add_argument("--ranks", type=int, default=2, help="logical ranks (processes: ranks x r)")
    parser.add_argument("--rate", default="400mbit")
    parser.add_argument("--topologies", default="shared,separate")
    parser.add_argument("--root", default="/tmp/redio-mpiio")
    parser.add_argument("--before", help="an earlier build: DIR/mpich/libredio.so (REDIO_LIB_DIR)")
    parser.add_argument("--ucx-default", action="store_true",
                        help="also run the r=2 variants with UCX_RNDV_THRESH=auto (without the survival setting)")
    args = parser.parse_args()
    replicated = [v for v in VARIANTS if v[1] > 1]
    variants_all = (VARIANTS
                    + ([(f"{name}-before", *rest) for name, *rest in replicated] if args.before else [])
                    + ([(f"{name}-ucx", *rest) for name, *rest in replicated] if args.ucx_default else []))
    total = args.total_mib * MiB
    work = tempfile.mkdtemp(prefix="redio-mpiio-")
    exe = os.path.join(work, "mpiio_loop")
    sh(["mpicc.mpich", "-O2", "-o", exe, os.path.join(ROOT, "benches", "mpiio_loop.c")])
    rows = []
    for topology in args.topologies.split(","):
        sh([CLUSTER, "up", "--root", args.root, "--kind", "nfs", "--topology", topology,
            "--replicas", "2", "--rate", args.rate])
        try:
            print(f"{topology}: " + sh([CLUSTER, "calibrate", "--root", args.root]).strip(), flush=True)
            variants = [v for v in variants_all if topology == "shared" or not v[0].startswith("simple-r2")]
            configs = {name: config(work, f"{topology}-{name}", args.root, read, write)
                       for name, _, read, write in variants}
            times = {(name, mode): [] for name, *_ in variants for mode in ("write", "read")}
            cpus = {key: {"job": [], "fs": []} for key in times}
            for rep in range(args.reps):
                order = variants[rep % len(variants):] + variants[:rep % len(variants)]
                for name, degree, _, _ in order:
                    for k in range(degree):
                        path = f"{args.root}/replica{k}/mpiio.dat"
                        if os.path.exists(path):
                            os.remove(path)
                    for mode in ("write", "read"):
                        if mode == "read":
                            drop_caches()
                        lib_dir = os.path.abspath(args.before) if name.endswith("-before") else None
                        times[(name, mode)].append(run(exe, configs[name], args.ranks, degree, total, mode,
                                                       args.root, cpus[(name, mode)], lib_dir,
                                                       ucx_default=name.endswith("-ucx")))
                print(f"{topology}: repetition {rep + 1} of {args.reps} done", file=sys.stderr, flush=True)
            for mode in ("write", "read"):
                base = statistics.median(times[("none-r1", mode)])
                for name, degree, read, write in variants:
                    t = times[(name, mode)]
                    med = statistics.median(t)
                    rows.append((topology, mode, name, med, min(t), max(t), args.ranks * total / MiB / med, base / med,
                                 statistics.median(cpus[(name, mode)]["job"]),
                                 statistics.median(cpus[(name, mode)]["fs"])))
        finally:
            sh([CLUSTER, "down", "--root", args.root])
    print(f"\n{args.ranks} ranks x {args.total_mib} MiB, 1 MiB stripes, link {args.rate}, {args.reps} repetitions, "
          "median (min-max); ratio = throughput / none-r1 of the same cluster\n")
    print("| cluster | operation | variant | seconds | min-max | MiB/s | ratio to none-r1 |")
    print("|---|---|---|---|---|---|---|")
    for topology, mode, name, med, lo, hi, rate, ratio, *_ in rows:
        shape = "one server" if topology == "shared" else "a server per replica"
        print(f"| {shape} | {mode} | {name} | {med:.2f} | {lo:.2f}-{hi:.2f} | {rate:.1f} | {ratio:.2f} |")
    print("\nCPU-seconds per run (medians): every process of the job in the timed part (MPI_Wtime's), "
          "and the emulated file system's servers and clients during the whole run\n")
    print("| cluster | operation | variant | job | file system |")
    print("|---|---|---|---|---|")
    for topology, mode, name, *_, job, fs in rows:
        shape = "one server" if topology == "shared" else "a server per replica"
        print(f"| {shape} | {mode} | {name} | {job:.2f} | {fs:.2f} |")
    print()
    print_machine("mpich")


if __name__ == "__main__":
    main()
