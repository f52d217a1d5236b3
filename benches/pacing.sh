#!/usr/bin/env bash
# Pacing benchmark (figures in BENCHMARKS.md, docs/politeness.md): the cost of reserving a fetch
# slot with a check (`pace=true`), loopback only, one origin served locally.
#  - cached GET /v1/check with and without pace=true, in memory and with --redis-url, same
#    binary, one wrk run each, back to back;
#  - the defaults first (--default-crawl-delay 1s: a hammered origin soon has its slots a minute
#    ahead, so most reservations are deferrals, which cost the same call and write nothing), then
#    --default-crawl-delay 0s --pace-guard 0s, where every reservation is granted and written;
#  - instructions per request (callgrind, as benches/instructions.sh) of a granted reservation in
#    memory and of the same check without pace=true.
# With BASELINE=<git revision>, that revision is built too (in a worktree, its own target
# directory) and measured the same way in the same run, for before/after ratios.
# Usage: [BASELINE=<rev>] bash benches/pacing.sh [seconds per wrk run, default 10]
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-10}
for tool in wrk redis-server redis-cli valgrind; do
  command -v "$tool" >/dev/null || { echo "needs $tool (Debian: wrk, redis-server, valgrind)" >&2; exit 2; }
done

# shellcheck source=benches/common.sh
source benches/common.sh

cargo build --release --quiet --bin robotsd
bins=("after=target/release/robotsd")
if [[ -n "${BASELINE:-}" ]]; then
  rev=$(git rev-parse --short "$BASELINE")
  root=$PWD
  git worktree add --detach "$work/baseline" "$rev" >/dev/null 2>&1
  trap 'git worktree remove --force "$work/baseline" 2>/dev/null || true; cleanup' EXIT
  (cd "$work/baseline" && CARGO_TARGET_DIR="$root/target/baseline" cargo build --release --quiet --bin robotsd)
  bins=("before=target/baseline/release/robotsd" "${bins[@]}")
fi

redis_port=$(free_port)
redis-server --bind 127.0.0.1 --port "$redis_port" --save "" --appendonly no >/dev/null &
pids+=($!)
for _ in $(seq 1 100); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.1; done
redis="redis://127.0.0.1:$redis_port/0"
start_origin 'User-agent: *\nDisallow: /private\n'

serve() { # flags…: starts $bin, leaves its port in $port
  port=$(free_port)
  "$bin" --listen "127.0.0.1:$port" --allow-private-networks --log-level error \
    --concurrency-limit 100000 "$@" &
  pids+=($!)
  wait_ready "http://127.0.0.1:$port/readyz"
}
metric() { # port series: a sample's value
  curl -s "http://127.0.0.1:$1/metrics" | awk -v s="$2" '$1 == s {print $2}'
}

check="/v1/check?url=http%3A%2F%2F127.0.0.1%3A$origin%2Fpage&ua=SomeBot"
run() { # name port query-suffix
  curl -sf "http://127.0.0.1:$2$check" >/dev/null   # warm: the robots.txt is held
  wrk -t1 -c64 -d"${duration}s" --latency "http://127.0.0.1:$2$check$3" > "$work/$1.txt"
  local reserved deferred
  reserved=$(metric "$2" 'robotsd_pace_reservations_total{outcome="reserved",scope="'"$4"'"}')
  deferred=$(metric "$2" 'robotsd_pace_reservations_total{outcome="deferred",scope="'"$4"'"}')
  printf '%-26s %10s req/s  p50 %8s  p99 %8s  reserved %8s deferred %8s\n' "$1" \
    "$(awk '/Requests\/sec/ {print $2}' "$work/$1.txt")" \
    "$(awk '$1=="50%" {print $2}' "$work/$1.txt")" "$(awk '$1=="99%" {print $2}' "$work/$1.txt")" \
    "${reserved:-0}" "${deferred:-0}"
}

rps() { awk '/Requests\/sec/ {print $2}' "$work/$1.txt"; }
ratio() { awk -v a="$(rps "$1")" -v b="$(rps "$2")" 'BEGIN {printf "%.2f", a/b}'; }

echo "== cached GET /v1/check, wrk -t1 -c64 -d${duration}s, $(nproc) cores, $(date -u +%F)"
for entry in "${bins[@]}"; do
  label=${entry%%=*}; bin=${entry#*=}
  if [[ ${#bins[@]} -gt 1 ]]; then echo "-- $label ($bin)"; fi
  serve; memory=$port
  serve --redis-url "$redis"; shared=$port
  serve --default-crawl-delay 0s --pace-guard 0s; memory0=$port
  serve --redis-url "$redis" --default-crawl-delay 0s --pace-guard 0s; shared0=$port
  run "$label in memory, no pace" "$memory" "" local
  run "$label in memory, pace" "$memory" "&pace=true" local
  run "$label in memory, pace, 0s" "$memory0" "&pace=true" local
  run "$label redis, no pace" "$shared" "" fleet
  run "$label redis, pace" "$shared" "&pace=true" fleet
  run "$label redis, pace, 0s" "$shared0" "&pace=true" fleet
  echo "$label: pace=true against no pace: in memory $(ratio "$label in memory, pace" "$label in memory, no pace"), with Redis $(ratio "$label redis, pace" "$label redis, no pace") (defaults); 0s: $(ratio "$label in memory, pace, 0s" "$label in memory, no pace"), $(ratio "$label redis, pace, 0s" "$label redis, no pace")"
  # The slots of one origin in a fresh lane each run; Redis state of the last run is dropped.
  redis-cli -p "$redis_port" flushall >/dev/null
done
if [[ ${#bins[@]} -gt 1 ]]; then
  for row in "in memory, pace" "in memory, pace, 0s" "redis, pace" "redis, pace, 0s"; do
    echo "after/before, $row: $(ratio "after $row" "before $row")"
  done
fi

echo "== instructions per cached check (callgrind: 2,200 minus 200 requests, / 2,000)"
for entry in "${bins[@]}"; do
  label=${entry%%=*}; bin=${entry#*=}
  per_request "${label}_check" "$check" /readyz \
    "$bin" --allow-private-networks --shutdown-grace 1s --default-crawl-delay 0s --pace-guard 0s --listen
  per_request "${label}_check_pace_granted" "$check&pace=true" /readyz \
    "$bin" --allow-private-networks --shutdown-grace 1s --default-crawl-delay 0s --pace-guard 0s --listen
done
