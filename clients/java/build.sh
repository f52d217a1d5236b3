#!/usr/bin/env bash
# Builds the Java client offline with the JDK's javac and jar against Debian's Jackson jars
# (default-jdk-headless, libjackson2-databind-java): no build tool, nothing downloaded.
#   bash build.sh          the library: build/robotsd-client-0.2.0.jar and its pom, and the
#                          example crawler's classes (build/examples)
#   bash build.sh test     that, then the tests against ROBOTSD_BIN (a robotsd binary)
#   bash build.sh install  that, then the jar and its pom into the local Maven repository
#                          (MAVEN_REPO_LOCAL, by default ~/.m2/repository) as
#                          io.github.robotsd:robotsd-client:0.2.0: what `mvn install:install-file`
#                          does, by copying, so that it works offline without Maven's plugins
# JACKSON_JARS overrides where the three Jackson jars are (a colon-separated class path).
set -euo pipefail
cd "$(dirname "$0")"

version=0.2.0
jackson=${JACKSON_JARS:-/usr/share/java/jackson-databind.jar:/usr/share/java/jackson-core.jar:/usr/share/java/jackson-annotations.jar}
javac_flags=(--release 17 -Werror -Xlint:all -Xdoclint:all/protected -encoding UTF-8)

rm -rf build/classes build/examples build/test-classes
mkdir -p build/classes build/examples build/test-classes
mapfile -t sources < <(find src/main/java -name '*.java' | sort)
javac "${javac_flags[@]}" -cp "$jackson" -d build/classes "${sources[@]}"
jar --create --file "build/robotsd-client-$version.jar" -C build/classes .
sed "s/@VERSION@/$version/" pom.xml.in >"build/robotsd-client-$version.pom"
javac "${javac_flags[@]}" -cp "build/classes:$jackson" -d build/examples examples/Crawl.java
echo "built build/robotsd-client-$version.jar"

if [ "${1:-}" = test ]; then
  # The README's crawler-commons adapter, as written, against a stand-in for BaseRobotRules.
  rm -rf build/adapter build/adapter-src
  mkdir -p build/adapter build/adapter-src
  awk '/<!-- compiled:/ { marked = 1; next }
       marked && /^```java$/ { inside = 1; next }
       inside && /^```$/ { exit }
       inside { print }' README.md >build/adapter-src/RobotsdRobotRules.java
  grep -q 'class RobotsdRobotRules' build/adapter-src/RobotsdRobotRules.java ||
    { echo "README.md: no compiled adapter block" >&2; exit 1; }
  javac --release 17 -Werror -Xlint:all -encoding UTF-8 -cp "build/classes:$jackson" -d build/adapter \
    src/test/standin/crawlercommons/robots/BaseRobotRules.java build/adapter-src/RobotsdRobotRules.java
  # -Xdoclint is for the library's public surface; the tests are not documented API.
  mapfile -t tests < <(find src/test/java -name '*.java' | sort)
  javac --release 17 -Werror -Xlint:all -encoding UTF-8 -cp "build/classes:build/examples:build/adapter:$jackson" \
    -d build/test-classes "${tests[@]}"
  java -cp "build/classes:build/examples:build/adapter:build/test-classes:$jackson" io.github.robotsd.client.TestRunner \
    io.github.robotsd.client.OpenApiTest \
    io.github.robotsd.client.ClientTest \
    io.github.robotsd.client.RetryTest \
    io.github.robotsd.client.RulesTest \
    io.github.robotsd.client.PageTest \
    io.github.robotsd.client.FetcherTest \
    io.github.robotsd.client.SignTest \
    io.github.robotsd.client.CrawlExampleTest \
    io.github.robotsd.client.AdapterTest
fi

if [ "${1:-}" = install ]; then
  repo=${MAVEN_REPO_LOCAL:-$HOME/.m2/repository}/io/github/robotsd/robotsd-client/$version
  mkdir -p "$repo"
  cp "build/robotsd-client-$version.jar" "build/robotsd-client-$version.pom" "$repo/"
  echo "installed io.github.robotsd:robotsd-client:$version in $repo"
fi
