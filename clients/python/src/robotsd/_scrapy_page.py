"""The Scrapy middleware's page answers (``ROBOTSD_PAGE``): after each response the downloader
middleware let through, robotsd's answer about the page (``POST /v1/page``: its robots rules
for the crawler, its AI-use statements) on ``response.meta["robotsd_page"]``; and
:class:`RobotsdNofollowMiddleware`, a spider middleware that drops the requests a spider yields
from a page whose rules say ``nofollow``. Imported by :mod:`robotsd.scrapy`, which names both."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterable, Iterator
from typing import TYPE_CHECKING, Any, Callable, Optional

from scrapy import Request
from scrapy.exceptions import NotConfigured

from ._client import AsyncClient
from ._errors import ProblemError, RobotsdError
from ._models import CheckResponse, PageResponse, PageRobotsJson, VerdictResponse

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.spiders import Spider

logger = logging.getLogger("robotsd.scrapy")

#: The ``request.meta`` (and so ``response.meta``) key under which the downloader middleware
#: leaves robotsd's answer about a page it let through (a :class:`robotsd.PageResponse`), with
#: ``ROBOTSD_PAGE`` on. Absent when robotsd could not answer.
PAGE_META_KEY = "robotsd_page"


def _response_headers(response: Response) -> list[tuple[bytes, bytes]]:
    # Scrapy keeps a response's headers by name, each name's values in the order received:
    # robotsd's answer counts positions among the ones the client sends of these.
    return [(name, value) for name, values in response.headers.items() for value in values]


def _page_answer(response: Response) -> Optional[PageResponse]:
    request = response.request
    answer = request.meta.get(PAGE_META_KEY) if request is not None else None
    return answer if isinstance(answer, PageResponse) else None


class _PageAsker:
    """Asks robotsd about each page the downloader middleware let through. A page robotsd
    could not answer about is logged and counted, and goes on to the spider without an
    answer: the page was fetched already, and the crawl does not fail for its rules."""

    def __init__(self, crawler: Crawler, stats_inc: Callable[[str], None]) -> None:
        self.crawler = crawler
        self._stats_inc = stats_inc
        self._failing = False

    @staticmethod
    def wanted(check: object, response: Response) -> bool:
        """Whether to ask about ``response``: a 2xx to a request whose ``check`` (its
        ``meta["robotsd"]``) allowed it. Not other statuses, whose pages a spider does not
        follow (HttpErrorMiddleware), nor requests robotsd did not check."""
        allowed = isinstance(check, (CheckResponse, VerdictResponse)) and check.allowed
        return allowed and 200 <= response.status < 300

    async def ask(
        self, client: AsyncClient, request: Request, response: Response, ua: str
    ) -> None:
        self._stats_inc("page/asked")
        try:
            answer = await client.page(
                response.url, ua, _response_headers(response), response.body
            )
        except RobotsdError as e:
            self._could_not_answer(response, e)
            return
        if self._failing:
            self._failing = False
            logger.info("robotsd answers about pages again")
        request.meta[PAGE_META_KEY] = answer
        self._stats_inc("page/answered")
        if answer.document_cut:
            self._stats_inc("page/document_cut")
        if answer.robots:
            if not answer.robots.index:
                self._stats_inc("page/noindex")
            if not answer.robots.follow:
                self._stats_inc("page/nofollow")

    def _could_not_answer(self, response: Response, error: RobotsdError) -> None:
        if isinstance(error, ProblemError):
            self._stats_inc("page/problem")
            self._stats_inc(f"page/problem/{error.type.rsplit(':', 1)[-1]}")
        else:
            self._stats_inc("page/unavailable")
        # One warning per outage, not one per page.
        log = logger.debug if self._failing else logger.warning
        self._failing = True
        log(
            "robotsd could not answer about the page %(response)s, which goes on without "
            "its page answer (no nofollow kept for it): %(error)s",
            {"response": response, "error": error},
            extra={"spider": self.crawler.spider},
        )


class RobotsdNofollowMiddleware:
    """A spider middleware that drops the requests a spider yields from a page whose robotsd
    page answer (``response.meta["robotsd_page"]``, ``ROBOTSD_PAGE``) says ``nofollow``
    (``robots.follow`` false: an ``X-Robots-Tag`` header or a robots ``meta`` tag for every
    crawler or for this one), counted in the stats as ``robotsd/page/nofollow_dropped``.
    Items go through, and so do requests with ``meta["dont_obey_robotstxt"]``, and everything
    from a page without an answer. Enable it beside the downloader middleware::

        SPIDER_MIDDLEWARES = {"robotsd.scrapy.RobotsdNofollowMiddleware": 950}
        ROBOTSD_PAGE = True
    """

    def __init__(self, crawler: Crawler) -> None:
        if not crawler.settings.getbool("ROBOTSD_PAGE", False):
            raise NotConfigured(
                "ROBOTSD_PAGE is off, so there are no page answers to find nofollow in"
            )
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RobotsdNofollowMiddleware:
        return cls(crawler)

    def process_spider_output(
        self, response: Response, result: Iterable[Any], spider: Optional[Spider] = None
    ) -> Iterator[Any]:
        nofollow = self._nofollow(response)
        for output in result:
            if not (nofollow and self._dropped(response, output)):
                yield output

    async def process_spider_output_async(
        self, response: Response, result: AsyncIterator[Any], spider: Optional[Spider] = None
    ) -> AsyncIterator[Any]:
        nofollow = self._nofollow(response)
        async for output in result:
            if not (nofollow and self._dropped(response, output)):
                yield output

    @staticmethod
    def _nofollow(response: Response) -> bool:
        answer = _page_answer(response)
        robots = answer.robots if answer is not None else None
        return isinstance(robots, PageRobotsJson) and not robots.follow

    def _dropped(self, response: Response, output: Any) -> bool:
        if not isinstance(output, Request) or output.meta.get("dont_obey_robotstxt"):
            return False
        if self.crawler.stats is not None:
            self.crawler.stats.inc_value("robotsd/page/nofollow_dropped")
        logger.debug(
            "Not followed, %(page)s is nofollow: %(request)s",
            {"page": response, "request": output},
            extra={"spider": self.crawler.spider},
        )
        return True
