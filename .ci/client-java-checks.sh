#!/usr/bin/env bash
# The Java client (clients/java) against the real robotsd release binary (ROBOTSD_BIN, or built
# here) and the loopback sites its tests start. Installs what it needs itself: Debian's JDK and
# Jackson (default-jdk-headless, libjackson2-databind-java); nothing comes from Maven Central.
# clients/java/build.sh compiles with javac -Werror -Xlint:all (and doclint on the public
# surface), builds the jar, and runs the tests, which close with "N passed, N failed"; it
# leaves build/ for the fleet test (clients/e2e/three_crawlers.py).
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

step "java: Debian's default-jdk-headless and libjackson2-databind-java"
if ! command -v javac >/dev/null 2>&1 || [ ! -f /usr/share/java/jackson-databind.jar ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends default-jdk-headless libjackson2-databind-java
fi
javac -version
ls /usr/share/java/jackson-databind.jar /usr/share/java/jackson-core.jar /usr/share/java/jackson-annotations.jar

step "java client (clients/java): javac -Werror -Xlint:all, the jar, tests against robotsd"
ROBOTSD_BIN="$bin" bash clients/java/build.sh test
