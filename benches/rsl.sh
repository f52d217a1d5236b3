#!/usr/bin/env bash
# RSL licenses (docs/usage.md, BENCHMARKS.md "RSL licenses"): the instructions of a cached
# GET /v1/check of an allowed URL (callgrind, as benches/instructions.sh measures them)
#  1. with the defaults (no --rsl) on a robots.txt without License: line (the usual answer);
#  2. with --rsl on the same file: what turning the flag on costs a site that names no license;
#  3. with --rsl on a robots.txt naming a license document, whose terms every answer carries
#     (the document cached after the first check);
# then the memory a parsed license document holds (examples/rsl_memory.rs).
# Loopback only. Usage: bash benches/rsl.sh   (needs valgrind and python3)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "needs valgrind (Debian: apt-get install valgrind)" >&2; exit 2; }

# shellcheck source=benches/common.sh
source benches/common.sh

cargo build --release --quiet --bin robotsd --example rsl_memory
bin=target/release/robotsd
serve=("$bin" --allow-private-networks --shutdown-grace 1s --listen)

start_origin
plain="/v1/check?url=http%3A%2F%2F127.0.0.1%3A$origin%2Farticles%2F1&ua=SomeBot"
per_request cached_check_allowed "$plain" /readyz "${serve[@]}"
per_request cached_check_allowed_rsl_on "$plain" /readyz "$bin" --rsl --allow-private-networks --shutdown-grace 1s --listen

start_origin
printf 'User-agent: *\nDisallow: /private\nLicense: http://127.0.0.1:%s/license.xml\n' "$origin" > "$origin_dir/robots.txt"
cat > "$origin_dir/license.xml" <<'XML'
<rsl xmlns="https://rslstandard.org/rsl">
  <content url="/*"><license><prohibits type="usage">all</prohibits></license></content>
  <content url="/articles/*">
    <license>
      <permits type="usage">ai-input search</permits>
      <prohibits type="usage">ai-train</prohibits>
      <payment type="crawl"><amount currency="USD">0.015</amount></payment>
    </license>
  </content>
</rsl>
XML
licensed="/v1/check?url=http%3A%2F%2F127.0.0.1%3A$origin%2Farticles%2F1&ua=SomeBot"
wait_ready "http://127.0.0.1:$origin/license.xml"
per_request cached_check_with_rsl_terms "$licensed" /readyz "$bin" --rsl --allow-private-networks --shutdown-grace 1s --listen

target/release/examples/rsl_memory   # resident memory and what the cache charges

# The heap each document holds as a heap profiler counts it: massif's peak over 10,000 copies
# held at once, per copy, the bytes asked for (useful) and what massif adds for the allocator.
for doc in one three large; do
  out="$work/massif.$doc"
  valgrind --tool=massif --massif-out-file="$out" target/release/examples/rsl_memory "$doc" >/dev/null 2>&1
  python3 - "$out" "$doc" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
useful, extra = max(((int(a), int(b)) for a, b in re.findall(r"mem_heap_B=(\d+)\nmem_heap_extra_B=(\d+)", text)), key=sum)
print(f"rsl_document_{sys.argv[2]}_heap_bytes={useful // 10000} (+{extra // 10000} allocator, as massif counts it)")
PY
done
