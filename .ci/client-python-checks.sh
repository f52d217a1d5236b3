#!/usr/bin/env bash
# The Python client and Scrapy middleware (clients/python), against the real robotsd release
# binary (ROBOTSD_BIN, or built here) and the loopback sites its tests start. Everything comes
# from PyPI pinned and hash-checked (clients/python/requirements-dev.txt, wheels only), into a
# virtualenv cached under ${XDG_CACHE_HOME:-~/.cache}/robotsd-client-checks, keyed on that file.
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

cache="${XDG_CACHE_HOME:-$HOME/.cache}/robotsd-client-checks"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Nothing written into the checkout: no __pycache__, no tool caches.
export PYTHONDONTWRITEBYTECODE=1 MYPY_CACHE_DIR="$cache/mypy"

step "python: pinned tools (clients/python/requirements-dev.txt)"
# shellcheck source=pinned-venv.sh
source .ci/pinned-venv.sh
venv=$(pinned_venv clients/python/requirements-dev.txt "$cache")
"$venv/bin/python" --version

step "python client: build the wheel and install it (no dependencies: they are the pinned ones)"
"$venv/bin/python" -m pip wheel --quiet --disable-pip-version-check --no-deps \
  --no-build-isolation --wheel-dir "$work/dist" ./clients/python
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps \
  --force-reinstall "$work"/dist/robotsd_client-*.whl

step "python client: models generated from openapi/openapi.json (drift check)"
PATH="$venv/bin:$PATH" clients/python/generate-models.sh "$work/_models.py"
if ! diff -u clients/python/src/robotsd/_models.py "$work/_models.py"; then
  echo "clients/python/src/robotsd/_models.py is not what openapi/openapi.json generates:" \
    "run clients/python/generate-models.sh (see clients/python/README.md)" >&2
  exit 1
fi

step "python client: mypy --strict"
(cd clients/python && "$venv/bin/mypy" src/robotsd examples tests)

step "python client: tests against robotsd"
(cd clients/python && ROBOTSD_BIN="$bin" "$venv/bin/python" -m pytest -p no:cacheprovider)
