"""A Scrapy downloader middleware that checks and paces every request through robotsd.

Enable it instead of Scrapy's own robots.txt handling::

    DOWNLOADER_MIDDLEWARES = {"robotsd.scrapy.RobotsdMiddleware": 570}
    ROBOTSD_URL = "http://robotsd:8080"
    ROBOTSTXT_OBEY = False  # Scrapy's default; its project template sets True

Scrapy then never fetches robots.txt: robotsd does, once per origin for the whole fleet. The
checks of requests that arrive together go to robotsd as one batch. Each check also reserves
the request's fetch slot (``pace=true``), and the request waits for it, so that the whole fleet
keeps each site's crawl-delay together; the sites' 429, 503, other 5xx, timeouts and connections
refused or reset are reported back (``POST /v1/feedback``) so that the fleet slows down together,
and so is every other answer with the time the site took, so that the fleet also slows down
when a site answers much slower than usual. ``ROBOTSD_PACE = False``
turns pacing off. The priority puts it after RetryMiddleware (550) for responses, so that it
sees the answers that RetryMiddleware retries. ``ROBOTSD_PAGE = True`` also asks robotsd about
each page let through (``response.meta["robotsd_page"]``), and :class:`RobotsdNofollowMiddleware`
follows no link of a ``nofollow`` page. ``ROBOTSD_SIGN = True`` has robotsd sign each request
it allows with the fleet's Web Bot Auth key, and sends it with the signature headers. The
middleware needs Scrapy's asyncio reactor (the default since Scrapy 2.13). Settings are in the
README.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import math
import random
from typing import TYPE_CHECKING, Any, Callable, NoReturn, Optional, Union
from urllib.parse import urldefrag

import msgspec
import scrapy.exceptions
from scrapy import signals
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.utils import httpobj
from scrapy.utils.httpobj import urlparse_cached
from twisted.internet import error as twisted_error
from twisted.web.client import ResponseNeverReceived

from ._client import (
    DEFAULT_MAX_RETRIES,
    MAX_BATCH,
    AsyncClient,
    FeedbackResult,
    Result,
    _report_item,
)
from ._gathering import _Batcher, _Reporter
from ._errors import ProblemError, RobotsdError
from ._models import CheckResponse, PaceJson, Problem, ReportItem, SignJson, VerdictResponse
from ._scrapy_page import PAGE_META_KEY as PAGE_META_KEY
from ._scrapy_page import RobotsdNofollowMiddleware as RobotsdNofollowMiddleware
from ._scrapy_page import _PageAsker
from ._sign import SIGNATURE_HEADERS, SignMethod, signature_headers

if TYPE_CHECKING:
    from urllib.parse import ParseResult

    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.spiders import Spider

logger = logging.getLogger(__name__)

#: The ``request.meta`` key under which the middleware leaves robotsd's answer (a
#: :class:`robotsd.CheckResponse`: its ``crawl_delay``, ``usage`` preferences, the ``pace`` of
#: the slot the request was fetched in, ...; or a :class:`robotsd.VerdictResponse`, only
#: ``allowed``, ``reason`` and ``pace``, when robotsd cut the batch it came in at its bound).
META_KEY = "robotsd"

Answer = Union[CheckResponse, VerdictResponse]
"""robotsd's answer about a request: in full, or only the verdict (an item past the bound of a
batch's answer, 8 MiB, which a site can reach with a robots.txt made to fill every answer)."""

_BATCH_DEADLINE = "urn:robotsd:problem:batch-deadline"
_SIGNING_OFF = "urn:robotsd:problem:signing-off"
_SIGN_OTHER_AGENT = "urn:robotsd:problem:sign-other-agent"

#: The least wait before asking again for a slot, whatever robotsd says: never a busy loop.
_MIN_ASK_AGAIN = 0.01

#: Seconds added to the gap a download slot keeps between the starts of two downloads: robotsd's
#: guard band (``--pace-guard``, 50 ms), for the same reason. A download's request reaches the
#: site some time after the slot starts it (a connection, a few turns of the event loop), and
#: not always the same time: about a millisecond on loopback, tens on a busy machine, more for
#: the first request to a host. With 10 ms, a busy two-core machine showed the site 131 ms
#: between two fetches under a 200 ms crawl-delay.
_GAP_MARGIN = 0.050

#: The most a request may go on late for its slot, in seconds (:func:`_lateness`).
_LATE = 0.025


def _lateness(interval: float) -> float:
    """How late a request may go on after a slot of ``interval`` seconds. A request that wakes
    up later gives the slot up and asks for another: robotsd hands the next slot, perhaps
    another worker's, one interval after this one, so a fetch that starts late would shorten
    that gap at the site. With this bound the site sees at least 95% of an interval of 0.1 s or
    more; for tiny intervals it is 5 ms, as asyncio wakes a sleeper a millisecond or two late
    as a matter of course."""
    return min(_LATE, max(0.005, interval / 20.0))

#: What a download that timed out raises: a newer Scrapy's own exception, Twisted's before it.
_TIMEOUTS: tuple[type[BaseException], ...] = tuple(
    t
    for t in (
        getattr(scrapy.exceptions, "DownloadTimeoutError", None),
        twisted_error.TimeoutError,
        twisted_error.TCPTimedOutError,
    )
    if isinstance(t, type)
)


#: What a download refused at connect raises (Twisted's error).
_REFUSED: tuple[type[BaseException], ...] = (twisted_error.ConnectionRefusedError,)

#: What a download whose connection was reset or closed before any answer raises: Twisted's
#: lost connection, and its HTTP client's "no response" (which wraps it).
_RESET: tuple[type[BaseException], ...] = (twisted_error.ConnectionLost, ResponseNeverReceived)

#: The most jitter :func:`_ask_again_delay` adds to a deferred slot's wait, in seconds.
MAX_ASK_AGAIN_JITTER = 1.0


def _ask_again_delay(wait: float, rand: Callable[[], float] = random.random) -> float:
    """How long to wait before asking again for a slot robotsd deferred by ``wait`` seconds:
    that, and a random jitter of up to a tenth of it, at most :data:`MAX_ASK_AGAIN_JITTER`, so
    that the workers robotsd told the same ``not_before`` do not all ask again at once."""
    wait = max(0.0, wait)
    return wait + rand() * min(wait / 10.0, MAX_ASK_AGAIN_JITTER)


class Disallowed(IgnoreRequest):
    """A request robots.txt disallows, dropped; ``answer`` is robotsd's answer."""

    def __init__(self, request: Request, answer: Answer) -> None:
        super().__init__(f"Forbidden by robots.txt: {request} ({_why(answer)})")
        self.url = request.url
        self.answer = answer


class CheckFailed(IgnoreRequest):
    """A request robotsd could not check, dropped because ``ROBOTSD_FAIL_OPEN`` is off."""

    def __init__(self, request: Request, error: RobotsdError) -> None:
        super().__init__(f"Not checked by robotsd, so not fetched: {request} ({error})")
        self.url = request.url
        self.error = error


class NotSigned(CheckFailed):
    """With ``ROBOTSD_SIGN``, a request robotsd did not sign, dropped whatever
    ``ROBOTSD_FAIL_OPEN`` says: it is never sent unsigned. ``error`` says why: a method robotsd
    does not sign (it signs GET and HEAD), robotsd's problem (a :class:`robotsd.ProblemError`:
    ``signing-off``, a robotsd without keys; ``sign-other-agent``, a crawl not made for the
    fleet's product token), or an allowed answer without its signature."""

    def __init__(self, request: Request, error: RobotsdError) -> None:
        IgnoreRequest.__init__(self, f"Not signed by robotsd, so not fetched: {request} ({error})")
        self.url = request.url
        self.error = error


def _sign_method(method: str) -> Optional[SignMethod]:
    """The method as robotsd signs it, or None for one it does not sign."""
    if method == "GET":
        return "GET"
    if method == "HEAD":
        return "HEAD"
    return None


def _signing_problem(error: ProblemError) -> bool:
    """Whether robotsd refused to sign: a configuration error (no keys, another agent), not
    robotsd being unavailable."""
    return error.type in (_SIGNING_OFF, _SIGN_OTHER_AGENT) or error.parameter == "sign"


def _send_to(request: Request, url: str) -> None:
    """Makes ``request`` go to ``url``, in place. A new request returned from
    ``process_request`` instead would go back to the scheduler and through this middleware
    again: a second check, and a second pacing slot, for one fetch."""
    # Scrapy has no public setter: Request.replace makes a new request.
    request._set_url(url)
    # urlparse_cached keeps each request's parsed URL: the downloader must see the new one.
    cache = getattr(httpobj, "_urlparse_cache", None)
    if cache is not None:
        cache.pop(request, None)


def _why(answer: Answer) -> str:
    if isinstance(answer, VerdictResponse):
        return f"robotsd: {answer.reason}"
    if answer.rule:
        rule = answer.rule
        return (
            f"robotsd: {answer.reason}, {answer.robots_url} line {rule.line}: "
            f"{rule.directive}: {rule.pattern}"
        )
    return f"robotsd: {answer.reason}, {answer.robots_url}"


def _origin(parsed: ParseResult) -> str:
    """The key of the requests whose slots one report makes stale: scheme, host and port."""
    return f"{parsed.scheme}://{(parsed.hostname or '').lower()}:{parsed.port or ''}"


def _response_ms(request: Request) -> Optional[int]:
    """How long the site took to answer ``request``, as a report carries it: Scrapy's
    ``download_latency`` (from the request's start to the response's headers, the same way for
    every page) in whole milliseconds, rounded up so that a fast answer is still a sample, and
    within the ten minutes robotsd takes; None when Scrapy did not measure it."""
    latency = request.meta.get("download_latency")
    if not isinstance(latency, (int, float)) or latency < 0:
        return None
    return min(max(1, math.ceil(latency * 1000)), _MAX_RESPONSE_MS)


# The longest response time robotsd takes in a report (ten minutes).
_MAX_RESPONSE_MS = 600_000


def _floored(delay: float, jitter: float, gap: float) -> tuple[float, float]:
    """A download slot's delay and jitter such that even its shortest randomised delay,
    ``delay * (1 - jitter)``, is at least ``gap``: unchanged if it already is; else the jitter
    narrowed to fit, if the delay alone is longer; else the gap itself, without jitter."""
    if delay * (1.0 - jitter) >= gap:
        return delay, jitter
    if delay > gap:
        return delay, 1.0 - gap / delay
    return gap, 0.0


class _Waiter:
    """A request between its first check and its fetch: ``stale`` once the site pushed back,
    as the slot it holds (or is being given) was reserved before robotsd knew of it."""

    __slots__ = ("stale",)

    def __init__(self) -> None:
        self.stale = False


class RobotsdMiddleware:
    """Checks every request through robotsd before it is downloaded, and drops the ones
    robots.txt disallows with :class:`Disallowed` (an ``IgnoreRequest``, so the request's
    errback sees it). Requests for ``/robots.txt`` itself, non-HTTP(S) URLs and requests with
    ``meta["dont_obey_robotstxt"]`` go through unchecked.

    With pacing (``ROBOTSD_PACE``, on by default) each check reserves the request's fetch slot
    for the whole fleet and the request waits for it; the site's 429, 503, other 5xx and
    timeouts are reported to robotsd, which slows the origin down for every worker."""

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
        # robotsd's own 503s are retried by the client, once per call: nothing here retries.
        self._max_retries = settings.getint("ROBOTSD_MAX_RETRIES", DEFAULT_MAX_RETRIES)
        self._user_agent: Optional[str] = settings.get("ROBOTSD_USER_AGENT") or None
        self._default_user_agent: str = settings.get("USER_AGENT") or "Scrapy"
        self._fail_open = settings.getbool("ROBOTSD_FAIL_OPEN", False)
        self._pace = settings.getbool("ROBOTSD_PACE", True)
        self._sign = settings.getbool("ROBOTSD_SIGN", False)
        self._feedback = settings.getbool("ROBOTSD_FEEDBACK", self._pace)
        self._obey_crawl_delay = settings.getbool("ROBOTSD_OBEY_CRAWL_DELAY", True)
        self._max_crawl_delay = settings.getfloat("ROBOTSD_MAX_CRAWL_DELAY", 60.0)
        self._batch_size = max(1, min(MAX_BATCH, settings.getint("ROBOTSD_BATCH_SIZE", 100)))
        self._batch_wait = max(0.0, settings.getfloat("ROBOTSD_BATCH_WAIT", 0.005))
        self._pages: Optional[_PageAsker] = None
        if settings.getbool("ROBOTSD_PAGE", False):
            self._pages = _PageAsker(crawler, self._stats_inc)
        # One per method signed for (a batch signs for one), or None when not signing.
        self._batchers: dict[Optional[SignMethod], _Batcher] = {}
        self._reporter: Optional[_Reporter] = None
        self._waiting: dict[str, set[_Waiter]] = {}
        self._slots_settable = True
        self._failing = False
        # What NotSigned was logged for so far (a problem's type, or why): once each.
        self._sign_failures: set[str] = set()
        self._feedback_failing = False

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RobotsdMiddleware:
        middleware = cls(crawler)
        crawler.signals.connect(middleware._spider_opened, signal=signals.spider_opened)
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

    def _get_client(self) -> AsyncClient:
        # Made on first use, inside the reactor's running event loop, which its pool binds to.
        if self._client is None:
            assert self._base_url is not None
            self._client = AsyncClient(
                self._base_url,
                token=self._token,
                timeout=self._timeout,
                max_retries=self._max_retries,
            )
        return self._client

    def _get_batcher(self, sign: Optional[SignMethod]) -> _Batcher:
        batcher = self._batchers.get(sign)
        if batcher is None:
            batcher = self._batchers[sign] = _Batcher(
                self._get_client(),
                self._batch_size,
                self._batch_wait,
                self._on_batch,
                lambda: self._pace,
                sign,
            )
        return batcher

    def _get_reporter(self) -> _Reporter:
        if self._reporter is None:
            self._reporter = _Reporter(
                self._get_client(),
                self._batch_size,
                self._batch_wait,
                self._on_reports_sent,
                self._on_reports_failed,
            )
        return self._reporter

    def _agent(self, request: Request) -> str:
        if self._user_agent:
            return self._user_agent
        # UserAgentMiddleware (priority 500) has set the header when this middleware comes
        # after it; a header set on the request itself is taken too.
        header = request.headers.get(b"User-Agent")
        if header:
            return header.decode("latin-1")
        spider_agent = getattr(self.crawler.spider, "user_agent", None)
        return str(spider_agent or self._default_user_agent)

    async def process_request(self, request: Request, spider: Optional[Spider] = None) -> None:
        """Drop ``request`` if robotsd says no, or could not say and ROBOTSD_FAIL_OPEN is off;
        with pacing, return once its slot has come; with ROBOTSD_SIGN, signed."""
        parsed = urlparse_cached(request)
        if self._sign:
            # This middleware owns them: a request it does not sign goes without them (such as
            # a redirect's copy of the previous hop's, good for that hop alone).
            for name in SIGNATURE_HEADERS:
                request.headers.pop(name, None)
        if (
            request.meta.get("dont_obey_robotstxt")
            or parsed.scheme not in ("http", "https")
            # robots.txt is always allowed (RFC 9309 §2.5), and robotsd fetches it anyway.
            or parsed.path == "/robots.txt"
        ):
            return
        sign: Optional[SignMethod] = None
        if self._sign:
            sign = _sign_method(request.method)
            if sign is None:
                why = f"robotsd signs GET and HEAD requests only, not {request.method}"
                self._not_signed(request, RobotsdError(why))
        self._stats_inc("checked")
        ua = self._agent(request)
        origin = _origin(parsed)
        # Registered before the first ask: a pushback seen while it is on its way makes its
        # slot stale too.
        waiter = self._enter(origin) if self._pace else None
        try:
            answer = await self._ask(request, ua, origin, sign)
            while answer is not None and answer.allowed and isinstance(answer.pace, PaceJson):
                if await self._wait_for_slot(request, answer.pace, waiter):
                    break
                answer = await self._ask(request, ua, origin, sign)
        finally:
            if waiter is not None:
                self._leave(origin, waiter)
        if answer is None:  # not checked, fetched anyway (ROBOTSD_FAIL_OPEN), unsigned
            return
        request.meta[META_KEY] = answer
        # A verdict alone does not say the crawl-delay: none is kept for this request, as for
        # a robots.txt without one (a full answer about the origin raised its slot's delay
        # already, and a slot's delay is never lowered).
        crawl_delay = answer.crawl_delay if isinstance(answer, CheckResponse) else None
        if self._obey_crawl_delay and crawl_delay and answer.pace is msgspec.UNSET:
            self._keep_gap(request, crawl_delay)
        if not answer.allowed:
            self._stats_inc("disallowed")
            self._stats_inc(f"disallowed/{answer.reason}")
            error = Disallowed(request, answer)
            logger.debug(str(error), extra={"spider": self.crawler.spider})
            raise error
        self._stats_inc("allowed")
        if sign is not None:
            self._attach(request, answer)

    def _attach(self, request: Request, answer: Answer) -> None:
        """Sends ``request`` as robotsd signed it: to the URL signed, with the signature's
        headers (replacing any of the same name); or drops it with :class:`NotSigned`."""
        signed = answer.sign
        if not isinstance(signed, SignJson):
            # A robotsd older than signing, which ignores the parameter, says nothing else.
            self._not_signed(request, RobotsdError("robotsd allowed it without signing it"))
        if signed.method != request.method:
            self._not_signed(request, RobotsdError(f"robotsd signed it as {signed.method}"))
        # robotsd signs the URL as the WHATWG URL Standard parses it, without its fragment
        # (which is never sent): Scrapy's URL can differ, keeping dot segments or a default
        # port, and a signature covers the path, the query and the authority as sent.
        if urldefrag(request.url)[0] != signed.url:
            _send_to(request, signed.url)
            if urldefrag(request.url)[0] != signed.url:
                why = f"robotsd signed it for {signed.url}, sent as {request.url}"
                self._not_signed(request, RobotsdError(why))
        for name, value in signature_headers(signed).items():
            request.headers[name] = value
        self._stats_inc("signed")

    def _not_signed(self, request: Request, error: RobotsdError) -> NoReturn:
        self._stats_inc("not_signed")
        dropped = NotSigned(request, error)
        # Most are configuration errors that every request hits: each said once, as an error.
        cause = error.type if isinstance(error, ProblemError) else str(error)
        log = logger.debug if cause in self._sign_failures else logger.error
        self._sign_failures.add(cause)
        log(str(dropped), extra={"spider": self.crawler.spider})
        raise dropped

    async def _ask(
        self,
        request: Request,
        ua: str,
        origin: str,
        sign: Optional[SignMethod],
        *,
        again: bool = False,
    ) -> Optional[Answer]:
        """robotsd's answer (with a slot, when pacing; signed for ``sign``, when allowed), or
        None when robotsd could not answer and ROBOTSD_FAIL_OPEN lets the request through (else
        :class:`CheckFailed` is raised; :class:`NotSigned` when robotsd refused to sign)."""
        if self._pace and self._reporter is not None:
            # A slot asked for before robotsd has this origin's pushback would not honour it.
            await self._reporter.settled(origin)
        batcher = self._get_batcher(sign)
        result: Union[Result, RobotsdError]
        try:
            result = await batcher.check(request.url, ua)
            if isinstance(result, Problem) and result.type == _BATCH_DEADLINE:
                # The origin's robots.txt was still being fetched when the batch had to
                # answer; robotsd goes on fetching, and answers from its cache once done.
                result = await batcher.check(request.url, ua)
        except RobotsdError as e:
            if isinstance(e, ProblemError) and e.parameter == "pace" and not again:
                if self._pace:
                    self._pace = False
                    logger.warning(
                        "robotsd at %(url)s does not take pace=true (older than pacing): "
                        "this crawl goes on without fleet pacing, keeping crawl-delay on "
                        "Scrapy's download slots (%(error)s)",
                        {"url": self._base_url, "error": e},
                        extra={"spider": self.crawler.spider},
                    )
                return await self._ask(request, ua, origin, sign, again=True)
            result = e
            if isinstance(e, ProblemError) and e.type == _SIGN_OTHER_AGENT:
                # robotsd refuses a whole batch for one item's agent: each request asks again
                # alone, so that only the requests made for another agent are not signed.
                result = await self._ask_alone(request, ua, sign)
        if isinstance(result, Problem):
            result = ProblemError(result)
        if isinstance(result, ProblemError) and sign is not None and _signing_problem(result):
            # A configuration error, not robotsd being unavailable: ROBOTSD_FAIL_OPEN does not
            # send the request unsigned for it.
            self._stats_inc("problem")
            self._stats_inc(f"problem/{result.type.rsplit(':', 1)[-1]}")
            self._not_signed(request, result)
        if isinstance(result, RobotsdError):
            self._could_not_check(request, result)
            return None
        if self._failing:
            self._failing = False
            logger.info("robotsd answers again")
        if isinstance(result, VerdictResponse):
            self._stats_inc("verdict_only")
        return result

    async def _ask_alone(
        self, request: Request, ua: str, sign: Optional[SignMethod]
    ) -> Union[Answer, RobotsdError]:
        try:
            return await self._get_client().check(request.url, ua, pace=self._pace, sign=sign)
        except RobotsdError as e:
            return e

    async def _wait_for_slot(
        self, request: Request, pace: PaceJson, waiter: Optional[_Waiter]
    ) -> bool:
        """Waits as ``pace`` says; True when the slot is the request's to fetch in now, False
        when it must ask again (deferred, or reserved before the site pushed back)."""
        # The interval before the slowdown, less twice the lateness allowed, kept on Scrapy's
        # download slot as well: a floor from this process's previous fetch against two
        # starts bunching up, which never holds back a request on time for its slot (a delay
        # there would pass on to the next slot, perhaps another worker's). robotsd's slots
        # keep the interval, and the slowdown.
        interval = pace.interval_ms / 1000.0 / max(1.0, pace.slowdown)
        late = _lateness(pace.interval_ms / 1000.0)
        self._keep_gap(request, interval, margin=-2 * late)
        reserved = pace.outcome == "reserved"
        wait = pace.wait_ms / 1000.0
        if not reserved:
            # With a jitter: the workers told the same not_before do not all ask at once.
            wait = _ask_again_delay(max(wait, _MIN_ASK_AGAIN))
        loop = asyncio.get_running_loop()
        at = loop.time() + pace.wait_ms / 1000.0
        if wait > 0:
            await asyncio.sleep(wait)
        stale = waiter is not None and waiter.stale
        if reserved and not stale and loop.time() - at <= late:
            self._stats_inc("pace/reserved")
            self._stats_max("pace/wait_max", wait)
            return True
        if reserved and not stale:
            self._stats_inc("pace/late")
        else:
            self._stats_inc("pace/stale" if reserved else "pace/deferred")
        if waiter is not None:
            waiter.stale = False
        return False

    def _enter(self, origin: str) -> _Waiter:
        waiter = _Waiter()
        self._waiting.setdefault(origin, set()).add(waiter)
        return waiter

    def _leave(self, origin: str, waiter: _Waiter) -> None:
        waiters = self._waiting.get(origin)
        if waiters is not None:
            waiters.discard(waiter)
            if not waiters:
                del self._waiting[origin]

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

    def _keep_gap(self, request: Request, gap: float, margin: float = _GAP_MARGIN) -> None:
        """Makes the request's download slot start no two downloads closer than ``gap``
        seconds (at most ROBOTSD_MAX_CRAWL_DELAY), and ``margin`` (negative: less): its delay raised
        to that (never lowered), and its random variation (DOWNLOAD_DELAY_JITTER,
        RANDOMIZE_DOWNLOAD_DELAY) narrowed so that the shortest delay it draws is still that."""
        if not self._slots_settable:
            return
        try:
            engine = self.crawler.engine
        except RuntimeError:  # a newer Scrapy, outside a crawl: no download slots
            return
        if engine is None:  # an older one
            return
        gap = min(gap, self._max_crawl_delay)
        if gap <= 0:
            return
        floor = gap + margin
        if floor <= 0:
            self._stats_max("crawl_delay_max", gap)
            return
        downloader = engine.downloader
        # The slot is made here if need be (as the downloader would right after this
        # middleware), so that the first burst to an origin is already spaced out. Scrapy
        # before 2.14 requires the spider argument, later ones warn when given it; newer ones
        # name the random variation `jitter` (a magnitude) instead of `randomize_delay` (±50%).
        # _get_slot is Scrapy's private API: should a later Scrapy change it, the crawl goes
        # on without the gap kept on slots (said once) rather than failing every request.
        try:
            get_slot: Any = downloader._get_slot
            spider_param = inspect.signature(get_slot).parameters.get("spider")
            if spider_param is not None and spider_param.default is inspect.Parameter.empty:
                _, slot = get_slot(request, self.crawler.spider)
            else:
                _, slot = get_slot(request)
            delay = float(slot.delay)
            if hasattr(slot, "jitter"):
                jitter = float(slot.jitter)
                new_delay, new_jitter = _floored(delay, jitter, floor)
                if (new_delay, new_jitter) != (delay, jitter):
                    slot.delay, slot.jitter = new_delay, new_jitter
            else:
                randomize = bool(slot.randomize_delay)
                new_delay, new_jitter = _floored(delay, 0.5 if randomize else 0.0, floor)
                if new_delay != delay or (randomize and new_jitter < 0.5):
                    slot.delay = max(delay, floor)
                    slot.randomize_delay = False
        except (AttributeError, TypeError, ValueError) as e:
            self._slots_settable = False
            logger.warning(
                "robotsd: cannot set a delay on this Scrapy's download slots (%s); "
                "crawl-delay is not kept on them in this crawl",
                e,
                extra={"spider": self.crawler.spider},
            )
            return
        self._stats_max("crawl_delay_max", gap)

    async def process_response(
        self, request: Request, response: Response, spider: Optional[Spider] = None
    ) -> Response:
        """Reports a 429, 503 or other 5xx to robotsd (with its ``Retry-After``), and every
        other answer with the time the site took (``download_latency``). A response
        from Scrapy's HTTP cache is not the site's answer now, and is not reported. With
        ``ROBOTSD_PAGE``, a 2xx response to a request robotsd allowed waits for robotsd's
        answer about the page, left in ``meta["robotsd_page"]``."""
        if self._feedback and "cached" not in response.flags:
            self._feedback_of(request, response)
        if self._pages is not None and self._pages.wanted(request.meta.get(META_KEY), response):
            await self._pages.ask(self._get_client(), request, response, self._agent(request))
        return response

    def _feedback_of(self, request: Request, response: Response) -> None:
        status = response.status
        if status == 429 or status >= 500:
            header = response.headers.get(b"Retry-After")
            retry_after = header.decode("latin-1").strip() if header else None
            self._report(request, status=status, retry_after=retry_after or None, pushback=True)
        else:
            # Every answer, with the time the site took: robotsd keeps the site's baseline from
            # them and slows the fleet when it answers much slower; while the origin is slowed
            # down, each also eases the slowdown.
            self._report(request, status=status, response_ms=_response_ms(request))

    def process_exception(
        self, request: Request, exception: Exception, spider: Optional[Spider] = None
    ) -> None:
        """Reports a download that timed out, or whose connection was refused or reset before
        any answer, to robotsd; lets every exception go on. Scrapy's DOWNLOAD_TIMEOUT starts
        when the download does, after the wait for the slot here: a timeout is the site's."""
        if not self._feedback:
            return
        if isinstance(exception, _TIMEOUTS):
            self._report(request, timeout=True, pushback=True)
        elif isinstance(exception, _REFUSED):
            self._report(request, connection="refused", pushback=True)
        elif isinstance(exception, _RESET):
            self._report(request, connection="reset", pushback=True)

    def _report(
        self,
        request: Request,
        *,
        status: Optional[int] = None,
        retry_after: Optional[str] = None,
        timeout: bool = False,
        connection: Optional[str] = None,
        response_ms: Optional[int] = None,
        pushback: bool = False,
    ) -> None:
        parsed = urlparse_cached(request)
        if parsed.scheme not in ("http", "https"):
            return
        origin = _origin(parsed)
        if pushback:
            # The slots already handed out for this origin were reserved before robotsd knew:
            # each is given up for a new one, asked for once this report is in.
            for waiter in self._waiting.get(origin, ()):
                waiter.stale = True
            if timeout:
                self._stats_inc("feedback/timeout")
            elif connection:
                self._stats_inc(f"feedback/{connection}")
            else:
                self._stats_inc("feedback/pushback")
        report = _report_item(request.url, status, retry_after, timeout, connection, response_ms)
        # Only a pushback must reach robotsd before this origin's next slot is reserved.
        self._get_reporter().add(origin, report, settle=pushback)
        self._stats_inc("feedback/reported")

    def _on_reports_sent(self, results: list[FeedbackResult]) -> None:
        if self._feedback_failing:
            self._feedback_failing = False
            logger.info("robotsd takes reports again")
        for result in results:
            if isinstance(result, Problem):
                self._stats_inc("feedback/problem")
                logger.debug("robotsd refused a report: %s", result.detail)
            else:
                self._stats_max("feedback/slowdown_max", result.pace.slowdown)

    def _on_reports_failed(self, count: int, error: Exception) -> None:
        self._stats_inc("feedback/failed", count)
        log = logger.debug if self._feedback_failing else logger.warning
        self._feedback_failing = True
        log(
            "robotsd could not take %(count)d report(s) of what the sites answered: %(error)s",
            {"count": count, "error": error},
            extra={"spider": self.crawler.spider},
        )

    def _spider_opened(self) -> None:
        if not self._feedback:
            return
        # Responses go through the middlewares from the downloader's end: one placed before
        # RetryMiddleware never sees the 429s, 5xx and timeouts it retries.
        from scrapy.downloadermiddlewares.retry import RetryMiddleware

        try:
            engine = self.crawler.engine
        except RuntimeError:
            return
        if engine is None:
            return
        middlewares = list(getattr(engine.downloader.middleware, "middlewares", ()))
        mine = next((i for i, m in enumerate(middlewares) if m is self), None)
        retry = next(
            (i for i, m in enumerate(middlewares) if isinstance(m, RetryMiddleware)), None
        )
        if mine is not None and retry is not None and mine < retry:
            logger.warning(
                "robotsd.scrapy.RobotsdMiddleware comes before RetryMiddleware in "
                "DOWNLOADER_MIDDLEWARES, so it does not see (nor report to robotsd) the 429s, "
                "5xx and timeouts that RetryMiddleware retries: give it a priority above "
                "RetryMiddleware's (550), such as 570",
                extra={"spider": self.crawler.spider},
            )

    async def _spider_closed(self) -> None:
        await self._close()

    async def _close(self) -> None:
        for batcher in self._batchers.values():
            await batcher.close()
        if self._reporter is not None:
            await self._reporter.close()
        if self._client is not None and self._owns_client:
            await self._client.aclose()
