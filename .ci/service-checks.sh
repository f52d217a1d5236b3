#!/usr/bin/env bash
# Runs the release binary as an operator would: a smoke test against a local origin, graceful
# shutdown on SIGTERM, and schemathesis against the running service. Every request stays on
# loopback: the origin and the proxy sink are local, and in the schemathesis run robotsd sends
# every fetch through the sink (and refuses private and loopback literals by default).
set -euo pipefail
cd "$(dirname "$0")/.."

work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_ready() {
  for _ in $(seq 1 100); do
    if python3 - "$1" <<'PY' 2>/dev/null; then return 0; fi
import sys, urllib.request
urllib.request.urlopen(sys.argv[1], timeout=1).read()
PY
    sleep 0.1
  done
  echo "not ready: $1" >&2
  return 1
}
get() { python3 - "$1" <<'PY'
import sys, urllib.request
print(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())
PY
}

bin=target/release/robotsd
cargo build --release --locked

echo "-- smoke test: a local origin, the release binary, SIGTERM"
mkdir -p "$work/origin"
printf 'User-agent: *\nDisallow: /private\n' > "$work/origin/robots.txt"
origin_port=$(free_port)
python3 -m http.server "$origin_port" --bind 127.0.0.1 --directory "$work/origin" >/dev/null 2>&1 &
pids+=($!)
port=$(free_port)
"$bin" --listen "127.0.0.1:$port" --allow-private-networks --shutdown-grace 5s --log-format json &
robotsd=$!
pids+=("$robotsd")
wait_ready "http://127.0.0.1:$origin_port/robots.txt"
wait_ready "http://127.0.0.1:$port/readyz"
answer=$(get "http://127.0.0.1:$port/v1/check?url=http%3A%2F%2F127.0.0.1%3A$origin_port%2Fprivate%2Fx&ua=Googlebot")
echo "$answer"
grep -q '"allowed":false' <<<"$answer"
grep -q '"reason":"matched_rule"' <<<"$answer"
metrics=$(get "http://127.0.0.1:$port/metrics")
grep -q 'robotsd_checks_total{reason="matched_rule",verdict="disallow"} 1' <<<"$metrics"
grep -q 'robotsd_robots_fetches_total{outcome="parsed"} 1' <<<"$metrics"
kill -TERM "$robotsd"
status=0
wait "$robotsd" || status=$?
if [ "$status" -ne 0 ]; then echo "robotsd exited with $status after SIGTERM" >&2; exit 1; fi
echo "robotsd exited 0 after SIGTERM"

echo "-- schemathesis against the running service (fetches confined to a loopback sink)"
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==4.32.5"
cat > "$work/sink.py" <<'PY'
import http.server, sys
class Sink(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"User-agent: *\nDisallow: /private\n"
        self.send_response(200)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Sink).serve_forever()
PY
sink_port=$(free_port)
python3 "$work/sink.py" "$sink_port" &
pids+=($!)
# With Web Bot Auth keys (RFC 9421's published test key, B.1.4) and a product token, so that
# sign=, POST /v1/sign, the key directory and the Signature Agent Card are exercised too (a
# route that is not served would answer 404 where schemathesis expects 405 for an undeclared
# method).
cat > "$work/wba-keys.json" <<'JSON'
{"keys":[{"kty":"OKP","crv":"Ed25519","x":"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs","d":"n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW_2ZYb2p9KcU","status":"active"}]}
JSON
port=$(free_port)
"$bin" --listen "127.0.0.1:$port" --proxy "http://127.0.0.1:$sink_port" --log-level warn \
  --wba-keys "$work/wba-keys.json" \
  --wba-agent https://bot.example/.well-known/http-message-signatures-directory \
  --wba-product-token ExampleBot &
pids+=($!)
wait_ready "http://127.0.0.1:$port/readyz"
# positive_data_acceptance is left out: whether a string is a URL robotsd can answer for (a
# valid host, an http(s) scheme) is more than JSON Schema can say, so schema-valid strings are
# rightly refused with a documented 400.
"$work/venv/bin/schemathesis" run "http://127.0.0.1:$port/openapi.json" \
  --checks all --exclude-checks positive_data_acceptance \
  --max-examples 50 --seed 1 --no-color
