#!/usr/bin/env bash
# The miss path with a name lookup per cold origin (issue 42; figures in BENCHMARKS.md, "Names
# on the miss path"). benches/miss.sh gives its origins as IP literals, which never reach a
# resolver; a crawl frontier's new origins are names. Here origin i is also o<i>.bench.test,
# answered (A, TTL 300) by examples/name_server.rs on 127.0.0.1:53 of a network and mount
# namespace of this script's own, whose /etc/resolv.conf (bind-mounted over the machine's, in
# the namespace only) names that server: so robotsd's defaults (its own resolver, reading
# resolv.conf) and the C library's getaddrinfo (robotsd --system-resolver, and the bare reqwest
# client's default resolver) ask it, as they would a real one. Nothing leaves loopback.
#
# Rows, each a fresh process and N origins never seen before, checked once (robotsd, through
# examples/miss_load.rs) or fetched once (bare, examples/bare_fetch.rs), C at a time:
#   bare, IP literals / bare, names (getaddrinfo) / bare, names with a trailing dot (fully
#   qualified: what robotsd asks) / robotsd, IP literals / robotsd, names (defaults) /
#   robotsd --system-resolver, names;
# the rows with names twice: with a plain resolv.conf ("plain": the name server alone), and with
# a Kubernetes pod's ("pod": three search domains and ndots:5, so a name with fewer than five
# dots is first asked under each search domain, answered NXDOMAIN, as the cluster's DNS does).
# Then "twice": each host's two origins (a second listener's port, as a site's http and https
# origins are two), one storm after the other: a real site is looked up more than once within
# its TTL, which robotsd's resolver answers from what it kept and getaddrinfo asks again.
# For each: origins a second, and CPU microseconds an origin of robotsd (or the bare client) and
# of the name server (/proc/PID/stat).
# Usage: bash benches/miss_names.sh [origins per row, default 20000] [concurrency, default 64]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-20000}
c=${2:-64}
for tool in curl python3 unshare ip mount timeout; do
  command -v "$tool" >/dev/null || { echo "needs $tool (Debian: curl, python3, util-linux, iproute2)" >&2; exit 2; }
done
rows=(bare-ip bare-names-plain bare-names-pod bare-fqdn-pod robotsd-ip robotsd-names-plain robotsd-names-pod
  robotsd-system-names-plain robotsd-system-names-pod robotsd-twice-plain robotsd-system-twice-plain)
if [ -z "${MISS_NAMES_IN_NETNS:-}" ]; then
  cargo build --release --quiet --bin robotsd --example corpus_origin --example bare_fetch \
    --example miss_load --example name_server
  export MISS_NAMES_IN_NETNS=1
  userns=(--map-root-user)
  [ "$(id -u)" = 0 ] && userns=()
  exec timeout --kill-after=10 "${MISS_TIMEOUT:-1800}" unshare "${userns[@]}" --net --mount bash "$0" "$@"
fi
ip link set lo up
# shellcheck source=benches/common.sh
source benches/common.sh
resolv() { # plain|pod: /etc/resolv.conf's text, written in place (the bind mount stays)
  local search=""
  [ "$1" = pod ] && search=$'search bench.svc.cluster.local svc.cluster.local cluster.local\noptions ndots:5\n'
  printf '%snameserver 127.0.0.1\noptions timeout:2 attempts:2\n' "$search" > "$work/resolv.conf"
}
resolv plain
mount --bind "$work/resolv.conf" /etc/resolv.conf

bin=target/release/robotsd
ex=target/release/examples
corpus=${ROBOTSD_MISS_CORPUS:-crates/robotsd-engine/tests/data/corpus/robots}
ticks() { local f; read -r -a f < "/proc/$1/stat"; echo $(( f[13] + f[14] )); }

origin_port=$(free_port)
"$ex/corpus_origin" "0.0.0.0:$origin_port" "$corpus" &
origin_pid=$!
pids+=("$origin_pid")
wait_ready "http://127.0.0.1:$origin_port/robots.txt"
second_port=$(free_port)
"$ex/corpus_origin" "0.0.0.0:$second_port" "$corpus" &
pids+=($!)
wait_ready "http://127.0.0.1:$second_port/robots.txt"
# Every row's origins, and the 64 each robotsd warms on: 1,000 .. 1,000 + rows × N.
names_to=$(( 1000 + ${#rows[@]} * n ))
coproc NAMES { exec "$ex/name_server" 127.0.0.1:53 0 "$names_to"; }
names_pid=$NAMES_PID
pids+=("$names_pid")
read -r ready <&"${NAMES[0]}"
[ "$ready" = ready ] || { echo "name server: $ready" >&2; exit 1; }

echo "== the miss path with names: $n cold origins a row at C=$c; $(nproc) cores, $(date -u +%F), $(git rev-parse --short HEAD), corpus $corpus"
printf '%-26s %10s %8s %16s %16s\n' row origins/s p99_ms "CPU us/origin" "names us/origin"
next=1000
for row in "${rows[@]}"; do
  names=()
  [[ $row == *-names-* || $row == *-twice-* ]] && names=(env ROBOTSD_BENCH_NAMES=1)
  [[ $row == *-fqdn-* ]] && names=(env ROBOTSD_BENCH_NAMES=fqdn)
  resolv "${row##*-}"
  t0_n=$(ticks "$names_pid")
  if [[ $row == bare-* ]]; then
    out=$("${names[@]}" "$ex/bare_fetch" "$origin_port" "$next" "$n" "$c")
    cpu_us=$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(round(d["cpu_s"]*1e6/d["origins"]))' "$out")
    origins=$n
  else
    extra=()
    [[ $row == robotsd-system-* ]] && extra=(--system-resolver)
    api_port=$(free_port)
    "$bin" --listen "127.0.0.1:$api_port" --allow-private-networks "${extra[@]}" 2>>"$work/robotsd.log" &
    robotsd_pid=$!
    pids+=("$robotsd_pid")
    wait_ready "http://127.0.0.1:$api_port/readyz"
    "${names[@]}" "$ex/miss_load" misses "http://127.0.0.1:$api_port" "$origin_port" 0 64 16 >/dev/null
    t0_r=$(ticks "$robotsd_pid")
    out=$("${names[@]}" "$ex/miss_load" misses "http://127.0.0.1:$api_port" "$origin_port" "$next" "$n" "$c")
    origins=$n
    if [[ $row == *-twice-* ]]; then
      out="[$out, $("${names[@]}" "$ex/miss_load" misses "http://127.0.0.1:$api_port" "$second_port" "$next" "$n" "$c")]"
      origins=$(( 2 * n ))
    fi
    t1_r=$(ticks "$robotsd_pid")
    cpu_us=$(( (t1_r - t0_r) * 10000 / origins ))
    kill "$robotsd_pid"
    wait "$robotsd_pid" || true
  fi
  t1_n=$(ticks "$names_pid")
  python3 - "$row" "$out" "$cpu_us" "$(( (t1_n - t0_n) * 10000 / origins ))" <<'PY'
import json, sys
row, out, cpu, names = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3], sys.argv[4]
if isinstance(out, list):  # two storms: origins a second over both, the second's p99
    both = sum(o["origins"] for o in out) / sum(o["seconds"] for o in out)
    out = {**out[1], "per_second": both,
           "answers": {k: sum(o["answers"].get(k, 0) for o in out) for k in out[1]["answers"]}}
failed = out.get("failures", 0) or sum(v for k, v in out.get("answers", {}).items() if k != "miss/200")
print(f"{row:<26} {out['per_second']:>10.0f} {out['p99_ms']:>8} {cpu:>16} {names:>16}"
      + (f"   ({failed} not fetched: {out})" if failed else ""))
PY
  next=$(( next + n ))
done
