# Shared by the benchmark scripts (sourced): processes to stop on exit, a scratch directory, free
# loopback ports and readiness waits.
pids=()
work=$(mktemp -d)
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# Waits up to 60 s (servers under valgrind start slowly) for URL to answer 2xx.
wait_ready() {
  for _ in $(seq 1 600); do curl -sf "$1" >/dev/null && return 0; sleep 0.1; done
  echo "not ready: $1" >&2; exit 1
}
# Serves a robots.txt from a local origin, whose port it leaves in $origin (not a subshell: the
# server's pid must reach $pids for the cleanup). The body is $1 (printf format), by default one
# disallowing /private.
start_origin() {
  local dir="$work/origin.$RANDOM"
  mkdir -p "$dir"
  # shellcheck disable=SC2059
  printf "${1:-User-agent: *\nDisallow: /private\n}" > "$dir/robots.txt"
  origin_dir=$dir
  origin=$(free_port)
  python3 -m http.server "$origin" --bind 127.0.0.1 --directory "$dir" >/dev/null 2>&1 &
  pids+=($!)
}

# Instruction counts of the service under callgrind (benches/instructions.sh, benches/rsl.sh,
# .ci/instruction-checks.sh). N requests of PATH over one keep-alive connection to
# 127.0.0.1:PORT: GETs, or POSTs of the JSON in file BODY when one is given.
send() {
  python3 - "$1" "$2" "$3" "${4:-}" <<'PY'
import http.client, sys
port, path, n, body_file = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
body = open(body_file, "rb").read() if body_file else None
conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
for _ in range(n):
    if body is None:
        conn.request("GET", path)
    else:
        conn.request("POST", path, body, {"content-type": "application/json"})
    response = conn.getresponse()
    response.read()
    assert response.status == 200, response.status
conn.close()
PY
}

# Total instructions of one server run under callgrind that answers N requests of PATH (POSTs
# of the file $BODY when it is set).
# Usage: measure N PATH READY_PATH COMMAND...
measure() {
  local n=$1 path=$2 ready=$3; shift 3
  local port out
  port=$(free_port)
  out="$work/callgrind.$n.$RANDOM"
  valgrind --tool=callgrind --callgrind-out-file="$out" "$@" "127.0.0.1:$port" >/dev/null 2>&1 &
  local pid=$!
  wait_ready "http://127.0.0.1:$port$ready"
  send "$port" "$path" 1 "${BODY:-}"     # warm: the check's origin is fetched and cached here
  send "$port" "$path" "$n" "${BODY:-}"
  kill -TERM "$pid"
  wait "$pid" || true
  awk '/^(summary|totals):/ { print $2; exit }' "$out"
}

# Instructions per request of NAME: the difference between 2,200 and 200 requests of PATH, divided
# by 2,000, so that start-up and shutdown cancel out ($SMALL and $LARGE change the counts, for
# requests too costly to make 2,200 of under callgrind).
per_request() { # name path ready command...
  local name=$1 path=$2 ready=$3; shift 3
  local small large n_small=${SMALL:-200} n_large=${LARGE:-2200}
  small=$(measure "$n_small" "$path" "$ready" "$@")
  large=$(measure "$n_large" "$path" "$ready" "$@")
  echo "${name}_instructions=$(( (large - small) / (n_large - n_small) ))"
}
