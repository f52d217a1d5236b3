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
# shellcheck source=.ci/pinned-venv.sh
source .ci/pinned-venv.sh
venv=$(pinned_venv .ci/browser-requirements.txt "${XDG_CACHE_HOME:-$HOME/.cache}/robotsd-browser-checks")

# shellcheck source=.ci/robotsd-bin.sh
source .ci/robotsd-bin.sh
bin=$(robotsd_bin)

shots=${SCREENSHOTS:-$(mktemp -d)}
step "tester page: live check, edit, shared link, hostile text, CSP, accessibility, screenshots"
CHROMIUM=$(command -v chromium) "$venv/bin/python" tests/browser/tester.py "$bin" "$shots"
