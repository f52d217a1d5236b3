#!/usr/bin/env bash
# Web Bot Auth verified independently (issue 59): the release robotsd signs, and a loopback site
# verifies with PyPI's http-message-signatures (tests/wba/verifying_site.py), which shares no
# code with robotsd: signatures for GET and HEAD, each tampered part and an expired signature
# refused, the directory bound to its host, and a key rotated as docs/bot-auth.md says with no
# request refused (tests/wba/check.py). The verifier is pinned by hash
# (.ci/wba-requirements.txt) in a virtualenv cached under
# ${XDG_CACHE_HOME:-~/.cache}/robotsd-wba-checks. Loopback only; about 40 s.
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=.ci/pinned-venv.sh
source .ci/pinned-venv.sh
venv=$(pinned_venv .ci/wba-requirements.txt "${XDG_CACHE_HOME:-$HOME/.cache}/robotsd-wba-checks")

# shellcheck source=.ci/robotsd-bin.sh
source .ci/robotsd-bin.sh
bin=$(robotsd_bin)

PYTHONDONTWRITEBYTECODE=1 "$venv/bin/python" tests/wba/check.py "$bin"
