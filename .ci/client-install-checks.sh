#!/usr/bin/env bash
# The clients' install commands, run as their READMEs write them, each in a clean place: the
# block after each README's "<!-- install: ... -->" marker, line by line (a trailing `\` joins
# lines; comments are dropped), with ROBOTSD_CHECKOUT set to a fresh clone of this repository
# (committed files only) and, for Python, the clone as the working directory. Then each client
# is imported the way its README says, from outside the clone:
#   - Python: a new virtualenv; `import robotsd` and `robotsd.scrapy`;
#   - TypeScript: a new npm project; `import("@robotsd/client")` and "@robotsd/client/crawlee";
#   - Go: a new module, offline (GOPROXY=off); a program importing the client builds and runs;
#   - Java: offline, into a new local Maven repository; a program compiled against the jar
#     installed there (and Debian's Jackson, which its pom names) runs.
# Needs python3 (venv), npm, go, a JDK, Debian's Jackson jars and git (.ci/client-java-checks.sh
# installs the last two); the packages come from PyPI and npm's registry.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git clone --quiet "$PWD" "$work/robotsd"
export ROBOTSD_CHECKOUT="$work/robotsd"

# The commands of README $1's install block, one per line.
install_commands() {
  python3 - "$1" <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
found = re.search(r"<!-- install:[^>]*-->\s*```sh\n(.*?)```", text, re.S)
if not found:
    sys.exit(f"{sys.argv[1]}: no install block after an <!-- install: --> marker")
for line in found.group(1).replace("\\\n", " ").splitlines():
    line = line.split(" #", 1)[0].strip()
    if line and not line.startswith("#"):
        print(line)
PY
}

# Runs README $1's install commands in the current directory, echoing each.
run_install() {
  local readme=$1
  local commands
  commands=$(install_commands "$ROBOTSD_CHECKOUT/$readme")
  while IFS= read -r command; do
    echo "\$ $command"
    bash -euo pipefail -c "$command"
  done <<<"$commands"
}

step "python: clients/python/README.md's install, in a clean virtualenv"
python3 -m venv "$work/venv"
(
  # shellcheck disable=SC1091
  source "$work/venv/bin/activate"
  cd "$ROBOTSD_CHECKOUT"
  run_install clients/python/README.md >"$work/pip.log" 2>&1 || { cat "$work/pip.log"; exit 1; }
  grep '^\$ ' "$work/pip.log"
  cd "$work"
  python -c 'import robotsd, robotsd.scrapy; print("ok   import robotsd, robotsd.scrapy:", robotsd.Client.__name__)'
)

step "typescript: clients/typescript/README.md's install, in a new npm project"
mkdir "$work/node-project"
(
  cd "$work/node-project"
  npm init -y >/dev/null
  run_install clients/typescript/README.md >"$work/npm.log" 2>&1 || { cat "$work/npm.log"; exit 1; }
  grep '^\$ ' "$work/npm.log"
  node --input-type=module -e '
    const client = await import("@robotsd/client");
    const crawlee = await import("@robotsd/client/crawlee");
    if (typeof client.RobotsdClient !== "function" || typeof crawlee.withRobotsd !== "function") {
      throw new Error("the package does not export RobotsdClient and withRobotsd");
    }
    console.log("ok   import @robotsd/client, @robotsd/client/crawlee");'
)

step "go: clients/go/README.md's install, in a new module, offline"
mkdir "$work/go-module"
(
  cd "$work/go-module"
  export GOPROXY=off GOFLAGS=-mod=mod GOCACHE="$work/go-cache" GOPATH="$work/go-path"
  go mod init example.com/crawler >/dev/null 2>&1
  run_install clients/go/README.md
  cat >main.go <<'GO'
package main

import (
	"fmt"

	robotsd "github.com/robotsd/robotsd/clients/go"
)

func main() {
	fmt.Printf("ok   import robotsd: %T\n", robotsd.New("http://127.0.0.1:8080"))
}
GO
  go run .
)

step "java: clients/java/README.md's install, offline, in a new local Maven repository"
mkdir "$work/java-project"
(
  cd "$work/java-project"
  export MAVEN_REPO_LOCAL="$work/m2"
  run_install clients/java/README.md
  installed="$MAVEN_REPO_LOCAL/io/github/robotsd/robotsd-client/0.2.0"
  grep -q '<artifactId>jackson-databind</artifactId>' "$installed/robotsd-client-0.2.0.pom"
  jackson=/usr/share/java/jackson-databind.jar:/usr/share/java/jackson-core.jar:/usr/share/java/jackson-annotations.jar
  cat >Main.java <<'JAVA'
import io.github.robotsd.client.RobotsdClient;
import io.github.robotsd.client.RobotsdFetcher;

public class Main {
  public static void main(String[] args) {
    RobotsdClient client = RobotsdClient.create("http://127.0.0.1:8080");
    RobotsdFetcher fetcher = RobotsdFetcher.builder(client).build();
    System.out.println("ok   import io.github.robotsd.client: " + client.getClass().getSimpleName()
        + ", " + fetcher.getClass().getSimpleName());
  }
}
JAVA
  javac -Werror -cp "$installed/robotsd-client-0.2.0.jar:$jackson" Main.java
  java -cp ".:$installed/robotsd-client-0.2.0.jar:$jackson" Main
)

echo
echo "client install checks passed"
