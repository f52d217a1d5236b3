"""README.md's API and pacing examples, run as written and compared with the outputs it prints (issue 60).

The README's "The API" section says how its outputs were made (and "Politeness for the whole
fleet" goes on from there): robotsd started with the command
its first `console` block shows, and a local origin serving the robots.txt it prints on port
18081 (`python3 -m http.server`, as the README says). This script does exactly that, then runs
every `$ ` command of the two sections' `console` blocks in order, in bash, and compares what each
prints with the lines under it:

- JSON with JSON, equal after masking times (RFC 3339 instants, which move from run to run);
- `curl -i`: the status line, each header line shown (others may come too), then the body;
- any other output line for line.

A command shown without output must print nothing, and every command must exit 0. The run
starts `cargo run --release -- ARGS` as the binary given with ARGS (CI builds it once), and
fails when port 8080 or 18081 is taken rather than comparing against something else.

Usage: python3 .ci/readme-examples.py ROBOTSD_BINARY [README.md]. Loopback only: the examples
name no public host, and this script refuses to run one that does.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

INSTANT = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")
# The sections whose examples run, in this order, against one robotsd and one origin.
SECTIONS = ("## The API", "## Politeness for the whole fleet")
ORIGIN_PORT = 18081
API_PORT = 8080


def section(readme: str, title: str) -> str:
    start = readme.index(title)
    end = readme.find("\n## ", start + len(title))
    return readme[start:end if end >= 0 else len(readme)]


def blocks(text: str, language: str) -> list[str]:
    return re.findall(r"^```" + language + r"\n(.*?)^```$", text, flags=re.S | re.M)


def origin_robots(text: str) -> str:
    """The robots.txt the outputs were made with: the first plain block after the sentence
    naming the origin."""
    at = text.index(f"port {ORIGIN_PORT}")
    match = re.compile(r"^```\n(.*?)^```$", re.S | re.M).search(text, at)
    assert match, "no robots.txt block after the origin's port"
    return match.group(1)


def commands(block: str) -> list[tuple[str, list[str]]]:
    """The `$ ` commands of a console block, continuation lines joined, each with the lines it
    is shown to print."""
    out: list[tuple[str, list[str]]] = []
    lines = block.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.startswith("$ "):
            raise AssertionError(f"output before any command: {line!r}")
        command = line[2:]
        while command.endswith("\\"):
            i += 1
            command = command + "\n" + lines[i]
        i += 1
        shown = []
        while i < len(lines) and not lines[i].startswith("$ "):
            shown.append(lines[i])
            i += 1
        out.append((command, shown))
    return out


def masked(value):
    if isinstance(value, dict):
        return {k: masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [masked(v) for v in value]
    if isinstance(value, str) and INSTANT.match(value):
        return "<instant>"
    return value


def same_json(shown: str, got: str) -> bool:
    try:
        return masked(json.loads(shown)) == masked(json.loads(got))
    except json.JSONDecodeError:
        return False


def compare(command: str, shown: list[str], got: str) -> str | None:
    """Why `got` is not what the README shows, or None."""
    got_lines = got.rstrip("\n").split("\n") if got.strip() else []
    if not shown:
        return None if not got_lines else "the README shows no output"
    if " -i" in command:
        head, _, body = got.replace("\r\n", "\n").partition("\n\n")
        head_lines = head.split("\n")
        shown_head = shown[: shown.index("")] if "" in shown else shown
        shown_body = "\n".join(shown[len(shown_head) + 1:])
        if head_lines[0] != shown_head[0]:
            return f"status line {head_lines[0]!r}"
        present = {line.lower() for line in head_lines[1:]}
        for line in shown_head[1:]:
            if line.lower() not in present:
                return f"no header line {line!r}"
        if shown_body and not same_json(shown_body, body.strip()):
            return "another body"
        return None
    if len(shown) == 1 and shown[0].startswith("{"):
        return None if len(got_lines) == 1 and same_json(shown[0], got_lines[0]) else "other JSON"
    return None if got_lines == shown else "other lines"


def wait_for(url: str, process: subprocess.Popen) -> None:
    for _ in range(600):
        if process.poll() is not None:
            raise AssertionError(f"{process.args} exited with {process.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=1):
                return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"{url} did not answer")


def port_free(port: int) -> bool:
    with socket.socket() as s:
        # As robotsd and http.server bind: a connection of a previous run in TIME_WAIT is fine.
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def main() -> int:
    binary = os.path.abspath(sys.argv[1])
    readme = open(sys.argv[2] if len(sys.argv) > 2 else "README.md").read()
    api = section(readme, SECTIONS[0])
    consoles = [block for title in SECTIONS for block in blocks(section(readme, title), "console")]
    assert consoles, "no console block in the API section"
    for port in (API_PORT, ORIGIN_PORT):
        assert port_free(port), f"port {port} is taken: the README's examples need it"
    steps = [step for block in consoles for step in commands(block)]
    for command, _ in steps:
        hosts = re.findall(r"https?://([^/:'\"\s]+)", command)
        public = [h for h in hosts if h not in ("localhost", "127.0.0.1")]
        assert not public, f"an example fetches a public host ({public}): {command}"

    # The first command starts robotsd, as the README says to.
    start, shown = steps[0]
    assert start.startswith("cargo run --release"), f"the first command is not robotsd's: {start}"
    words = shlex.split(start)
    args = words[words.index("--") + 1:] if "--" in words else []
    processes = []
    failures = []
    with tempfile.TemporaryDirectory() as origin:
        with open(os.path.join(origin, "robots.txt"), "w") as out:
            out.write(origin_robots(api))
        try:
            processes.append(subprocess.Popen(
                [sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(ORIGIN_PORT),
                 "--directory", origin], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            wait_for(f"http://127.0.0.1:{ORIGIN_PORT}/robots.txt", processes[-1])
            processes.append(subprocess.Popen(
                [binary, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            wait_for(f"http://127.0.0.1:{API_PORT}/readyz", processes[-1])
            for command, shown in steps[1:]:
                done = subprocess.run(["bash", "-c", "set -o pipefail\n" + command],
                                      capture_output=True, text=True, timeout=60)
                why = (f"exit {done.returncode}: {done.stderr.strip()}" if done.returncode
                       else compare(command, shown, done.stdout))
                first = command.splitlines()[0]
                if why:
                    failures.append(first)
                    print(f"FAIL {first}\n  {why}\n  shown: {shown}\n  got:   {done.stdout!r}")
                else:
                    print(f"ok   {first}")
        finally:
            for process in processes:
                process.terminate()
                process.wait(timeout=10)
    if failures:
        print(f"{len(failures)} of {len(steps) - 1} README examples differ from what they print")
        return 1
    print(f"all {len(steps) - 1} README examples print what the README shows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
