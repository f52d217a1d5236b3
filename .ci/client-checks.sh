#!/usr/bin/env bash
# The client libraries under clients/, against the real robotsd release binary (ROBOTSD_BIN, or
# built here) and loopback sites their tests start. Installs the toolchains it needs itself:
# Debian's golang-go (the standard library only: no Go module is downloaded).
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

bin=${ROBOTSD_BIN:-}
if [ -z "$bin" ]; then
  cargo build --release --locked --quiet --bin robotsd
  bin="$PWD/target/release/robotsd"
fi

step "go: Debian's golang-go"
if ! command -v go >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends golang-go
fi
go version

step "go client (clients/go): gofmt, vet, tests against robotsd"
cd clients/go
unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then
  echo "gofmt would change: $unformatted" >&2
  exit 1
fi
# Nothing may come from the network: the module has no dependencies to download.
export GOPROXY=off
go vet ./...
ROBOTSD_BIN="$bin" go test -count=1 ./...
