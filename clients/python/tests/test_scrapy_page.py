"""ROBOTSD_PAGE and RobotsdNofollowMiddleware: a whole crawl through examples/scrapy_crawl.py
--page, and the two halves in this process, against the real robotsd."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from conftest import CRAWLER_UA, MakeSite, Page, Robotsd, Site, closed_url
from scrapy import Request
from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse, Response
from scrapy.utils.test import get_crawler
from test_scrapy import Crawl

from robotsd import CheckResponse, Client, PageResponse
from robotsd.scrapy import (
    META_KEY,
    PAGE_META_KEY,
    RobotsdMiddleware,
    RobotsdNofollowMiddleware,
)

NOFOLLOW_META = '<meta name="robots" content="nofollow">'


def page(links: list[str], head: str = "", headers: tuple[tuple[str, str], ...] = ()) -> Page:
    anchors = "".join(f'<a href="{link}">{link}</a>\n' for link in links)
    body = f"<html><head>{head}</head><body>\n{anchors}</body></html>\n"
    return [("Content-Type", "text/html; charset=utf-8"), *headers], body.encode()


def test_a_crawl_follows_no_link_of_a_nofollow_page(
    make_site: MakeSite, robotsd: Robotsd, tmp_path: Path
) -> None:
    leaves = ["/a/1", "/a/2", "/b/1", "/b/2", "/c/1", "/d/1"]
    served = {
        # nofollow by a robots meta tag: its links are not followed.
        "/a": page(["/a/1", "/a/2"], NOFOLLOW_META),
        # nofollow for another crawler only, in a meta tag and in a header: followed.
        "/b": page(["/b/1", "/b/2"], '<meta name="googlebot" content="nofollow">'),
        "/c": page(["/c/1"], headers=(("X-Robots-Tag", "OtherBot: nofollow"),)),
        # nofollow for this crawler, by header.
        "/d": page(["/d/1"], headers=(("X-Robots-Tag", "ExampleBot: noindex, nofollow"),)),
        **{leaf: page([]) for leaf in leaves},
    }
    site = make_site(paths=["/", "/a", "/b", "/c", "/d", "/private/1"], served=served)
    crawl = Crawl(robotsd.url, site, tmp_path, "--page")

    fetched = ["/", "/a", "/b", "/b/1", "/b/2", "/c", "/c/1", "/d"]
    assert crawl.returncode == 0, crawl.log[-5000:]
    assert crawl.output["fetched"] == fetched
    assert crawl.output["disallowed"] == ["/private/1"]
    assert site.pages() == fetched
    assert all(site.hits[leaf] == 0 for leaf in ["/a/1", "/a/2", "/d/1"])
    # Each page's answer, as the spider found it on response.meta.
    follows = {"index": True, "follow": True}
    assert crawl.output["page"] == {
        "/": follows,
        "/a": {"index": True, "follow": False},
        "/b": follows,
        "/b/1": follows,
        "/b/2": follows,
        "/c": follows,
        "/c/1": follows,
        "/d": {"index": False, "follow": False},
    }
    assert crawl.stat("page/asked") == len(fetched)
    assert crawl.stat("page/answered") == len(fetched)
    assert crawl.stat("page/nofollow") == 2 and crawl.stat("page/noindex") == 1
    assert crawl.stat("page/nofollow_dropped") == 3
    assert crawl.stat("page/unavailable") is None and crawl.stat("page/problem") is None
    page_posts = robotsd.metric("robotsd_http_requests_total", route="/v1/page", method="POST")
    assert page_posts == len(fetched)
    assert "Not followed, <200 " in crawl.log


def middleware_for(url: str) -> tuple[RobotsdMiddleware, Any]:
    crawler = get_crawler(
        settings_dict={"ROBOTSD_URL": url, "ROBOTSD_PAGE": True, "USER_AGENT": CRAWLER_UA,
                       "ROBOTSTXT_OBEY": False}
    )
    assert crawler.stats is not None
    crawler.stats.open_spider()
    return RobotsdMiddleware(crawler), crawler.stats


def checked(url: str, answer: CheckResponse) -> Request:
    """A request as the downloader middleware leaves it once robotsd allowed it."""
    request = Request(url)
    request.meta[META_KEY] = answer
    return request


def html_response(request: Request, body: str, **headers: list[str]) -> HtmlResponse:
    """A response of ``body``, with ``headers`` (by name, each name's values, as Scrapy keeps
    them) after its Content-Type."""
    fields = {"Content-Type": ["text/html; charset=utf-8"]}
    fields.update({name.replace("_", "-"): values for name, values in headers.items()})
    return HtmlResponse(request.url, body=body.encode(), headers=fields, request=request)


def test_a_page_robotsd_cannot_answer_about_goes_on_without_its_answer(
    site: Site, robotsd: Robotsd, caplog: pytest.LogCaptureFixture
) -> None:
    url = site.url + "/p/1"
    with Client(robotsd.url) as client:
        allowed = client.check(url, CRAWLER_UA)
    assert allowed.allowed

    async def run(middleware: RobotsdMiddleware, responses: list[Response]) -> list[Response]:
        try:
            passed = []
            for response in responses:
                assert response.request is not None
                passed.append(await middleware.process_response(response.request, response))
            return passed
        finally:
            await middleware._close()

    # robotsd down: both responses go on, without an answer; one warning for the outage.
    down, stats = middleware_for(closed_url())
    requests = [checked(url, allowed), checked(url + "?2", allowed)]
    responses: list[Response] = [html_response(r, f"<p>{NOFOLLOW_META}</p>") for r in requests]
    with caplog.at_level(logging.WARNING, logger="robotsd.scrapy"):
        assert asyncio.run(run(down, responses)) == responses
    assert all(PAGE_META_KEY not in r.meta for r in requests)
    assert stats.get_value("robotsd/page/asked") == 2
    assert stats.get_value("robotsd/page/unavailable") == 2
    assert stats.get_value("robotsd/page/answered") is None
    warnings = [r for r in caplog.records if "could not answer about the page" in r.message]
    assert len(warnings) == 1 and warnings[0].levelno == logging.WARNING

    # robotsd up: an answer; a page robotsd refuses (more headers than it takes) goes on
    # without one; responses that are not a 2xx to a request robotsd allowed are not asked
    # about.
    up, stats = middleware_for(robotsd.url)
    answered = checked(url, allowed)
    refused = checked(url + "?3", allowed)
    unchecked = Request(url + "?4")
    missing = checked(url + "?5", allowed)
    responses = [
        html_response(answered, f"<p>{NOFOLLOW_META}</p>", X_Robots_Tag=["noindex"]),
        html_response(refused, "<p></p>", X_Robots_Tag=["noindex"] * 300),
        html_response(unchecked, "<p></p>"),
        Response(missing.url, status=404, request=missing),
    ]
    assert asyncio.run(run(up, responses)) == responses
    answer = answered.meta[PAGE_META_KEY]
    assert isinstance(answer, PageResponse)
    assert answer.robots and answer.robots.index is False and answer.robots.follow is False
    assert [(r.rule, r.header or None) for r in answer.robots.rules][:1] == [("noindex", 1)]
    assert all(PAGE_META_KEY not in r.meta for r in (refused, unchecked, missing))
    assert stats.get_value("robotsd/page/asked") == 2
    assert stats.get_value("robotsd/page/answered") == 1
    assert stats.get_value("robotsd/page/problem/invalid-page") == 1


def test_the_nofollow_middleware_drops_the_requests_of_a_nofollow_page(
    site: Site, robotsd: Robotsd
) -> None:
    url = site.url + "/p/2"
    headers = [("Content-Type", "text/html")]
    with Client(robotsd.url) as client:
        nofollow = client.page(url, CRAWLER_UA, headers, NOFOLLOW_META.encode())
        follow = client.page(url, CRAWLER_UA, headers, b"<p>links</p>")
    assert nofollow.robots and nofollow.robots.follow is False
    assert follow.robots and follow.robots.follow is True

    crawler = get_crawler(settings_dict={"ROBOTSD_PAGE": True})
    assert crawler.stats is not None
    crawler.stats.open_spider()
    middleware = RobotsdNofollowMiddleware.from_crawler(crawler)

    def response_with(answer: PageResponse | None) -> Response:
        request = Request(url)
        if answer is not None:
            request.meta[PAGE_META_KEY] = answer
        return Response(url, request=request)

    link = Request(site.url + "/p/3")
    kept_anyway = Request(site.url + "/p/4", meta={"dont_obey_robotstxt": True})
    item = {"title": "an item"}
    outputs: list[Any] = [item, link, kept_anyway]

    async def drained(response: Response) -> list[Any]:
        async def produced() -> AsyncIterator[Any]:
            for output in outputs:
                yield output

        return [o async for o in middleware.process_spider_output_async(response, produced())]

    nofollow_page = response_with(nofollow)
    assert list(middleware.process_spider_output(nofollow_page, outputs)) == [item, kept_anyway]
    assert asyncio.run(drained(nofollow_page)) == [item, kept_anyway]
    for other in (response_with(follow), response_with(None)):
        assert list(middleware.process_spider_output(other, outputs)) == outputs
        assert asyncio.run(drained(other)) == outputs
    assert crawler.stats.get_value("robotsd/page/nofollow_dropped") == 2

    with pytest.raises(NotConfigured, match="ROBOTSD_PAGE"):
        RobotsdNofollowMiddleware.from_crawler(get_crawler(settings_dict={}))
