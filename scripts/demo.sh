#!/usr/bin/env bash
# What redio is for, in one short run: a 2-rank heat-diffusion program run
# plain, then under redio as 3 replicas (6 processes) with
# - one replica's process killed half-way (the job goes on on the other
#   two; its result file is still the plain run's);
# - a checkpoint per rank in node-local directories, protected by XOR
#   parity at the barrier after they are written (parity.when: close);
#   after the run one rank's checkpoint is deleted
#   and rebuilt from the parity.
# Every claim printed is checked against the plain run (cmp, the JSON
# summary), and the script exits non-zero when one fails.
# This is the README's demo command.
#
# REDIO_DEMO_REDIO=PATH runs that redio CLI and skips setup and build
# (tests/demo.rs); REDIO_DEMO_DIR=DIR puts the demo's files there
# (default target/demo).
set -euo pipefail
cd "$(dirname "$0")/.."

redio=${REDIO_DEMO_REDIO:-}
if [[ -z $redio ]]; then
  scripts/setup.sh
  mkdir -p target
  if ! scripts/build.sh >target/build.log 2>&1; then
    cat target/build.log
    exit 1
  fi
  redio=target/release/redio
fi

ranks=2 replicas=3
victim=$ranks # world rank 2: rank 0 of replica 1 (block layout: replica k holds k*N .. k*N+N-1)
demo=${REDIO_DEMO_DIR:-target/demo}
rm -rf "$demo" && mkdir -p "$demo/plain" "$demo/redio" "$demo/shared" "$demo/local"
demo=$(cd "$demo" && pwd)
failures=0
check() { # check "what was shown" COMMAND…: prints ok or FAILED
  local claim=$1
  shift
  if "$@"; then
    echo "  ok: $claim"
  else
    echo "  FAILED: $claim"
    failures=$((failures + 1))
  fi
}
mpicc.mpich -O2 -o "$demo/heat" examples/heat.c
cat >"$demo/redio.yaml" <<YAML
version: 1
shared:
  paths: [$demo/shared]   # treated like an NFS or Lustre directory
remap:                    # the replicas share this node: separate node-local dirs
  - prefix: $demo/local
    to: "$demo/local/r{replica}"
parity:                   # XOR over the ranks' checkpoints
  scheme: xor
  set_size: $ranks
  when: close             # at the first MPI_Barrier after they are closed
  files: ["$demo/local/r{replica}/rank{rank}/*.ckpt"]
  failure_group: "node{rank}"   # one emulated node per rank
YAML

echo "== plain run: $ranks ranks (result file, and a checkpoint per rank half-way)"
timeout 120 mpiexec.mpich -n $ranks -outfile-pattern "$demo/plain/out.%r" \
  "$demo/heat" 64 2000 "$demo/plain/heat.txt" "$demo/plain/local"
cat "$demo/plain/out.0"

echo
echo "== under redio: $ranks ranks x $replicas replicas = $((ranks * replicas)) processes;"
echo "   world rank $victim (replica 1, rank 0) is killed half-way, as it opens the result file"
# --output all: every replica's lines (prefixed with its replica) reach its
# own file, to compare each with the plain run (the default prints each
# line once). REDIO_TEST_DIE is redio's fault injection: SIGKILL in that
# process's coordinated operation 1, its open of the result file half-way
# (the summary check below fails if the numbering ever moves it).
status=0
REDIO_TEST_DIE=$victim:1:kill timeout 120 "$redio" run --mpi mpich -n $ranks -r $replicas \
  --config "$demo/redio.yaml" --summary "$demo/summary.json" \
  --output all --launcher-arg=-outfile-pattern --launcher-arg="$demo/redio/out.%r" -- \
  "$demo/heat" 64 2000 "$demo/shared/heat.txt" "$demo/local" || status=$?

echo
echo "== what survived"
check "redio run exited 0 (exit code $status)" test "$status" -eq 0
# Who died, who was retired with it, what was failed over: from the summary.
summary() { python3 - "$demo/summary.json" "$@" <<'PY'; }
import json, sys
s = json.load(open(sys.argv[1]))
if sys.argv[2] == "show":
    for p in s["failed"]:
        print(f"  died: world rank {p['world_rank']} (replica {p['replica']}, rank {p['rank']}), end: {p['end']}")
    for p in s["retired"]:
        print(f"  retired with it: world rank {p['world_rank']} (replica {p['replica']}, rank {p['rank']})")
    for f in s["fail_overs"]:
        print(f"  failed over: {f['operation']} of {f['path']} by world rank {f['world_rank']} "
              f"(replica {f['replica']}), {f['degree']} replicas left")
else:
    victim, partner = int(sys.argv[3]), int(sys.argv[4])
    ok = (s["completed"] and [p["world_rank"] for p in s["failed"]] == [victim]
          and [p["world_rank"] for p in s["retired"]] == [partner] and s["fail_overs"])
    sys.exit(0 if ok else 1)
PY
summary show || true
check "the summary names world rank $victim as the one death and its replica as retired" \
  summary check "$victim" $((victim + 1))
for replica in 0 2; do
  world=$((replica * ranks))
  out=$demo/redio/out.$world
  sed "s/^\[replica $replica\] //" "$out" >"$out.stripped"
  check "replica $replica printed what the plain run printed ($(grep checksum "$out.stripped" || echo 'no checksum'))" \
    cmp -s "$out.stripped" "$demo/plain/out.0"
done
check "the result file $demo/shared/heat.txt is identical to the plain run's" \
  cmp -s "$demo/shared/heat.txt" "$demo/plain/heat.txt"

echo
echo "== a checkpoint lost and rebuilt from parity"
# Replica 0's checkpoints; rank 1's node is lost after the run.
lost=$demo/local/r0/rank1
echo "  replica 0's node-local files: $(cd "$demo/local/r0" && find . -type f | sed 's#^\./##' | sort | tr '\n' ' ')"
rm -rf "$lost"
echo "  deleted $lost/ (rank 1's checkpoint and its redundancy file)"
rebuild_status=0
timeout 120 "$redio" parity rebuild --mpi mpich -n $ranks --root "$demo/local/r0/rank{rank}" \
  >"$demo/rebuild.log" 2>&1 || rebuild_status=$?
sed 's/^/  | /' "$demo/rebuild.log"
check "redio parity rebuild exited 0 (exit code $rebuild_status)" test "$rebuild_status" -eq 0
check "the rebuilt $lost/heat.ckpt is identical to the plain run's rank 1 checkpoint" \
  cmp -s "$lost/heat.ckpt" "$demo/plain/local/rank1/heat.ckpt"
check "rank 0's checkpoint is identical to the plain run's" \
  cmp -s "$demo/local/r0/rank0/heat.ckpt" "$demo/plain/local/rank0/heat.ckpt"

echo
if ((failures)); then
  echo "demo: $failures check(s) FAILED; files in $demo/"
  exit 1
fi
echo "demo: every check passed; files in $demo/"
