"""Web Bot Auth: requests robotsd signs, sent by the client and by the Scrapy middleware to a
loopback site that verifies every signature it receives as a site would, with code robotsd does
not share (PyPI's http-message-signatures): tests/wba/verifying_site.py, run with the Python
ROBOTSD_WBA_PYTHON names (the client's own environment does not have that package, and must
not get it)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Callable, Optional, Union

import httpx
import pytest
from conftest import CRAWLER_UA, Robotsd, StartRobotsd
from scrapy import Request
from scrapy.utils.test import get_crawler
from test_scrapy import Crawl

from robotsd import (
    AsyncClient,
    CheckResponse,
    Client,
    PaceJson,
    ProblemError,
    SignJson,
    signature_headers,
)
from robotsd.scrapy import META_KEY, NotSigned, RobotsdMiddleware

REPO = Path(__file__).resolve().parents[3]
WBA = REPO / "tests" / "wba"

#: The fleet's key directory, as robotsd names it in Signature-Agent; the site fetches it from
#: robotsd on loopback, under this host.
DIRECTORY_URL = "https://bot.example/.well-known/http-message-signatures-directory"
#: A robotsd that signs, with RFC 9421's published test key (never a key to deploy).
SIGNING = ("--wba-keys", str(WBA / "test-keys.json"), "--wba-agent", DIRECTORY_URL)

SIGNING_OFF = "urn:robotsd:problem:signing-off"
SIGN_OTHER_AGENT = "urn:robotsd:problem:sign-other-agent"

ROBOTS = """User-agent: *
Disallow: /private
Crawl-delay: 0.05
"""

#: A site to crawl by relative links: a page with a query, a disallowed page, and a redirect
#: to another allowed page.
PAGES: dict[str, Any] = {
    "/": '<a href="a">a</a> <a href="private/x">x</a> <a href="old">old</a>'
    ' <a href="a?x=1&amp;y=~">query</a>',
    "/a": '<a href="../b">b</a>',
    "/a?x=1&y=~": "<p>a query</p>",
    "/b": "<p>b</p>",
    "/private/x": "<p>never asked for</p>",
    "/old": {"redirect": "/new"},
    "/new": '<a href="./b">b</a>',
}


@pytest.fixture(scope="session")
def wba_python() -> str:
    python = os.environ.get("ROBOTSD_WBA_PYTHON", "")
    if not python:
        pytest.fail(
            "ROBOTSD_WBA_PYTHON must name a Python with PyPI's http-message-signatures, which "
            "runs tests/wba/verifying_site.py (.ci/client-checks.sh exports it: a virtualenv "
            "of .ci/wba-requirements.txt)"
        )
    if not os.access(python, os.X_OK):
        pytest.fail(f"ROBOTSD_WBA_PYTHON={python} is not an executable file")
    return python


class VerifyingSite:
    """tests/wba/verifying_site.py as a process, knowing the fleet's keys from ``keyed`` (a
    robotsd with keys), and the JSON line it logs for each request it received."""

    def __init__(
        self, python: str, keyed: Robotsd, workdir: Path, robots: str, pages: dict[str, Any]
    ) -> None:
        _wait_ready(keyed)
        robots_file = workdir / "robots.txt"
        robots_file.write_text(robots)
        pages_file = workdir / "pages.json"
        pages_file.write_text(json.dumps(pages))
        self._lines: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._listening = threading.Event()
        self._port = 0
        self._errors = tempfile.TemporaryFile()
        self._process = subprocess.Popen(
            [python, str(WBA / "verifying_site.py"), "--directory-url", DIRECTORY_URL,
             "--fetch-from", keyed.url + "/.well-known/http-message-signatures-directory",
             "--robots", str(robots_file), "--pages", str(pages_file)],
            stdout=subprocess.PIPE,
            stderr=self._errors,
            text=True,
        )
        threading.Thread(target=self._read, daemon=True).start()
        if not self._listening.wait(20):
            self.close()
            pytest.fail(f"the verifying site did not start: {self.errors()}")
        self.url = f"http://127.0.0.1:{self._port}"

    def _read(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            if line.startswith("listening "):
                self._port = int(line.split()[1])
                self._listening.set()
            else:
                with self._lock:
                    self._lines.append(json.loads(line))

    def requests(self, settle: float = 0.3) -> list[dict[str, Any]]:
        """Each request the site received, but robots.txt's, in order. Each is logged before
        it is answered: the lines of the requests answered are at most a moment behind."""
        seen = -1
        while True:
            with self._lock:
                lines = [line for line in self._lines if "path" in line]
            if len(lines) == seen:
                return [line for line in lines if line["path"] != "/robots.txt"]
            seen = len(lines)
            time.sleep(settle)

    def robots_fetches(self) -> int:
        with self._lock:
            return sum(1 for line in self._lines if line.get("path") == "/robots.txt")

    def errors(self) -> str:
        self._errors.seek(0)
        return self._errors.read().decode(errors="replace")

    def close(self) -> None:
        self._process.kill()
        self._process.wait()
        self._errors.close()


def _wait_ready(robotsd: Robotsd) -> None:
    deadline = time.monotonic() + 20
    while httpx.get(robotsd.url + "/readyz", timeout=5, trust_env=False).status_code != 200:
        if time.monotonic() > deadline:
            pytest.fail(f"robotsd at {robotsd.url} is not ready: {robotsd.log()}")
        time.sleep(0.05)


MakeVerifyingSite = Callable[..., VerifyingSite]


@pytest.fixture
def make_verifying_site(wba_python: str, tmp_path: Path) -> Iterator[MakeVerifyingSite]:
    made: list[VerifyingSite] = []

    def make(keyed: Robotsd, robots: str = ROBOTS, pages: Optional[dict[str, Any]] = None) -> VerifyingSite:
        workdir = tmp_path / f"site{len(made)}"
        workdir.mkdir()
        site = VerifyingSite(wba_python, keyed, workdir, robots, PAGES if pages is None else pages)
        made.append(site)
        return site

    yield make
    for site in made:
        site.close()


def refused(site: VerifyingSite) -> list[dict[str, Any]]:
    return [line for line in site.requests() if not line["verified"]]


def test_a_signed_crawl_sends_every_request_verified(
    start_robotsd: StartRobotsd, make_verifying_site: MakeVerifyingSite, tmp_path: Path
) -> None:
    robotsd = start_robotsd(*SIGNING)
    site = make_verifying_site(robotsd)
    # Started at a URL with dot segments, which Scrapy keeps and robotsd (as the WHATWG URL
    # Standard) resolves: signed for "/", the request must be sent to "/" for its signature
    # to verify.
    crawl = Crawl(robotsd.url, site.url + "/x/../", tmp_path, "--sign")

    assert crawl.returncode == 0, crawl.log[-5000:]
    assert crawl.output == {
        "fetched": ["/", "/a", "/a?x=1&y=~", "/b", "/new"],
        "disallowed": ["/private/x"],
    }
    requests = site.requests()
    # Each allowed page once (the redirect's two hops), each signature verified; the
    # disallowed page never asked for.
    assert sorted(r["path"] for r in requests) == ["/", "/a", "/a?x=1&y=~", "/b", "/new", "/old"]
    assert refused(site) == []
    assert {r["method"] for r in requests} == {"GET"}
    assert site.robots_fetches() == 1  # robotsd's, never Scrapy's
    # One check and one signature per request: the redirect's second hop checked and signed
    # for itself.
    assert crawl.stat("checked") == 7
    assert crawl.stat("signed") == 6
    assert crawl.stat("disallowed") == 1
    assert crawl.stat("not_signed") is None
    assert crawl.stat("pace/reserved") == 6


def test_a_signed_crawl_against_a_robotsd_without_keys_sends_nothing(
    start_robotsd: StartRobotsd, make_verifying_site: MakeVerifyingSite, tmp_path: Path
) -> None:
    site = make_verifying_site(start_robotsd(*SIGNING))
    keyless = start_robotsd()
    # Not even with ROBOTSD_FAIL_OPEN: robotsd answered, and the answer is that it cannot sign.
    for flags in ((), ("--fail-open",)):
        crawl = Crawl(keyless.url, site.url + "/", tmp_path, "--sign", *flags)

        assert crawl.returncode == 1, flags
        assert crawl.output == {"fetched": [], "disallowed": []}
        assert crawl.stat("problem/signing-off") == 1
        assert crawl.stat("not_signed") == 1
        assert crawl.stat("fail_open") is None and crawl.stat("fail_closed") is None
        assert "Not signed by robotsd, so not fetched" in crawl.log
        assert "Signing is off" in crawl.log
    # robotsd refused before fetching anything, robots.txt included.
    assert site.requests() == []
    assert site.robots_fetches() == 0


def _headers(request: Request) -> dict[str, str]:
    return {str(name): str(value) for name, value in request.headers.to_unicode_dict().items()}


def test_the_middleware_signs_head_as_head_and_sends_no_other_method(
    start_robotsd: StartRobotsd, make_verifying_site: MakeVerifyingSite
) -> None:
    robotsd = start_robotsd(*SIGNING, "--wba-product-token", "ExampleBot")
    site = make_verifying_site(robotsd)
    crawler = get_crawler(
        settings_dict={"ROBOTSD_URL": robotsd.url, "ROBOTSD_SIGN": True, "ROBOTSD_PACE": False,
                       "ROBOTSD_OBEY_CRAWL_DELAY": False, "USER_AGENT": CRAWLER_UA,
                       "ROBOTSTXT_OBEY": False}
    )
    assert crawler.stats is not None
    crawler.stats.open_spider()
    head = Request(site.url + "/a", method="HEAD", headers={"User-Agent": CRAWLER_UA})
    # A signature of its own (a previous hop's, say) is replaced, not sent beside robotsd's.
    get = Request(site.url + "/x/../b", headers={"User-Agent": CRAWLER_UA, "Signature": "sig1=:AA==:"})
    post = Request(site.url + "/a", method="POST", body=b"{}", headers={"User-Agent": CRAWLER_UA})
    # In the GET's batch: robotsd refuses the batch for this one's agent, and each asks alone.
    other = Request(site.url + "/b", headers={"User-Agent": "OtherBot/1.0"})
    denied = Request(site.url + "/private/x", headers={"User-Agent": CRAWLER_UA})
    requests = [head, get, post, other, denied]

    async def main() -> list[Union[None, BaseException]]:
        middleware = RobotsdMiddleware(crawler)
        outcomes = await asyncio.gather(
            *(middleware.process_request(r) for r in requests), return_exceptions=True
        )
        await middleware._close()
        return outcomes

    outcomes = dict(zip(("head", "get", "post", "other", "denied"), asyncio.run(main())))

    assert outcomes["head"] is None and outcomes["get"] is None
    assert get.url == site.url + "/b"  # sent where robotsd signed it
    for request in (head, get):
        answer = request.meta[META_KEY]
        assert isinstance(answer, CheckResponse) and isinstance(answer.sign, SignJson)
        assert answer.sign.method == request.method
        headers = _headers(request)
        assert headers["Signature"] == answer.sign.headers.Signature
        sent = httpx.request(request.method, request.url, headers=headers, trust_env=False)
        assert sent.status_code == 200, sent.text
    post_error = outcomes["post"]
    assert isinstance(post_error, NotSigned)
    assert "GET and HEAD requests only, not POST" in str(post_error)
    other_error = outcomes["other"]
    assert isinstance(other_error, NotSigned)
    assert isinstance(other_error.error, ProblemError)
    assert other_error.error.type == SIGN_OTHER_AGENT
    assert not isinstance(outcomes["denied"], NotSigned)
    assert type(outcomes["denied"]).__name__ == "Disallowed"

    requests_seen = site.requests()
    assert [(r["method"], r["path"], r["verified"]) for r in requests_seen] == [
        ("HEAD", "/a", True), ("GET", "/b", True)
    ]
    assert crawler.stats.get_value("robotsd/signed") == 2
    assert crawler.stats.get_value("robotsd/not_signed") == 2
    assert crawler.stats.get_value("robotsd/problem/sign-other-agent") == 1


def _send(sign: SignJson) -> httpx.Response:
    return httpx.request(sign.method, sign.url, headers=signature_headers(sign), trust_env=False)


def test_the_client_asks_for_a_signature(
    start_robotsd: StartRobotsd, make_verifying_site: MakeVerifyingSite
) -> None:
    robotsd = start_robotsd(*SIGNING)
    site = make_verifying_site(robotsd)
    with Client(robotsd.url) as client:
        # The fragment is never sent, and not signed.
        get = client.check(site.url + "/a#top", "ExampleBot", sign="GET")
        head = client.check(site.url + "/a?x=1&y=~", "ExampleBot", sign="HEAD")
        unsigned = client.check(site.url + "/b", "ExampleBot")
        denied = client.check(site.url + "/private/x", "ExampleBot", sign="GET")
        many = client.check_many([site.url + "/b", site.url + "/private/x"], "ExampleBot", sign="GET")
        with Client(start_robotsd().url) as keyless:
            with pytest.raises(ProblemError) as off:
                keyless.check(site.url + "/a", "ExampleBot", sign="GET")

    assert isinstance(get.sign, SignJson) and isinstance(head.sign, SignJson)
    assert (get.sign.method, get.sign.url) == ("GET", site.url + "/a")
    assert (head.sign.method, head.sign.url) == ("HEAD", site.url + "/a?x=1&y=~")
    assert not unsigned.sign and not denied.sign and not denied.allowed
    assert isinstance(many[0], CheckResponse) and isinstance(many[0].sign, SignJson)
    assert isinstance(many[1], CheckResponse) and not many[1].sign
    assert off.value.type == SIGNING_OFF and off.value.status == 400
    assert [_send(s).status_code for s in (get.sign, head.sign, many[0].sign)] == [200] * 3
    # A signature is for its own method and URL only.
    assert httpx.get(head.sign.url, headers=signature_headers(head.sign), trust_env=False).status_code == 401

    assert [(r["method"], r["path"], r["verified"]) for r in site.requests()] == [
        ("GET", "/a", True), ("HEAD", "/a?x=1&y=~", True), ("GET", "/b", True),
        ("GET", "/a?x=1&y=~", False),
    ]


def test_the_async_client_signs_a_paced_slot_and_batches(
    start_robotsd: StartRobotsd, make_verifying_site: MakeVerifyingSite
) -> None:
    robotsd = start_robotsd(*SIGNING, "--wba-product-token", "ExampleBot")
    site = make_verifying_site(robotsd)

    async def main() -> tuple[CheckResponse, list[Any], ProblemError]:
        async with AsyncClient(robotsd.url) as client:
            paced = await client.check(site.url + "/a", CRAWLER_UA, pace=True, sign="GET")
            assert isinstance(paced.pace, PaceJson) and paced.pace.outcome == "reserved"
            # Its signature holds from the slot on.
            await asyncio.sleep(paced.pace.wait_ms / 1000)
            batch = await client.check_batch(
                [(site.url + "/b", CRAWLER_UA), (site.url + "/new", "ExampleBot/2.1")], sign="HEAD"
            )
            with pytest.raises(ProblemError) as other:
                await client.check(site.url + "/a", "OtherBot", sign="GET")
            return paced, batch, other.value

    paced, batch, other = asyncio.run(main())
    assert isinstance(paced.sign, SignJson)
    assert _send(paced.sign).status_code == 200
    for item in batch:
        assert isinstance(item, CheckResponse) and isinstance(item.sign, SignJson)
        assert item.sign.method == "HEAD"
        assert _send(item.sign).status_code == 200
    assert other.type == SIGN_OTHER_AGENT
    assert [(r["method"], r["path"], r["verified"]) for r in site.requests()] == [
        ("GET", "/a", True), ("HEAD", "/b", True), ("HEAD", "/new", True),
    ]
