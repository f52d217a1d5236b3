#!/usr/bin/env bash
# Instruction counts (callgrind), which repeat where wall-clock figures on a shared VM do not:
#  1. per cached GET /v1/check: the release server (default settings) under callgrind, all threads, the difference
#     between 2,200 and 200 keep-alive requests divided by 2,000 (start-up and shutdown cancel
#     out): a disallowed URL, an allowed one, and an allowed one on a file with AI usage
#     preferences; the same for the minimal axum handler (examples/baseline_server.rs) for the
#     ratio;
#  2. one pass of RobotsTxt::parse over the corpus (crates/robotsd-engine/examples/parse_corpus);
#  3. 1,000 rounds of checks against the typical file (examples/check_workload typical 1000).
# Loopback only. Usage: bash benches/instructions.sh   (needs valgrind and python3)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "needs valgrind (Debian: apt-get install valgrind)" >&2; exit 2; }

# shellcheck source=benches/common.sh
source benches/common.sh

cargo build --release --quiet --bin robotsd --example baseline_server
cargo build --release --quiet -p robotsd-engine --example parse_corpus --example check_workload
bin=target/release/robotsd
baseline=target/release/examples/baseline_server

start_origin

check="/v1/check?url=http%3A%2F%2F127.0.0.1%3A$origin%2Fprivate%2Freport&ua=SomeBot"

per_request cached_check "$check" /readyz \
  "$bin" --allow-private-networks --shutdown-grace 1s --listen
# AI usage preferences (docs/usage.md): an allowed URL on the same file, then on the same file
# with a Content-Usage and a Content-Signal line, whose answer carries them.
allowed="/v1/check?url=http%3A%2F%2F127.0.0.1%3A$origin%2Farticles%2F1&ua=SomeBot"
per_request cached_check_allowed "$allowed" /readyz \
  "$bin" --allow-private-networks --shutdown-grace 1s --listen
start_origin 'User-agent: *\nDisallow: /private\nContent-Usage: train-ai=n\nContent-Signal: search=yes, ai-train=no\n'
with_usage="/v1/check?url=http%3A%2F%2F127.0.0.1%3A$origin%2Farticles%2F1&ua=SomeBot"
per_request cached_check_with_usage "$with_usage" /readyz \
  "$bin" --allow-private-networks --shutdown-grace 1s --listen
per_request minimal_handler / / "$baseline"

parse=$(cd "$work" && valgrind --tool=callgrind --callgrind-out-file=parse.out \
  "$OLDPWD/target/release/examples/parse_corpus" 1 >/dev/null 2>&1 && awk '/^(summary|totals):/ { print $2; exit }' parse.out)
echo "corpus_parse_instructions=$parse"
checks=$(cd "$work" && valgrind --tool=callgrind --callgrind-out-file=check.out \
  "$OLDPWD/target/release/examples/check_workload" typical 1000 >/dev/null 2>&1 && awk '/^(summary|totals):/ { print $2; exit }' check.out)
echo "check_workload_typical_1000_instructions=$checks"
