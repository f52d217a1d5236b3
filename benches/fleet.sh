#!/usr/bin/env bash
# Fleet benchmark (figures in BENCHMARKS.md): robotsd sharing origin state through a local
# redis-server, loopback only. Every origin is fetched through a local sink acting as the proxy
# (`baseline_server --sink`), so none is contacted.
#  1. cached GET /v1/check throughput, same binary, in-memory default against --redis-url
#     (wrk, one run each, back to back);
#  2. a replica's L1 miss answered from Redis (L2 hit): latency of 2,000 checks of origins
#     another replica fetched, one keep-alive connection, as the client sees it;
#  3. Redis bytes per origin and the replica's resident memory with 100,000 origins;
#  4. upstream fetches per origin when three replicas check the same 1,000 cold origins at once.
# Usage: bash benches/fleet.sh [seconds per wrk run, default 10]
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-10}
for tool in wrk redis-server redis-cli; do
  command -v "$tool" >/dev/null || { echo "needs $tool (Debian: wrk, redis-server)" >&2; exit 2; }
done

# shellcheck source=benches/common.sh
source benches/common.sh

cargo build --release --quiet --bin robotsd --example baseline_server
bin=target/release/robotsd
helper=target/release/examples/baseline_server

redis_port=$(free_port)
redis-server --bind 127.0.0.1 --port "$redis_port" --save "" --appendonly no >/dev/null &
pids+=($!)
for _ in $(seq 1 100); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.1; done
redis="redis://127.0.0.1:$redis_port/0"
start_origin
sink=$(free_port)
"$helper" "127.0.0.1:$sink" --sink &
pids+=($!)

# Starts robotsd on a free port with the given flags; leaves its port in $port, pid in $pid.
serve() {
  port=$(free_port)
  "$bin" --listen "127.0.0.1:$port" --log-level warn --concurrency-limit 100000 \
    --batch-concurrency 64 --max-batch 1000 "$@" &
  pid=$!
  pids+=("$pid")
  wait_ready "http://127.0.0.1:$port/readyz"
}
metric() { # port name: the sum of a metric's samples
  curl -s "http://127.0.0.1:$1/metrics" | awk -v n="$2" '$1 ~ "^"n"({|$)" {s += $2} END {print s + 0}'
}
rss() { awk '/VmRSS/ {print $2 * 1024}' "/proc/$1/status"; }
# Checks N origins named PREFIX0.test … through the batch API of the replica on PORT.
fill() { # port prefix count
  python3 - "$@" <<'PY'
import json, sys, urllib.request
port, prefix, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
for start in range(0, count, 1000):
    urls = [f"http://{prefix}{i}.test/private/x" for i in range(start, min(start + 1000, count))]
    body = json.dumps({"ua": "SomeBot", "urls": urls}).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/check", body,
                                 {"content-type": "application/json"})
    results = json.load(urllib.request.urlopen(req, timeout=300))["results"]
    assert all(r.get("allowed") is False for r in results), results[:2]
PY
}

echo "== 1. cached GET /v1/check, wrk -t1 -c64 -d${duration}s, $(nproc) cores, $(date -u +%F)"
check_path="/v1/check?url=http%3A%2F%2F127.0.0.1%3A$origin%2Fprivate%2Freport&ua=SomeBot"
run() { # name port
  curl -sf "http://127.0.0.1:$2$check_path" >/dev/null   # warm: every measured request is a hit
  wrk -t1 -c64 -d"${duration}s" --latency "http://127.0.0.1:$2$check_path" > "$work/$1.txt"
  printf '%-12s %10s req/s  p50 %8s  p99 %8s\n' "$1" \
    "$(awk '/Requests\/sec/ {print $2}' "$work/$1.txt")" \
    "$(awk '$1=="50%" {print $2}' "$work/$1.txt")" "$(awk '$1=="99%" {print $2}' "$work/$1.txt")"
}
serve --allow-private-networks
memory_port=$port
serve --allow-private-networks --redis-url "$redis"
redis_port_http=$port
run in-memory "$memory_port"
run with-redis "$redis_port_http"
awk -v a="$(awk '/Requests\/sec/ {print $2}' "$work/with-redis.txt")" \
    -v b="$(awk '/Requests\/sec/ {print $2}' "$work/in-memory.txt")" \
    'BEGIN {printf "with --redis-url = %.2f of the in-memory default\n", a / b}'

echo "== 2, 3. 100,000 origins fetched by replica A into Redis"
used() { redis-cli -p "$redis_port" info memory | awk -F: '/^used_memory:/ {print $2 + 0}'; }
redis_before=$(used)
serve --proxy "http://127.0.0.1:$sink" --redis-url "$redis"
a_port=$port a_pid=$pid
a_before=$(rss "$a_pid")
fill "$a_port" o 100000
keys=$(redis-cli -p "$redis_port" dbsize | awk '{print $NF}')
redis_after=$(used)
a_after=$(rss "$a_pid")
echo "redis: $keys keys, $(( (redis_after - redis_before) / 100000 )) bytes per origin (used_memory)"
echo "replica A: resident $a_before bytes at start, $a_after with 100,000 origins" \
  "($(( (a_after - a_before) / 100000 )) bytes per origin)"
echo "replica A fetched $(metric "$a_port" robotsd_robots_fetches_total) times"

serve --proxy "http://127.0.0.1:$sink" --redis-url "$redis"
b_port=$port
python3 - "$b_port" <<'PY'
import http.client, sys, time
port = int(sys.argv[1])
conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
times = []
for i in range(2000):
    started = time.perf_counter()
    conn.request("GET", f"/v1/check?url=http%3A%2F%2Fo{i * 37 % 100000}.test%2Fprivate%2Fx&ua=SomeBot")
    response = conn.getresponse()
    body = response.read()
    times.append(time.perf_counter() - started)
    assert response.status == 200 and b'"cache":"shared"' in body, body[:200]
times.sort()
ms = lambda q: times[int(q * (len(times) - 1))] * 1000
print(f"replica B, L1 miss answered from Redis: p50 {ms(0.5):.2f} ms, p99 {ms(0.99):.2f} ms (2,000 checks)")
PY
echo "replica B fetched $(metric "$b_port" robotsd_robots_fetches_total) times"

echo "== 4. three fresh replicas check the same 1,000 cold origins at once"
replica_ports=()
for _ in 1 2 3; do
  serve --proxy "http://127.0.0.1:$sink" --redis-url "$redis"
  replica_ports+=("$port")
done
python3 - "${replica_ports[@]}" <<'PY'
import concurrent.futures, sys, urllib.request
ports = sys.argv[1:]
def check(job):
    origin, port = job
    url = f"http://127.0.0.1:{port}/v1/check?url=http%3A%2F%2Fp{origin}.test%2Fprivate%2Fx&ua=SomeBot"
    assert b'"allowed":false' in urllib.request.urlopen(url, timeout=60).read()
jobs = [(origin, port) for origin in range(1000) for port in ports]
with concurrent.futures.ThreadPoolExecutor(max_workers=48) as pool:
    list(pool.map(check, jobs))
PY
fetches=0
for p in "${replica_ports[@]}"; do
  fetches=$(( fetches + $(metric "$p" robotsd_robots_fetches_total) ))
done
echo "upstream fetches: $fetches for 1,000 origins checked by 3 replicas" \
  "($(awk -v f="$fetches" 'BEGIN {printf "%.3f", f / 1000}') per origin)"
for p in "${replica_ports[@]}"; do
  echo "replica :$p leases $(curl -s "http://127.0.0.1:$p/metrics" | grep '^robotsd_store_leases_total' | tr '\n' ' ')"
done
