# The machine block for the output of the shell benchmark scripts (sourced,
# not run): source this first thing (it records the load average then) and
# call `print_machine [MPI]` once the results are printed. The block is
# `redio bench --machine` ($REDIO, default target/release/redio), the same
# one every `redio bench` results.md begins with; docs/benchmarks.md,
# "Machines", says why every table records it. Never fails the script.

machine_load_at_start=$(cat /proc/loadavg 2>/dev/null || true)

# print_machine [MPI]: the block for MPI (default mpich; comma-separated
# for several), with the load average from the start of the script to now.
print_machine() {
  local redio=${REDIO:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/target/release/redio}
  local args=(bench --machine --mpi "${1:-mpich}")
  if [ -n "$machine_load_at_start" ]; then
    args+=(--load-start "$machine_load_at_start")
  fi
  echo
  "$redio" "${args[@]}" 2>&1 || echo "Machine: unknown ($redio bench --machine failed)"
}
