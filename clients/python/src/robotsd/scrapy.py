"""A Scrapy downloader middleware that checks every request through robotsd.

Enable it instead of Scrapy's own robots.txt handling::

    DOWNLOADER_MIDDLEWARES = {"robotsd.scrapy.RobotsdMiddleware": 100}
    ROBOTSD_URL = "http://robotsd:8080"
    ROBOTSTXT_OBEY = False  # Scrapy's default; its project template sets True

Scrapy then never fetches robots.txt: robotsd does, once per origin for the whole fleet. The
checks of requests that arrive together go to robotsd as one batch. The middleware needs
Scrapy's asyncio reactor (the default since Scrapy 2.13). Settings are in the README.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from typing import TYPE_CHECKING, Any, Callable, Optional, Union

from scrapy import signals
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.utils.httpobj import urlparse_cached

from ._client import MAX_BATCH, AsyncClient, Result
from ._errors import ProblemError, RobotsdError
from ._models import CheckResponse, Problem

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.spiders import Spider

logger = logging.getLogger(__name__)

#: The ``request.meta`` key under which the middleware leaves robotsd's answer (a
#: :class:`robotsd.CheckResponse`: its ``crawl_delay``, ``usage`` preferences, ...).
META_KEY = "robotsd"

_BATCH_DEADLINE = "urn:robotsd:problem:batch-deadline"


class Disallowed(IgnoreRequest):
    """A request robots.txt disallows, dropped; ``answer`` is robotsd's answer."""

    def __init__(self, request: Request, answer: CheckResponse) -> None:
        super().__init__(f"Forbidden by robots.txt: {request} ({_why(answer)})")
        self.url = request.url
        self.answer = answer


class CheckFailed(IgnoreRequest):
    """A request robotsd could not check, dropped because ``ROBOTSD_FAIL_OPEN`` is off."""

    def __init__(self, request: Request, error: RobotsdError) -> None:
        super().__init__(f"Not checked by robotsd, so not fetched: {request} ({error})")
        self.url = request.url
        self.error = error


def _why(answer: CheckResponse) -> str:
    if answer.rule:
        rule = answer.rule
        return (
            f"robotsd: {answer.reason}, {answer.robots_url} line {rule.line}: "
            f"{rule.directive}: {rule.pattern}"
        )
    return f"robotsd: {answer.reason}, {answer.robots_url}"


class _Batcher:
    """Gathers the checks that arrive within ``wait`` seconds (at most ``max_size``) into one
    ``POST /v1/check``. Scrapy hands a burst of requests to the middlewares in one go (up to
    CONCURRENT_REQUESTS), so a burst costs one round trip instead of one each."""

    def __init__(
        self,
        client: AsyncClient,
        max_size: int,
        wait: float,
        on_batch: Callable[[int], None],
    ) -> None:
        self._client = client
        self._max_size = max_size
        self._wait = wait
        self._on_batch = on_batch
        self._pending: list[tuple[str, str, asyncio.Future[Result]]] = []
        self._timer: Optional[asyncio.TimerHandle] = None
        # Strong references: the event loop keeps only weak ones to running tasks.
        self._tasks: set[asyncio.Task[None]] = set()

    async def check(self, url: str, ua: str) -> Result:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Result] = loop.create_future()
        self._pending.append((url, ua, future))
        if len(self._pending) >= self._max_size:
            self._flush()
        elif self._timer is None:
            self._timer = loop.call_later(self._wait, self._flush)
        return await future

    def _flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        batch, self._pending = self._pending, []
        if batch:
            task = asyncio.ensure_future(self._send(batch))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _send(self, batch: list[tuple[str, str, asyncio.Future[Result]]]) -> None:
        self._on_batch(len(batch))
        try:
            results = await self._client.check_batch([(url, ua) for url, ua, _ in batch])
            if len(results) != len(batch):
                raise RobotsdError(
                    f"robotsd answered {len(results)} items for a batch of {len(batch)}"
                )
        except asyncio.CancelledError:
            for *_, future in batch:
                future.cancel()
            raise
        except Exception as e:  # every waiter hears of it, whatever it was
            error = e if isinstance(e, RobotsdError) else RobotsdError(str(e))
            for *_, future in batch:
                if not future.done():
                    future.set_exception(error)
            return
        for (*_, future), result in zip(batch, results):
            if not future.done():  # its request may have been cancelled meanwhile
                future.set_result(result)

    async def close(self) -> None:
        self._flush()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)


class RobotsdMiddleware:
    """Checks every request through robotsd before it is downloaded, and drops the ones
    robots.txt disallows with :class:`Disallowed` (an ``IgnoreRequest``, so the request's
    errback sees it). Requests for ``/robots.txt`` itself, non-HTTP(S) URLs and requests with
    ``meta["dont_obey_robotstxt"]`` go through unchecked."""

    def __init__(self, crawler: Crawler, client: Optional[AsyncClient] = None) -> None:
        settings = crawler.settings
        self._base_url: Optional[str] = settings.get("ROBOTSD_URL")
        if not self._base_url and client is None:
            raise NotConfigured("ROBOTSD_URL is not set")
        if settings.getbool("ROBOTSTXT_OBEY"):
            # Not NotConfigured: that would quietly crawl with no robotsd check at all.
            raise ValueError(
                "robotsd.scrapy.RobotsdMiddleware replaces Scrapy's robots.txt handling: set "
                "ROBOTSTXT_OBEY = False, or Scrapy fetches every robots.txt itself as well"
            )
        self.crawler = crawler
        self._client = client
        self._owns_client = client is None
        self._token: Optional[str] = settings.get("ROBOTSD_TOKEN") or None
        self._timeout = settings.getfloat("ROBOTSD_TIMEOUT", 30.0)
        self._user_agent: Optional[str] = settings.get("ROBOTSD_USER_AGENT") or None
        self._default_user_agent: str = settings.get("USER_AGENT") or "Scrapy"
        self._fail_open = settings.getbool("ROBOTSD_FAIL_OPEN", False)
        self._obey_crawl_delay = settings.getbool("ROBOTSD_OBEY_CRAWL_DELAY", True)
        self._max_crawl_delay = settings.getfloat("ROBOTSD_MAX_CRAWL_DELAY", 60.0)
        self._batch_size = max(1, min(MAX_BATCH, settings.getint("ROBOTSD_BATCH_SIZE", 100)))
        self._batch_wait = max(0.0, settings.getfloat("ROBOTSD_BATCH_WAIT", 0.005))
        self._batcher: Optional[_Batcher] = None
        self._failing = False

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RobotsdMiddleware:
        middleware = cls(crawler)
        crawler.signals.connect(middleware._spider_closed, signal=signals.spider_closed)
        return middleware

    def _stats_inc(self, key: str, count: int = 1) -> None:
        if self.crawler.stats is not None:
            self.crawler.stats.inc_value(f"robotsd/{key}", count)

    def _stats_max(self, key: str, value: float) -> None:
        if self.crawler.stats is not None:
            self.crawler.stats.max_value(f"robotsd/{key}", value)

    def _on_batch(self, size: int) -> None:
        self._stats_inc("batches")
        self._stats_max("batch_size_max", size)

    def _get_batcher(self) -> _Batcher:
        # Made on first use, inside the reactor's running event loop, which its pool binds to.
        if self._batcher is None:
            if self._client is None:
                assert self._base_url is not None
                self._client = AsyncClient(
                    self._base_url, token=self._token, timeout=self._timeout
                )
            self._batcher = _Batcher(
                self._client, self._batch_size, self._batch_wait, self._on_batch
            )
        return self._batcher

    def _agent(self, request: Request) -> str:
        if self._user_agent:
            return self._user_agent
        # UserAgentMiddleware (priority 500) has not run yet at 100; a header set on the
        # request itself has.
        header = request.headers.get(b"User-Agent")
        if header:
            return header.decode("latin-1")
        spider_agent = getattr(self.crawler.spider, "user_agent", None)
        return str(spider_agent or self._default_user_agent)

    async def process_request(self, request: Request, spider: Optional[Spider] = None) -> None:
        """Drop ``request`` if robotsd says no, or could not say and ROBOTSD_FAIL_OPEN is off."""
        parsed = urlparse_cached(request)
        if (
            request.meta.get("dont_obey_robotstxt")
            or parsed.scheme not in ("http", "https")
            # robots.txt is always allowed (RFC 9309 §2.5), and robotsd fetches it anyway.
            or parsed.path == "/robots.txt"
        ):
            return
        self._stats_inc("checked")
        batcher = self._get_batcher()
        ua = self._agent(request)
        result: Union[Result, RobotsdError]
        try:
            result = await batcher.check(request.url, ua)
            if isinstance(result, Problem) and result.type == _BATCH_DEADLINE:
                # The origin's robots.txt was still being fetched when the batch had to
                # answer; robotsd goes on fetching, and answers from its cache once done.
                result = await batcher.check(request.url, ua)
        except RobotsdError as e:
            result = e
        if isinstance(result, Problem):
            result = ProblemError(result)
        if isinstance(result, RobotsdError):
            self._could_not_check(request, result)
            return
        if self._failing:
            self._failing = False
            logger.info("robotsd answers again")
        request.meta[META_KEY] = result
        if self._obey_crawl_delay and result.crawl_delay:
            self._apply_crawl_delay(request, result.crawl_delay)
        if not result.allowed:
            self._stats_inc("disallowed")
            self._stats_inc(f"disallowed/{result.reason}")
            error = Disallowed(request, result)
            logger.debug(str(error), extra={"spider": self.crawler.spider})
            raise error
        self._stats_inc("allowed")

    def _could_not_check(self, request: Request, error: RobotsdError) -> None:
        if isinstance(error, ProblemError):
            self._stats_inc("problem")
            self._stats_inc(f"problem/{error.type.rsplit(':', 1)[-1]}")
        else:
            self._stats_inc("unavailable")
        verdict = "fetched anyway (ROBOTSD_FAIL_OPEN)" if self._fail_open else "dropped"
        # One warning per outage, not one per request.
        log = logger.debug if self._failing else logger.warning
        self._failing = True
        log(
            "robotsd could not check %(request)s, %(verdict)s: %(error)s",
            {"request": request, "verdict": verdict, "error": error},
            extra={"spider": self.crawler.spider},
        )
        if self._fail_open:
            self._stats_inc("fail_open")
            return
        self._stats_inc("fail_closed")
        raise CheckFailed(request, error)

    def _apply_crawl_delay(self, request: Request, crawl_delay: float) -> None:
        engine = self.crawler.engine
        if engine is None:
            return
        downloader = engine.downloader
        delay = min(crawl_delay, self._max_crawl_delay)
        # The slot is made here if need be (as the downloader would right after this
        # middleware), so that the first burst to an origin is already spaced out. Scrapy
        # before 2.14 requires the spider argument, later ones warn when given it.
        # _get_slot is Scrapy's private API: should a later Scrapy change it, the crawl goes
        # on without crawl-delay (said once) rather than failing every request.
        try:
            get_slot: Any = downloader._get_slot
            spider_param = inspect.signature(get_slot).parameters.get("spider")
            if spider_param is not None and spider_param.default is inspect.Parameter.empty:
                _, slot = get_slot(request, self.crawler.spider)
            else:
                _, slot = get_slot(request)
            slot_delay = float(slot.delay)
        except (AttributeError, TypeError, ValueError) as e:
            self._obey_crawl_delay = False
            logger.warning(
                "robotsd: cannot set crawl-delay on this Scrapy's download slots (%s); "
                "crawl-delay is not obeyed in this crawl",
                e,
                extra={"spider": self.crawler.spider},
            )
            return
        if slot_delay < delay:
            slot.delay = delay
            self._stats_max("crawl_delay_max", delay)

    async def _spider_closed(self) -> None:
        await self._close()

    async def _close(self) -> None:
        if self._batcher is not None:
            await self._batcher.close()
        if self._client is not None and self._owns_client:
            await self._client.aclose()
