#!/usr/bin/env bash
# A tripwire on the hot paths' cost: instructions per request (callgrind, Debian's valgrind) of
#   - cached_check: a cached GET /v1/check of a disallowed URL, default settings;
#   - cached_check_with_usage: an allowed URL on a file with AI usage preferences;
#   - cached_check_pace: pace=true with every slot granted (--default-crawl-delay 0s
#     --pace-guard 0s), in memory;
#   - batch_1000: a POST /v1/check of 1,000 URLs of one cached origin;
# each against its budget in benches/budgets.txt; and check_at_limits, the engine's costliest
# check that benches/worst_case.py finds (a search over robots.txt files of up to 500 KiB and
# paths of up to 8 KiB, counted in instructions per check, issue 58). One over budget by more than 2 % is measured
# again, and fails only if it is over again (a thread woken at another moment moves a count by
# a few tenths of a percent). The minimal axum handler is measured beside them, for the ratio.
# Counts repeat for one binary on one kind of machine. A CPU with other SIMD extensions can take
# other paths in code that picks them at run time (httparse, memchr): the extensions are printed
# first, so that a failure on a new machine without a change in the code can be told apart, and
# the budgets measured again there, with that reason. Loopback only. ROBOTSD_BIN may name the
# release binary; else it is built here.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v valgrind >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends valgrind
fi

# shellcheck source=benches/common.sh
source benches/common.sh

bin=${ROBOTSD_BIN:-}
if [ -z "$bin" ]; then
  cargo build --release --locked --quiet --bin robotsd
  bin=target/release/robotsd
fi
cargo build --release --locked --quiet --example baseline_server
baseline=target/release/examples/baseline_server

budget() { awk -v name="$1" '$1 == name { print $2 }' benches/budgets.txt; }

start_origin
plain=$origin
start_origin 'User-agent: *\nDisallow: /private\nContent-Usage: train-ai=n\nContent-Signal: search=yes, ai-train=no\n'
usage=$origin
python3 - "$plain" > "$work/batch.json" <<'PY'
import json, sys
port = sys.argv[1]
print(json.dumps({"ua": "SomeBot",
                  "urls": [f"http://127.0.0.1:{port}/p/{i}" for i in range(1000)]}))
PY
url() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$1"; }

# One workload's instructions per request.
workload() {
  case $1 in
    cached_check)
      per_request "$1" "/v1/check?url=$(url "http://127.0.0.1:$plain/private/report")&ua=SomeBot" \
        /readyz "$bin" --allow-private-networks --shutdown-grace 1s --listen ;;
    cached_check_with_usage)
      per_request "$1" "/v1/check?url=$(url "http://127.0.0.1:$usage/articles/1")&ua=SomeBot" \
        /readyz "$bin" --allow-private-networks --shutdown-grace 1s --listen ;;
    cached_check_pace)
      per_request "$1" "/v1/check?url=$(url "http://127.0.0.1:$plain/articles/1")&ua=SomeBot&pace=true" \
        /readyz "$bin" --allow-private-networks --shutdown-grace 1s \
        --default-crawl-delay 0s --pace-guard 0s --listen ;;
    batch_1000)
      BODY="$work/batch.json" SMALL=2 LARGE=12 per_request "$1" /v1/check \
        /readyz "$bin" --allow-private-networks --shutdown-grace 1s --listen ;;
  esac | sed 's/.*=//'
}

echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs); SIMD:" \
  "$(grep -m1 -o -w -E 'sse4_2|avx2|avx512f|avx512bw' /proc/cpuinfo | sort -u | xargs || true)"
minimal=$(per_request minimal / / "$baseline" | sed 's/.*=//')
echo "minimal axum handler: $minimal instructions a request"
failed=0
for name in cached_check cached_check_with_usage cached_check_pace batch_1000; do
  limit=$(budget "$name")
  [ -n "$limit" ] || { echo "FAIL $name has no budget in benches/budgets.txt"; failed=1; continue; }
  got=$(workload "$name")
  if [ "$got" -gt $(( limit * 102 / 100 )) ]; then
    echo "     $name: $got over $limit + 2 %; measuring again"
    got=$(workload "$name")
  fi
  # A single check against the minimal handler; a batch by the URL.
  case $name in
    batch_*) ratio=$(python3 -c "print(f'{$got // 1000:,} a URL')") ;;
    *) ratio=$(python3 -c "print(f'{$got / $minimal:.2f}x the minimal handler')") ;;
  esac
  if [ "$got" -gt $(( limit * 102 / 100 )) ]; then
    echo "FAIL $name: $got instructions a request, over its budget $limit by more than 2 % (${ratio})"
    failed=1
  else
    echo "ok   $name: $got instructions a request, budget $limit (${ratio})"
  fi
done
# The search is deterministic (its seed is fixed); its instructions repeat for one binary.
limit=$(budget check_at_limits)
if ! python3 benches/worst_case.py --evaluations 60 --budget "$limit"; then
  echo "FAIL check_at_limits: a check costs more than its budget of $limit instructions"
  failed=1
fi
exit "$failed"
