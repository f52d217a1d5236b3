from __future__ import annotations

import asyncio
import email.utils
import random
import time
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Callable, Literal, Optional, TypeVar, Union

import httpx
import msgspec

from ._call import UserAgent, _agents, _Call
from ._errors import ProblemError, RobotsdError, UnavailableError
from ._models import (
    CheckItem,
    CheckResponse,
    ChecksBatch,
    EvaluateRequest,
    FeedbackRequest,
    PageResponse,
    ParsedJson,
    Problem,
    ReportItem,
    ReportTaken,
    RobotsResponse,
    UrlsBatch,
    VerdictResponse,
)
from ._page import PageBody, PageHeaders, _page_call
from ._sign import SignMethod

#: The most items robotsd answers in one batch; longer lists are sent in chunks of this size.
MAX_BATCH = 1000

#: Seconds any one phase of a call (connect, send, each read) may take; the async client also
#: bounds the whole call by it, retries included. robotsd answers within its own 30 s request
#: limit.
DEFAULT_TIMEOUT = 30.0

#: How many times a call robotsd itself answered 503 is sent again, by default (0: never).
DEFAULT_MAX_RETRIES = 2

#: The longest ``Retry-After`` of robotsd's a retry waits, in seconds (1 s when it sends none).
MAX_RETRY_WAIT = 60.0

#: The most jitter a retry's wait gets, in seconds (up to a tenth of the wait).
MAX_RETRY_JITTER = 1.0

#: The type of every problem robotsd answers with; a proxy's or a load balancer's error is not
#: one, and is never retried: it says nothing of what robotsd did with the request.
ROBOTSD_PROBLEM_PREFIX = "urn:robotsd:problem:"

PercentDecoding = Literal["google", "rfc9309"]

Result = Union[CheckResponse, VerdictResponse, Problem]
"""One slot of a batch: the answer, or the problem with that item. The answer is a
:class:`CheckResponse` in full, or, in a batch robotsd cut at its bound (8 MiB, reached by files
made to fill every answer), a :class:`VerdictResponse`: only ``allowed``, ``reason`` and
``pace``, as right as the full answer would have been."""

FeedbackResult = Union[ReportTaken, Problem]
"""One slot of a feedback answer: the report taken (its ``origin`` and the origin's pacing
state after it, ``pace``), or the problem with that report."""


class Evaluation(msgspec.Struct, frozen=True):
    """The answer of ``POST /v1/evaluate``, its results told apart into answers and problems."""

    results: list[Result]
    """One per URL, in order."""
    parsed: Optional[ParsedJson] = None
    """The parsed file, when asked for with ``parsed=True``."""
    cut_at_bytes: Optional[int] = None
    """Where the text was cut, when it was longer than a fetch keeps."""
    truncated: bool = False
    """Whether ``results`` reached robotsd's bound (8 MiB): from the item that reached it on,
    each answer is a :class:`VerdictResponse`."""


class _RawBatch(msgspec.Struct):
    results: list[msgspec.Raw]


class _RawEvaluation(msgspec.Struct):
    results: list[msgspec.Raw]
    parsed: Optional[ParsedJson] = None
    cut_at_bytes: Optional[int] = None
    truncated: Optional[bool] = None


class _ItemError(msgspec.Struct):
    error: Optional[Problem] = None


class _ItemShape(msgspec.Struct):
    error: Optional[Problem] = None
    verdict: Optional[str] = None


class _RawFeedback(msgspec.Struct):
    results: list[msgspec.Raw]


_check_decoder = msgspec.json.Decoder(CheckResponse)
_verdict_decoder = msgspec.json.Decoder(VerdictResponse)
_item_shape_decoder = msgspec.json.Decoder(_ItemShape)
_batch_decoder = msgspec.json.Decoder(_RawBatch)
_evaluation_decoder = msgspec.json.Decoder(_RawEvaluation)
_robots_decoder = msgspec.json.Decoder(RobotsResponse)
_item_error_decoder = msgspec.json.Decoder(_ItemError)
_feedback_decoder = msgspec.json.Decoder(_RawFeedback)
_report_taken_decoder = msgspec.json.Decoder(ReportTaken)
_problem_decoder = msgspec.json.Decoder(Problem)

_T = TypeVar("_T")


def _decode_item(raw: msgspec.Raw) -> Result:
    # The schema's BatchItem is an untagged union that msgspec cannot decode in one step: an
    # item is a problem exactly when it has an "error" member, a full answer when it has a
    # "verdict" (which every full answer has), and only the verdict otherwise (the items past
    # a batch's bound, robotsd's view=verdict).
    item = _item_shape_decoder.decode(raw)
    if item.error is not None:
        return item.error
    if item.verdict is not None:
        return _check_decoder.decode(raw)
    return _verdict_decoder.decode(raw)


def _decode_batch(data: bytes) -> list[Result]:
    return [_decode_item(raw) for raw in _batch_decoder.decode(data).results]


def _decode_feedback(data: bytes) -> list[FeedbackResult]:
    # FeedbackItem is an untagged union too: a problem exactly when it has an "error" member.
    results: list[FeedbackResult] = []
    for raw in _feedback_decoder.decode(data).results:
        item = _item_error_decoder.decode(raw)
        if item.error is not None:
            results.append(item.error)
        else:
            results.append(_report_taken_decoder.decode(raw))
    return results


def _decode_evaluation(data: bytes) -> Evaluation:
    raw = _evaluation_decoder.decode(data)
    return Evaluation(
        results=[_decode_item(item) for item in raw.results],
        parsed=raw.parsed,
        cut_at_bytes=raw.cut_at_bytes,
        truncated=bool(raw.truncated),
    )


def _check_params(
    percent_decoding: Optional[PercentDecoding], pace: bool, sign: Optional[SignMethod]
) -> list[tuple[str, str]]:
    params: list[tuple[str, str]] = []
    if percent_decoding is not None:
        params.append(("percent_decoding", percent_decoding))
    if pace:
        params.append(("pace", "true"))
    if sign is not None:
        params.append(("sign", sign))
    return params


def _check_call(
    url: str,
    ua: UserAgent,
    percent_decoding: Optional[PercentDecoding],
    pace: bool,
    record: bool = False,
    sign: Optional[SignMethod] = None,
) -> _Call:
    agents = _agents(ua)
    params = [("url", url)]
    params += [("ua", agent) for agent in ([agents] if isinstance(agents, str) else agents)]
    params += _check_params(percent_decoding, pace, sign)
    if record:
        params.append(("record", "true"))
    return _Call("GET", "/v1/check", _check_decoder.decode, params=params)


def _urls_calls(
    urls: Iterable[str],
    ua: UserAgent,
    percent_decoding: Optional[PercentDecoding],
    pace: bool,
    sign: Optional[SignMethod],
) -> Iterator[_Call]:
    agents = _agents(ua)
    for chunk in _chunks(urls):
        yield _Call(
            "POST",
            "/v1/check",
            _decode_batch,
            params=_check_params(percent_decoding, pace, sign),
            body=UrlsBatch(ua=agents, urls=chunk),
        )


def _checks_calls(
    checks: Iterable[tuple[str, UserAgent]],
    percent_decoding: Optional[PercentDecoding],
    pace: bool,
    sign: Optional[SignMethod],
) -> Iterator[_Call]:
    for chunk in _chunks(checks):
        yield _Call(
            "POST",
            "/v1/check",
            _decode_batch,
            params=_check_params(percent_decoding, pace, sign),
            body=ChecksBatch(checks=[CheckItem(url=url, ua=_agents(ua)) for url, ua in chunk]),
        )


def _feedback_calls(reports: Iterable[ReportItem]) -> Iterator[_Call]:
    for chunk in _chunks(reports):
        body = FeedbackRequest(reports=chunk)
        yield _Call("POST", "/v1/feedback", _decode_feedback, body=body)


def _report_item(
    url: str,
    status: Optional[int],
    retry_after: Optional[str],
    timeout: bool,
    connection: Optional[str] = None,
    response_ms: Optional[int] = None,
) -> ReportItem:
    return ReportItem(
        url=url,
        status=msgspec.UNSET if status is None else status,
        retry_after=msgspec.UNSET if retry_after is None else retry_after,
        timeout=True if timeout else msgspec.UNSET,
        connection=msgspec.UNSET if connection is None else connection,
        response_ms=msgspec.UNSET if response_ms is None else response_ms,
    )


def _one_report(results: list[FeedbackResult]) -> ReportTaken:
    if len(results) != 1:
        raise RobotsdError(f"robotsd answered {len(results)} results for one report")
    [result] = results
    if isinstance(result, Problem):
        raise ProblemError(result)
    return result


def _robots_call(url: str, include_robots_txt: bool) -> _Call:
    params = [("url", url)]
    if include_robots_txt:
        params.append(("include", "robots_txt"))
    return _Call("GET", "/v1/robots", _robots_decoder.decode, params=params)


def _evaluate_call(
    robots_txt: str,
    urls: Sequence[str],
    ua: UserAgent,
    parsed: bool,
    percent_decoding: Optional[PercentDecoding],
) -> _Call:
    body = EvaluateRequest(
        ua=_agents(ua),
        robots_txt=robots_txt,
        urls=list(urls),
        include="parsed" if parsed else msgspec.UNSET,
        percent_decoding=msgspec.UNSET if percent_decoding is None else percent_decoding,
    )
    return _Call("POST", "/v1/evaluate", _decode_evaluation, body=body)


def _chunks(items: Iterable[_T]) -> Iterator[list[_T]]:
    chunk: list[_T] = []
    for item in items:
        chunk.append(item)
        if len(chunk) == MAX_BATCH:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _problem_of(response: httpx.Response) -> Problem:
    try:
        return _problem_decoder.decode(response.content)
    except msgspec.MsgspecError:
        return Problem(
            type="about:blank",
            title=response.reason_phrase or "HTTP error",
            status=response.status_code,
            detail=response.text.strip()[:1000],
        )


def _read(call: _Call, response: httpx.Response) -> Any:
    if response.status_code != 200:
        raise ProblemError(_problem_of(response))
    try:
        return call.decode(response.content)
    except msgspec.MsgspecError as e:
        raise RobotsdError(f"robotsd's answer to {call.method} {call.path} is not as documented: {e}") from e


def _robotsd_busy(response: httpx.Response) -> bool:
    """Whether ``response`` is a 503 of robotsd's own (``overloaded``, ``bodies-in-flight``,
    ``connection-limit``, ``cache-full``): robotsd did nothing with the request, and says when
    to ask again. A 503 of anything in between (a proxy's HTML page) is not: it is not known
    what became of the request, nor when to ask again."""
    if response.status_code != 503:
        return False
    media_type = response.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()
    if media_type != "application/problem+json":
        return False
    try:
        problem = _problem_decoder.decode(response.content)
    except msgspec.MsgspecError:
        return False
    return problem.type.startswith(ROBOTSD_PROBLEM_PREFIX)


def _retry_after(value: Optional[str], now: Optional[float] = None) -> float:
    """Seconds to wait as robotsd's ``Retry-After`` says (delay-seconds or an HTTP date): 1 s
    when it says nothing readable, at most :data:`MAX_RETRY_WAIT`."""
    if value is None:
        return 1.0
    value = value.strip()
    wait: Optional[float] = None
    if value.isdigit():
        wait = float(value)
    else:
        try:
            at = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            at = None
        if at is not None and at.tzinfo is not None:
            wait = max(0.0, at.timestamp() - (time.time() if now is None else now))
    if wait is None:
        return 1.0
    return min(wait, MAX_RETRY_WAIT)


def _retry_wait(response: httpx.Response, rand: Callable[[], float] = random.random) -> float:
    """How long to wait before sending a call robotsd answered 503 again: its ``Retry-After``,
    and a jitter of up to a tenth of it (at most :data:`MAX_RETRY_JITTER`), so that the
    workers told the same time do not all come back at once."""
    wait = _retry_after(response.headers.get("Retry-After"))
    return wait + rand() * min(wait / 10.0, MAX_RETRY_JITTER)


def _max_retries(value: int) -> int:
    if value < 0:
        raise ValueError(f"max_retries: {value} (0 never retries)")
    return value


def _headers(call: _Call, token: Optional[str]) -> dict[str, str]:
    headers = {"Accept": "application/json"}
    if call.body is not None:
        headers["Content-Type"] = "application/json"
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return headers


def _timeout(seconds: float) -> httpx.Timeout:
    # A dead robotsd host shows at connect: do not wait the whole timeout there (as the Go client).
    return httpx.Timeout(seconds, connect=min(5.0, seconds))


def _limits() -> httpx.Limits:
    return httpx.Limits(max_connections=64, max_keepalive_connections=64, keepalive_expiry=90.0)


class Client:
    """A client of one robotsd, over one pooled HTTP connection set. Safe to share between threads.

    ``base_url`` is robotsd's address, such as ``http://127.0.0.1:8080``; ``token`` is sent as a
    bearer token (robotsd's ``--api-token-file``). ``http_client`` replaces the pool this client
    makes (for a proxy or custom TLS): it is then the caller's to close, and environment proxy
    variables are ignored otherwise, as a sidecar robotsd is never reached through one.

    ``timeout`` bounds each phase of a call (connect at most 5 s, send, each read). A 503 of
    robotsd's own (``overloaded``, ``bodies-in-flight``, ``connection-limit``, ``cache-full``:
    robotsd did nothing with the request) is sent again up to ``max_retries`` times, after its
    ``Retry-After`` and a jitter, as long as the wait ends within ``timeout`` of the call's
    start; then the 503 is raised (:class:`ProblemError`). No other answer is retried, nor any
    failure to reach robotsd.
    """

    def __init__(
        self,
        base_url: str,
        *,
        token: Optional[str] = None,
        timeout: float = DEFAULT_TIMEOUT,
        http_client: Optional[httpx.Client] = None,
        max_retries: int = DEFAULT_MAX_RETRIES,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.max_retries = _max_retries(max_retries)
        self._owns_http = http_client is None
        self._http = http_client or httpx.Client(
            timeout=_timeout(timeout), limits=_limits(), trust_env=False
        )

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection pool (unless it was given as ``http_client``)."""
        if self._owns_http:
            self._http.close()

    def check(
        self,
        url: str,
        ua: UserAgent,
        *,
        percent_decoding: Optional[PercentDecoding] = None,
        pace: bool = False,
        record: bool = False,
        sign: Optional[SignMethod] = None,
    ) -> CheckResponse:
        """May ``ua`` fetch ``url``? ``GET /v1/check``; a problem raises :class:`ProblemError`.

        ``pace=True`` also reserves the fetch's slot for the whole fleet: the answer's ``pace``
        (a :class:`PaceJson`, ``None`` when the URL is disallowed) says to wait ``wait_ms``
        before fetching (``outcome == "reserved"``), or to ask again after ``wait_ms``
        (``"deferred"``: nothing was reserved). Reserve right before fetching, once per fetch.
        Without it, ``pace`` is ``UNSET``.

        ``record=True`` adds ``record`` (a :class:`RecordJson`): what robots.txt said of the
        URL (its SHA-256, the deciding rule, its preferences for the URL, the time), to store
        beside the fetched page (docs/page.md).

        ``sign="GET"`` (or ``"HEAD"``, robotsd signs no other method) also signs that request
        when the URL is allowed (Web Bot Auth, robotsd's docs/bot-auth.md): the answer's
        ``sign`` (a :class:`SignJson`) has the headers to send it with
        (:func:`signature_headers`), the URL to send it to (``sign.url``: the one checked,
        normalised, without its fragment) and until when (``expires``). A disallowed URL, or a
        deferred pacing slot, gets no ``sign``. A robotsd without keys raises
        :class:`ProblemError` (``signing-off``), as does one that signs only for its
        ``--wba-product-token``, asked for another agent (``sign-other-agent``)."""
        result: CheckResponse = self._do(
            _check_call(url, ua, percent_decoding, pace, record, sign)
        )
        return result

    def check_many(
        self,
        urls: Iterable[str],
        ua: UserAgent,
        *,
        percent_decoding: Optional[PercentDecoding] = None,
        pace: bool = False,
        sign: Optional[SignMethod] = None,
    ) -> list[Result]:
        """Check many URLs for the same agent(s) with ``POST /v1/check``, :data:`MAX_BATCH` at
        a time. One result per URL, in order: a :class:`CheckResponse`, or the
        :class:`Problem` with that URL (which is not raised); past the bound of a batch's
        answer (8 MiB), a :class:`VerdictResponse`, the verdict only. ``pace=True`` reserves a
        slot for each allowed URL, as :meth:`check` does; the URLs of one origin get staggered
        slots. ``sign`` signs each allowed URL's request as :meth:`check` does (each answer's
        ``sign``). A robotsd that cannot sign them raises :class:`ProblemError` for the whole
        batch: ``signing-off``, or ``sign-other-agent`` for any one URL's agent."""
        results: list[Result] = []
        for call in _urls_calls(urls, ua, percent_decoding, pace, sign):
            results += self._do(call)
        return results

    def check_batch(
        self,
        checks: Iterable[tuple[str, UserAgent]],
        *,
        percent_decoding: Optional[PercentDecoding] = None,
        pace: bool = False,
        sign: Optional[SignMethod] = None,
    ) -> list[Result]:
        """Check ``(url, ua)`` pairs, each with its own agent(s); otherwise as :meth:`check_many`."""
        results: list[Result] = []
        for call in _checks_calls(checks, percent_decoding, pace, sign):
            results += self._do(call)
        return results

    def feedback(self, reports: Iterable[ReportItem]) -> list[FeedbackResult]:
        """Tell robotsd what the sites answered (``POST /v1/feedback``), :data:`MAX_BATCH`
        reports at a time. Each :class:`ReportItem` has a ``status`` (and the ``retry_after``
        header as received), ``timeout=True`` (the site did not answer within the fetch's own
        time limit, the wait for the slot not counted), or ``connection`` (``"refused"`` or
        ``"reset"`` before any answer); a 429 or 503 (its Retry-After honoured), any other 5xx,
        a timeout, or a connection refused or reset slows the origin down for the whole fleet,
        other statuses ease a slowdown. One result per report, in order: a :class:`ReportTaken`, or the
        :class:`Problem` with that report (which is not raised)."""
        results: list[FeedbackResult] = []
        for call in _feedback_calls(reports):
            results += self._do(call)
        return results

    def report(
        self,
        url: str,
        *,
        status: Optional[int] = None,
        retry_after: Optional[str] = None,
        timeout: bool = False,
        connection: Optional[str] = None,
        response_ms: Optional[int] = None,
    ) -> ReportTaken:
        """Report one answer, as :meth:`feedback` does: ``status`` (with the ``Retry-After``
        header's value as received, if any), ``timeout=True``, or ``connection="refused"`` or
        ``"reset"``; with ``response_ms``, how long the site took (a site answering much slower
        than usual slows the fleet). Returns the origin's pacing state after it; a problem with
        the report raises :class:`ProblemError`."""
        item = _report_item(url, status, retry_after, timeout, connection, response_ms)
        return _one_report(self.feedback([item]))

    def robots(self, url: str, *, include_robots_txt: bool = False) -> RobotsResponse:
        """What robotsd holds for ``url``'s origin (``GET /v1/robots``), fetching it if needed."""
        result: RobotsResponse = self._do(_robots_call(url, include_robots_txt))
        return result

    def evaluate(
        self,
        robots_txt: str,
        urls: Sequence[str],
        ua: UserAgent,
        *,
        parsed: bool = False,
        percent_decoding: Optional[PercentDecoding] = None,
    ) -> Evaluation:
        """Check ``urls`` (or paths) against the ``robots_txt`` given, with no fetch
        (``POST /v1/evaluate``); ``parsed`` also asks for the parsed file."""
        result: Evaluation = self._do(
            _evaluate_call(robots_txt, urls, ua, parsed, percent_decoding)
        )
        return result

    def page(
        self,
        url: str,
        ua: UserAgent,
        headers: PageHeaders,
        body: PageBody = None,
        *,
        content_type: Optional[str] = None,
    ) -> PageResponse:
        """After fetching ``url``: the page's robots rules for ``ua`` (``X-Robots-Tag`` and
        robots ``meta`` tags combined: ``robots.index``, ``robots.follow``, ...), its AI-use
        statements (``usage``) and robots.txt's answer (``check``), from ``POST /v1/page``.
        ``headers`` and ``body`` are the response's as received (``body`` as bytes, so that
        robotsd reads the page's own charset); only what robotsd reads is sent
        (:func:`robotsd.page_request`). ``robots`` and ``usage`` are ``None`` when robots.txt
        disallows the URL. A problem raises :class:`ProblemError`."""
        result: PageResponse = self._do(_page_call(url, ua, headers, body, content_type))
        return result

    def _do(self, call: _Call) -> Any:
        deadline = time.monotonic() + self.timeout
        attempt = 0
        while True:
            try:
                response = self._http.request(
                    call.method,
                    self.base_url + call.path,
                    params=call.params,
                    content=call.body,
                    headers=_headers(call, self.token),
                )
            except httpx.TransportError as e:
                raise UnavailableError(self.base_url, e) from e
            if attempt < self.max_retries and _robotsd_busy(response):
                wait = _retry_wait(response)
                # A wait past the call's time limit gives up at once, with the 503.
                if time.monotonic() + wait < deadline:
                    time.sleep(wait)
                    attempt += 1
                    continue
            return _read(call, response)


class AsyncClient:
    """The asyncio twin of :class:`Client`, with the same calls as coroutines.

    Besides each phase, ``timeout`` bounds each whole call, its retries (as :class:`Client`'s)
    included. Use it from one event loop.
    """

    def __init__(
        self,
        base_url: str,
        *,
        token: Optional[str] = None,
        timeout: float = DEFAULT_TIMEOUT,
        http_client: Optional[httpx.AsyncClient] = None,
        max_retries: int = DEFAULT_MAX_RETRIES,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.max_retries = _max_retries(max_retries)
        self._owns_http = http_client is None
        self._http = http_client or httpx.AsyncClient(
            timeout=_timeout(timeout), limits=_limits(), trust_env=False
        )

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connection pool (unless it was given as ``http_client``)."""
        if self._owns_http:
            await self._http.aclose()

    async def check(
        self,
        url: str,
        ua: UserAgent,
        *,
        percent_decoding: Optional[PercentDecoding] = None,
        pace: bool = False,
        record: bool = False,
        sign: Optional[SignMethod] = None,
    ) -> CheckResponse:
        """As :meth:`Client.check`."""
        result: CheckResponse = await self._do(
            _check_call(url, ua, percent_decoding, pace, record, sign)
        )
        return result

    async def check_many(
        self,
        urls: Iterable[str],
        ua: UserAgent,
        *,
        percent_decoding: Optional[PercentDecoding] = None,
        pace: bool = False,
        sign: Optional[SignMethod] = None,
    ) -> list[Result]:
        """As :meth:`Client.check_many` (the chunks are sent one after another)."""
        results: list[Result] = []
        for call in _urls_calls(urls, ua, percent_decoding, pace, sign):
            results += await self._do(call)
        return results

    async def check_batch(
        self,
        checks: Iterable[tuple[str, UserAgent]],
        *,
        percent_decoding: Optional[PercentDecoding] = None,
        pace: bool = False,
        sign: Optional[SignMethod] = None,
    ) -> list[Result]:
        """As :meth:`Client.check_batch`."""
        results: list[Result] = []
        for call in _checks_calls(checks, percent_decoding, pace, sign):
            results += await self._do(call)
        return results

    async def feedback(self, reports: Iterable[ReportItem]) -> list[FeedbackResult]:
        """As :meth:`Client.feedback`."""
        results: list[FeedbackResult] = []
        for call in _feedback_calls(reports):
            results += await self._do(call)
        return results

    async def report(
        self,
        url: str,
        *,
        status: Optional[int] = None,
        retry_after: Optional[str] = None,
        timeout: bool = False,
        connection: Optional[str] = None,
        response_ms: Optional[int] = None,
    ) -> ReportTaken:
        """As :meth:`Client.report`."""
        item = _report_item(url, status, retry_after, timeout, connection, response_ms)
        return _one_report(await self.feedback([item]))

    async def robots(self, url: str, *, include_robots_txt: bool = False) -> RobotsResponse:
        """As :meth:`Client.robots`."""
        result: RobotsResponse = await self._do(_robots_call(url, include_robots_txt))
        return result

    async def evaluate(
        self,
        robots_txt: str,
        urls: Sequence[str],
        ua: UserAgent,
        *,
        parsed: bool = False,
        percent_decoding: Optional[PercentDecoding] = None,
    ) -> Evaluation:
        """As :meth:`Client.evaluate`."""
        result: Evaluation = await self._do(
            _evaluate_call(robots_txt, urls, ua, parsed, percent_decoding)
        )
        return result

    async def page(
        self,
        url: str,
        ua: UserAgent,
        headers: PageHeaders,
        body: PageBody = None,
        *,
        content_type: Optional[str] = None,
    ) -> PageResponse:
        """As :meth:`Client.page`."""
        result: PageResponse = await self._do(_page_call(url, ua, headers, body, content_type))
        return result

    async def _do(self, call: _Call) -> Any:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout
        attempt = 0
        while True:
            request = self._http.request(
                call.method,
                self.base_url + call.path,
                params=call.params,
                content=call.body,
                headers=_headers(call, self.token),
            )
            try:
                response = await asyncio.wait_for(request, max(0.0, deadline - loop.time()))
            except (httpx.TransportError, asyncio.TimeoutError) as e:
                raise UnavailableError(self.base_url, e) from e
            if attempt < self.max_retries and _robotsd_busy(response):
                wait = _retry_wait(response)
                # A wait past the call's time limit gives up at once, with the 503.
                if loop.time() + wait < deadline:
                    await asyncio.sleep(wait)
                    attempt += 1
                    continue
            return _read(call, response)
