# Helpers shared by the parity benchmark scripts (sourced, not run).

# Median of the numbers on stdin, one per line.
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# Seconds since the epoch, with nanoseconds (for wall times).
now() { date +%s.%N; }

# rank_files BASE N MIB [PREFIX]: N directories BASE/PREFIX0.. (PREFIX
# defaults to "rank"), each with MIB MiB of random data in ckpt.dat.
rank_files() {
  local base=$1 n=$2 mib=$3 prefix=${4:-rank} r
  for ((r = 0; r < n; r++)); do
    mkdir -p "$base/$prefix$r"
    head -c $((mib << 20)) /dev/urandom >"$base/$prefix$r/ckpt.dat"
  done
}

# parity_config FILE BASE N [SCHEME] [RS_PARITY] [ENGINE]: a redio.yaml that
# protects BASE/rank{rank}/*.dat at MPI_Finalize, one node per rank.
parity_config() {
  local file=$1 base=$2 n=$3 scheme=${4:-xor} k=${5:-1} engine=${6:-ring}
  cat >"$file" <<YAML
version: 1
local:
  paths: ["$base"]
parity:
  scheme: $scheme
  set_size: $n
  rs_parity: $k
  failure_group: "node{rank}"
  engine: $engine
  files: ["$base/rank{rank}/*.dat"]
log:
  level: info
YAML
}
