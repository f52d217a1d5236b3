#!/usr/bin/env bash
# Page answers (POST /v1/page, docs/page.md; figures in BENCHMARKS.md): a page with typical
# response headers and a 60 KB HTML document, against one local origin, loopback only.
#  - req/s: wrk, POST /v1/page against the cached GET /v1/check of the same URL, back to back in
#    one run (ratios are what this noisy machine repeats);
#  - instructions per request (callgrind) of both, and of the page answer without its document
#    (headers only): a check's 2,200 minus 200 requests / 2,000, a page's 220 minus 20 / 200.
# Usage: bash benches/page.sh [seconds per wrk run, default 10]   (needs wrk, valgrind, python3)
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-10}
for tool in wrk valgrind python3; do
  command -v "$tool" >/dev/null || { echo "needs $tool (Debian: wrk, valgrind, python3)" >&2; exit 2; }
done

# shellcheck source=benches/common.sh
source benches/common.sh

cargo build --release --quiet --bin robotsd
bin=target/release/robotsd
start_origin 'User-agent: *\nDisallow: /private\nContent-Usage: train-ai=n\n'
page_url="http://127.0.0.1:$origin/articles/2026/11/a-typical-article"
check="/v1/check?url=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$page_url")&ua=ExampleBot"

# A typical article: a head with the usual meta, link and script tags, inline scripts and
# styles, 60 KB of body text and markup, and a robots meta tag in the body too.
python3 - "$page_url" "$work" <<'PY'
import json, sys
url, work = sys.argv[1], sys.argv[2]
head = """<!DOCTYPE html>
<html lang="en"><head>
<meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>A typical article</title>
<meta name="description" content="An article of typical length and markup.">
<meta name="robots" content="max-snippet:160, max-image-preview:large">
<meta name="googlebot" content="notranslate">
<meta property="og:title" content="A typical article">
<link rel="canonical" href="%s"><link rel="stylesheet" href="/static/site.css">
<script async src="/static/analytics.js"></script>
<script>window.dataLayer = window.dataLayer || []; function gtag(){dataLayer.push(arguments);} gtag('js', new Date()); var s = '<meta name="robots" content="noindex">';</script>
<style>body { font: 16px/1.5 serif } .ad { display: none } /* <meta name=robots content=none> */</style>
</head><body><header><nav><a href="/">Home</a> <a href="/news/">News</a></nav></header><main><article>
""" % url
para = '<p>Lorem ipsum dolor sit amet, <a href="/articles/%d">consectetur</a> adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. <!-- a comment --> Ut enim ad minim veniam, quis <em>nostrud</em> exercitation.</p>\n'
body = []
size = len(head)
i = 0
while size < 60_000:
    p = para % i
    body.append(p)
    size += len(p)
    i += 1
tail = '<meta name="robots" content="noarchive"></article></main><footer>&copy; 2026</footer></body></html>\n'
html = head + "".join(body) + tail
headers = [
    ["Date", "Thu, 26 Nov 2026 05:00:00 GMT"],
    ["Content-Type", "text/html; charset=utf-8"],
    ["Cache-Control", "public, max-age=300"],
    ["Vary", "Accept-Encoding"],
    ["Server", "nginx"],
    ["X-Robots-Tag", "noimageindex"],
    ["X-Robots-Tag", "ExampleBot: nofollow"],
    ["Content-Usage", "train-ai=n, search=y"],
    ["Strict-Transport-Security", "max-age=63072000"],
    ["Content-Security-Policy", "default-src 'self'; img-src 'self' data:"],
]
with open(f"{work}/page.json", "w") as f:
    json.dump({"url": url, "ua": "ExampleBot", "headers": headers, "html": html}, f)
with open(f"{work}/headers-only.json", "w") as f:
    json.dump({"url": url, "ua": "ExampleBot", "headers": headers}, f)
print(f"document: {len(html.encode())} bytes, request: {len(json.dumps({'html': html}))} bytes of JSON")
PY

post_lua() { # body-file: a wrk script that POSTs it
  cat > "$work/post.$(basename "$1").lua" <<LUA
local f = io.open("$1", "rb"); local body = f:read("*a"); f:close()
wrk.method = "POST"; wrk.body = body; wrk.headers["Content-Type"] = "application/json"
LUA
  echo "$work/post.$(basename "$1").lua"
}

port=$(free_port)
"$bin" --listen "127.0.0.1:$port" --allow-private-networks --log-level error --concurrency-limit 100000 &
pids+=($!)
wait_ready "http://127.0.0.1:$port/readyz"
curl -sf "http://127.0.0.1:$port$check" >/dev/null
answer=$(curl -sf "http://127.0.0.1:$port/v1/page" -H 'content-type: application/json' --data-binary "@$work/page.json")
python3 -c 'import json, sys; a = json.loads(sys.argv[1]); r = a["robots"]; print("answer:", {k: r[k] for k in ("index", "follow", "max_snippet", "image_index")}, len(r["rules"]), "rules")' "$answer"

rps() { awk '/Requests\/sec/ {print $2}' "$work/$1.txt"; }
echo "== wrk -t1 -c16 -d${duration}s, $(nproc) cores, $(date -u +%F)"
wrk -t1 -c16 -d"${duration}s" --latency "http://127.0.0.1:$port$check" > "$work/check.txt"
wrk -t1 -c16 -d"${duration}s" --latency -s "$(post_lua "$work/page.json")" "http://127.0.0.1:$port/v1/page" > "$work/page.txt"
wrk -t1 -c16 -d"${duration}s" --latency -s "$(post_lua "$work/headers-only.json")" "http://127.0.0.1:$port/v1/page" > "$work/headers.txt"
for run in check page headers; do
  printf '%-28s %10s req/s  p50 %8s  p99 %8s\n' "$run" "$(rps "$run")" \
    "$(awk '$1=="50%" {print $2}' "$work/$run.txt")" "$(awk '$1=="99%" {print $2}' "$work/$run.txt")"
done
awk -v p="$(rps page)" -v h="$(rps headers)" -v c="$(rps check)" \
  'BEGIN {printf "page / check: %.2f; headers only / check: %.2f\n", p/c, h/c}'

# Instruction counts of POSTs, as common.sh's `per_request` counts GETs.
post_n() { # port body-file n
  python3 - "$1" "$2" "$3" <<'PY'
import http.client, sys
port, path, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
body = open(path, "rb").read()
conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
for _ in range(n):
    conn.request("POST", "/v1/page", body=body, headers={"content-type": "application/json"})
    response = conn.getresponse()
    response.read()
    assert response.status == 200, response.status
conn.close()
PY
}
measure_post() { # n body-file
  local n=$1 file=$2 port out
  port=$(free_port)
  out="$work/callgrind.post.$n.$RANDOM"
  valgrind --tool=callgrind --callgrind-out-file="$out" "$bin" --allow-private-networks \
    --shutdown-grace 1s --listen "127.0.0.1:$port" >/dev/null 2>&1 &
  local pid=$!
  wait_ready "http://127.0.0.1:$port/readyz"
  post_n "$port" "$file" 1
  post_n "$port" "$file" "$n"
  kill -TERM "$pid"
  wait "$pid" || true
  awk '/^(summary|totals):/ { print $2; exit }' "$out"
}
echo "== instructions per request (callgrind; start-up and shutdown cancel out)"
per_request cached_check "$check" /readyz "$bin" --allow-private-networks --shutdown-grace 1s --listen
for body in page headers-only; do
  small=$(measure_post 20 "$work/$body.json")
  large=$(measure_post 220 "$work/$body.json")
  echo "page_${body//-/_}_instructions=$(( (large - small) / 200 ))"
done
