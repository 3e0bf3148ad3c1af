#!/bin/bash
# Losing a whole node during a replicated batch job (issue 46): run as
#   SLURM_CONF=/run/redio-slurm/slurm.conf sbatch --wait -N 2 --ntasks-per-node=2 -n 4 \
#     benches/experiments/slurm_lose_node.sh MPI EXE
# (EXE: tests/programs/io/io_failover.c built with MPI's mpicc; see docs/slurm.md).
# redio run of EXE as 2 ranks x 2 replicas with 16 MiB blocks; once its
# first shared file exists, `scripts/slurm.sh lose n2`; prints redio run's
# exit code, the failures and the files' checksums. Afterwards
# `scripts/slurm.sh start` brings n2 back.
mpi=$1
exe=$2
# sbatch runs a copy of this script: the repository is where it was submitted from.
root=${SLURM_SUBMIT_DIR:?submit from the repository root}
d=${TMPDIR:-/tmp}/redio-lose-node.$mpi.$SLURM_JOB_ID; rm -rf $d; mkdir -p $d/shared
printf 'version: 1\nshared:\n  paths: ["%s"]\n' $d/shared > $d/redio.yaml
timeout 120 $root/target/release/redio run -n 2 -r 2 --mpi $mpi --config $d/redio.yaml --summary $d/summary.json -- $exe $d/shared 16777216 > $d/out 2> $d/err &
run=$!
until [ -e $d/shared/out.0.dat ]; do sleep 0.05; done
$root/scripts/slurm.sh lose n2
wait $run; rc=$?
echo "redio run exit: $rc"
grep "failed:\|completed\|exit code" $d/err | tail -5
md5sum $d/shared/* | cut -c1-12 | tr '\n' ' '; echo
exit $rc
