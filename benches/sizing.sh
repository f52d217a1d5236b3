#!/usr/bin/env bash
# Memory per cached origin with real robots.txt files (figures in BENCHMARKS.md, "Memory per
# cached origin, with real files"; the sizing in docs/deploy.md and helm/robotsd/values.yaml).
# robotsd runs with its defaults (in memory, no Redis) but --allow-private-networks, and fetches
# every robots.txt itself from loopback origins: origin n is the host 127.(1+n/65536).x.y on one
# listener (benches/sizing.py), serving one file of the real corpus (../shared/corpus), the
# files in turn. The whole run is in a network namespace of its own, where only lo exists, so
# nothing but these origins can be reached. Four parts, each a fresh robotsd:
#  1. weights: each of the 3,748 files on its own origin, one at a time, and what the cache
#     charged for it (robotsd_cache_weight_bytes before and after): the distribution by size;
#  2. slope: 100,000 origins under a capacity (2GiB) that evicts nothing, resident memory
#     (VmRSS) and the cache's gauges at 10k, 25k, 50k, 75k and 100k;
#  3. full: the same at the default --cache-capacity (256MiB), up to 500,000 origins, to show
#     what a full cache holds resident; and at 512MiB (docs/deploy.md's helm install) up to
#     250,000;
#  4. classes: 20,000 origins each over only small (< 1 KiB), medium (1–8 KiB) or large files,
#     under 2GiB, to compare resident memory with the charged weight by size.
# About 10 minutes on two cores; it stops by itself after SIZING_TIMEOUT seconds (default 2400)
# whatever happens. Too slow for CI: run it by hand when the cache's entries change.
# Usage: bash benches/sizing.sh   (ROBOTSD_BIN: a built binary to use; SIZING_RESULTS: a
#        directory to keep the raw figures in, weights.tsv and one .jsonl per part)
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${SIZING_IN_NETNS:-}" ]; then
  for tool in unshare ip timeout python3 curl; do
    command -v "$tool" >/dev/null || { echo "needs $tool (Debian: util-linux, iproute2, coreutils, curl)" >&2; exit 2; }
  done
  if [ -z "${ROBOTSD_BIN:-}" ]; then
    cargo build --release --quiet --bin robotsd
    ROBOTSD_BIN=target/release/robotsd
  fi
  export ROBOTSD_BIN SIZING_IN_NETNS=1
  # Root gets a network namespace directly; anyone else through a user namespace of their own.
  userns=(--map-root-user)
  [ "$(id -u)" = 0 ] && userns=()
  exec timeout --kill-after=10 "${SIZING_TIMEOUT:-2400}" unshare "${userns[@]}" --net bash "$0" "$@"
fi

ip link set lo up
shared=${ROBOTSD_SHARED_DIR:-$(cd .. && pwd)/shared}
corpus="$shared/corpus/robots"
[ -d "$corpus" ] || { echo "needs the corpus at $corpus (ROBOTSD_SHARED_DIR)" >&2; exit 2; }
bin=$ROBOTSD_BIN

# shellcheck source=benches/common.sh
source benches/common.sh
# timeout's TERM must still run common.sh's cleanup.
trap 'exit 143' TERM
results=${SIZING_RESULTS:-$work}
mkdir -p "$results"

origins=$(free_port)
origins_class=""
serve() { # class: (re)starts the origins serving that class of files
  [ "$origins_class" = "$1" ] && return
  [ -n "${origins_pid:-}" ] && { kill "$origins_pid"; wait "$origins_pid" 2>/dev/null || true; }
  python3 benches/sizing.py serve "$origins" "$corpus" "$1" &
  origins_pid=$!
  pids+=("$origins_pid")
  origins_class=$1
  for _ in $(seq 1 100); do
    curl -s -o /dev/null "http://127.1.0.0:$origins/robots.txt" && return 0
    sleep 0.1
  done
  echo "origins not ready" >&2
  exit 1
}
robotsd() { # extra flags...: a fresh robotsd, its port in $api and pid in $robotsd_pid
  [ -n "${robotsd_pid:-}" ] && { kill "$robotsd_pid"; wait "$robotsd_pid" 2>/dev/null || true; }
  api=$(free_port)
  # The defaults but for the loopback origins; its log lines go to a file, as a pipe to a
  # logging agent would take them.
  "$bin" --listen "127.0.0.1:$api" --allow-private-networks "$@" 2>>"$results/robotsd.log" &
  robotsd_pid=$!
  pids+=("$robotsd_pid")
  wait_ready "http://127.0.0.1:$api/readyz"
}
fill() { # name class capacity checkpoints...
  local name=$1 class=$2 capacity=$3
  shift 3
  serve "$class"
  robotsd --cache-capacity "$capacity"
  python3 benches/sizing.py fill "$api" "$robotsd_pid" "$origins" "$corpus" "$class" "$@" \
    > "$results/$name.jsonl"
  echo "== $name: $class files, --cache-capacity $capacity"
  python3 benches/sizing.py slopes "$results/$name.jsonl"
}

echo "== sizing: $(nproc) cores, $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), $(date -u +%F), $("$bin" --version), $bin built $(date -u -r "$bin" '+%F %H:%M') UTC, HEAD $(git rev-parse --short HEAD 2>/dev/null || echo '?')"

serve all
robotsd
python3 benches/sizing.py weights "$api" "$origins" "$corpus" "$results/weights.tsv"
echo "== weights: each corpus file on its own origin, what the cache charged for it (default capacity, no evictions: $(curl -s "http://127.0.0.1:$api/metrics" | awk '$1 == "robotsd_cache_evictions_total" {print $2}'))"
python3 benches/sizing.py summary "$results/weights.tsv"

fill slope all 2GiB 10000 25000 50000 75000 100000
fill full all 256MiB 25000 50000 75000 100000 150000 200000 300000 400000 500000
fill full512 all 512MiB 50000 100000 150000 200000 250000
fill small small 2GiB 10000 20000
fill medium medium 2GiB 10000 20000
fill large large 2GiB 10000 20000
