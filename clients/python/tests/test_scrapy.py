"""The Scrapy middleware: whole crawls of a loopback site through examples/scrapy_crawl.py (a
Twisted reactor cannot restart in one process, so each crawl is a process of its own), and the
middleware's batching in this process against the real robotsd."""

from __future__ import annotations

import asyncio
import json
import math
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import (
    CRAWLER_UA,
    Robotsd,
    Site,
    allowed_paths,
    closed_url,
    robots_line,
    site_paths,
)
from scrapy import Request
from scrapy.exceptions import NotConfigured
from scrapy.utils.test import get_crawler

from robotsd import AsyncClient, CheckResponse
from robotsd.scrapy import META_KEY, Disallowed, RobotsdMiddleware

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "scrapy_crawl.py"


class Crawl:
    def __init__(self, robotsd_url: str, site: Site, tmp_path: Path, *flags: str) -> None:
        stats_file = tmp_path / "stats.json"
        done = subprocess.run(
            [sys.executable, str(EXAMPLE), "--robotsd", robotsd_url, "--start", site.url + "/",
             "--ua", CRAWLER_UA, "--stats", str(stats_file), *flags],
            capture_output=True,
            text=True,
            timeout=180,
        )
        self.returncode = done.returncode
        self.log = done.stderr
        lines = done.stdout.splitlines()
        assert len(lines) == 1, f"stdout: {done.stdout!r}\nstderr: {done.stderr[-5000:]}"
        self.output: dict[str, list[str]] = json.loads(lines[0])
        self.stats: dict[str, Any] = json.loads(stats_file.read_text())

    def stat(self, key: str) -> Any:
        return self.stats.get(f"robotsd/{key}")


def test_a_crawl_fetches_exactly_what_robotsd_allows(site: Site, robotsd: Robotsd, tmp_path: Path) -> None:
    crawl = Crawl(robotsd.url, site, tmp_path)
    posts = robotsd.metric("robotsd_http_requests_total", route="/v1/check", method="POST")
    allowed = allowed_paths(robotsd.url, site.url, CRAWLER_UA)
    disallowed = sorted(set(site_paths()) - set(allowed))

    assert crawl.returncode == 0, crawl.log[-5000:]
    assert crawl.output == {"fetched": allowed, "disallowed": disallowed}
    assert site.pages() == allowed
    assert all(site.hits[p] == 1 for p in allowed)
    # Some of each, or the test would prove little.
    assert len(allowed) >= 30 and len(disallowed) >= 10
    # robots.txt was fetched once, by robotsd: never by Scrapy.
    assert site.hits["/robots.txt"] == 1
    assert "ExampleBot" not in site.agents["/robots.txt"][0]

    assert crawl.stat("checked") == len(site_paths())
    assert crawl.stat("allowed") == len(allowed)
    assert crawl.stat("disallowed") == len(disallowed)
    assert crawl.stat("disallowed/matched_rule") == len(disallowed)
    assert crawl.stat("fail_closed") is None and crawl.stat("unavailable") is None
    assert crawl.stat("crawl_delay_max") == 0.01
    # Batching: fewer round trips than checks, as robotsd itself counted them.
    assert crawl.stat("batches") == posts
    assert crawl.stat("batches") < crawl.stat("checked")
    assert crawl.stat("batch_size_max") > 1

    line = robots_line("Disallow: /private/")
    for path in disallowed:
        if path.startswith("/private/"):
            pattern = rf"Forbidden by robots\.txt: <GET {re.escape(site.url + path)}> \(robotsd: matched_rule, {re.escape(site.url)}/robots\.txt line {line}: disallow: /private/\)"
            assert re.search(pattern, crawl.log), f"no log line for {path}"


def test_with_robotsd_down_the_crawl_fails_closed(site: Site, tmp_path: Path) -> None:
    crawl = Crawl(closed_url(), site, tmp_path)

    assert crawl.returncode == 1
    assert crawl.output == {"fetched": [], "disallowed": []}
    assert site.hits == {}
    assert crawl.stat("checked") == 1
    assert crawl.stat("unavailable") == 1 and crawl.stat("fail_closed") == 1
    assert crawl.stat("fail_open") is None
    assert "robotsd could not check" in crawl.log and "dropped" in crawl.log


def test_with_robotsd_down_and_fail_open_the_crawl_goes_on(site: Site, tmp_path: Path) -> None:
    crawl = Crawl(closed_url(), site, tmp_path, "--fail-open")

    assert crawl.returncode == 0, crawl.log[-5000:]
    assert crawl.output == {"fetched": sorted(site_paths()), "disallowed": []}
    assert site.hits["/robots.txt"] == 0
    assert crawl.stat("unavailable") == len(site_paths())
    assert crawl.stat("fail_open") == len(site_paths())
    assert crawl.stat("fail_closed") is None
    assert crawl.log.count("robotsd could not check") >= 1


def test_the_middleware_needs_robotsd_url_and_refuses_robotstxt_obey() -> None:
    with pytest.raises(NotConfigured):
        RobotsdMiddleware.from_crawler(get_crawler(settings_dict={"ROBOTSTXT_OBEY": False}))
    with pytest.raises(ValueError, match="ROBOTSTXT_OBEY"):
        RobotsdMiddleware.from_crawler(
            get_crawler(settings_dict={"ROBOTSD_URL": "http://127.0.0.1:1", "ROBOTSTXT_OBEY": True})
        )


@pytest.mark.parametrize(("batch_size", "requests"), [(100, 51), (8, 51)])
def test_concurrent_requests_share_batches(
    site: Site, robotsd: Robotsd, batch_size: int, requests: int
) -> None:
    # No engine outside a crawl, so no download slots to apply crawl-delays to.
    crawler = get_crawler(
        settings_dict={"ROBOTSD_URL": robotsd.url, "ROBOTSD_BATCH_SIZE": batch_size,
                       "ROBOTSD_OBEY_CRAWL_DELAY": False, "USER_AGENT": CRAWLER_UA,
                       "ROBOTSTXT_OBEY": False}
    )
    if crawler.stats is not None:
        crawler.stats.open_spider()
    posts: list[httpx.Request] = []

    async def count(request: httpx.Request) -> None:
        posts.append(request)

    paths = [site_paths()[i % len(site_paths())] for i in range(requests)]

    async def main() -> list[Any]:
        async with httpx.AsyncClient(event_hooks={"request": [count]}, trust_env=False) as http:
            middleware = RobotsdMiddleware(crawler, client=AsyncClient(robotsd.url, http_client=http))
            reqs = [Request(site.url + p) for p in paths]
            outcomes = await asyncio.gather(
                *(middleware.process_request(r) for r in reqs), return_exceptions=True
            )
            await middleware._close()
            return [(r, o) for r, o in zip(reqs, outcomes)]

    outcomes = asyncio.run(main())

    assert len(posts) == math.ceil(requests / batch_size)
    allowed = set(allowed_paths(robotsd.url, site.url, CRAWLER_UA))
    for (request, outcome), path in zip(outcomes, paths):
        if path in allowed:
            assert outcome is None
            assert isinstance(request.meta[META_KEY], CheckResponse)
        else:
            assert isinstance(outcome, Disallowed), (path, outcome)
            assert outcome.answer.rule and str(outcome.answer.rule.line) in str(outcome)
    assert crawler.stats is not None
    assert crawler.stats.get_value("robotsd/batches") == len(posts)
    assert crawler.stats.get_value("robotsd/checked") == requests
    assert site.hits["/robots.txt"] == 1
