#!/usr/bin/env python3
"""The interposition layer (issue 3), as the tables of docs/benchmarks.md
("Interposition and the first protocols"), measured by `redio bench`.

pass-through: node-local 4 KiB and 1 MiB write and read loops, native
    (`mpiexec -n 1 io_loop`) against under redio with r=1 (`redio run -n 1
    -r 1`), interleaved: `redio bench --family interposition` on tmpfs.
    Targets: at most 2% at 4 KiB, 0.5% at 1 MiB.
hook cost: wall time on these machines is noisy (several %), so the hooks'
    own cost is also counted exactly, in instructions per call, with
    callgrind (`redio bench` does not count instructions; this script runs
    valgrind on the io_loop that `redio bench` compiled).
coordinated: Simple Write / Simple Read at r=2 against None at r=1 (and
    None at r=2 for context), on a local directory declared shared, blocks of
    4 KiB to 64 MiB: `redio bench --read none,simple --write none,simple
    --degrees 2`. Reports the ratios; writes docs/img/coordinated-io.png.

Usage: benches/interposition.py [--reps N] [--quick] [--out DIR]
Prints markdown tables; paste them into docs/benchmarks.md.
"""
import argparse
import os
import subprocess
import sys
import tempfile

from bench_cli import MiB, ROOT, bench, by_total, human, medians, print_machine, save_plot

TIMEOUT = 600


def scratch(work):
    """A directory on tmpfs, where the I/O itself is steady (no writeback),
    so that what differs between the variants is the cost of the hooks."""
    return tempfile.mkdtemp(prefix="redio-bench-", dir="/dev/shm" if os.path.isdir("/dev/shm") else work)


def pass_through(work, out, reps):
    local = scratch(work)
    total = 256 * MiB
    m = medians(bench(out, ["--family", "interposition", "--dir", local, "--mpi", "mpich",
                            "--blocks", f"4096,{MiB}", "--total", str(total), "--reps", str(reps)]))
    subprocess.run(["rm", "-rf", local], check=True)
    print(f"\n### Pass-through overhead, node-local file on tmpfs ({total // MiB} MiB per run, "
          f"{reps} interleaved runs, median)\n")
    print("| operation | block | native | redio r=1 | overhead |")
    print("|---|---|---|---|---|")
    for mode in ["write", "read"]:
        for block in [4096, MiB]:
            a, b = m[(mode, "native", 1, block)][0], m[(mode, "pass-through", 1, block)][0]
            print(f"| {mode} | {human(block)} | {total / a / MiB:.0f} MiB/s | {total / b / MiB:.0f} MiB/s | "
                  f"{(b / a - 1) * 100:+.1f}% |")
    return os.path.join(out, "io_loop.mpich")


def instructions(exe, directory, mode, block, total, preload):
    """User-space instructions of the measured loop, counted by callgrind."""
    out = os.path.join(directory, "callgrind.out")
    env = {"LD_PRELOAD": os.path.join(ROOT, "target", "mpich", "release", "libredio.so")} if preload else {}
    result = subprocess.run(["valgrind", "--tool=callgrind", "--toggle-collect=*io_loop*",
                             f"--callgrind-out-file={out}", exe, mode, directory, str(block), str(total)],
                            capture_output=True, text=True, timeout=TIMEOUT, env={**os.environ, **env})
    for line in result.stderr.splitlines():
        if "Collected :" in line:
            return int(line.split(":")[-1])
    sys.exit(f"callgrind failed:\n{result.stderr}")


def hook_cost(exe, work):
    """Deterministic cost of the hooks: instructions per call, with and
    without libredio.so (singleton MPI, no launcher)."""
    if subprocess.run(["which", "valgrind"], capture_output=True).returncode != 0:
        print("\n(valgrind not installed: no instruction counts)")
        return
    directory = scratch(work)
    calls = 1024
    print(f"\n### Hook cost in user-space instructions per call (callgrind, loop of {calls} calls)\n")
    print("| operation | block | native | redio r=1 | added per call |")
    print("|---|---|---|---|---|")
    for mode in ["write", "read"]:
        for block in [4096, MiB]:
            counts = [instructions(exe, directory, mode, block, block * calls, preload) for preload in (False, True)]
            per_call = [c / calls for c in counts]
            print(f"| {mode} | {human(block)} | {per_call[0]:.0f} | {per_call[1]:.0f} | "
                  f"{per_call[1] - per_call[0]:+.0f} |")
    subprocess.run(["rm", "-rf", directory], check=True)


def coordinated(work, out, reps, blocks):
    shared = os.path.join(work, "shared")
    os.makedirs(shared)
    rows = []
    for total, group in by_total(blocks, lambda block: max(64 * MiB, 4 * block)):
        rows += bench(os.path.join(out, f"total{total}"),
                      ["--family", "protocols", "--dir", shared, "--mpi", "mpich",
                       "--read", "none,simple", "--write", "none,simple", "--degrees", "2",
                       "--blocks", ",".join(map(str, group)), "--total", str(total), "--reps", str(reps)])
    m = medians(rows)
    variants = {"None r=1": ("none", 1), "None r=2": ("none", 2), "Simple r=2": ("simple", 2)}
    print(f"\n### Coordinated I/O on a local directory declared shared ({reps} interleaved runs, median)\n")
    print("| operation | block | total | None r=1 | None r=2 | Simple r=2 | Simple r=2 / None r=1 |")
    print("|---|---|---|---|---|---|---|")
    points = []
    for mode in ["write", "read"]:
        for block in blocks:
            s = {name: m[(mode, protocol, degree, block)] for name, (protocol, degree) in variants.items()}
            total = s["None r=1"][1]
            rate = lambda name: f"{total / s[name][0] / MiB:.0f} MiB/s"
            ratio = s["Simple r=2"][0] / s["None r=1"][0]
            print(f"| {mode} | {human(block)} | {human(total)} | {rate('None r=1')} | {rate('None r=2')} | "
                  f"{rate('Simple r=2')} | {ratio:.2f}x time |")
            points.append((mode, block, ratio))
    plot(points)


def plot(points):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("\n(matplotlib not installed: no plot; `pip install matplotlib`)")
        return
    fig, ax = plt.subplots(figsize=(7, 4))
    for mode, marker in [("write", "o"), ("read", "s")]:
        mine = [(block, ratio) for md, block, ratio in points if md == mode]
        ax.plot([p[0] for p in mine], [p[1] for p in mine], marker=marker, label=f"Simple {mode}, r=2")
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("block size (bytes)")
    ax.set_ylabel("time relative to None at r=1")
    ax.set_title("Cost of coordination (local directory declared shared)")
    ax.legend()
    save_plot(fig, "coordinated-io.png")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="fewer block sizes, for a smoke run")
    parser.add_argument("--out", default=os.path.join(ROOT, "target", "bench-interposition"),
                        help="where each `redio bench` invocation leaves its results")
    args = parser.parse_args()
    blocks = [4096, MiB, 64 * MiB] if args.quick else [4096, 65536, MiB, 16 * MiB, 64 * MiB]
    with tempfile.TemporaryDirectory(dir=os.path.join(ROOT, "target")) as work:
        exe = pass_through(work, os.path.join(args.out, "pass-through"), args.reps)
        hook_cost(exe, work)
        coordinated(work, os.path.join(args.out, "coordinated"), max(3, args.reps // 2), blocks)
    print_machine("mpich")


if __name__ == "__main__":
    main()
