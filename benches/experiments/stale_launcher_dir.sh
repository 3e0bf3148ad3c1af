#!/usr/bin/env bash
# Do the session files of a killed launcher stop a later launcher that
# gets the same pid? (docs/fault-tolerance.md, "Launcher session files";
# src/cli/scratch.rs). Everything happens in a TMPDIR of its own.
#   1. A plain Open MPI 5 job is started and its launcher SIGKILLed: the
#      script lists what it left in $TMPDIR/ompi.<pid>/.
#   2. A launcher is started by `exec` from a shell that first planted such
#      files for its own pid (so the launcher gets exactly that pid): Open
#      MPI 5 with `ompi.<pid>/pmix.<host>.tool`, and Open MPI 4.1 with a
#      copy of a killed 4.1 launcher's `ompi.<host>.<uid>/pid.<pid>/`.
#   3. `redio run --mpi openmpi5` in a TMPDIR with such files for each of
#      the next 300 pids.
# Needs scripts/setup.sh and scripts/build.sh.
#   benches/experiments/stale_launcher_dir.sh
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
home5=${REDIO_OPENMPI5_HOME:-$root/.venv}
export REDIO_OPENMPI5_HOME=$home5
work=$(mktemp -d -t redio-stale-launcher.XXXXXX)
export TMPDIR=$work/tmp
mkdir -p "$TMPDIR"
host=$(cat /proc/sys/kernel/hostname)
"$home5/bin/mpicc" -O0 -o "$work/sleeper5" "$root/benches/experiments/marked_sleeper.c"
mpicc.openmpi -O0 -o "$work/sleeper41" "$root/benches/experiments/marked_sleeper.c"
run5=("$home5/bin/mpirun" --oversubscribe --allow-run-as-root -n 2)
run41=(mpirun.openmpi --oversubscribe --allow-run-as-root -n 2)

# Starts "$@" (a launcher line), waits until both processes are past
# MPI_Init, SIGKILLs the launcher and its processes; prints its pid.
start_and_kill() {
  local marks=$work/marks.$RANDOM
  mkdir -p "$marks"
  "$@" "$marks" >/dev/null 2>&1 &
  local launcher=$!
  for _ in $(seq 600); do
    [ "$(ls "$marks" | wc -l)" -ge 2 ] && break
    sleep 0.1
  done
  pkill -KILL -P "$launcher" 2>/dev/null
  kill -KILL "$launcher"
  wait "$launcher" 2>/dev/null
  pkill -KILL -f "$work/sleeper" 2>/dev/null
  echo "$launcher"
}

echo "== 1. What a SIGKILLed Open MPI 5 launcher leaves"
pid=$(start_and_kill "${run5[@]}" "$work/sleeper5")
(cd "$TMPDIR" && find "ompi.$pid" -maxdepth 1 | sort)

echo "== 2. A launcher that gets the pid of a killed one"
bash -c 'mkdir -p "$TMPDIR/ompi.$$" && touch "$TMPDIR/ompi.$$/pmix.'"$host"'.tool" &&
  exec "$@" >'"$work"'/out5 2>&1' _ "${run5[@]}" "$work/sleeper5"
echo "Open MPI 5, ompi.<pid>/pmix.$host.tool planted: exit code $?"
head -3 "$work/out5"
pid=$(start_and_kill "${run41[@]}" "$work/sleeper41")
session41=$(ls -d "$TMPDIR"/ompi.*.*/pid."$pid")
bash -c 'cp -a "$1" "$(dirname "$1")/pid.$$" && shift && exec "$@" >'"$work"'/out41 2>&1' \
  _ "$session41" "${run41[@]}" "$work/sleeper41"
echo "Open MPI 4.1, a killed launcher's pid.<pid>/ planted: exit code $?"
head -3 "$work/out41"

echo "== 3. redio run --mpi openmpi5 with stale files for the next 300 pids"
python3 - "$TMPDIR" "$host" <<'PY'
import os, sys
tmp, host = sys.argv[1], sys.argv[2]
last = int(open("/proc/sys/kernel/ns_last_pid").read())
for pid in range(last + 1, last + 301):
    os.makedirs(f"{tmp}/ompi.{pid}", exist_ok=True)
    open(f"{tmp}/ompi.{pid}/pmix.{host}.tool", "w").close()
PY
timeout 120 "$root/target/release/redio" run --mpi openmpi5 -n 2 -r 2 -- "$work/sleeper5" \
  >"$work/out-redio" 2>&1
echo "redio run: exit code $?"
tail -2 "$work/out-redio"
echo "($work)"
