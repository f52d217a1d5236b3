#!/usr/bin/env bash
# Memory charged = memory held (issue 58): for each kind of entry robotsd keeps (copies, backoffs,
# names that do not exist, DNS answers, pacing lanes), a fresh release robotsd filled with
# 150,000 of them (400,000 of the small kinds, 250,000 lanes), its resident memory's growth within
# 15 % of what it charges for them
# (tests/service/memory_charge.rs). The tests are `#[ignore]`d in the rest of the suite: they
# measure the binary operators run (ROBOTSD_BIN, else the release build made here), one at a
# time. Loopback only: every origin is a `.test` name the test's own name server answers with
# 127.0.0.1. About ten minutes on two cores, 1.5 GB of memory at most.
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=.ci/robotsd-bin.sh
source .ci/robotsd-bin.sh
bin=$(robotsd_bin)
ROBOTSD_TEST_BIN="$bin" cargo test --locked --test service memory_charge -- \
  --ignored --test-threads=1 --nocapture
