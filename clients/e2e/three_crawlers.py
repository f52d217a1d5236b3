"""Scrapy, Crawlee, a Go crawler and a Java crawler crawl one site through robotsd, at once.

The fleet case robotsd exists for: four crawlers written in four languages, each through its
framework's robotsd integration (clients/python's Scrapy middleware, clients/typescript's
Crawlee hook, clients/go's Transport, clients/java's RobotsdFetcher), start together on a cold
cache. First, through one robotsd, the test holds:

- each crawler fetched exactly the pages robotsd allows (asked of robotsd in one batch, not
  written down here), and refused exactly the others;
- every allowed page was fetched once by each crawler, and no disallowed page by any;
- the site's robots.txt was fetched once, by robotsd, for the four together.

Then politeness for the whole fleet (docs/politeness.md), as the site sees it: a site with
`Crawl-delay: 1`, crawled by the four at once through two robotsd replicas sharing one
redis-server. With pacing (the clients' default), the site's own log shows every two consecutive
page fetches at least the crawl-delay apart (1 s), across all four crawlers: robotsd's slots
keep a guard band beyond the clients' lateness. The same crawl with pacing turned
off in each client shows the problem pacing solves: each crawler keeps the crawl-delay for
itself, and the site gets about four requests a second.

Last, the fleet's identity (docs/bot-auth.md): robotsd holds the fleet's Web Bot Auth key and
the four crawl with signing on (`--sign`) a site that verifies every signature it receives with
a verifier robotsd shares no code with (tests/wba/verifying_site.py, PyPI's
http-message-signatures, run with $ROBOTSD_WBA_PYTHON) and refuses the rest. Every page request
the site sees verifies, robotsd's own robots.txt fetch too; no crawler holds a key; each
allowed page arrives once from each crawler and a disallowed one never.

Usage: python three_crawlers.py --robotsd-bin BIN --python PY   (run by .ci/client-checks.sh;
PY is an interpreter with the Python client and Scrapy installed; ROBOTSD_WBA_PYTHON one with
.ci/wba-requirements.txt; `node`, `go`, `java` and `redis-server` come from PATH, and clients/typescript and clients/java (clients/java/build.sh,
against Debian's Jackson jars) must be built). Every check passes or raises.
"""

import argparse
import collections
import http.server
import json
import os
import pathlib
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

CLIENTS = pathlib.Path(__file__).resolve().parent.parent
WBA = CLIENTS.parent / "tests/wba"
AGENT = "https://bot.example/.well-known/http-message-signatures-directory"

# The Java crawler's class path: the client's jar and the example, as clients/java/build.sh
# leaves them, and Debian's Jackson.
JAVA_CLASSPATH = ":".join([
    str(CLIENTS / "java/build/robotsd-client-0.2.0.jar"),
    str(CLIENTS / "java/build/examples"),
    "/usr/share/java/jackson-databind.jar",
    "/usr/share/java/jackson-core.jar",
    "/usr/share/java/jackson-annotations.jar",
])

ROBOTS = """User-agent: *
Disallow: /private/
Allow: /private/public
Disallow: /*.pdf$
Crawl-delay: 0.01

User-agent: OtherBot
Disallow: /
"""


SLOW_ROBOTS = """User-agent: *
Disallow: /private/
Crawl-delay: 1
"""


def site_paths():
    paths = ["/"] + [f"/p/{i}" for i in range(30)] + [f"/private/{i}" for i in range(10)]
    for i in range(5):
        paths += [f"/private/public/{i}", f"/docs/{i}.pdf"]
    return paths


def slow_site_paths():
    """Seven pages a crawler may fetch (the index and six), and two it may not."""
    return ["/"] + [f"/p/{i}" for i in range(6)] + ["/private/0", "/private/1"]


class Site:
    """A loopback site, the index linking to every other page; counts each path's GETs and logs
    when each page request arrived."""

    def __init__(self, robots=ROBOTS, paths=site_paths):
        self.hits = collections.Counter()
        self.arrivals = []
        self.lock = threading.Lock()
        self.paths = paths
        site = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                path = self.path.split("?", 1)[0]
                with site.lock:
                    site.hits[path] += 1
                    if path != "/robots.txt":
                        agent = self.headers.get("user-agent", "")
                        site.arrivals.append((time.monotonic(), path, agent))
                if path == "/robots.txt":
                    body, kind = robots, "text/plain"
                elif path == "/":
                    body = "".join(f'<a href="{p}">{p}</a>\n' for p in site.paths()[1:])
                    body, kind = f"<html><body>{body}</body></html>", "text/html"
                else:
                    body, kind = f"<html><body>page {path}</body></html>", "text/html"
                data = body.encode()
                self.send_response(200)
                self.send_header("content-type", f"{kind}; charset=utf-8")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_robotsd(binary, *extra):
    port = free_port()
    process = subprocess.Popen(
        [binary, "--listen", f"127.0.0.1:{port}", "--allow-private-networks",
         "--operator-contact", "mailto:ci@robotsd.invalid", *extra],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    for _ in range(400):
        try:
            urllib.request.urlopen(f"{base}/readyz", timeout=1)
            return process, base
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise AssertionError("robotsd did not become ready")


def start_redis():
    port = free_port()
    process = subprocess.Popen(
        ["redis-server", "--bind", "127.0.0.1", "--port", str(port), "--save", "",
         "--appendonly", "no"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    for _ in range(200):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(b"PING\r\n")
                if s.recv(16).startswith(b"+PONG"):
                    return process, f"redis://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise AssertionError("redis-server did not start")


def crawl(crawlers):
    """Starts every crawler at once; the one line of JSON each printed, by name."""
    cwd = {"go": CLIENTS / "go"}
    running = {
        name: subprocess.Popen(cmd, cwd=cwd.get(name), stdout=subprocess.PIPE, text=True)
        for name, cmd in crawlers.items()
    }
    outputs = {}
    for name, proc in running.items():
        out, _ = proc.communicate(timeout=300)
        assert proc.returncode == 0, f"{name} exited with {proc.returncode}"
        lines = [line for line in out.splitlines() if line.strip()]
        assert len(lines) == 1, f"{name} printed {out!r}, not one line of JSON"
        outputs[name] = json.loads(lines[0])
    return outputs


def commands(python, robotsds, start, *extra):
    """The four crawlers' command lines, each through one of `robotsds` in turn."""
    def common(i):
        return ["--robotsd", robotsds[i % len(robotsds)], "--start", start, *extra]
    return {
        "scrapy": [python, str(CLIENTS / "python/examples/scrapy_crawl.py"),
                   *common(0), "--ua", "ScrapyExampleBot"],
        "crawlee": ["node", str(CLIENTS / "typescript/examples/crawlee-crawl.mjs"),
                    *common(1), "--ua", "CrawleeExampleBot"],
        "go": ["go", "run", "./examples/crawl", *common(2), "--ua", "GoExampleBot"],
        "java": ["java", "-cp", JAVA_CLASSPATH, "io.github.robotsd.examples.Crawl",
                 *common(3), "--ua", "JavaExampleBot"],
    }


def gaps(site):
    times = sorted(t for t, _, _ in site.arrivals)
    return [b - a for a, b in zip(times, times[1:])]


def timeline(site):
    """The site's log, for a failure's message: seconds since the first fetch, path, agent."""
    arrivals = sorted(site.arrivals)
    first = arrivals[0][0]
    return "\n".join(f"{t - first:8.3f} {path} {agent[:40]}" for t, path, agent in arrivals)


def fleet_politeness(args):
    """Two replicas on one Redis; the four crawlers with pacing, then without."""
    redis, redis_url = start_redis()
    replicas = []
    try:
        replicas = [start_robotsd(args.robotsd_bin, "--redis-url", redis_url) for _ in range(2)]
        urls = [base for _, base in replicas]
        allowed = 7  # the index and six pages

        paced = Site(SLOW_ROBOTS, slow_site_paths)
        started = time.monotonic()
        outputs = crawl(commands(args.python, urls, paced.url + "/"))
        took = time.monotonic() - started
        for name, got in outputs.items():
            assert len(got["fetched"]) == allowed, f"{name} fetched {got['fetched']}"
        assert len(paced.arrivals) == len(outputs) * allowed, paced.arrivals
        shortest = min(gaps(paced))
        assert shortest >= 1.0, (
            f"two page fetches {shortest:.3f} s apart with pacing:\n{timeline(paced)}")
        print(f"paced through two replicas: {len(paced.arrivals)} page fetches in {took:.1f} s, "
              f"every two at least {shortest:.3f} s apart (Crawl-delay: 1)")

        unpaced = Site(SLOW_ROBOTS, slow_site_paths)
        started = time.monotonic()
        outputs = crawl(commands(args.python, urls, unpaced.url + "/", "--no-pace"))
        took = time.monotonic() - started
        for name, got in outputs.items():
            assert len(got["fetched"]) == allowed, f"{name} fetched {got['fetched']}"
        times = sorted(t for t, _, _ in unpaced.arrivals)
        rate = (len(times) - 1) / (times[-1] - times[0])
        busiest = max(sum(1 for t in times if start <= t < start + 1) for start in times)
        shortest = min(gaps(unpaced))
        # Each crawler keeps the crawl-delay alone, so together the site gets up to four
        # requests a second where it asked for one.
        assert busiest >= 2 and shortest < 0.5, (busiest, shortest, timeline(unpaced))
        print(f"without pacing: {len(times)} page fetches in {took:.1f} s ({rate:.1f} a second), "
              f"{busiest} within one second, two of them {shortest:.3f} s apart: what pacing "
              "prevents")
    finally:
        for process, _ in replicas:
            process.kill()
            process.wait()
        redis.kill()
        redis.wait()


class VerifyingSite:
    """tests/wba/verifying_site.py as a program, serving site_paths() (the index linking to the
    others); `seen()` is its log so far, one entry a request."""

    def __init__(self, robotsd, workdir):
        python = os.environ.get("ROBOTSD_WBA_PYTHON")
        assert python, ("ROBOTSD_WBA_PYTHON must name a Python with .ci/wba-requirements.txt "
                        "(.ci/client-checks.sh exports it)")
        index = "".join(f'<a href="{p}">{p}</a>\n' for p in site_paths()[1:])
        pages = {p: f"<html><body>page {p}</body></html>" for p in site_paths()[1:]}
        pages["/"] = f"<html><body>{index}</body></html>"
        (workdir / "pages.json").write_text(json.dumps(pages))
        (workdir / "robots.txt").write_text(ROBOTS)
        self.process = subprocess.Popen(
            [python, str(WBA / "verifying_site.py"), "--directory-url", AGENT,
             "--fetch-from", f"{robotsd}/.well-known/http-message-signatures-directory",
             "--robots", str(workdir / "robots.txt"), "--pages", str(workdir / "pages.json")],
            stdout=subprocess.PIPE, text=True)
        first = self.process.stdout.readline()
        assert first.startswith("listening "), f"the verifying site printed {first!r}"
        self.url = f"http://127.0.0.1:{int(first.split()[1])}"
        self.lines = []
        self.lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.process.stdout:
            with self.lock:
                self.lines.append(json.loads(line))

    def seen(self):
        with self.lock:
            return list(self.lines)

    def close(self):
        self.process.kill()
        self.process.wait()


def signed_crawl(args, workdir):
    """The four crawl with signing on, through one robotsd holding the key."""
    process, robotsd = start_robotsd(
        args.robotsd_bin, "--wba-keys", str(WBA / "test-keys.json"), "--wba-agent", AGENT)
    site = None
    try:
        site = VerifyingSite(robotsd, workdir)
        crawlers = commands(args.python, [robotsd], site.url + "/", "--sign")
        outputs = crawl(crawlers)
        everything = sorted(site_paths())
        for name in crawlers:
            allowed = allowed_paths(robotsd, site, crawlers[name][-1])
            got = outputs[name]
            assert got["fetched"] == allowed, f"{name} fetched {got['fetched']}, allowed {allowed}"
        # The crawlers have exited: every request they made has been logged.
        seen = site.seen()
        refused = [entry for entry in seen if not entry.get("verified")]
        assert not refused, f"the site refused {len(refused)} requests: {refused[:5]}"
        hits = collections.Counter(entry["path"] for entry in seen)
        for path in everything:
            want = len(crawlers) if path in allowed else 0
            assert hits[path] == want, f"{path} arrived {hits[path]} times, not {want}"
        assert hits["/robots.txt"] == 1, f"robots.txt fetched {hits['/robots.txt']} times"
        pages = sum(hits[p] for p in everything)
        print(f"signed: the site verified all {pages} page requests of the {len(crawlers)} "
              f"crawlers and robotsd's robots.txt fetch, with key {seen[0]['kid']}; "
              "no disallowed page requested")
    finally:
        if site is not None:
            site.close()
        process.kill()
        process.wait()


def allowed_paths(robotsd, site, ua):
    body = json.dumps({"ua": ua, "urls": [site.url + p for p in site_paths()]}).encode()
    request = urllib.request.Request(
        f"{robotsd}/v1/check?view=verdict", data=body, headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        results = json.load(response)["results"]
    assert all("error" not in r for r in results), results
    return sorted(p for p, r in zip(site_paths(), results) if r["allowed"])


def main():
    args = argparse.ArgumentParser()
    args.add_argument("--robotsd-bin", required=True)
    args.add_argument("--python", required=True)
    args = args.parse_args()

    site = Site()
    process, robotsd = start_robotsd(args.robotsd_bin)
    try:
        # All four start on a cold cache at once: robotsd's single flight, not its cache
        # alone, is what keeps robots.txt to one fetch.
        crawlers = commands(args.python, [robotsd], site.url + "/")
        outputs = crawl(crawlers)

        everything = sorted(site_paths())
        for name in crawlers:
            allowed = allowed_paths(robotsd, site, crawlers[name][-1])
            refused = sorted(set(everything) - set(allowed))
            got = outputs[name]
            assert got["fetched"] == allowed, f"{name} fetched {got['fetched']}, allowed {allowed}"
            assert got["disallowed"] == refused, f"{name} refused {got['disallowed']}, not {refused}"
            print(f"{name}: fetched {len(allowed)} pages, refused {len(refused)}, as robotsd allows")
        # 1 index + 30 pages + 5 under /private/public; 10 private and 5 PDFs refused.
        assert len(allowed) == 36, allowed
        for path in everything:
            want = len(crawlers) if path in allowed else 0
            assert site.hits[path] == want, f"{path} fetched {site.hits[path]} times, not {want}"
        assert site.hits["/robots.txt"] == 1, f"robots.txt fetched {site.hits['/robots.txt']} times"
        print(f"robots.txt: fetched once, by robotsd, for the {len(crawlers)} crawlers together")
    finally:
        process.kill()
        process.wait()
    fleet_politeness(args)
    with tempfile.TemporaryDirectory() as workdir:
        signed_crawl(args, pathlib.Path(workdir))


if __name__ == "__main__":
    sys.exit(main())
