#!/usr/bin/env bash
# The container image, built and run as a kubelet would run it.
#
#   ROBOTSD_BIN=target/release/robotsd bash .ci/image-checks.sh
#   IMAGE_TAG=registry.example/robotsd:0.2.0 ROBOTSD_BIN=... bash .ci/image-checks.sh [--build-only]
#
# No registry is reachable here, so the Dockerfile's base (gcr.io/distroless/cc-debian12:nonroot)
# cannot be pulled and its build stages cannot run. Instead this assembles the Dockerfile's final
# stage from the host's build: an image FROM scratch holding what distroless would give robotsd
# (the shared libraries `ldd` lists and the dynamic loader, taken from this host, Debian bookworm
# as the Dockerfile's builder; the CA bundle; passwd and group entries for 65532; its ENV and
# WORKDIR) and what the final stage adds (the binary, stripped as the Dockerfile strips it, the
# labels, USER, EXPOSE, ENTRYPOINT). Then:
#   1. .ci/dockerfile_final_stage.py holds the image to the Dockerfile's final stage (user,
#      entrypoint, ports, labels, the binary's path, owner and mode, the CA bundle, the passwd
#      and group entries): a change to either side that the other does not follow fails;
#   2. the image runs under podman (runc) as the chart runs it: its own USER, a read-only root
#      filesystem with no tmpfs, no capabilities, no privilege escalation; on loopback only
#      (--network host, 127.0.0.1 ports), it must run as uid 65532 on a read-only root, answer
#      /livez, /readyz and /metrics on the admin port, answer one /v1/check from a local origin,
#      and exit 0 on SIGTERM within its shutdown grace.
# The image is removed at the end unless IMAGE_TAG names it; --build-only builds and tags it
# (IMAGE_TAG required) without running it, for an operator to `podman push`.
# Installs podman and runc from Debian when they are missing. ROBOTSD_BIN names the binary;
# unset, `cargo build --release --locked` makes one.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }
die() { echo "image-checks: $*" >&2; exit 1; }

build_only=false
case "${1:-}" in
  "") ;;
  --build-only) build_only=true ;;
  *) die "unknown argument ${1} (usage: [IMAGE_TAG=...] bash .ci/image-checks.sh [--build-only])" ;;
esac
if $build_only && [ -z "${IMAGE_TAG:-}" ]; then
  die "--build-only keeps the image, so it needs IMAGE_TAG (e.g. registry.example/robotsd:0.2.0)"
fi
started=$SECONDS

step "tools"
missing=()
command -v podman >/dev/null || missing+=(podman)
command -v runc >/dev/null || missing+=(runc)
command -v strip >/dev/null || missing+=(binutils)
[ -s /etc/ssl/certs/ca-certificates.crt ] || missing+=(ca-certificates)
if [ "${#missing[@]}" -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# crun, Debian's default runtime, fails on this kind of machine (cgroups, rlimits); runc works,
# with cgroupfs since there is no systemd to manage cgroups.
pm() { podman --runtime runc --cgroup-manager=cgroupfs "$@"; }
podman --version
runc --version | sed -n 1p

# shellcheck source=.ci/robotsd-bin.sh
source .ci/robotsd-bin.sh
bin=$(robotsd_bin)
[ -x "$bin" ] || die "no robotsd binary at $bin (ROBOTSD_BIN)"

work=$(mktemp -d)
image=${IMAGE_TAG:-localhost/robotsd-image-checks:$$}
container=robotsd-image-checks-$$
origin_pid=""
cleanup() {
  if [ -n "$origin_pid" ]; then kill "$origin_pid" 2>/dev/null || true; fi
  pm rm --force --ignore "$container" >/dev/null 2>&1 || true
  if [ -z "${IMAGE_TAG:-}" ]; then pm rmi --force "$image" >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

step "stage the final stage's files from this host's build"
version=$(python3 -c 'import tomllib; print(tomllib.load(open("Cargo.toml", "rb"))["package"]["version"])')
revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)
context=$work/context
root=$context/rootfs
mkdir -p "$root/etc/ssl/certs" "$context/home/nonroot"
install -d -m 1777 "$root/tmp"
chmod 0700 "$context/home/nonroot"
# As the Dockerfile's builder stage does: line tables dropped, function symbols kept.
strip --strip-debug -o "$root/robotsd" "$bin"
chmod 0755 "$root/robotsd"
# What the binary loads: each library ldd resolves, and the loader, at the path ldd names
# (the loader's built-in search path finds them there; the image has no ld.so.cache).
libs=$(ldd "$root/robotsd") || die "ldd $bin failed: is it a dynamic executable for this host?"
if grep -q 'not found' <<<"$libs"; then die "libraries missing on this host: $libs"; fi
count=0
lib_bytes=0
while read -r lib; do
  mkdir -p "$root$(dirname "$lib")"
  cp -L "$lib" "$root$lib"
  count=$((count + 1))
  lib_bytes=$((lib_bytes + $(stat -c %s "$root$lib")))
done < <(grep -o '/[^ ]*' <<<"$libs")
[ "$count" -ge 2 ] || die "ldd listed $count files for $bin; expected the loader and libc at least: $libs"
cp -L /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
# distroless's users and groups (root, nobody, nonroot), and its name service order: /etc/hosts
# before DNS.
cat > "$root/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin
nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin
EOF
cat > "$root/etc/group" <<'EOF'
root:x:0:
nobody:x:65534:
tty:x:5:
staff:x:50:
nonroot:x:65532:
EOF
printf 'hosts: files dns\n' > "$root/etc/nsswitch.conf"
chmod -R go-w "$root"

# The Dockerfile's final stage, FROM scratch instead of distroless: the same instructions written
# out, not derived from the Dockerfile, so that dockerfile_final_stage.py compares two sources.
cat > "$context/Containerfile" <<'EOF'
FROM scratch
ARG VERSION=0.2.0
ARG REVISION=unknown
COPY rootfs/ /
COPY --chown=65532:65532 home/ /home/
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt
WORKDIR /home/nonroot
LABEL org.opencontainers.image.title="robotsd" \
      org.opencontainers.image.description="robots.txt as a service: may this user-agent fetch this URL?" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.base.name="scratch"
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/robotsd"]
EOF

step "podman build ($image)"
# --layers=false: one layer, nothing cached (the binary changes on every build). Without
# --identity-label=false buildah adds a label of its own, which the Dockerfile's build does not.
pm build --quiet --pull=never --layers=false --identity-label=false --format oci \
  --build-arg VERSION="$version" --build-arg REVISION="$revision" \
  --tag "$image" --file "$context/Containerfile" "$context" >/dev/null
size=$(pm image inspect --format '{{.Size}}' "$image")


step "the image against the Dockerfile's final stage"
# First, that the comparison notices an altered Dockerfile or image at all.
python3 .ci/dockerfile_final_stage.py self-test
# A container that is never started: podman export gives its filesystem as a tar.
pm create --name "$container" --pull=never "$image" >/dev/null
pm image inspect "$image" > "$work/inspect.json"
pm export --output "$work/rootfs.tar" "$container"
# The sizes BENCHMARKS.md reports: podman's, the files themselves, and the layer gzipped as a
# push sends it (approximately: podman export's tar at gzip's default level).
files=$(find "$root" "$context/home" -type f -printf '%s\n' | awk '{n += $1} END {print n}')
gzipped=$(gzip -c "$work/rootfs.tar" | wc -c)
echo "image size: $size bytes (podman image inspect .Size); files $files bytes (robotsd" \
  "$(stat -c %s "$root/robotsd"), $count shared objects from ldd $lib_bytes, CA bundle" \
  "$(stat -c %s "$root/etc/ssl/certs/ca-certificates.crt")); $gzipped bytes gzipped"
# The docs' figures for these (benches/figures.toml) must be within their tolerance.
mb() { awk -v b="$1" 'BEGIN { printf "%.2f", b / 1e6 }'; }
python3 .ci/figures.py measured release_binary="$(mb "$(stat -c %s "$bin")")" \
  stripped_binary="$(mb "$(stat -c %s "$root/robotsd")")" image="$(mb "$size")" \
  image_gzipped="$(mb "$gzipped")"
python3 .ci/dockerfile_final_stage.py compare Dockerfile "$work/inspect.json" "$work/rootfs.tar" \
  --build-arg VERSION="$version" --build-arg REVISION="$revision"

if $build_only; then
  echo "built and tagged $image (not run: --build-only); push it with: podman push $image"
  exit 0
fi

step "run it: probes, a check against a loopback origin, metrics, SIGTERM"
pm rm "$container" >/dev/null
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# GET URL [expected status]: prints the Content-Type line, then the body.
get() { python3 - "$@" <<'PY'
import sys, urllib.error, urllib.request
url, expected = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 200
try:
    with urllib.request.urlopen(url, timeout=10) as response:
        status, headers, body = response.status, response.headers, response.read()
except urllib.error.HTTPError as error:
    status, headers, body = error.code, error.headers, error.read()
if status != expected:
    sys.exit(f"GET {url}: {status}, expected {expected}: {body[:300]!r}")
print(headers.get("content-type", ""))
print(body.decode())
PY
}
logs_and_die() {
  echo "-- container logs" >&2
  pm logs "$container" >&2 || true
  die "$*"
}

mkdir -p "$work/origin"
printf 'User-agent: *\nDisallow: /private\n' > "$work/origin/robots.txt"
origin_port=$(free_port)
python3 -m http.server "$origin_port" --bind 127.0.0.1 --directory "$work/origin" >/dev/null 2>&1 &
origin_pid=$!
port=$(free_port)
admin_port=$(free_port)
for _ in 1 2 3 4 5; do [ "$admin_port" != "$port" ] && break; admin_port=$(free_port); done
[ "$admin_port" != "$port" ] || die "no second free port on 127.0.0.1"

# The kubelet's view of the chart's securityContext: the image's own USER, a read-only root
# with nothing writable mounted on it (--read-only-tmpfs=false: podman would add /tmp, /run),
# no capabilities, no privilege escalation. The ulimits are set because the defaults podman
# asks for exceed this machine's hard limits, which runc then fails to apply.
pm run --detach --name "$container" --pull=never --network host \
  --read-only --read-only-tmpfs=false --cap-drop all --security-opt no-new-privileges \
  --ulimit nofile=4096:4096 --ulimit nproc=4096:4096 \
  -e ROBOTSD_LISTEN="127.0.0.1:$port" -e ROBOTSD_ADMIN_LISTEN="127.0.0.1:$admin_port" \
  -e ROBOTSD_ALLOW_PRIVATE_NETWORKS=true -e ROBOTSD_LOG_FORMAT=json "$image" >/dev/null

ready=false
for _ in $(seq 1 100); do
  [ "$(pm inspect --format '{{.State.Running}}' "$container")" = true ] \
    || logs_and_die "the container exited before answering /livez"
  if get "http://127.0.0.1:$admin_port/livez" >/dev/null 2>&1; then ready=true; break; fi
  sleep 0.1
done
$ready || logs_and_die "no 200 from /livez on 127.0.0.1:$admin_port within 10 s"
get "http://127.0.0.1:$admin_port/readyz" >/dev/null || logs_and_die "/readyz is not 200"
echo "/livez and /readyz: 200"

pid=$(pm inspect --format '{{.State.Pid}}' "$container")
ids=$(awk '/^(Uid|Gid|CapEff|NoNewPrivs):/ {$1 = $1; print}' "/proc/$pid/status")
expected='Uid: 65532 65532 65532 65532
Gid: 65532 65532 65532 65532
CapEff: 0000000000000000
NoNewPrivs: 1'
[ "$ids" = "$expected" ] \
  || logs_and_die "robotsd (pid $pid) should run as 65532:65532 without capabilities: $ids"
echo "runs as uid/gid 65532, no capabilities, no new privileges ($(tr '\n' ' ' <<<"$ids"))"
# Field 5 of mountinfo is the mount point, field 6 its per-mount options.
root_options=$(awk '$5 == "/" {print $6}' "/proc/$pid/mountinfo")
case ",$root_options," in
  *,ro,*) echo "root filesystem mounted $root_options" ;;
  *) logs_and_die "the root filesystem is not read-only: mount options '$root_options'" ;;
esac

origin=http%3A%2F%2F127.0.0.1%3A$origin_port
answer=$(get "http://127.0.0.1:$port/v1/check?url=$origin%2Fprivate%2Fx&ua=Googlebot") \
  || logs_and_die "/v1/check failed"
echo "$answer"
grep -q '"allowed":false' <<<"$answer" || logs_and_die "expected allowed:false for /private/x"
grep -q '"reason":"matched_rule"' <<<"$answer" || logs_and_die "expected reason matched_rule"

metrics=$(get "http://127.0.0.1:$admin_port/metrics") || logs_and_die "/metrics failed"
head -n 1 <<<"$metrics" | grep -q '^text/plain' \
  || logs_and_die "/metrics is not Prometheus text: $(head -n 1 <<<"$metrics")"
for series in 'robotsd_checks_total{reason="matched_rule",verdict="disallow"} 1' \
              'robotsd_robots_fetches_total{outcome="parsed"} 1'; do
  grep -qF "$series" <<<"$metrics" || logs_and_die "/metrics lacks: $series"
done
echo "/metrics: Prometheus text, the check and the fetch counted"

# The grace robotsd drains within (--shutdown-grace, 25 s by default) and a margin.
term_started=$SECONDS
pm kill --signal TERM "$container" >/dev/null
status=$(timeout 30 podman wait "$container") \
  || logs_and_die "robotsd did not exit within 30 s of SIGTERM"
[ "$status" = 0 ] || logs_and_die "robotsd exited with $status after SIGTERM, expected 0"
echo "SIGTERM: exited 0 after $((SECONDS - term_started)) s"
echo "image checks passed in $((SECONDS - started)) s; image size $size bytes"
