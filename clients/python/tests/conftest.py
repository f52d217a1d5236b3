"""The real robotsd binary (ROBOTSD_BIN) and loopback sites, for every test. Nothing is mocked,
and nothing leaves 127.0.0.1."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable, Optional

import httpx
import pytest

# Allow, disallow, a wildcard, an anchor and a crawl-delay; OtherBot may fetch nothing.
SITE_ROBOTS = """User-agent: *
Disallow: /private/
Allow: /private/public
Disallow: /*.pdf$
Crawl-delay: 0.01

User-agent: OtherBot
Disallow: /
"""

CRAWLER_UA = "Mozilla/5.0 (compatible; ExampleBot/1.0; +https://crawler.example/bot)"


def site_paths() -> list[str]:
    """The 51 pages of the test site: the index, then everything it links to."""
    paths = ["/"]
    paths += [f"/p/{i}" for i in range(30)]
    paths += [f"/private/{i}" for i in range(10)]
    for i in range(5):
        paths += [f"/private/public/{i}", f"/docs/{i}.pdf"]
    return paths


def hostile_robots() -> str:
    """A robots.txt made so that every full answer about it is large, whatever robotsd cuts: 20
    ``user-agent`` lines of 16,000 control characters (robotsd shows 16 of them, each cut at 256
    bytes of JSON, a control character taking 6), an ``allow`` of 16,000 wildcards (its pattern
    cut at 2,048 bytes) and a longer ``disallow`` for the paths under ``/d``. 352 KB, within
    the 500 KiB robotsd keeps."""
    long = "\u0001" * 16_000
    robots = f"user-agent: a{long}\n" * 20
    robots += f"allow: /{'*' * 16_000}\n"
    robots += f"disallow: /d{'*' * 16_000}\n"
    return robots


def hostile_paths(count: int = 1_000) -> list[str]:
    """``count`` paths of 4,000 bytes and more (so that robotsd's answer about each echoes a long
    URL too), every third under ``/d`` (disallowed by :func:`hostile_robots`)."""
    return [f"/{'d' if i % 3 == 0 else 'x'}{'x' * 4_000}{i}" for i in range(count)]


#: The robotsd flags a batch of :func:`hostile_paths` needs: its request is over 4 MB.
HOSTILE_FLAGS = ("--max-body-bytes", "8MiB")


def robots_line(text: str) -> int:
    """The 1-based line of SITE_ROBOTS that is exactly ``text``."""
    return SITE_ROBOTS.splitlines().index(text) + 1


Answer = tuple[int, dict[str, str]]
"""A status and the headers to answer a page with, instead of the page."""

Page = tuple[list[tuple[str, str]], bytes]
"""A page served as given: its headers (Content-Type among them, repeats kept) and body."""


class Site:
    """A loopback site serving ``robots`` (SITE_ROBOTS) and ``paths`` (site_paths(), the index
    first, linking to the others), recording every request, and when each page request arrived
    (``arrivals``). ``answers`` gives a path's first answers instead of the page, in turn (a
    429 with its Retry-After, say); ``served`` gives pages of their own headers and bodies.
    ``lag`` is ``(pages, seconds)``: once that many pages were asked for, each answer takes
    that much longer (a site slowing down under a crawl)."""

    def __init__(
        self,
        robots: str = SITE_ROBOTS,
        paths: Optional[list[str]] = None,
        answers: Optional[dict[str, list[Answer]]] = None,
        documents: Optional[dict[str, str]] = None,
        served: Optional[dict[str, Page]] = None,
        lag: Optional[tuple[int, float]] = None,
    ) -> None:
        self.hits: Counter[str] = Counter()
        self.agents: dict[str, list[str]] = {}
        self.arrivals: list[tuple[float, str, int]] = []
        """``(time.monotonic(), path, status)`` of each request but robots.txt's, in order."""
        self._lock = threading.Lock()
        pages = site_paths() if paths is None else paths
        own = dict(served or {})
        served_documents = dict(documents or {})
        scripted = {path: list(queue) for path, queue in (answers or {}).items()}
        accepted: dict[object, float] = {}  # when each connection was accepted, by address
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                # Each request is a connection of its own (HTTP/1.0): it arrived when the
                # server accepted it, before a thread of its own was even started for it.
                arrived = accepted.pop(self.client_address, None) or time.monotonic()
                path = self.path
                with site._lock:
                    site.hits[path] += 1
                    site.agents.setdefault(path, []).append(self.headers.get("User-Agent", ""))
                    answer = scripted[path].pop(0) if scripted.get(path) else None
                    lagging = False
                    if path != "/robots.txt":
                        known = path in pages or path in own
                        status = answer[0] if answer else 200 if known else 404
                        lagging = lag is not None and len(site.arrivals) >= lag[0]
                        site.arrivals.append((arrived, path, status))
                if lagging and lag is not None:
                    time.sleep(lag[1])
                if answer is None and path in own:
                    fields, page = own[path]
                    self.send_response(200)
                    for name, value in fields:
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(page)))
                    self.end_headers()
                    self.wfile.write(page)
                    return
                if answer is not None:
                    status, headers = answer
                    body, kind = f"answer {status}".encode(), "text/plain"
                elif path == "/robots.txt":
                    status, headers = 200, {}
                    body, kind = robots.encode(), "text/plain"
                elif path == pages[0]:
                    status, headers = 200, {}
                    links = "".join(f'<a href="{p}">{p}</a>\n' for p in pages[1:])
                    body, kind = f"<html><body>{links}</body></html>".encode(), "text/html"
                elif path in pages:
                    status, headers = 200, {}
                    body, kind = f"<html><body>page {path}</body></html>".encode(), "text/html"
                elif path in served_documents:
                    status, headers = 200, {}
                    body, kind = served_documents[path].encode(), "application/xml"
                else:
                    self.send_error(404)
                    return
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        class Server(ThreadingHTTPServer):
            def get_request(self) -> tuple[socket.socket, object]:
                connection, address = super().get_request()
                accepted[address] = time.monotonic()
                return connection, address

        self._server = Server(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def pages(self) -> list[str]:
        """The paths fetched, robots.txt aside, sorted."""
        with self._lock:
            return sorted(p for p in self.hits if p != "/robots.txt")

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def site() -> Iterator[Site]:
    s = Site()
    yield s
    s.close()


MakeSite = Callable[..., Site]


@pytest.fixture
def make_site() -> Iterator[MakeSite]:
    """Sites of their own robots.txt, pages and answers (Site's arguments)."""
    made: list[Site] = []

    def make(
        robots: str = SITE_ROBOTS,
        paths: Optional[list[str]] = None,
        answers: Optional[dict[str, list[Answer]]] = None,
        documents: Optional[dict[str, str]] = None,
        served: Optional[dict[str, Page]] = None,
        lag: Optional[tuple[int, float]] = None,
    ) -> Site:
        s = Site(robots, paths, answers, documents, served, lag)
        made.append(s)
        return s

    yield make
    for s in made:
        s.close()


Canned = tuple[int, dict[str, str], bytes]
"""A status, headers and body a :class:`StandIn` answers with."""

#: robotsd's own 503, as it answers when over its concurrency limit (README.md, "The API": `overloaded`).
OVERLOADED: Canned = (
    503,
    {"Content-Type": "application/problem+json", "Retry-After": "0"},
    b'{"type":"urn:robotsd:problem:overloaded","title":"Overloaded","status":503,'
    b'"detail":"too many requests in flight"}',
)

#: A proxy's or a load balancer's 503 in front of robotsd: an HTML page, no problem type.
PROXY_503: Canned = (
    503,
    {"Content-Type": "text/html", "Retry-After": "0"},
    b"<html><body><h1>503 Service Temporarily Unavailable</h1></body></html>",
)


class StandIn:
    """A loopback stand-in for robotsd that answers every request with ``answers`` in turn, the
    last one again once they run out, and records each request's method, path and arrival
    (``requests``): robotsd is never overloaded in a test, and what is counted here is how
    often a client comes back."""

    def __init__(self, answers: list[Canned]) -> None:
        self.requests: list[tuple[str, str, float]] = []
        self._lock = threading.Lock()
        queue = list(answers)
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                with stand_in._lock:
                    stand_in.requests.append((self.command, self.path, time.monotonic()))
                    status, headers, body = queue.pop(0) if len(queue) > 1 else queue[0]
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = _answer
            do_POST = _answer

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def count(self, path: str = "") -> int:
        """The requests received for paths starting with ``path``."""
        with self._lock:
            return sum(1 for _, p, _ in self.requests if p.startswith(path))

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


MakeStandIn = Callable[[list[Canned]], StandIn]


@pytest.fixture
def stand_in() -> Iterator[MakeStandIn]:
    made: list[StandIn] = []

    def make(answers: list[Canned]) -> StandIn:
        s = StandIn(answers)
        made.append(s)
        return s

    yield make
    for s in made:
        s.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def closed_url() -> str:
    """The URL of a loopback port nothing listens on: robotsd down."""
    return f"http://127.0.0.1:{free_port()}"


class Robotsd:
    """A robotsd process on a free loopback port."""

    def __init__(self, binary: str, args: list[str]) -> None:
        self.url = f"http://127.0.0.1:{free_port()}"
        # A file, not a pipe: a pipe nobody reads would stall robotsd once full.
        self._log = tempfile.TemporaryFile()
        self._process = subprocess.Popen(
            [binary, "--allow-private-networks", "--listen", self.url[len("http://") :], *args],
            stdout=subprocess.DEVNULL,
            stderr=self._log,
        )
        deadline = time.monotonic() + 20
        while True:
            if self._process.poll() is not None:
                pytest.fail(f"robotsd exited with {self._process.returncode}: {self.log()}")
            try:
                if httpx.get(self.url + "/livez", timeout=1, trust_env=False).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                pytest.fail(f"robotsd did not come up on {self.url}")
            time.sleep(0.05)

    def metric(self, name: str, **labels: str) -> float:
        """The sum of a Prometheus series over the samples whose labels include ``labels``."""
        text = httpx.get(self.url + "/metrics", timeout=5, trust_env=False).text
        total = 0.0
        for line in text.splitlines():
            match = re.match(rf"^{re.escape(name)}(?:\{{(.*)\}})? (\S+)$", line)
            if not match:
                continue
            found = dict(re.findall(r'(\w+)="([^"]*)"', match.group(1) or ""))
            if all(found.get(k) == v for k, v in labels.items()):
                total += float(match.group(2))
        return total

    def log(self) -> str:
        self._log.seek(0)
        return self._log.read().decode(errors="replace")

    def stop(self) -> None:
        self._process.kill()
        self._process.wait()
        self._log.close()


@pytest.fixture(scope="session")
def robotsd_bin() -> str:
    binary = os.environ.get("ROBOTSD_BIN", "")
    if not binary:
        pytest.fail(
            "ROBOTSD_BIN must name a robotsd binary (cargo build --release; "
            ".ci/client-python-checks.sh sets it)"
        )
    if not os.access(binary, os.X_OK):
        pytest.fail(f"ROBOTSD_BIN={binary} is not an executable file")
    return binary


StartRobotsd = Callable[..., Robotsd]


@pytest.fixture
def start_robotsd(robotsd_bin: str) -> Iterator[StartRobotsd]:
    started: list[Robotsd] = []

    def start(*args: str) -> Robotsd:
        r = Robotsd(robotsd_bin, list(args))
        started.append(r)
        return r

    yield start
    for r in started:
        r.stop()


@pytest.fixture
def robotsd(start_robotsd: StartRobotsd) -> Robotsd:
    return start_robotsd()


@pytest.fixture
def token_file(tmp_path: Path) -> tuple[Path, str]:
    token = "test-token-" + os.urandom(12).hex()
    path = tmp_path / "tokens"
    path.write_text(f"# crawlers\n{token}\n")
    return path, token


def allowed_paths(robotsd_url: str, site_url: str, ua: str, token: Optional[str] = None) -> list[str]:
    """What robotsd allows of the site, asked in one batch (never written down by hand)."""
    from robotsd import CheckResponse, Client

    with Client(robotsd_url, token=token) as client:
        results = client.check_many([site_url + p for p in site_paths()], ua)
    allowed = []
    for path, result in zip(site_paths(), results):
        assert isinstance(result, CheckResponse), f"{path}: {result}"
        if result.allowed:
            allowed.append(path)
    return sorted(allowed)
