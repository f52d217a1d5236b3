#!/usr/bin/env bash
# The TypeScript client (clients/typescript, @robotsd/client) against the real robotsd release
# binary (ROBOTSD_BIN, or built here) and the loopback sites its tests start, crawled with
# Crawlee's CheerioCrawler and PlaywrightCrawler. Installs what it needs itself: the npm packages
# from the committed package-lock.json (through npm's cache), and Debian's chromium for Playwright
# (Playwright's own browser download is impossible here, and skipped).
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

# shellcheck source=.ci/robotsd-bin.sh
source .ci/robotsd-bin.sh
bin=$(robotsd_bin)
# The clients' signing tests verify with tests/wba/verifying_site.py, run with this Python.
# shellcheck source=.ci/wba-python.sh
source .ci/wba-python.sh
ROBOTSD_WBA_PYTHON=$(wba_python)
export ROBOTSD_WBA_PYTHON

step "chromium: Debian's, for PlaywrightCrawler"
chromium=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$chromium" ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends chromium
fi
"$chromium" --version

step "typescript client (clients/typescript): npm ci from package-lock.json"
cd clients/typescript
echo "node $(node --version), npm $(npm --version)"
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
# npm's cache (~/.npm) keeps the tarballs between runs; the lock file pins them, with hashes.
npm ci --no-audit --no-fund --prefer-offline

step "build (tsc), and withRobotsd and the hook typed against Crawlee's own crawler types"
npm run build
npm run typecheck

step "drift check: src/openapi.ts regenerated from openapi/openapi.json"
generated=$(mktemp -d)
trap 'rm -rf "$generated"' EXIT
npx --no-install openapi-typescript ../../openapi/openapi.json --output "$generated/openapi.ts"
if ! diff -u src/openapi.ts "$generated/openapi.ts"; then
  echo "src/openapi.ts differs from what openapi/openapi.json generates: run 'npm run generate' in clients/typescript and commit it" >&2
  exit 1
fi

step "tests (node --test) against robotsd, CheerioCrawler and PlaywrightCrawler"
ROBOTSD_BIN="$bin" CHROMIUM="$chromium" npm test
