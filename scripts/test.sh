#!/usr/bin/env bash
# README's test command: installs what the tests need when it is missing, then runs them.
#
#   bash scripts/test.sh [cargo test arguments…]
#
# The fleet tests start their own Redis servers (one server, a 3-master cluster, TLS-only ones)
# on loopback ports, and the TLS tests make their certificates with openssl: Debian's
# redis-server (with redis-cli) and openssl. When either is missing this installs them with
# apt-get (through sudo when not root), or Homebrew on macOS, and says so; then it runs
# `cargo test --locked` with any arguments given. `.ci/run` runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
for tool in redis-server redis-cli openssl; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "scripts/test.sh: ${missing[*]} missing: installing redis-server and openssl" >&2
  if command -v apt-get >/dev/null 2>&1; then
    sudo=()
    if [ "$(id -u)" != 0 ]; then
      command -v sudo >/dev/null 2>&1 || {
        echo "scripts/test.sh: not root and no sudo: install redis-server and openssl, then run again" >&2
        exit 1
      }
      sudo=(sudo)
    fi
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get update -qq
    "${sudo[@]}" apt-get install -y -qq --no-install-recommends redis-server openssl >/dev/null
  elif command -v brew >/dev/null 2>&1; then
    brew install redis openssl
  else
    echo "scripts/test.sh: install Redis (redis-server, redis-cli) and openssl, then run again" >&2
    exit 1
  fi
fi
redis-server --version
openssl version

exec cargo test --locked "$@"
