#!/usr/bin/env bash
# Service load benchmark (figures in BENCHMARKS.md). Loopback only: a local origin, a local sink.
#  1. cached GET /v1/check throughput and latency vs a minimal axum handler returning a constant
#     JSON body, same load tool (wrk), same settings, one run: robotsd with its default settings
#     first, then with logging off (--access-log off --log-level warn);
#  2. resident memory of robotsd holding 100,000 cached origins (all fetched through a local
#     sink acting as the proxy, so no origin is contacted).
# Usage: bash benches/load.sh [seconds per wrk run, default 15]
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-15}
command -v wrk >/dev/null || { echo "needs wrk (Debian: apt-get install wrk)" >&2; exit 2; }

# shellcheck source=benches/common.sh
source benches/common.sh

cargo build --release --quiet --bin robotsd --example baseline_server
bin=target/release/robotsd
helper=target/release/examples/baseline_server

start_origin
# Default settings but the one that lets it fetch from the loopback origin; its log lines go
# where an operator's would, a pipe read by a logging agent (here cat into a file).
port=$(free_port)
"$bin" --listen "127.0.0.1:$port" --allow-private-networks 2> >(cat > "$work/default.log") &
pids+=($!)
quiet=$(free_port)
"$bin" --listen "127.0.0.1:$quiet" --allow-private-networks --access-log off --log-level warn &
pids+=($!)
baseline=$(free_port)
"$helper" "127.0.0.1:$baseline" &
pids+=($!)
wait_ready "http://127.0.0.1:$port/readyz"
wait_ready "http://127.0.0.1:$quiet/readyz"
wait_ready "http://127.0.0.1:$baseline/"
query="/v1/check?url=http%3A%2F%2F127.0.0.1%3A$origin%2Fprivate%2Freport&ua=SomeBot"
check="http://127.0.0.1:$port$query"
quiet_check="http://127.0.0.1:$quiet$query"
# Warm the caches: every measured request is a hit.
curl -sf "$check" >/dev/null
curl -sf "$quiet_check" >/dev/null

run() { # name url
  wrk -t1 -c64 -d"${duration}s" --latency "$2" > "$work/$1.txt"
  local rps p50 p99
  rps=$(awk '/Requests\/sec/ {print $2}' "$work/$1.txt")
  p50=$(awk '$1=="50%" {print $2}' "$work/$1.txt")
  p99=$(awk '$1=="99%" {print $2}' "$work/$1.txt")
  echo "$1 $rps $p50 $p99"
}
echo "== wrk -t1 -c64 -d${duration}s, $(nproc) cores, $(date -u +%F)"
base=$(run baseline "http://127.0.0.1:$baseline/")
cached=$(run default "$check")
logs_off=$(run logs_off "$quiet_check")
printf '%-14s %12s %10s %10s\n' what req/s p50 p99
printf '%-14s %12s %10s %10s\n' $base
printf '%-14s %12s %10s %10s\n' $cached
printf '%-14s %12s %10s %10s\n' $logs_off
ratio() { awk -v a="$(cut -d' ' -f2 <<<"$1")" -v b="$(cut -d' ' -f2 <<<"$base")" 'BEGIN {printf "%.2f", a/b}'; }
echo "cached /v1/check: default settings $(ratio "$cached"), logs off $(ratio "$logs_off") of the minimal handler"

echo "== resident memory with 100,000 cached origins"
sink=$(free_port)
"$helper" "127.0.0.1:$sink" --sink &
pids+=($!)
port2=$(free_port)
"$bin" --listen "127.0.0.1:$port2" --proxy "http://127.0.0.1:$sink" --log-level warn \
  --batch-concurrency 64 --max-batch 1000 &
robotsd2=$!
pids+=("$robotsd2")
wait_ready "http://127.0.0.1:$port2/readyz"
rss() { awk '/VmRSS/ {print $2 * 1024}' "/proc/$robotsd2/status"; }
before=$(rss)
python3 - "$port2" <<'PY'
import json, sys, urllib.request
port = sys.argv[1]
for batch in range(100):
    urls = [f"http://o{batch * 1000 + i}.test/private/x" for i in range(1000)]
    body = json.dumps({"ua": "SomeBot", "urls": urls}).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/check", body, {"content-type": "application/json"})
    results = json.load(urllib.request.urlopen(req, timeout=120))["results"]
    assert all(r.get("allowed") is False for r in results), results[:2]
PY
after=$(rss)
entries=$(curl -s "http://127.0.0.1:$port2/metrics" | awk '$1=="robotsd_cache_entries" {print $2}')
weight=$(curl -s "http://127.0.0.1:$port2/metrics" | awk '$1=="robotsd_cache_weight_bytes" {print $2}')
echo "cache entries: $entries, cache weight: $weight bytes"
echo "resident: $before bytes at start, $after bytes with the origins cached ($(( (after - before) / entries )) bytes per origin)"
