#!/usr/bin/env python3
"""Deaths under the I/O stacks users run (issue 16, with issue 18's stacks).

Parallel HDF5 (Debian's, over MPI-IO: tests/programs/stacks/h5_parallel.c)
on MPICH and Open MPI 4.1, and mpi4py's MPI.File on Open MPI 4.1
(tests/programs/stacks/mpi4py_mpiio.py), N=2 at r=2 and r=3, lose one
replica process, and must still end with status 0, a summary that names
the dead, and shared files byte-identical to a plain run's (plain mpiexec,
no redio). Two sweeps:

1. every operation: REDIO_TEST_DIE=<victim>:<op>:kill for every victim and
   every coordinated operation of the run (op 1 up to the first one that
   no longer exists), at r=2, and every --r3-step-th operation at r=3;
2. random moments: --random trials, each SIGKILLs a random process from
   outside (as the OOM killer would), a random time after it got through
   redio's start-up (up to the time a fault-free run lives after it), with
   random read and write protocols. Trials whose victim had finished already do
   not count as hits.

Usage: benches/stack_kills.py [--random N] [--seed S] [--r3-step K]
                              [--stacks hdf5-mpich,hdf5-openmpi,mpi4py] [--random-only]
(after scripts/setup.sh and scripts/build.sh). Prints one line per failed
trial (its directory is kept) and a tally per stack and sweep; exit status
0 only if no trial failed.
"""
import argparse
import filecmp
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from bench_cli import REDIO, ROOT, print_machine

PROGRAMS = os.path.join(ROOT, "tests", "programs")
RANKS = 2
TIMEOUT = 120
# More coordinated operations than any of the programs makes (about 21).
MAX_OPERATIONS = 200
READS = ["simple", "read-distribute", "distributed-chunked", "chained"]
WRITES = ["simple", "distributed"]
# Plain Open MPI launches refuse root without these (CI runs as root).
PLAIN_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


class Stack:
    """One program on one MPI: how to build it, launch it plainly, and
    recognise its processes."""

    def __init__(self, name, mpi, command, process_name):
        self.name, self.mpi, self.command, self.process_name = name, mpi, command, process_name
        self.plain_files = None
        # Seconds from a process's start-up to the end of a fault-free
        # redio run: the random kills' window.
        self.window = None


def compile_hdf5(mpi, work):
    """h5_parallel.c built with `mpi`'s compiler wrapper and HDF5."""
    wrapper = {"mpich": "mpicc.mpich", "openmpi": "mpicc.openmpi"}[mpi]
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", f"hdf5-{mpi}"], check=True,
                           capture_output=True, text=True).stdout.split()
    exe = os.path.join(work, f"h5_parallel_{mpi}")
    subprocess.run([wrapper, "-O1", f"-I{PROGRAMS}", os.path.join(PROGRAMS, "stacks", "h5_parallel.c"),
                    *flags, "-o", exe], check=True)
    return exe


def stacks(wanted, work):
    """The stacks named in `wanted`, built."""
    found = []
    for name in wanted:
        if name.startswith("hdf5-"):
            mpi = name[len("hdf5-"):]
            exe = compile_hdf5(mpi, work)
            found.append(Stack(name, mpi, [exe], os.path.basename(exe)[:15]))
        elif name == "mpi4py":
            script = os.path.join(PROGRAMS, "stacks", "mpi4py_mpiio.py")
            found.append(Stack(name, "openmpi", ["/usr/bin/python3", script], "python3"))
        else:
            sys.exit(f"stack_kills: unknown stack {name!r}")
    return found


def area(work, prefix):
    """A fresh directory with shared/ and local/."""
    root = tempfile.mkdtemp(prefix=prefix, dir=work)
    os.makedirs(os.path.join(root, "shared"))
    os.makedirs(os.path.join(root, "local"))
    return root


def files(directory):
    return sorted(os.listdir(directory))


def plain_run(stack, work):
    """The stack's files from a plain launch (no redio)."""
    root = area(work, f"plain-{stack.name}-")
    launcher = (["mpiexec.mpich"] if stack.mpi == "mpich"
                else ["mpirun.openmpi", "--oversubscribe"])
    done = subprocess.run(["timeout", str(TIMEOUT), *launcher, "-n", str(RANKS), *stack.command,
                           f"{root}/shared", f"{root}/local"], env=dict(os.environ, **PLAIN_ENV),
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"stack_kills: the plain run of {stack.name} failed ({done.returncode}):\n"
                 f"{done.stdout}{done.stderr}")
    stack.plain_files = os.path.join(root, "shared")


def calibrate(stack, work):
    """Measures the stack's window: a fault-free run at r=2, from the
    moment world rank 0 got through start-up to the job's end."""
    root = area(work, f"window-{stack.name}-")
    run = redio_run(stack, root, 2, "simple", "simple", {"REDIO_STACK_KILL": root})
    since = None
    while run.poll() is None and since is None:
        if started_victim(stack, f"REDIO_STACK_KILL={root}", 0) is not None:
            since = time.monotonic()
        time.sleep(0.002)
    status = run.wait()
    if status != 0 or since is None:
        sys.exit(f"stack_kills: the fault-free run of {stack.name} failed ({status}) in {root}")
    stack.window = time.monotonic() - since
    shutil.rmtree(root)


def redio_run(stack, root, degree, read, write, env):
    """Starts the stack under `redio run` in `root`; returns the Popen."""
    with open(f"{root}/redio.yaml", "w") as config:
        config.write(f'version: 1\nshared:\n  paths: ["{root}/shared"]\n'
                     f"io: {{read: {read}, write: {write}}}\n")
    out = open(f"{root}/out.txt", "w")
    return subprocess.Popen(
        ["timeout", str(TIMEOUT), REDIO, "run", "--mpi", stack.mpi, "-n", str(RANKS), "-r", str(degree),
         "--config", f"{root}/redio.yaml", "--summary", f"{root}/summary.json", "--", *stack.command,
         f"{root}/shared", f"{root}/local"],
        env=dict(os.environ, **env), stdout=out, stderr=subprocess.STDOUT)


def verdict(stack, root, status):
    """(failed processes in the summary, why the trial failed or None)."""
    try:
        with open(f"{root}/summary.json") as summary:
            dead = len(json.load(summary).get("failed") or [])
    except (OSError, ValueError) as e:
        return None, f"no summary ({e})"
    if status != 0:
        return dead, f"exit status {status}"
    names = files(stack.plain_files)
    if files(f"{root}/shared") != names:
        return dead, f"shared files {files(root + '/shared')}, plain run {names}"
    for name in names:
        if not filecmp.cmp(f"{root}/shared/{name}", f"{stack.plain_files}/{name}", shallow=False):
            return dead, f"{name} differs from the plain run's"
    return dead, None


class Tally:
    """Trials run, trials that hit a live victim, and failures, per key."""

    def __init__(self):
        self.counts = {}
        self.failures = []

    def add(self, key, hit, why, what):
        run, hits, failed = self.counts.get(key, (0, 0, 0))
        self.counts[key] = (run + 1, hits + int(hit), failed + int(why is not None))
        if why is not None:
            self.failures.append(f"{what}: {why}")
            print(f"FAILED {what}: {why}", flush=True)


def every_operation(stack, work, tally, r3_step):
    """Sweep 1: REDIO_TEST_DIE at every operation, every victim."""
    for degree, step in ((2, 1), (3, r3_step)):
        for victim in range(RANKS * degree):
            op = 1
            # A bound, should every run fail before it reports.
            while op <= MAX_OPERATIONS:
                root = area(work, f"op-{stack.name}-")
                spec = f"{victim}:{op}:kill"
                run = redio_run(stack, root, degree, "simple", "simple", {"REDIO_TEST_DIE": spec})
                dead, why = verdict(stack, root, run.wait())
                what = f"{stack.name} r={degree} REDIO_TEST_DIE={spec} ({root})"
                if dead == 0 and why is None:
                    shutil.rmtree(root)
                    break  # past the last operation this victim takes part in
                tally.add((stack.name, "every operation"), bool(dead), why, what)
                if why is None:
                    shutil.rmtree(root)
                op += step


def started_victim(stack, marker, victim):
    """The pid of world rank `victim` of the run marked `marker`, once it
    got through redio's start-up (its event file says `started`)."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/comm") as comm:
                if comm.read().strip() != stack.process_name:
                    continue
            with open(f"/proc/{pid}/environ", "rb") as environ:
                env = environ.read().decode(errors="replace").split("\0")
        except OSError:
            continue
        if marker not in env:
            continue
        if f"PMI_RANK={victim}" not in env and f"OMPI_COMM_WORLD_RANK={victim}" not in env:
            continue
        run_dir = [v.split("=", 1)[1] for v in env if v.startswith("REDIO_RUN_DIR=")]
        try:
            with open(f"{run_dir[0]}/rank-{victim}.jsonl") as events:
                if '"started"' in events.read():
                    return int(pid)
        except (OSError, IndexError):
            pass
    return None


def random_kill(stack, work, tally, dice):
    """Sweep 2: one SIGKILL from outside at a random moment."""
    degree = dice.choice((2, 3))
    victim = dice.randrange(RANKS * degree)
    read, write = dice.choice(READS), dice.choice(WRITES)
    delay = dice.uniform(0, stack.window)
    root = area(work, f"kill-{stack.name}-")
    marker = f"REDIO_STACK_KILL={root}"
    run = redio_run(stack, root, degree, read, write, {"REDIO_STACK_KILL": root})
    pid, since = None, time.monotonic()
    while run.poll() is None and pid is None and time.monotonic() - since < TIMEOUT:
        pid = started_victim(stack, marker, victim)
        time.sleep(0.002)
    killed = False
    if pid is not None:
        time.sleep(delay)
        try:
            os.kill(pid, signal.SIGKILL)
            killed = True
        except ProcessLookupError:
            pass
    dead, why = verdict(stack, root, run.wait())
    what = (f"{stack.name} r={degree} {read}/{write} victim {victim} killed after "
            f"{delay * 1000:.0f} ms ({root})")
    tally.add((stack.name, "random SIGKILL"), killed and bool(dead), why, what)
    if why is None:
        shutil.rmtree(root)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--random", type=int, default=100, help="random SIGKILL trials per stack")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--r3-step", type=int, default=3, help="every K-th operation at r=3")
    parser.add_argument("--stacks", default="hdf5-mpich,hdf5-openmpi,mpi4py")
    parser.add_argument("--random-only", action="store_true", help="skip the every-operation sweep")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 32)
    dice = random.Random(seed)
    work = tempfile.mkdtemp(prefix="redio-stack-kills-")
    print(f"stack_kills: seed {seed}, work in {work}", flush=True)
    tally = Tally()
    for stack in stacks(args.stacks.split(","), work):
        plain_run(stack, work)
        calibrate(stack, work)
        print(f"{stack.name}: random kills within {stack.window * 1000:.0f} ms of start-up",
              flush=True)
        if not args.random_only:
            every_operation(stack, work, tally, args.r3_step)
        for _ in range(args.random):
            random_kill(stack, work, tally, dice)
    print("\n| stack | sweep | trials | hit a live victim | failed |\n|---|---|---:|---:|---:|")
    for (name, sweep), (run, hits, failed) in sorted(tally.counts.items()):
        print(f"| {name} | {sweep} | {run} | {hits} | {failed} |")
    print_machine("mpich,openmpi")
    if tally.failures:
        print(f"\n{len(tally.failures)} failed; their directories are kept under {work}")
        sys.exit(1)
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
