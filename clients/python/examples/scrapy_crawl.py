"""Crawl one site with Scrapy, every request checked through robotsd.

    python scrapy_crawl.py --robotsd http://127.0.0.1:8080 --start http://127.0.0.1:8000/ --ua ExampleBot

Follows every <a href> on the start URL's origin (each page once) and prints one line of JSON:
{"fetched": [...], "disallowed": [...]}, the paths fetched and the paths robotsd refused, each
sorted. Logs go to stderr. Exits 0 when every request was checked and answered, 1 otherwise.
Each fetch waits for its slot from robotsd (pacing, the middleware's default); --no-pace turns
pacing off (crawl-delay is then kept by Scrapy's download slots, for this crawler alone).
--fail-open lets requests through when robotsd cannot answer; --stats FILE writes Scrapy's
stats as JSON. --page asks robotsd about each page fetched (ROBOTSD_PAGE) and follows no link of
a nofollow page (RobotsdNofollowMiddleware); the line of JSON then also has "page": each path
fetched and its page answer's robots.index and robots.follow (null without an answer). --sign
has robotsd sign every request it allows (ROBOTSD_SIGN: Web Bot Auth, robotsd's
docs/bot-auth.md), which is sent with the signature; a request robotsd does not sign is not
sent (and the crawl exits 1).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import AsyncIterator, Iterator
from typing import Any
from urllib.parse import urlsplit

import scrapy
from scrapy.crawler import CrawlerProcess
from scrapy.http import Response
from twisted.python.failure import Failure

from robotsd import PageResponse
from robotsd.scrapy import PAGE_META_KEY, CheckFailed, Disallowed


def _path(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme, parts.netloc


class SiteSpider(scrapy.Spider):
    name = "robotsd-example"

    def __init__(self, start_url: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.start_url = start_url
        self.fetched: set[str] = set()
        self.disallowed: set[str] = set()
        self.failed: set[str] = set()
        self.pages: dict[str, Any] = {}

    async def start(self) -> AsyncIterator[scrapy.Request]:
        yield scrapy.Request(self.start_url, callback=self.parse, errback=self.on_error)

    def parse(self, response: Response) -> Iterator[scrapy.Request]:
        self.fetched.add(_path(response.url))
        answer = response.meta.get(PAGE_META_KEY)
        robots = answer.robots if isinstance(answer, PageResponse) else None
        self.pages[_path(response.url)] = (
            {"index": robots.index, "follow": robots.follow} if robots else None
        )
        if not hasattr(response, "css"):
            return
        for href in response.css("a::attr(href)").getall():
            url = response.urljoin(href)
            if _origin(url) == _origin(self.start_url):
                # The scheduler's duplicate filter fetches each URL once.
                yield scrapy.Request(url, callback=self.parse, errback=self.on_error)

    def on_error(self, failure: Failure) -> None:
        request = failure.request  # type: ignore[attr-defined]
        if isinstance(failure.value, Disallowed):
            self.disallowed.add(_path(request.url))
        else:
            if isinstance(failure.value, CheckFailed):
                self.logger.error("not checked: %s", failure.value)
            else:
                self.logger.error("failed: %s: %s", request.url, failure.value)
            self.failed.add(_path(request.url))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--robotsd", required=True, help="robotsd's base URL")
    parser.add_argument("--start", required=True, help="the page to start from")
    parser.add_argument("--ua", required=True, help="the User-Agent to crawl (and check) as")
    parser.add_argument("--fail-open", action="store_true", help="fetch what robotsd cannot check")
    parser.add_argument("--no-pace", action="store_true", help="no fleet pacing (ROBOTSD_PACE)")
    parser.add_argument("--page", action="store_true", help="page answers, nofollow kept")
    parser.add_argument("--sign", action="store_true", help="signed requests (ROBOTSD_SIGN)")
    parser.add_argument("--stats", help="write Scrapy's stats to this file as JSON")
    args = parser.parse_args(argv)

    process = CrawlerProcess(
        settings={
            # The robotsd setup, as a project's settings.py has it:
            "DOWNLOADER_MIDDLEWARES": {"robotsd.scrapy.RobotsdMiddleware": 570},
            "ROBOTSD_URL": args.robotsd,
            "ROBOTSD_FAIL_OPEN": args.fail_open,
            "ROBOTSD_PACE": not args.no_pace,
            # Each request signed with the fleet's Web Bot Auth key, held by robotsd.
            "ROBOTSD_SIGN": args.sign,
            "ROBOTSTXT_OBEY": False,
            "USER_AGENT": args.ua,
            # After each fetch, the page's own rules: no link of a nofollow page followed.
            "ROBOTSD_PAGE": args.page,
            "SPIDER_MIDDLEWARES": (
                {"robotsd.scrapy.RobotsdNofollowMiddleware": 950} if args.page else {}
            ),
            # Nothing here listens or looks anything up beyond the two services named.
            "TELNETCONSOLE_ENABLED": False,
            "REMOTE_CONTROL_ENABLED": False,
            "COOKIES_ENABLED": False,
            "LOG_LEVEL": "DEBUG",
        }
    )
    crawler = process.create_crawler(SiteSpider)
    process.crawl(crawler, start_url=args.start)
    process.start()

    spider = crawler.spider
    assert isinstance(spider, SiteSpider)
    if args.stats:
        stats = crawler.stats.get_stats() if crawler.stats else {}
        with open(args.stats, "w", encoding="utf-8") as f:
            json.dump(stats, f, default=str, indent=1, sort_keys=True)
    output: dict[str, Any] = {
        "fetched": sorted(spider.fetched),
        "disallowed": sorted(spider.disallowed),
    }
    if args.page:
        output["page"] = dict(sorted(spider.pages.items()))
    print(json.dumps(output), flush=True)
    return 1 if spider.failed else 0


if __name__ == "__main__":
    sys.exit(main())
