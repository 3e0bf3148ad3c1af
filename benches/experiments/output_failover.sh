#!/usr/bin/env bash
# Output at a fail-over (docs/fault-tolerance.md, "Output at a fail-over"):
# tests/programs/output.c prints N numbered lines per rank (mode `die N 0`,
# one line per 20 ms, flushed; or `die N 0 buffered`, 100-byte lines in a
# 4096-byte stdio buffer, never flushed) under
# `redio run -n 2 -r DEGREE --layout LAYOUT` (default output, `once`); the
# application of world rank 0, the printer of rank 0, is SIGKILLed from
# outside a random 100-700 ms after the first line came out (a death during
# start-up is not survived at all). Its replica retires, so the
# printers of both ranks end. Each trial's stdout is checked: every rank's
# lines 1..N exactly once, in order, none torn.
#   benches/experiments/output_failover.sh RUNS MPI DEGREE LAYOUT [buffered]
# Needs scripts/build.sh.
set -uo pipefail
runs=$1 mpi=$2 degree=$3 layout=$4 buffered=${5:-}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d -t redio-output-failover.XXXXXX)
case $mpi in
  mpich) cc=mpicc.mpich ;;
  openmpi) cc=mpicc.openmpi ;;
  *) echo "MPI: mpich or openmpi" >&2; exit 2 ;;
esac
$cc -O2 -I"$root/include" -o "$work/output" "$root/tests/programs/output.c"
if [ -n "$buffered" ]; then lines=400; else lines=60; fi
exact=0 missing=0 twice=0 torn=0 failed=0 unkilled=0
for i in $(seq "$runs"); do
  d=$work/$i tag=output-failover-$$-$i
  mkdir -p "$d"
  (REDIO_OUTPUT_TRIAL=$tag timeout 90 "$root/target/release/redio" run --mpi "$mpi" -n 2 \
    -r "$degree" --layout "$layout" --summary "$d/summary.json" -- \
    "$work/output" die "$lines" 0 $buffered >"$d/out" 2>"$d/err"; echo $? >"$d/rc") &
  pid=""
  for _ in $(seq 1000); do
    for p in $(pgrep -x output); do
      env=$(tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null) || continue
      grep -qx "REDIO_OUTPUT_TRIAL=$tag" <<<"$env" &&
        grep -qE "^(PMI_RANK|OMPI_COMM_WORLD_RANK)=0\$" <<<"$env" && pid=$p
    done
    [ -n "$pid" ] && break
    sleep 0.005
  done
  # After the first line: a death during start-up is not survived at all.
  for _ in $(seq 1000); do [ -s "$d/out" ] && break; sleep 0.005; done
  sleep "0.$((RANDOM % 600 + 100))"
  if [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; then :; else unkilled=$((unkilled + 1)); fi
  wait
  if [ "$(cat "$d/rc")" != 0 ]; then
    failed=$((failed + 1)); echo "run $i: exit $(cat "$d/rc"): $d"; continue
  fi
  verdict=$(python3 - "$d/out" "$lines" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
n = int(sys.argv[2])
lines = text.split("\n")[:-1]
if not text.endswith("\n") or any(not re.fullmatch(r"rank [01] line \d+( \d{80})?", l) for l in lines):
    print("torn"); sys.exit()
for rank in (0, 1):
    got = [int(l.split()[3]) for l in lines if l.startswith(f"rank {rank} ")]
    if got == list(range(1, n + 1)):
        continue
    print("twice" if len(got) > len(set(got)) else "missing"); sys.exit()
print("exact")
EOF
)
  case $verdict in
    exact) exact=$((exact + 1)); rm -rf "$d" ;;
    missing) missing=$((missing + 1)); echo "run $i: lines missing: $d" ;;
    twice) twice=$((twice + 1)); echo "run $i: lines twice: $d" ;;
    *) torn=$((torn + 1)); echo "run $i: torn lines: $d" ;;
  esac
done
echo "$mpi r=$degree $layout ${buffered:-flushed}: $runs runs: $exact exact, $missing with lines missing, $twice with lines twice, $torn torn, $failed failed; victim already gone in $unkilled; kept: $work"
