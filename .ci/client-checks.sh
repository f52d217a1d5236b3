#!/usr/bin/env bash
# The client libraries under clients/, against the real robotsd release binary (ROBOTSD_BIN, or
# built here) and loopback sites their tests start: the Go client (Debian's golang-go, the
# standard library only: no Go module is downloaded), the Python client and Scrapy middleware
# (.ci/client-python-checks.sh), the TypeScript client and Crawlee integration
# (.ci/client-typescript-checks.sh), the Java client and its example crawler
# (.ci/client-java-checks.sh), then the three frameworks and the Java crawler crawling one site
# through one robotsd together, then a Crawl-delay: 1 site through two replicas sharing a
# redis-server (clients/e2e/three_crawlers.py), and last the install commands of the clients'
# READMEs, as written (.ci/client-install-checks.sh). Installs the toolchains and servers it
# needs itself.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

# shellcheck source=.ci/robotsd-bin.sh
source .ci/robotsd-bin.sh
bin=$(robotsd_bin)

step "redis-server: Debian's, for the end-to-end fleet crawl"
if ! command -v redis-server >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends redis-server
fi
redis-server --version

step "the Web Bot Auth verifier: a Python with PyPI's http-message-signatures (.ci/wba-requirements.txt)"
# Each client's signing test runs tests/wba/verifying_site.py with it: a loopback site that
# verifies every signature it receives, with code robotsd does not share, and refuses the rest.
# shellcheck source=.ci/wba-python.sh
source .ci/wba-python.sh
ROBOTSD_WBA_PYTHON=$(wba_python)
export ROBOTSD_WBA_PYTHON

step "go: Debian's golang-go"
if ! command -v go >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends golang-go
fi
go version

step "go client (clients/go): gofmt, vet, tests against robotsd"
# Nothing may come from the network: the module has no dependencies to download.
export GOPROXY=off
(
  cd clients/go
  unformatted=$(gofmt -l .)
  if [ -n "$unformatted" ]; then
    echo "gofmt would change: $unformatted" >&2
    exit 1
  fi
  go vet ./...
  ROBOTSD_BIN="$bin" go test -count=1 ./...
)

ROBOTSD_BIN="$bin" bash .ci/client-python-checks.sh
ROBOTSD_BIN="$bin" bash .ci/client-typescript-checks.sh
ROBOTSD_BIN="$bin" bash .ci/client-java-checks.sh

step "four crawlers, one robotsd: Scrapy, Crawlee, Go and Java crawl one site at once"
# The Python checks left the client installed in their pinned virtualenv, the TypeScript
# checks built clients/typescript, and the Java checks clients/java.
# shellcheck source=.ci/pinned-venv.sh
source .ci/pinned-venv.sh
venv=$(pinned_venv clients/python/requirements-dev.txt "${XDG_CACHE_HOME:-$HOME/.cache}/robotsd-client-checks")
PYTHONDONTWRITEBYTECODE=1 python3 clients/e2e/three_crawlers.py --robotsd-bin "$bin" --python "$venv/bin/python"

step "the clients' install commands, as their READMEs write them, in clean places"
bash .ci/client-install-checks.sh
