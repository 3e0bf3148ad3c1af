#!/usr/bin/env bash
# The main job: a 2-rank heat-diffusion program, run plain and then under
# redio as 3 replicas (6 processes), with a summary of what redio did. The
# program writes its result file into a directory the configuration
# declares shared, so the replicas coordinate that write: it reaches the
# file system once, not three times.
# This is the README's demo command.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
mkdir -p target
if ! scripts/build.sh >target/build.log 2>&1; then
  cat target/build.log
  exit 1
fi

ranks=2 replicas=3
demo=target/demo
rm -rf "$demo" && mkdir -p "$demo/plain" "$demo/redio" "$demo/shared"
demo=$(cd "$demo" && pwd)
mpicc.mpich -O2 -o "$demo/heat" examples/heat.c
cat >"$demo/redio.yaml" <<YAML
version: 1
shared:
  paths: [$demo/shared]   # treated like an NFS or Lustre directory
remap:                    # the replicas share this node: separate node-local dirs
  - prefix: $demo/local
    to: "$demo/local/r{replica}"
YAML

echo "== plain run: $ranks ranks"
timeout 120 mpiexec.mpich -n $ranks -outfile-pattern "$demo/plain/out.%r" \
  "$demo/heat" 64 2000 "$demo/plain/heat.txt"
cat "$demo/plain/out.0"

echo
echo "== under redio: $ranks ranks x $replicas replicas = $((ranks * replicas)) processes"
# --output all: every replica's lines (prefixed with its replica) reach its
# own file, to compare each with the plain run (the default prints each
# line once).
timeout 120 target/release/redio run --mpi mpich -n $ranks -r $replicas --config "$demo/redio.yaml" \
  --output all --launcher-arg=-outfile-pattern --launcher-arg="$demo/redio/out.%r" -- \
  "$demo/heat" 64 2000 "$demo/shared/heat.txt"

echo
echo "== summary"
agree=0
for ((replica = 0; replica < replicas; replica++)); do
  world=$((replica * ranks)) # block layout: replica k holds world ranks k*N .. k*N+N-1
  out=$demo/redio/out.$world
  sed "s/^\[replica $replica\] //" "$out" >"$out.stripped"
  sum=$(grep checksum "$out.stripped" || echo "no output")
  if [[ $(grep -cv "^\[replica $replica\] " "$out") -eq 0 ]] && cmp -s "$out.stripped" "$demo/plain/out.0"; then
    verdict="identical to the plain run"
    agree=$((agree + 1))
  else
    verdict="DIFFERS from the plain run"
  fi
  echo "replica $replica (world rank $world): $sum  -> $verdict"
done
echo "$agree of $replicas replicas reproduced the plain run; outputs in $demo/"
if cmp -s "$demo/shared/heat.txt" "$demo/plain/heat.txt"; then
  echo "result file: $demo/shared/heat.txt ($(wc -c <"$demo/shared/heat.txt") bytes) is identical to the plain run's,"
  echo "             written once by the replicas together (see 'written on the shared file system' above)"
else
  echo "result file: $demo/shared/heat.txt DIFFERS from the plain run's"
  exit 1
fi
[[ $agree -eq $replicas ]]
