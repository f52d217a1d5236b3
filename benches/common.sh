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
  origin=$(free_port)
  python3 -m http.server "$origin" --bind 127.0.0.1 --directory "$dir" >/dev/null 2>&1 &
  pids+=($!)
}
