"""The examples of README.md and docs/, run as written and compared with the outputs they print
(issue 60).

README's "The API" section says how its outputs were made (and "Politeness for the whole fleet"
goes on from there): robotsd started with the command its first `console` block shows, and a
local origin serving the robots.txt it prints on port 18081 (`python3 -m http.server`, as the
README says). Each page of docs/ with a `console` block runs the same way, on its own: a fresh
robotsd and origin per page, in a fresh working directory, so that one page's examples never
depend on another's.

- robotsd is started by the page's first command that starts it (`cargo run --release -- ARGS`
  or `robotsd ARGS`, run as the binary given with ARGS), in the background; a page without one
  gets the README's, and says so.
- The origin serves the robots.txt the page prints after the words "a local origin on port
  18081"; a page that prints none gets the README's.
- Every other `$ ` command runs in bash, in order, and what it prints is compared with the lines
  under it:
  - JSON with JSON (one line or pretty-printed), equal after masking times (RFC 3339 instants);
  - `curl -i`: the status line, each header line shown (others may come too), then the body;
  - any other output line for line.

  In what is shown, `…` stands for anything: a value `"…"` for any value, a member named `"…"`
  (whatever its value says) for any other members, and `…` inside a string or a line for any text. A command shown without
  output must print nothing, and every command must exit 0.

The run fails when port 8080 or 18081 is taken rather than comparing against something else.

Usage: python3 .ci/doc-examples.py ROBOTSD_BINARY [FILE.md ...] (README.md and every page of
docs/ by default). Loopback only: a command naming a public host is refused, unless the host is
only a value robotsd is told (a key directory's URL, never fetched).
"""

from __future__ import annotations

import glob
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
# README's sections whose examples run, in this order, against one robotsd and one origin.
README_SECTIONS = ("## The API", "## Politeness for the whole fleet")
ORIGIN_PORT = 18081
ORIGIN_WORDS = f"a local origin on port {ORIGIN_PORT}"
API_PORT = 8080
ANY = "…"
# Hosts a command may name without robotsd or the command fetching them.
NAMED_ONLY = ("bot.example.com",)


def section(readme: str, title: str) -> str:
    start = readme.index(title)
    end = readme.find("\n## ", start + len(title))
    return readme[start:end if end >= 0 else len(readme)]


def fenced(text: str) -> list[tuple[str, str]]:
    """The fenced code blocks of a Markdown text, in order, each as (language, body): read fence
    by fence, so that a closing fence never opens a block."""
    found, language, body = [], None, []
    for line in text.splitlines():
        fence = re.fullmatch(r"\s*```(\S*)\s*", line)
        if language is None:
            if fence:
                language, body = fence.group(1), []
        elif fence and not fence.group(1):
            found.append((language, "".join(body)))
            language = None
        else:
            body.append(line + "\n")
    return found


def blocks(text: str, language: str) -> list[str]:
    return [body for lang, body in fenced(text) if lang == language]


def origin_robots(text: str) -> str | None:
    """The robots.txt the outputs were made with: the first plain block after the words naming
    the origin's port, or None when the text names none."""
    words = re.search(r"\s+".join(ORIGIN_WORDS.split()), text)
    if not words:
        return None
    plain = [body for language, body in fenced(text[words.end():]) if not language]
    assert plain, "no robots.txt block after the origin's port"
    return plain[0]


def complete(command: str) -> bool:
    """Whether a command's quotes are closed: a quoted JSON body may span lines."""
    if command.lstrip().startswith("#"):
        return True
    try:
        shlex.split(command)
        return True
    except ValueError:
        return False


def commands(block: str) -> list[tuple[str, list[str]]]:
    """The `$ ` commands of a console block, continuation lines joined, each with the lines it
    is shown to print; a line ending in `\\` or inside quotes goes on. A `$ # …` line is a comment: it runs as one (and prints nothing)."""
    out: list[tuple[str, list[str]]] = []
    lines = block.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.startswith("$ "):
            raise AssertionError(f"output before any command: {line!r}")
        command = line[2:]
        while command.endswith("\\") or not complete(command):
            i += 1
            command = command + "\n" + lines[i]
        i += 1
        shown = []
        while i < len(lines) and not lines[i].startswith("$ "):
            shown.append(lines[i])
            i += 1
        out.append((command, shown))
    return out


def start_args(command: str) -> list[str] | None:
    """robotsd's arguments when `command` starts robotsd, else None."""
    words = shlex.split(command.replace("\\\n", " "))
    if words[:3] == ["cargo", "run", "--release"]:
        return words[words.index("--") + 1:] if "--" in words else []
    if words and words[0] == "robotsd":
        return words[1:]
    return None


def pattern(shown: str) -> re.Pattern:
    return re.compile(".*".join(re.escape(part) for part in shown.split(ANY)), re.S)


def same(shown, got) -> bool:
    """Whether `got` is what `shown` shows, `…` standing for anything."""
    if shown == ANY:
        return True
    if isinstance(shown, dict):
        if not isinstance(got, dict):
            return False
        named = {k: v for k, v in shown.items() if k != ANY}
        if ANY in shown:
            if not set(named) <= set(got):
                return False
        elif set(named) != set(got):
            return False
        return all(same(v, got[k]) for k, v in named.items())
    if isinstance(shown, list):
        return (isinstance(got, list) and len(shown) == len(got)
                and all(same(s, g) for s, g in zip(shown, got)))
    if isinstance(shown, str):
        if not isinstance(got, str):
            return False
        if INSTANT.match(shown):
            return bool(INSTANT.match(got))
        return bool(pattern(shown).fullmatch(got)) if ANY in shown else shown == got
    # 2.0 is not True: compare types as JSON does.
    return type(shown) is type(got) and shown == got


def same_json(shown: str, got: str) -> bool:
    try:
        return same(json.loads(shown), json.loads(got))
    except json.JSONDecodeError:
        return False


def same_line(shown: str, got: str) -> bool:
    return bool(pattern(shown).fullmatch(got)) if ANY in shown else shown == got


def compare(command: str, shown: list[str], got: str) -> str | None:
    """Why `got` is not what the text shows, or None."""
    got_lines = got.rstrip("\n").split("\n") if got.strip() else []
    if not shown:
        return None if not got_lines else "the text shows no output"
    if command.startswith("curl ") and re.search(r"\s(-[A-Za-z]*i[A-Za-z]*|--include)\s", command):
        head, _, body = got.replace("\r\n", "\n").partition("\n\n")
        head_lines = head.split("\n")
        shown_head = shown[: shown.index("")] if "" in shown else shown
        shown_body = "\n".join(shown[len(shown_head) + 1:])
        if not same_line(shown_head[0], head_lines[0]):
            return f"status line {head_lines[0]!r}"
        for line in shown_head[1:]:
            if not any(same_line(line.lower(), got.lower()) for got in head_lines[1:]):
                return f"no header line {line!r}"
        if shown_body and not same_json(shown_body, body.strip()):
            return "another body"
        return None
    text = "\n".join(shown)
    if text.startswith("{"):
        try:
            json.loads(text)
        except json.JSONDecodeError:
            pass
        else:
            if len(shown) == 1 and len(got_lines) > 1:
                return "more than one line"
            return None if same_json(text, got) else "other JSON"
    if len(got_lines) != len(shown):
        return f"{len(got_lines)} lines, not {len(shown)}"
    if all(s.startswith("{") for s in shown):
        ok = all(same_json(s, g) for s, g in zip(shown, got_lines))
    else:
        ok = all(same_line(s, g) for s, g in zip(shown, got_lines))
    return None if ok else "other lines"


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


def page_text(path: str) -> str:
    text = open(path).read()
    if os.path.basename(path) == "README.md":
        return "\n".join(section(text, title) for title in README_SECTIONS)
    return text


def run_page(name: str, text: str, binary: str, readme_start: list[str], readme_robots: str,
             results: list[bool]) -> None:
    steps = [step for block in blocks(text, "console") for step in commands(block)]
    for command, _ in steps:
        hosts = re.findall(r"https?://([^/:'\"\s]+)", command)
        public = [h for h in hosts if h not in ("localhost", "127.0.0.1", *NAMED_ONLY)]
        assert not public, f"{name}: an example names a public host ({public}): {command}"
    if not any(start_args(command) is not None for command, _ in steps):
        steps.insert(0, ("robotsd " + shlex.join(readme_start), []))
    for port in (API_PORT, ORIGIN_PORT):
        assert port_free(port), f"port {port} is taken: the examples need it"
    print(f"# {name}")
    processes = []
    with tempfile.TemporaryDirectory() as origin, tempfile.TemporaryDirectory() as work:
        with open(os.path.join(origin, "robots.txt"), "w") as out:
            out.write(origin_robots(text) or readme_robots)
        try:
            processes.append(subprocess.Popen(
                [sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(ORIGIN_PORT),
                 "--directory", origin], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            wait_for(f"http://127.0.0.1:{ORIGIN_PORT}/robots.txt", processes[-1])
            for command, shown in steps:
                first = command.splitlines()[0]
                args = start_args(command)
                if args is not None:
                    assert not shown, f"{name}: robotsd's start is shown with output: {first}"
                    processes.append(subprocess.Popen(
                        [binary, *args], cwd=work,
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
                    wait_for(f"http://127.0.0.1:{API_PORT}/readyz", processes[-1])
                    print(f"ok   {first}")
                    continue
                done = subprocess.run(["bash", "-c", "set -o pipefail\n" + command], cwd=work,
                                      capture_output=True, text=True, timeout=60)
                why = (f"exit {done.returncode}: {done.stderr.strip()}" if done.returncode
                       else compare(command, shown, done.stdout))
                results.append(not why)
                if why:
                    print(f"FAIL {first}\n  {why}\n  shown: {shown}\n  got:   {done.stdout!r}")
                else:
                    print(f"ok   {first}")
        finally:
            for process in processes:
                process.terminate()
                process.wait(timeout=10)


def shown_flags(markdown: str) -> list[tuple[str, str]]:
    """Each `--flag` of a robotsd command in a Markdown text's code blocks, with its command:
    `robotsd …`, `cargo run --release -- …`, and a YAML list of robotsd's `args`."""
    found = []
    for language, block in fenced(markdown):
        if language not in ("sh", "bash", "console", ""):
            continue
        for line in block.replace("\\\n", " ").splitlines():
            line = line.removeprefix("$ ").strip()
            if not (line.startswith("robotsd ") or line.startswith("cargo run --release --")):
                continue
            words = shlex.split(line, comments=True)
            if words[0] == "cargo":
                words = words[words.index("--") + 1:]
            found += [(w.split("=")[0], line) for w in words if w.startswith("--")]
    for block in (body for language, body in fenced(markdown) if language in ("yaml", "yml")):
        for flag in re.findall(r"^\s*- (--[a-z0-9-]+)", block, re.M):
            found.append((flag, "args: - " + flag))
    return found


def check_flags(binary: str) -> list[str]:
    """The flags shown in README.md, docs/ and the clients' READMEs that robotsd does not have:
    the commands that cannot run here (a Redis elsewhere, a secret file) still run as written."""
    def known(*subcommand: str) -> set[str]:
        return set(re.findall(r"--[a-z0-9-]+", subprocess.run(
            [binary, *subcommand, "--help"], capture_output=True, text=True, check=True).stdout))
    serve, offline = known(), known("eval")
    unknown = []
    for path in ["README.md", *sorted(glob.glob("docs/*.md")), *sorted(glob.glob("clients/*/README.md"))]:
        for flag, command in shown_flags(open(path).read()):
            if flag not in (offline if command.startswith("robotsd eval") else serve):
                unknown.append(f"{path}: {flag} ({command})")
    return unknown


def self_test() -> None:
    """The comparison's own cases: `…` and instants stand for what they say, nothing more."""
    assert same({"a": 1, ANY: ANY}, {"a": 1, "b": 2})
    assert same({"a": 1, ANY: "as GET /v1/check answers"}, {"a": 1, "b": 2})
    assert not same({"a": 1}, {"a": 1, "b": 2})
    assert not same({"a": 1, ANY: ANY}, {"b": 2})
    assert same({"a": ANY}, {"a": [1, 2]})
    assert same({"s": "sig1=:…:"}, {"s": "sig1=:abc=:"})
    assert not same({"s": "sig1=:…:"}, {"s": "sig2=:abc=:"})
    assert same("2026-11-28T00:00:00Z", "2027-01-01T10:11:12.5Z")
    assert not same("2026-11-28T00:00:00Z", "later")
    assert not same(1, True) and not same(2.0, 2) and same(None, None)
    assert not same([1], [1, 2])
    assert compare("curl -s x", ['{"a": 1,', ' "…": "…"}'], '{"a":1,"b":2}\n') is None
    assert compare("curl -s x", ['{"a": 2}'], '{"a":1}\n') == "other JSON"
    assert compare("jq -c x", ['{"a": 1}', '{"a": 2}'], '{"a":1}\n{"a":2}\n') is None
    assert compare("jq -c x", ['{"a": 1}'], '{"a":1}\n{"a":2}\n') is not None
    assert compare("cat x", ["key …"], "key 12\n") is None
    assert compare("cat x", ["key …"], "other 12\n") == "other lines"
    assert compare("cat x", [], "something\n") == "the text shows no output"
    assert compare("openssl pkey -in k -pubout", ["x …"], "x 1\n") is None
    head = "HTTP/1.1 200 OK\r\ncontent-type: a/b\r\nsignature: s=:xyz:\r\n\r\n{\"k\": 1}"
    assert compare("curl -si u", ["HTTP/1.1 200 OK", "signature: s=:…:", "", '{"k": 1}'],
                   head) is None
    assert compare("curl -si u", ["HTTP/1.1 200 OK", "digest: …", "", '{"k": 1}'],
                   head) is not None
    assert start_args("cargo run --release -- --allow-private-networks") == [
        "--allow-private-networks"]
    assert start_args("robotsd --wba-keys keys.json") == ["--wba-keys", "keys.json"]
    assert start_args("curl robotsd") is None
    assert fenced("a\n```sh\nx\n```\nb\n```\ny\n```\n  ```json\nz\n  ```\n") == [
        ("sh", "x\n"), ("", "y\n"), ("json", "z\n")]
    assert [f for f, _ in shown_flags(
        "```sh\nrobotsd --a x \\\n  --b=1 # --c\ncargo run --release -- --d\ncurl --e\n```\n"
        "```yaml\nargs:\n  - --f=2\n```\n")] == ["--a", "--b", "--d", "--f"]
    assert commands("$ curl -d '{\n  1}'\n{}\n$ a \\\n  b") == [
        ("curl -d '{\n  1}'", ["{}"]), ("a \\\n  b", [])]


def main() -> int:
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        print("doc-examples self-test passed")
        return 0
    self_test()
    binary = os.path.abspath(sys.argv[1])
    pages = sys.argv[2:] or ["README.md", *sorted(glob.glob("docs/*.md"))]
    readme = page_text("README.md")
    readme_steps = [step for block in blocks(readme, "console") for step in commands(block)]
    readme_start = start_args(readme_steps[0][0])
    assert readme_start is not None, "README's first example does not start robotsd"
    readme_robots = origin_robots(readme)
    assert readme_robots, "README names no origin"
    unknown = check_flags(binary)
    for line in unknown:
        print(f"FAIL a flag robotsd does not have: {line}")
    results: list[bool] = [False] * len(unknown)
    ran = []
    for path in pages:
        text = page_text(path)
        if blocks(text, "console"):
            run_page(path, text, binary, readme_start, readme_robots, results)
            ran.append(path)
    failed = results.count(False)
    if failed:
        print(f"{failed} of {len(results)} examples differ from what they print")
        return 1
    print(f"all {len(results)} examples in {', '.join(ran)} print what the text shows, and every "
          "robotsd flag shown is robotsd's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
