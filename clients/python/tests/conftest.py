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


def robots_line(text: str) -> int:
    """The 1-based line of SITE_ROBOTS that is exactly ``text``."""
    return SITE_ROBOTS.splitlines().index(text) + 1


class Site:
    """A loopback site serving SITE_ROBOTS and site_paths(), recording every request."""

    def __init__(self) -> None:
        self.hits: Counter[str] = Counter()
        self.agents: dict[str, list[str]] = {}
        self._lock = threading.Lock()
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = self.path
                with site._lock:
                    site.hits[path] += 1
                    site.agents.setdefault(path, []).append(self.headers.get("User-Agent", ""))
                if path == "/robots.txt":
                    body, kind = SITE_ROBOTS.encode(), "text/plain"
                elif path == "/":
                    links = "".join(f'<a href="{p}">{p}</a>\n' for p in site_paths()[1:])
                    body, kind = f"<html><body>{links}</body></html>".encode(), "text/html"
                elif path in site_paths():
                    body, kind = f"<html><body>page {path}</body></html>".encode(), "text/html"
                else:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
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
