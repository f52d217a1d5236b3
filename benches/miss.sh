#!/usr/bin/env bash
# The miss path (issue 42; figures in BENCHMARKS.md): how many cold origins a second robotsd
# takes in, against a bare reqwest client fetching the same files at the same concurrency (the
# floor of this machine), and whether a storm of misses slows the cached checks of other origins.
# Loopback only, in a network namespace of its own where only lo exists (as benches/sizing.sh):
# one listener (examples/corpus_origin.rs, on 0.0.0.0:PORT, so reachable from nothing but lo)
# is every origin http://127.a.b.c:PORT/ (on Linux, any 127/8 address reaches it), each served
# one file of the real corpus (the vendored subset, crates/robotsd-engine/tests/data/corpus/robots, or
# $ROBOTSD_MISS_CORPUS, e.g. ../shared/corpus/robots) chosen by its address. robotsd runs with
# its defaults but --allow-private-networks (and --redis-url for the robotsd+redis rows). The
# origins are IP literals, so no DNS lookup is measured (robotsd resolves names only).
#
# For each concurrency (64, 256) and row (bare reqwest, robotsd, robotsd+redis), a fresh robotsd:
#  1. warms 64 origins, then measures cached checks of them, RATE a second for 5 s (idle);
#  2. the storm: N origins never seen before, each checked once (GET /v1/check, examples/
#     miss_load.rs) or, for the bare row, fetched once (examples/bare_fetch.rs), C at a time,
#     while the same cached checks run (a process of their own, one thread); the bare row's
#     robotsd only answers those, so its "storm" p99 is the machine's share of the slowdown;
#  3. robotsd's resident memory before the storm (VmRSS), its peak (VmHWM) and 2 s after (what
#     the N new cached origins keep), and the CPU seconds of every process during the storm
#     (/proc/PID/stat; the load tools report their own).
# Then memory per fetch in flight, without the cache's growth: robotsd's VmRSS with 256 fetches
# held mid-body (slow origins, which stall half-way through the file) over its VmRSS before, and
# the same for the bare client (256 fetches against 1).
# With BASELINE=<git revision>, that revision's robotsd is built too (in a worktree, its own
# target directory) and measured the same way in the same run ("before" rows), for ratios.
# With BASELINE_BIN=<path>, a robotsd built earlier is the "before" rows instead (BASELINE, if
# set, only names it).
# Usage: [BASELINE=<rev>] [BASELINE_BIN=<path>] bash benches/miss.sh [origins per storm, default 20000] [cached checks a second, default 200]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-20000}
rate=${2:-200}
for tool in redis-server redis-cli curl python3 unshare ip timeout; do
  command -v "$tool" >/dev/null || { echo "needs $tool (Debian: redis-server, curl, python3, util-linux, iproute2)" >&2; exit 2; }
done
if [ -z "${MISS_IN_NETNS:-}" ]; then
  # Built here, where the registry is reachable if anything is missing; run in the namespace.
  cargo build --release --quiet --bin robotsd --example corpus_origin --example bare_fetch \
    --example miss_load --example baseline_server
  if [[ -n "${BASELINE_BIN:-}" ]]; then
    mkdir -p target/baseline/release
    cp "$BASELINE_BIN" target/baseline/release/robotsd
    export MISS_BASELINE_REV=${BASELINE:-$BASELINE_BIN}
  elif [[ -n "${BASELINE:-}" ]]; then
    rev=$(git rev-parse --short "$BASELINE")
    tree=$(mktemp -d) root=$PWD
    git worktree add --detach "$tree/baseline" "$rev" >/dev/null 2>&1
    (cd "$tree/baseline" && CARGO_TARGET_DIR="$root/target/baseline" cargo build --release --quiet --bin robotsd)
    git worktree remove --force "$tree/baseline"
    rm -rf "$tree"
    export MISS_BASELINE_REV=$rev
  fi
  export MISS_IN_NETNS=1
  # Root gets a network namespace directly; anyone else through a user namespace of their own.
  userns=(--map-root-user)
  [ "$(id -u)" = 0 ] && userns=()
  exec timeout --kill-after=10 "${MISS_TIMEOUT:-3600}" unshare "${userns[@]}" --net bash "$0" "$@"
fi
ip link set lo up
corpus=${ROBOTSD_MISS_CORPUS:-crates/robotsd-engine/tests/data/corpus/robots}
[ -d "$corpus" ] || { echo "no corpus at $corpus" >&2; exit 2; }

# shellcheck source=benches/common.sh
source benches/common.sh

bin=target/release/robotsd
ex=target/release/examples

origin_port=$(free_port)
"$ex/corpus_origin" "0.0.0.0:$origin_port" "$corpus" &
origin_pid=$!
pids+=("$origin_pid")
wait_ready "http://127.0.0.1:$origin_port/robots.txt"
redis_port=$(free_port)
redis-server --bind 127.0.0.1 --port "$redis_port" --save "" --appendonly no >/dev/null &
redis_pid=$!
pids+=("$redis_pid")
for _ in $(seq 1 100); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.1; done

ticks() { local f; read -r -a f < "/proc/$1/stat"; echo $(( f[13] + f[14] )); }
kb() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; }
hot=64      # origins 0..63: the cached checks
next=1000   # each storm's origins are fresh: from here on, N more each time

echo "== the miss path: $n cold origins a storm, cached checks at $rate/s; $(nproc) cores, $(date -u +%F), $(git rev-parse --short HEAD)${MISS_BASELINE_REV:+ (before: $MISS_BASELINE_REV)}, corpus $corpus ($(find "$corpus" -type f | wc -l) files)"
echo "-- ceilings (each tool alone against its server)"
echo "origin server, kept connections, C=64: $("$ex/bare_fetch" "$origin_port" 0 "$n" 64 --keep-alive)"
sink=$(free_port)
"$ex/baseline_server" "127.0.0.1:$sink" &
pids+=($!)
wait_ready "http://127.0.0.1:$sink/"
echo "miss_load against a constant handler, C=256: $("$ex/miss_load" misses "http://127.0.0.1:$sink" "$origin_port" 0 "$n" 256)"
echo "bare reqwest fetch + RobotsTxt::parse, C=64: $("$ex/bare_fetch" "$origin_port" "$next" "$n" 64 --parse)"
next=$(( next + n ))

results="$work/results.tsv"
run() { # row concurrency
  local row=$1 c=$2 extra=() api_port robotsd_pid api idle storm hits_pid stop rss0 hwm rss1
  local t0_r t0_o t0_s t1_r t1_o t1_s bin=$bin
  [[ $row == before* ]] && bin=target/baseline/release/robotsd
  if [[ $row == *+redis ]]; then
    redis-cli -p "$redis_port" flushall >/dev/null
    extra=(--redis-url "redis://127.0.0.1:$redis_port/0")
  fi
  api_port=$(free_port)
  "$bin" --listen "127.0.0.1:$api_port" --allow-private-networks "${extra[@]}" 2>>"$work/robotsd.log" &
  robotsd_pid=$!
  pids+=("$robotsd_pid")
  api="http://127.0.0.1:$api_port"
  wait_ready "$api/readyz"
  "$ex/miss_load" misses "$api" "$origin_port" 0 "$hot" 16 >/dev/null
  idle=$("$ex/miss_load" hits "$api" "$origin_port" 0 "$hot" "$rate" "$work/never" 5)
  rss0=$(kb "$robotsd_pid" VmRSS)
  t0_r=$(ticks "$robotsd_pid") t0_o=$(ticks "$origin_pid") t0_s=$(ticks "$redis_pid")
  stop="$work/stop.$row.$c"
  "$ex/miss_load" hits "$api" "$origin_port" 0 "$hot" "$rate" "$stop" 600 > "$work/hits" &
  hits_pid=$!
  if [ "$row" = bare ]; then
    storm=$("$ex/bare_fetch" "$origin_port" "$next" "$n" "$c")
  else
    storm=$("$ex/miss_load" misses "$api" "$origin_port" "$next" "$n" "$c")
  fi
  touch "$stop"
  wait "$hits_pid"
  t1_r=$(ticks "$robotsd_pid") t1_o=$(ticks "$origin_pid") t1_s=$(ticks "$redis_pid")
  hwm=$(kb "$robotsd_pid" VmHWM)
  sleep 2   # the fetches' buffers freed and given back (mimalloc purges after a delay)
  rss1=$(kb "$robotsd_pid" VmRSS)
  next=$(( next + n ))
  kill "$robotsd_pid"
  wait "$robotsd_pid" || true
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$row" "$c" "$storm" "$idle" "$(cat "$work/hits")" \
    "$rss0" "$hwm" "$rss1" "$(( t1_r - t0_r ))" "$(( t1_o - t0_o ))" "$(( t1_s - t0_s ))" >> "$results"
}
for c in 64 256; do
  for row in bare robotsd robotsd+redis ${MISS_BASELINE_REV:+before before+redis}; do
    run "$row" "$c"
  done
done

# Memory per fetch in flight, without the cache's growth: 256 checks of slow origins (127.200/16
# and up: the head and half the file at once, the rest 6 s later), read mid-body.
slow=$(( 199 * 256 * 254 ))
inflight() { # row
  local row=$1 extra=() api_port robotsd_pid api load_pid rss0 rss flying
  if [ "$row" = robotsd+redis ]; then
    redis-cli -p "$redis_port" flushall >/dev/null
    extra=(--redis-url "redis://127.0.0.1:$redis_port/0")
  fi
  api_port=$(free_port)
  "$bin" --listen "127.0.0.1:$api_port" --allow-private-networks "${extra[@]}" 2>>"$work/robotsd.log" &
  robotsd_pid=$!
  pids+=("$robotsd_pid")
  api="http://127.0.0.1:$api_port"
  wait_ready "$api/readyz"
  "$ex/miss_load" misses "$api" "$origin_port" 0 "$hot" 16 >/dev/null
  rss0=$(kb "$robotsd_pid" VmRSS)
  "$ex/miss_load" misses "$api" "$origin_port" "$slow" 256 256 >/dev/null &
  load_pid=$!
  sleep 3
  rss=$(kb "$robotsd_pid" VmRSS)
  flying=$(curl -s "$api/metrics" | awk '$1 == "robotsd_robots_fetches_in_flight" {print $2}')
  wait "$load_pid"
  kill "$robotsd_pid"
  wait "$robotsd_pid" || true
  slow=$(( slow + 256 ))
  echo "$row: VmRSS $((rss0 / 1024)) MB idle, $((rss / 1024)) MB with $flying fetches in flight mid-body: $(( (rss - rss0) / flying )) KB a fetch"
}
bare_inflight() { # concurrency: bare_fetch's VmRSS (KB) with that many fetches in flight mid-body
  local load_pid rss
  "$ex/bare_fetch" "$origin_port" "$slow" "$1" "$1" >/dev/null &
  load_pid=$!
  sleep 3
  rss=$(kb "$load_pid" VmRSS)
  wait "$load_pid"
  slow=$(( slow + $1 ))
  echo "$rss"
}
echo "-- memory per fetch in flight (VmRSS 3 s into 256 fetches of origins that stall mid-body for 6 s)"
inflight robotsd
inflight robotsd+redis
one=$(bare_inflight 1)
many=$(bare_inflight 256)
echo "bare reqwest: VmRSS $((one / 1024)) MB with 1 fetch in flight, $((many / 1024)) MB with 256: $(( (many - one) / 255 )) KB a fetch"
echo

python3 - "$results" "$n" <<'PY'
import json, sys
rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1])]
n = int(sys.argv[2])
runs = {}
for row, c, storm, idle, hits, rss0, hwm, rss1, cpu_r, cpu_o, cpu_s in rows:
    runs[(row, int(c))] = dict(storm=json.loads(storm), idle=json.loads(idle), hits=json.loads(hits),
                               rss0=int(rss0), hwm=int(hwm), rss1=int(rss1),
                               cpu=[int(cpu_r) / 100, int(cpu_o) / 100, int(cpu_s) / 100])
names = {"bare": "bare reqwest", "robotsd": "robotsd", "robotsd+redis": "robotsd+redis",
         "before": "robotsd before", "before+redis": "robotsd+redis before"}
order = [(row, c) for c in (64, 256) for row in names if (row, c) in runs]
print("-- rate (origins/s: N over the storm's wall time) and cached checks of other origins (p99 ms, "
      "idle robotsd vs during the storm; the bare row's robotsd only answers them)")
print("| what | C | origins/s | of bare | each check/fetch p50 / p99 ms | hits p99 idle | hits p99 storm | storm / idle |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
for row, c in order:
    r, bare = runs[(row, c)], runs[("bare", c)]["storm"]["per_second"]
    s, i, h = r["storm"], r["idle"]["p99_ms"], r["hits"]["p99_ms"]
    print(f"| {names[row]} | {c} | {s['per_second']:,.0f} | {s['per_second'] / bare:.2f} "
          f"| {s['p50_ms']} / {s['p99_ms']} | {i} | {h} | {h / i:.1f}x |")
print()
print("-- robotsd's memory (MB; peak = VmHWM, after = VmRSS 2 s after the storm) and CPU during the storm "
      "(s: robotsd / origin server / load tool / redis; us a origin: all four)")
print("| what | C | RSS before | peak - before | kept: (after - before) / N, KB | CPU s | CPU us / origin |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for row, c in order:
    r = runs[(row, c)]
    cpu = r["cpu"][:2] + [r["storm"]["cpu_s"]] + r["cpu"][2:]
    if row == "bare":
        cpu[0] = 0.0   # robotsd only answered the cached checks
        mem = "| - | - | -"
    else:
        mem = (f"| {r['rss0'] / 1024:.1f} | {(r['hwm'] - r['rss0']) / 1024:.1f} "
               f"| {(r['rss1'] - r['rss0']) / n:.1f}")
    print(f"| {names[row]} | {c} {mem} | {' / '.join(f'{x:.1f}' for x in cpu)} "
          f"| {sum(cpu) / n * 1e6:.0f} |")
print()
for row, c in order:
    r = runs[(row, c)]
    answers = r["storm"].get("answers") or {"fetched": n - r["storm"].get("failures", 0)}
    odd = {k: v for k, v in answers.items() if not k.startswith(("miss/", "fetched"))}
    hits_odd = {k: v for k, v in r["hits"]["answers"].items() if not k.startswith("hit/")}
    print(f"{names[row]} C={c}: storm {r['storm']['seconds']} s, answers {answers}"
          f"{' (not misses: ' + str(odd) + ')' if odd else ''}; {r['hits']['checks']} cached checks in "
          f"{r['hits']['seconds']} s, max {r['hits']['max_ms']} ms{', not hits: ' + str(hits_odd) if hits_odd else ''}")
PY
