#!/usr/bin/env bash
# The tester page in a real headless browser: Debian's Chromium, driven by Playwright for Python
# (tests/browser/tester.py). Installs what it needs itself: the chromium package when it is
# missing, and the driver from PyPI, pinned by hash (.ci/browser-requirements.txt), into a
# virtualenv cached under ${XDG_CACHE_HOME:-~/.cache}/robotsd-browser-checks. A missing browser
# fails the run; it is never skipped.
# ROBOTSD_BIN may name a robotsd binary to use instead of `cargo build --release --locked`.
# Screenshots go to a temporary directory (SCREENSHOTS=docs/screenshots refreshes the committed
# ones).
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

step "browser: Debian's chromium"
if ! command -v chromium >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends chromium
fi
chromium --version

step "driver: Playwright for Python (PyPI, pinned by hash)"
requirements=.ci/browser-requirements.txt
cache=${XDG_CACHE_HOME:-$HOME/.cache}/robotsd-browser-checks
venv="$cache/venv-$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')-$(sha256sum "$requirements" | cut -c1-16)"
if [ ! -f "$venv/.installed" ]; then
  rm -rf "$venv"
  mkdir -p "$cache"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-input \
    --require-hashes --only-binary :all: -r "$requirements"
  touch "$venv/.installed"
fi

bin=${ROBOTSD_BIN:-}
if [ -z "$bin" ]; then
  cargo build --release --locked --quiet --bin robotsd
  bin=target/release/robotsd
fi

shots=${SCREENSHOTS:-$(mktemp -d)}
step "tester page: live check, edit, shared link, hostile text, CSP, accessibility, screenshots"
CHROMIUM=$(command -v chromium) "$venv/bin/python" tests/browser/tester.py "$bin" "$shots"
