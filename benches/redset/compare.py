#!/usr/bin/env python3
"""redio's parity against redset (ECP-VeloC), side by side (issue 20).

Given an installed redset (REDSET_PREFIX: include/redset.h and the
libraries redset, kvtree and rankstr under lib/ or lib64/), this script
fetches nothing: it compiles our own timing driver (redset_driver.c,
beside this file) with mpicc.mpich -O3 against the prefix, writes the
same random data files for both tools, and for every point runs redio and
redset interleaved on those files (the order of the variants rotates from
one repetition to the next), N repetitions:

  apply    redset_driver apply (redset_apply: MPI_Wtime of the slowest
           rank after a barrier, redset_create_* before it timed apart, and
           the wall time of its mpiexec, which includes both); `redio parity encode -n N` (the collective MPI job,
           wall time of the command: redio reports no time of its own
           there); `redio run` of an empty MPI program that protects the
           files at MPI_Finalize (the time redio's own log line gives, the
           slowest rank: redio's in-process figure); `redio parity encode
           --offline` (wall). The physical bound: each rank reads its data
           and writes its redundancy file's size with dd (conv=fsync), all
           ranks at once (wall). The launch: `mpiexec -n N` of the driver
           doing nothing (wall), as is and with hwloc's I/O discovery off
           (HWLOC_COMPONENTS=-linuxio,-pci: how redio's collective
           commands start their processes). At the 2-member points (XOR and
           PARTNER(1) with 2 ranks, where each rank's redundancy is its
           partner's data) also the copy floor (copy_floor.c): the data
           movement alone, through MPI, 1 MiB pieces, pread / pwrite /
           fsync (in-process and wall, started as redio's collective
           commands start), and the same sending from a mapping of the data
           instead of reading it ("mmap send").
  rebuild  the lost ranks' data file and that tool's redundancy files are
           deleted (the directories stay), then redset_driver recover
           (redset_recover: MPI_Wtime and wall), `redio parity rebuild -n N`
           (wall), `redio parity rebuild --offline` (wall) and, at the
           2-member points, the copy floor's rebuild (the survivor sends
           the two files, the lost rank writes them; in-process and wall). After every
           rebuild the data files must be byte-identical to the originals
           (cmp), or the script stops: a comparison of a tool that fails is
           no result. The rebuilt redundancy files must exist; whether they
           are byte-identical to the deleted ones is counted and reported
           (redset's PARTNER and XOR rebuilds may rewrite a header differently).

Points: XOR 2 ranks x 64 and 256 MiB, PARTNER 2 x 64 MiB, XOR 4 x 64 MiB,
RS(2) 4 x 64 MiB (one lost rank, and two for RS(2)); on tmpfs and on disk.
Failure groups: one per rank (`node{rank}`) for both tools.

Ratios are redset's time over redio's (above 1: redio is faster), wall
against wall and in-process against in-process, of the medians and, as
"(best)", of the fastest runs; "of bound (best)" is the
fastest dd bound over the tool's fastest in-process time (1 = as fast as
reading the data and writing the redundancy; the fastest runs, because on
a loaded machine the median of the few dd processes can exceed a tool's).

Usage (after scripts/build.sh; MPICH):
  REDSET_PREFIX=/path/to/redset/install benches/redset/compare.py \\
      [--reps 7] [--places tmpfs,disk] [--tmpfs DIR] [--disk DIR] \\
      [--points xor:2:64,...] [--no-offline] [--no-injob] [--no-floor] [--out DIR] \\
      [--base OLD/redio [--base-lib-dir OLD_LIBS]]   (A/B against an earlier build)
  benches/redset/compare.py --report OUT/results.json   (the tables again)

Environment: REDIO (the CLI, default target/release/redio), MPICC
(mpicc.mpich), MPIEXEC (mpiexec.mpich), TIMEOUT (seconds per command,
600). Writes OUT/results.md (the tables), OUT/results.json (every
sample) and prints the tables. Not part of the test suite.
"""
import argparse
import glob
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
REDIO = os.environ.get("REDIO", os.path.join(ROOT, "target", "release", "redio"))
MPICC = os.environ.get("MPICC", "mpicc.mpich")
MPIEXEC = os.environ.get("MPIEXEC", "mpiexec.mpich")
TIMEOUT = int(os.environ.get("TIMEOUT", "600"))
MiB = 1 << 20
# What redio's collective commands give their MPI processes (and launcher):
# hwloc skips discovering PCI devices, whose configuration-space reads trap
# to the hypervisor on a VM (src/cli/parity_workers.rs). The copy floor
# starts the same way, so that its wall time stays a floor.
NO_IO_DISCOVERY = {"HWLOC_COMPONENTS": "-linuxio,-pci"}

DEFAULT_POINTS = "xor:2:64,xor:2:256,partner:1:2:64,xor:4:64,rs:2:4:64"


class Point:
    """One configuration: scheme (redio's spelling: xor, rs:K, partner:C),
    ranks, MiB per rank."""

    def __init__(self, text):
        parts = text.split(":")
        if parts[0] == "xor" and len(parts) == 3:
            self.scheme, self.k = "xor", 1
        elif parts[0] in ("rs", "partner") and len(parts) == 4:
            self.scheme, self.k = f"{parts[0]}:{parts[1]}", int(parts[1])
            parts = [parts[0]] + parts[2:]
        else:
            sys.exit(f"bad point {text!r}: xor:RANKS:MIB, rs:K:RANKS:MIB or partner:C:RANKS:MIB")
        self.kind = parts[0]
        self.ranks, self.mib = int(parts[1]), int(parts[2])
        # Lost ranks measured: one, and as many as RS tolerates.
        self.losses = [1] if self.kind != "rs" or self.k == 1 else [1, self.k]

    @property
    def label(self):
        name = {"xor": "XOR", "rs": f"RS({self.k})", "partner": f"PARTNER({self.k})"}[self.kind]
        return f"{name} {self.ranks} x {self.mib} MiB"

    @property
    def two_members(self):
        """Each rank's redundancy is its partner's data (XOR or PARTNER(1)
        with 2 ranks): the points the copy floor applies to."""
        return self.ranks == 2 and (self.kind == "xor" or (self.kind == "partner" and self.k == 1))

    def redundancy_bytes(self):
        """The redundancy one rank writes (its payload, headers aside)."""
        size = self.mib * MiB
        p = self.ranks
        if self.kind == "partner":
            return self.k * size
        chunk = -(-size // (p - self.k))
        return self.k * chunk


def run(command, env=None, cwd=None):
    """Runs COMMAND under `timeout` in its own process group (killed whole
    on a hang); returns (wall seconds, stdout+stderr). Exits on failure."""
    full = ["timeout", "-k", "10", str(TIMEOUT), *command]
    t0 = time.perf_counter()
    proc = subprocess.Popen(full, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, **(env or {})}, cwd=cwd, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=TIMEOUT + 30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        sys.exit(f"timed out: {' '.join(command)}\n{out}")
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"failed ({proc.returncode}): {' '.join(command)}\n{out}")
    return wall, out


def build_driver(prefix, build):
    include = os.path.join(prefix, "include")
    if not os.path.exists(os.path.join(include, "redset.h")):
        sys.exit(f"REDSET_PREFIX={prefix}: no include/redset.h")
    libdirs = [d for d in (os.path.join(prefix, "lib"), os.path.join(prefix, "lib64"))
               if glob.glob(os.path.join(d, "libredset.*"))]
    if not libdirs:
        sys.exit(f"REDSET_PREFIX={prefix}: no lib/libredset.* or lib64/libredset.*")
    os.makedirs(build, exist_ok=True)
    exe = os.path.join(build, "redset_driver")
    link = []
    for d in libdirs:
        link += ["-L" + d, "-Wl,-rpath," + d]
    cmd = [MPICC, "-O3", "-DREDSET_ENABLE_MPI", "-I" + include, "-o", exe,
           os.path.join(HERE, "redset_driver.c"), *link, "-lredset", "-lkvtree", "-lrankstr"]
    subprocess.run(["nice", *cmd], check=True)
    floor = os.path.join(build, "copy_floor")
    subprocess.run(["nice", MPICC, "-O3", "-o", floor, os.path.join(HERE, "copy_floor.c")],
                   check=True)
    hello = os.path.join(build, "hello")
    subprocess.run(["nice", MPICC, "-O2", "-o", hello, os.path.join(ROOT, "benches", "hello.c")], check=True)
    return exe, hello, floor


def redset_version(prefix):
    with open(os.path.join(prefix, "include", "redset.h")) as f:
        m = re.search(r'#define\s+REDSET_VERSION\s+"([^"]+)"', f.read())
    return m.group(1) if m else "unknown"


def machine():
    info = {"kernel": platform.release(), "cores": os.cpu_count()}
    with open("/proc/cpuinfo") as f:
        text = f.read()
    m = re.search(r"^model name\s*:\s*(.*)$", text, re.M)
    info["cpu"] = m.group(1).strip() if m else "unknown"
    m = re.search(r"^flags\s*:\s*(.*)$", text, re.M)
    flags = set(m.group(1).split()) if m else set()
    wanted = ["sse4_2", "pclmulqdq", "avx", "avx2", "avx512f", "avx512bw", "avx512vl",
              "gfni", "vpclmulqdq", "avx512_vbmi"]
    info["flags"] = " ".join(f for f in wanted if f in flags)
    try:
        out = subprocess.run(["mpichversion"], capture_output=True, text=True).stdout
        m = re.search(r"MPICH Version:\s*(\S+)", out)
        info["mpich"] = m.group(1) if m else "unknown"
    except OSError:
        info["mpich"] = "unknown"
    try:
        commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        info["redio"] = commit + (" (modified)" if dirty else "")
    except OSError:
        info["redio"] = "unknown"
    return info


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def write_random(path, size):
    with open("/dev/urandom", "rb") as src, open(path, "wb") as dst:
        left = size
        while left:
            chunk = src.read(min(left, 4 * MiB))
            dst.write(chunk)
            left -= len(chunk)


def same(a, b):
    return subprocess.run(["cmp", "-s", a, b]).returncode == 0


class Bench:
    def __init__(self, args, driver, hello, floor):
        self.args, self.driver, self.hello, self.floor = args, driver, hello, floor
        # dicts: place, point, op, lost, variant, metric (wall, inproc,
        # create (redset_create_*, before inproc): seconds; identical: the
        # rebuilt redundancy files byte for byte), value
        self.samples = []

    def record(self, place, pt, op, lost, variant, metric, value):
        self.samples.append(dict(place=place, point=pt.label, op=op, lost=lost,
                                 variant=variant, metric=metric, value=value))

    # Layout under BASE: data/rank{r}/ckpt.dat (redio's redundancy files
    # beside it, in its root), redset/rank{r}/ (redset's), dd/ (the bound),
    # orig/ (the lost ranks' originals), snap/ (their redundancy files),
    # floor/ (the copy floor's copies).
    def point(self, place, base, pt):
        n, size = pt.ranks, pt.mib * MiB
        shutil.rmtree(base, ignore_errors=True)
        data = [os.path.join(base, "data", f"rank{r}") for r in range(n)]
        reds = [os.path.join(base, "redset", f"rank{r}") for r in range(n)]
        for d in data + reds + [os.path.join(base, x) for x in ("dd", "orig", "snap", "floor")]:
            os.makedirs(d, exist_ok=True)
        for r in range(n):
            write_random(os.path.join(data[r], "ckpt.dat"), size)
        for r in range(max(pt.losses)):
            shutil.copy2(os.path.join(data[r], "ckpt.dat"), os.path.join(base, "orig", f"rank{r}.dat"))
        root = os.path.join(base, "data", "rank{rank}")
        name = os.path.join(base, "redset", "rank{rank}") + "/"
        files = os.path.join(root, "ckpt.dat")
        config = os.path.join(base, "redio.yaml")
        kind = pt.kind
        with open(config, "w") as f:
            f.write("version: 1\nreplication:\n  degree: 1\nparity:\n"
                    f"  scheme: {kind}\n  set_size: {n}\n"
                    + (f"  rs_parity: {pt.k}\n" if kind == "rs" else "")
                    + '  failure_group: "node{rank}"\n'
                    f'  files: ["{files}"]\nlog:\n  level: info\n')
        red_bytes = pt.redundancy_bytes()

        def rm_redio():
            for d in data:
                for f in glob.glob(os.path.join(d, "redio-parity*")):
                    os.remove(f)

        def rm_redset(ranks=range(n)):
            for r in ranks:
                for f in os.listdir(reds[r]):
                    os.remove(os.path.join(reds[r], f))

        def mpi(args, env=None):
            return run([MPIEXEC, "-n", str(n), *args], env=env)

        def driver_seconds(out):
            m = re.search(r"^redset-driver .* seconds=([0-9.]+) .* create_seconds=([0-9.]+) rc=0$",
                          out, re.M)
            if not m:
                sys.exit(f"no timing from redset_driver:\n{out}")
            return float(m.group(1)), float(m.group(2))

        def a_redset():
            rm_redset()
            wall, out = mpi([self.driver, "apply", pt.scheme, str(n), name, files])
            inproc, create = driver_seconds(out)
            return {"wall": wall, "inproc": inproc, "create": create}

        def a_redio(cli=REDIO, env=None):
            rm_redio()
            wall, _ = run([cli, "parity", "encode", "-n", str(n), "--root", root,
                           "--scheme", pt.scheme, "--set-size", str(n), "--groups", "node{rank}",
                           "--mpi", "mpich"], env=env)
            return {"wall": wall}

        def a_injob(cli=REDIO, env=None):
            rm_redio()
            wall, out = run([cli, "run", "--mpi", "mpich", "-r", "1", "-n", str(n),
                             "--config", config, "--", self.hello], env=env)
            times = [float(t) for t in re.findall(r"parity: .* bytes, in ([0-9.]+) s", out)]
            if len(times) != n:
                sys.exit(f"expected {n} parity log lines from redio run, got:\n{out}")
            return {"wall": wall, "inproc": max(times)}

        def a_offline():
            rm_redio()
            wall, _ = run([REDIO, "parity", "encode", "--offline", "--scheme", pt.scheme,
                           "--set-size", str(n), *data])
            return {"wall": wall}

        def a_bound():
            # Each rank: read its data, write its redundancy's size, fsync.
            scripts = []
            for r in range(n):
                out = os.path.join(base, "dd", f"rank{r}")
                scripts.append(
                    f"dd if={os.path.join(data[r], 'ckpt.dat')} of=/dev/null bs=1M status=none && "
                    f"dd if=/dev/zero of={out} bs=1M count={red_bytes} iflag=count_bytes "
                    f"conv=fsync status=none")
            t0 = time.perf_counter()
            procs = [subprocess.Popen(["timeout", str(TIMEOUT), "sh", "-c", s]) for s in scripts]
            if any(p.wait() != 0 for p in procs):
                sys.exit("dd failed")
            wall = time.perf_counter() - t0
            for r in range(n):
                os.remove(os.path.join(base, "dd", f"rank{r}"))
            return {"wall": wall}

        copies = os.path.join(base, "floor", "rank{rank}.copy")

        def floor_seconds(out):
            m = re.search(r"^copy-floor op=\S+ ranks=2 bytes=\d+ seconds=([0-9.]+) rc=0$", out, re.M)
            if not m:
                sys.exit(f"no timing from copy_floor:\n{out}")
            return float(m.group(1))

        def rm_copies():
            for r in range(n):
                path = copies.format(rank=r)
                if os.path.exists(path):
                    os.remove(path)

        def a_floor(*how):
            rm_copies()
            wall, out = mpi([self.floor, "apply", files, copies, *how], NO_IO_DISCOVERY)
            return {"wall": wall, "inproc": floor_seconds(out)}

        def a_launch(env=None):
            wall, _ = mpi([self.driver, "noop"], env)
            return {"wall": wall}

        applies = [("redset", a_redset), ("redio", a_redio)]
        if not self.args.no_injob:
            applies.append(("redio in job", a_injob))
        # An earlier build of redio (--base), interleaved with this one.
        base_cli = self.args.base
        base_env = {"REDIO_LIB_DIR": self.args.base_lib_dir} if self.args.base_lib_dir else None
        if base_cli:
            applies.append(("redio base", lambda: a_redio(base_cli, base_env)))
            if not self.args.no_injob:
                applies.append(("redio base in job", lambda: a_injob(base_cli, base_env)))
        if not self.args.no_offline:
            applies.append(("redio offline", a_offline))
        with_floor = pt.two_members and not self.args.no_floor
        if with_floor:
            applies += [("copy floor", a_floor), ("copy floor, mmap send", lambda: a_floor("mmap"))]
        applies += [("dd bound", a_bound), ("launch", a_launch),
                    ("launch, no I/O discovery", lambda: a_launch(NO_IO_DISCOVERY))]

        def lose(ranks, tool):
            """Deletes the lost ranks' data and TOOL's redundancy files, after
            keeping those redundancy files (to compare with the rebuilt ones)."""
            snap = os.path.join(base, "snap")
            shutil.rmtree(snap)
            os.makedirs(snap)
            kept = []
            for r in ranks:
                os.remove(os.path.join(data[r], "ckpt.dat"))
                if tool == "redset":
                    victims = [os.path.join(reds[r], f) for f in os.listdir(reds[r])]
                elif tool == "copy floor":
                    victims = [c for c in [copies.format(rank=r)] if os.path.exists(c)]
                else:
                    victims = glob.glob(os.path.join(data[r], "redio-parity*"))
                if not victims:
                    sys.exit(f"{tool}: rank {r} has no redundancy file to lose")
                for v in victims:
                    keep = os.path.join(snap, f"rank{r}-" + os.path.basename(v))
                    shutil.move(v, keep)
                    kept.append((keep, v))
            return kept

        def check(ranks, kept, tool):
            for r in ranks:
                got = os.path.join(data[r], "ckpt.dat")
                if not same(os.path.join(base, "orig", f"rank{r}.dat"), got):
                    sys.exit(f"{tool}: rebuilt {got} differs from the original")
            # A redundancy file must come back; byte for byte is reported,
            # not required (redset rewrites a PARTNER header differently).
            identical = True
            for keep, path in kept:
                if not os.path.exists(path):
                    sys.exit(f"{tool}: redundancy file {path} was not rebuilt")
                identical &= same(keep, path)
            return identical

        def r_redset(ranks):
            kept = lose(ranks, "redset")
            wall, out = mpi([self.driver, "recover", name])
            same_red = check(ranks, kept, "redset")
            return {"wall": wall, "inproc": driver_seconds(out)[0], "identical": same_red}

        def r_redio(ranks, cli=REDIO, env=None):
            kept = lose(ranks, "redio")
            wall, _ = run([cli, "parity", "rebuild", "-n", str(n), "--root", root, "--mpi", "mpich"],
                          env=env)
            same_red = check(ranks, kept, "redio")
            return {"wall": wall, "identical": same_red}

        def r_offline(ranks):
            kept = lose(ranks, "redio")
            wall, _ = run([REDIO, "parity", "rebuild", "--offline", *data])
            same_red = check(ranks, kept, "redio offline")
            return {"wall": wall, "identical": same_red}

        def r_floor(ranks):
            kept = lose(ranks, "copy floor")
            wall, out = mpi([self.floor, "rebuild", str(ranks[0]), files, copies], NO_IO_DISCOVERY)
            # The copy is all the floor keeps: it must come back byte for byte.
            if not check(ranks, kept, "copy floor"):
                sys.exit(f"copy floor: a rebuilt copy of rank {ranks[0]} differs from the lost one")
            return {"wall": wall, "inproc": floor_seconds(out)}

        rebuilds = [("redset", r_redset), ("redio", r_redio)]
        if with_floor:
            rebuilds.append(("copy floor", r_floor))
        if not self.args.no_offline:
            rebuilds.append(("redio offline", r_offline))
        if base_cli:
            rebuilds.append(("redio base", lambda ranks: r_redio(ranks, base_cli, base_env)))

        for rep in range(self.args.reps):
            order = applies[rep % len(applies):] + applies[:rep % len(applies)]
            for variant, fn in order:
                for metric, value in fn().items():
                    self.record(place, pt, "apply", 0, variant, metric, value)
            # Both tools' redundancy must exist for the rebuilds: the last
            # apply of each above left its files (every redio variant writes
            # the same set), unless the order ended without one.
            if not glob.glob(os.path.join(data[0], "redio-parity*")):
                a_redio()
            if not os.listdir(reds[0]):
                a_redset()
            if with_floor and not os.path.exists(copies.format(rank=0)):
                a_floor()
            for lost in pt.losses:
                ranks = list(range(lost))
                order = rebuilds[rep % len(rebuilds):] + rebuilds[:rep % len(rebuilds)]
                for variant, fn in order:
                    for metric, value in fn(ranks).items():
                        self.record(place, pt, "rebuild", lost, variant, metric, value)
            print(f"  {place} {pt.label}: repetition {rep + 1}/{self.args.reps} done "
                  f"(load {loadavg()})", file=sys.stderr)
        shutil.rmtree(base, ignore_errors=True)


def stats(values):
    return statistics.median(values), min(values), max(values)


def cell(values):
    if not values:
        return "–"
    med, lo, hi = stats(values)
    return f"{med:.3f} ({lo:.3f}–{hi:.3f})"


def ratio(num, den, of=statistics.median):
    if not num or not den:
        return "–"
    return f"{of(num) / of(den):.2f}"


def tables(samples, places, points, with_injob, with_offline, with_base=False):
    def get(place, pt, op, lost, variant, metric):
        return [s["value"] for s in samples
                if (s["place"], s["point"], s["op"], s["lost"], s["variant"], s["metric"])
                == (place, pt.label, op, lost, variant, metric)]

    lines = ["#### Apply (seconds: median (min–max); ratio = redset / redio, above 1: redio faster)", ""]
    head = ["place", "point", "redset in-process", "redset create", "redset wall", "redio wall",
            "ratio wall"]
    if with_injob:
        head += ["redio in job (in-process)", "ratio in-process", "ratio in-process (best)"]
    if with_offline:
        head += ["redio offline wall"]
    head += ["dd bound", "of bound (best): redset", "of bound (best): redio"
             + (" in job" if with_injob else " wall"), "launch", "launch, no I/O discovery"]
    # The copy floor ran at the 2-member points, unless --no-floor.
    with_floor = any(s["variant"] == "copy floor" for s in samples)
    if with_floor:
        head += ["copy floor (in-process)", "copy floor, mmap send (in-process)",
                 "redset / copy floor (in-process)"]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for place in places:
        for pt in points:
            g = lambda v, m="wall": get(place, pt, "apply", 0, v, m)
            row = [place, pt.label, cell(g("redset", "inproc")), cell(g("redset", "create")),
                   cell(g("redset")),
                   cell(g("redio")), ratio(g("redset"), g("redio"))]
            if with_injob:
                row += [cell(g("redio in job", "inproc")),
                        ratio(g("redset", "inproc"), g("redio in job", "inproc")),
                        ratio(g("redset", "inproc"), g("redio in job", "inproc"), min)]
            if with_offline:
                row += [cell(g("redio offline"))]
            redio_ref = g("redio in job", "inproc") if with_injob else g("redio")
            row += [cell(g("dd bound")), ratio(g("dd bound"), g("redset", "inproc"), min),
                    ratio(g("dd bound"), redio_ref, min), cell(g("launch")),
                    cell(g("launch, no I/O discovery"))]
            if with_floor:
                row += [cell(g("copy floor", "inproc")), cell(g("copy floor, mmap send", "inproc")),
                        ratio(g("redset", "inproc"), g("copy floor", "inproc"))]
            lines.append("| " + " | ".join(row) + " |")
    lines += ["", "#### Rebuild (seconds: median (min–max); ratio = redset / redio)", ""]
    head = ["place", "point", "lost", "redset in-process", "redset wall", "redio wall", "ratio wall",
            "ratio wall (best)"]
    if with_offline:
        head += ["redio offline wall", "ratio offline"]
    head += ["redundancy byte-identical: redset / redio"]
    if with_floor:
        head += ["copy floor (in-process)", "copy floor wall",
                 "redset / copy floor: in-process", "redset / copy floor: wall"]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for place in places:
        for pt in points:
            for lost in pt.losses:
                g = lambda v, m="wall": get(place, pt, "rebuild", lost, v, m)
                row = [place, pt.label, str(lost), cell(g("redset", "inproc")), cell(g("redset")),
                       cell(g("redio")), ratio(g("redset"), g("redio")),
                       ratio(g("redset"), g("redio"), min)]
                if with_offline:
                    row += [cell(g("redio offline")), ratio(g("redset"), g("redio offline"))]
                same_redio = g("redio", "identical") + g("redio offline", "identical")
                row += [f"{sum(g('redset', 'identical'))}/{len(g('redset', 'identical'))} / "
                        f"{sum(same_redio)}/{len(same_redio)}"]
                if with_floor:
                    row += [cell(g("copy floor", "inproc")), cell(g("copy floor")),
                            ratio(g("redset", "inproc"), g("copy floor", "inproc")),
                            ratio(g("redset"), g("copy floor"))]
                lines.append("| " + " | ".join(row) + " |")
    if with_base:
        lines += ["", "#### redio against its base build (--base; seconds: median (min–max); "
                  "ratio = base / this build, above 1: this build faster)", "",
                  "| place | point | op | lost | metric | base | this build | ratio | ratio (best) "
                  "| redset / this build |", "|" + "---|" * 10]
        for place in places:
            for pt in points:
                rows = [("apply", 0, "wall", "redio base", "redio", "redset", "wall")]
                if with_injob:
                    rows.append(("apply", 0, "in-process", "redio base in job", "redio in job",
                                 "redset", "inproc"))
                rows += [("rebuild", lost, "wall", "redio base", "redio", "redset", "wall")
                         for lost in pt.losses]
                for op, lost, label, b, r, rs, m in rows:
                    gb = get(place, pt, op, lost, b, "inproc" if m == "inproc" else "wall")
                    gr = get(place, pt, op, lost, r, "inproc" if m == "inproc" else "wall")
                    gs = get(place, pt, op, lost, rs, m)
                    lines.append("| " + " | ".join([
                        place, pt.label, op, str(lost or ""), label, cell(gb), cell(gr),
                        ratio(gb, gr), ratio(gb, gr, min), ratio(gs, gr)]) + " |")
    return "\n".join(lines)


def markdown(info, command, args, samples):
    points = [Point(p) for p in args["points"].split(",")]
    places = args["places"].split(",")
    return "\n".join([
        f"Command: `{command}` ({args['reps']} repetitions, interleaved)",
        "",
        f"Machine: {info['cpu']}, {info['cores']} cores (flags: {info['flags']}), "
        f"kernel {info['kernel']}, MPICH {info['mpich']}; redset {info['redset']}, "
        f"redio {info['redio']}; load average {info['load_start']} at the start, "
        f"{info['load_end']} at the end.",
        "",
        tables(samples, places, points, not args["no_injob"], not args["no_offline"],
               bool(args.get("base"))),
        "",
    ])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--places", default="tmpfs,disk")
    ap.add_argument("--tmpfs", default="/dev/shm/redio-redset-compare")
    ap.add_argument("--disk", default=os.path.join(ROOT, "target", "redset-compare"))
    ap.add_argument("--points", default=DEFAULT_POINTS,
                    help=f"comma-separated xor:RANKS:MIB, rs:K:RANKS:MIB, partner:C:RANKS:MIB "
                         f"(default {DEFAULT_POINTS})")
    ap.add_argument("--no-offline", action="store_true", help="skip redio --offline")
    ap.add_argument("--no-injob", action="store_true", help="skip redio's in-job apply")
    ap.add_argument("--no-floor", action="store_true",
                    help="skip the copy floor at the 2-member points")
    ap.add_argument("--base", metavar="REDIO_CLI",
                    help="an earlier build's redio CLI, run interleaved as 'redio base' "
                         "(collective apply and rebuild, in-job apply) for an A/B of a change")
    ap.add_argument("--base-lib-dir", metavar="DIR",
                    help="REDIO_LIB_DIR for --base (DIR/mpich/libredio.so); default: the "
                         "library beside that CLI")
    ap.add_argument("--out", default=os.path.join(ROOT, "target", "bench-redset"))
    ap.add_argument("--report", metavar="RESULTS_JSON",
                    help="print the tables of an earlier run's results.json, run nothing")
    args = ap.parse_args()
    if args.report:
        with open(args.report) as f:
            saved = json.load(f)
        print(markdown(saved["machine"], saved["command"], saved["args"], saved["samples"]))
        return

    prefix = os.environ.get("REDSET_PREFIX")
    if not prefix:
        sys.exit("set REDSET_PREFIX to a redset install prefix (see benches/redset/README.md)")
    if not os.access(REDIO, os.X_OK):
        sys.exit(f"{REDIO}: not built (scripts/build.sh)")
    points = [Point(p) for p in args.points.split(",")]
    places = args.places.split(",")
    dirs = {"tmpfs": args.tmpfs, "disk": args.disk}
    if any(p not in dirs for p in places):
        sys.exit("--places: tmpfs and/or disk")

    driver, hello, floor = build_driver(prefix, os.path.join(args.out, "build"))
    info = machine()
    info["redset"] = redset_version(prefix)
    info["load_start"] = loadavg()
    bench = Bench(args, driver, hello, floor)
    for place in places:
        for pt in points:
            bench.point(place, os.path.join(dirs[place], "run"), pt)
        try:
            os.rmdir(dirs[place])  # if empty (created by this script)
        except OSError:
            pass
    info["load_end"] = loadavg()

    command = " ".join(["REDSET_PREFIX=$REDSET_PREFIX benches/redset/compare.py", *sys.argv[1:]])
    md = markdown(info, command, vars(args), bench.samples)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "results.md"), "w") as f:
        f.write(md)
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump({"machine": info, "command": command, "args": vars(args),
                   "samples": bench.samples}, f, indent=1)
    print(md)


if __name__ == "__main__":
    main()
