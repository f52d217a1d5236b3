#!/usr/bin/env bash
# The fleet at scale (figures in BENCHMARKS.md, the sizing table in docs/fleet.md): three
# replicas with their default settings (--cache-capacity 256MiB) and one local redis-server,
# loopback only. Every origin o0.test, o1.test, … is fetched through a local sink acting as the
# proxy, which serves each origin one file of the real corpus (../shared/corpus, chosen by a hash
# of the host), so body sizes are real and no origin is contacted. In stages of 10,000, 100,000
# and 1,000,000 origins:
#  1. fill: the new origins are checked once each through the batch API, the batches spread
#     over the three replicas (one fetch each, stored in Redis);
#  2. replay: CHECKS single checks of origins drawn with Zipf's law (exponent 1) over all the
#     origins so far, spread over the replicas by 48 workers: once to warm the replicas' caches
#     (L1), then again, measured;
#  3. Redis bytes per origin (used_memory over the origins), each replica's resident memory, the
#     L1 hit rate of the measured replay (answers with robots.cache "hit"), upstream fetches per
#     origin, and the latency of the checks that missed L1 and were answered from Redis
#     (robots.cache "shared"), as the client measured them.
# Usage: bash benches/fleet_scale.sh [most origins, default 1000000] [checks per replay, default 300000]
#        (ROBOTSD_BIN: another robotsd build to run as the replicas, e.g. a revision before a
#        change; ROBOTSD_ARGS: flags added to each replica's, e.g. --cache-capacity 32MiB to
#        reach a full cache's hit rate with fewer origins)
set -euo pipefail
cd "$(dirname "$0")/.."
most=${1:-1000000}
checks=${2:-300000}
for tool in redis-server redis-cli curl; do
  command -v "$tool" >/dev/null || { echo "needs $tool (Debian: redis-server, curl)" >&2; exit 2; }
done
shared=${ROBOTSD_SHARED_DIR:-$(cd .. && pwd)/shared}
corpus="$shared/corpus/robots"
[ -d "$corpus" ] || { echo "needs the corpus at $corpus (ROBOTSD_SHARED_DIR)" >&2; exit 2; }

# shellcheck source=benches/common.sh
source benches/common.sh

cargo build --release --quiet --bin robotsd --example baseline_server --example fleet_scale
bin=${ROBOTSD_BIN:-target/release/robotsd}
sink_bin=target/release/examples/baseline_server
load=target/release/examples/fleet_scale

redis_port=$(free_port)
redis-server --bind 127.0.0.1 --port "$redis_port" --save "" --appendonly no >/dev/null &
pids+=($!)
for _ in $(seq 1 100); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.1; done
sink=$(free_port)
"$sink_bin" "127.0.0.1:$sink" --corpus "$corpus" &
pids+=($!)

replicas=() replica_pids=()
for _ in 1 2 3; do
  port=$(free_port)
  # The defaults, but for what a benchmark on loopback needs: the sink as the proxy, quiet logs,
  # and room for the fill's batches. ROBOTSD_ARGS is split into words on purpose.
  # shellcheck disable=SC2086
  "$bin" --listen "127.0.0.1:$port" --log-level warn --proxy "http://127.0.0.1:$sink" \
    --redis-url "redis://127.0.0.1:$redis_port/0" --max-batch 1000 --batch-concurrency 64 \
    --operator-contact mailto:bench@robotsd.invalid ${ROBOTSD_ARGS:-} &
  pids+=($!) replica_pids+=($!)
  wait_ready "http://127.0.0.1:$port/readyz"
  replicas+=("http://127.0.0.1:$port")
done
list=$(IFS=,; echo "${replicas[*]}")
used() { redis-cli -p "$redis_port" info memory | awk -F: '/^used_memory:/ {print $2 + 0}'; }
metric() { # base-url name: the sum of a metric's samples
  curl -s "$1/metrics" | awk -v n="$2" '$1 ~ "^"n"({|$)" {s += $2} END {print s + 0}'
}
rss_mb() { awk '/VmRSS/ {printf "%.0f", $2 / 1024}' "/proc/$1/status"; }

echo "== fleet at scale: 3 replicas (defaults), one redis-server, corpus bodies; $(nproc) cores, $(date -u +%F)"
base=$(used)
from=0
for stage in 10000 100000 1000000; do
  [ "$stage" -le "$most" ] || break
  "$load" fill "$list" "$from" "$stage"
  from=$stage
  # Two different sequences: the measured one is not the warm-up's again.
  "$load" replay "$list" "$stage" "$checks" 1.0 48 1 >/dev/null
  line=$("$load" replay "$list" "$stage" "$checks" 1.0 48 2)
  fetches=0
  for r in "${replicas[@]}"; do fetches=$(( fetches + $(metric "$r" robotsd_robots_fetches_total) )); done
  rss="" entries=""
  for p in "${replica_pids[@]}"; do rss+="$(rss_mb "$p") "; done
  for r in "${replicas[@]}"; do entries+="$(metric "$r" robotsd_cache_entries) "; done
  python3 - "$stage" "$(( ($(used) - base) / stage ))" "$(redis-cli -p "$redis_port" dbsize | awk '{print $NF}')" \
    "$fetches" "$rss" "$entries" "$line" <<'PY'
import json, sys
origins, per_origin, keys, fetches, rss, entries, line = sys.argv[1:]
replay = json.loads(line)
by = replay["by_cache"]
checks = replay["checks"]
hit = by.get("hit", {}).get("count", 0)
shared = by.get("shared", {})
others = {k: v["count"] for k, v in by.items() if k not in ("hit", "shared")}
print(f"{int(origins):>9,} origins: redis {int(per_origin):,} B/origin ({int(keys):,} keys); "
      f"replicas resident {rss.strip().replace(' ', ' / ')} MB, "
      f"L1 entries {entries.strip().replace(' ', ' / ')}; "
      f"L1 hits {hit / checks:.1%} of {checks:,} checks ({replay['seconds']} s); "
      f"fetches/origin {int(fetches) / int(origins):.3f}; "
      f"L1 hit p50 {by.get('hit', {}).get('p50_ms', '-')} ms p99 {by.get('hit', {}).get('p99_ms', '-')} ms; "
      f"L1 miss from Redis p50 {shared.get('p50_ms', '-')} ms p99 {shared.get('p99_ms', '-')} ms"
      + (f"; other answers {others}" if others else ""))
PY
done
