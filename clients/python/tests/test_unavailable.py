"""When robotsd cannot answer (README, "When robotsd cannot answer"): down, silent, its own 503s
(retried within one budget per call) and a proxy's (never retried), its other problems, and a
site without robots.txt, which is not robotsd failing at all. robotsd is never overloaded in a
test: its 503s come from a loopback stand-in (conftest.StandIn) that counts the requests it
gets, the rest from the real robotsd."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import httpx
import pytest
from conftest import (
    OVERLOADED,
    PROXY_503,
    Canned,
    MakeSite,
    MakeStandIn,
    Robotsd,
    Site,
    closed_url,
)
from test_scrapy import Crawl

from robotsd import (
    DEFAULT_MAX_RETRIES,
    AsyncClient,
    CheckResponse,
    Client,
    ProblemError,
    ReportItem,
    UnavailableError,
)
from robotsd._client import _retry_after, _retry_wait

#: robotsd's own 503 with a Retry-After of a second: ``cache-full``.
CACHE_FULL_1S: Canned = (
    503,
    {"Content-Type": "application/problem+json; charset=utf-8", "Retry-After": "1"},
    b'{"type":"urn:robotsd:problem:cache-full","title":"Cache full","status":503,'
    b'"detail":"evicted for memory"}',
)

#: robotsd's own 503 asking for 30 s: a wait no call limit of these tests leaves room for, so
#: that giving up at once is told from waiting by a wide margin.
CACHE_FULL_30S: Canned = (CACHE_FULL_1S[0], {**CACHE_FULL_1S[1], "Retry-After": "30"}, CACHE_FULL_1S[2])

#: robotsd's own 503 asking for 2 s.
CACHE_FULL_2S: Canned = (CACHE_FULL_1S[0], {**CACHE_FULL_1S[1], "Retry-After": "2"}, CACHE_FULL_1S[2])

#: A 503 in problem+json that is not robotsd's (a gateway that speaks RFC 9457 too).
OTHER_PROBLEM_503: Canned = (
    503,
    {"Content-Type": "application/problem+json", "Retry-After": "0"},
    b'{"type":"about:blank","title":"Service Unavailable","status":503,"detail":"upstream down"}',
)


def test_robotsd_own_503_is_sent_again_twice_then_raised(stand_in: MakeStandIn) -> None:
    robotsd = stand_in([OVERLOADED])
    with Client(robotsd.url) as client:
        with pytest.raises(ProblemError) as raised:
            client.check("http://site.test/", "ExampleBot")
    assert raised.value.status == 503 and raised.value.type == "urn:robotsd:problem:overloaded"
    # One call, one budget: the first request and DEFAULT_MAX_RETRIES more, no more.
    assert DEFAULT_MAX_RETRIES == 2
    assert robotsd.count() == 3


@pytest.mark.parametrize("answer", [PROXY_503, OTHER_PROBLEM_503], ids=["html", "other-problem"])
def test_a_503_that_is_not_robotsd_own_is_not_retried(stand_in: MakeStandIn, answer: Canned) -> None:
    robotsd = stand_in([answer])
    with Client(robotsd.url) as client:
        with pytest.raises(ProblemError) as raised:
            client.check("http://site.test/", "ExampleBot")
    assert raised.value.status == 503 and raised.value.type == "about:blank"
    assert robotsd.count() == 1


def test_other_problems_are_not_retried(stand_in: MakeStandIn) -> None:
    bad_url: Canned = (
        400,
        {"Content-Type": "application/problem+json"},
        b'{"type":"urn:robotsd:problem:invalid-url","title":"Invalid URL","status":400,"detail":"x"}',
    )
    robotsd = stand_in([bad_url])
    with Client(robotsd.url) as client:
        with pytest.raises(ProblemError) as raised:
            client.check("http://site.test/", "ExampleBot")
    assert raised.value.status == 400 and robotsd.count() == 1


def test_a_retry_waits_robotsd_retry_after_and_can_succeed(
    site: Site, robotsd: Robotsd, stand_in: MakeStandIn
) -> None:
    # The answer robotsd gives, served by the stand-in after one cache-full of a second.
    real = httpx.get(
        robotsd.url + "/v1/check", params={"url": site.url + "/p/1", "ua": "ExampleBot"}, trust_env=False
    )
    assert real.status_code == 200
    standin = stand_in([CACHE_FULL_1S, (200, {"Content-Type": "application/json"}, real.content)])
    with Client(standin.url) as client:
        answer = client.check(site.url + "/p/1", "ExampleBot")
    assert isinstance(answer, CheckResponse) and answer.allowed
    [(_, _, first), (_, _, second)] = standin.requests
    # Retry-After: 1 (the jitter's bound is held exactly below); a busy machine may add to it.
    assert 1.0 <= second - first < 3.0


def test_a_retry_waits_retry_after_and_a_jitter_of_at_most_a_tenth() -> None:
    answer = httpx.Response(503, headers={"Retry-After": "1"})
    assert _retry_wait(answer, rand=lambda: 0.0) == 1.0
    assert _retry_wait(answer, rand=lambda: 0.999) == pytest.approx(1.0999)
    assert _retry_wait(httpx.Response(503, headers={"Retry-After": "60"}), rand=lambda: 0.999) <= 61.0


def test_a_retry_after_past_the_call_time_limit_gives_up_at_once(stand_in: MakeStandIn) -> None:
    # A wait of 30 s past a limit of 5: given up at once, where waiting would take 30 s.
    robotsd = stand_in([CACHE_FULL_30S])
    start = time.monotonic()
    with Client(robotsd.url, timeout=5) as client:
        with pytest.raises(ProblemError) as raised:
            client.check("http://site.test/", "ExampleBot")
    assert raised.value.type == "urn:robotsd:problem:cache-full"
    assert robotsd.count() == 1 and time.monotonic() - start < 4


def test_max_retries_zero_never_retries_and_a_negative_one_is_refused(stand_in: MakeStandIn) -> None:
    robotsd = stand_in([OVERLOADED])
    with Client(robotsd.url, max_retries=0) as client:
        with pytest.raises(ProblemError):
            client.check("http://site.test/", "ExampleBot")
    assert robotsd.count() == 1
    with pytest.raises(ValueError):
        Client(robotsd.url, max_retries=-1)


def test_every_call_has_its_own_budget(stand_in: MakeStandIn) -> None:
    # A batch, a report and a page are retried as a check is; and each call once, however many
    # calls came before it.
    robotsd = stand_in([OVERLOADED])
    with Client(robotsd.url) as client:
        for _ in range(2):
            with pytest.raises(ProblemError):
                client.check_many(["http://site.test/a", "http://site.test/b"], "ExampleBot")
        with pytest.raises(ProblemError):
            client.report("http://site.test/a", status=429)
        with pytest.raises(ProblemError):
            client.page("http://site.test/a", "ExampleBot", [("Content-Type", "text/plain")])
    assert robotsd.count("/v1/check") == 6
    assert robotsd.count("/v1/feedback") == 3
    assert robotsd.count("/v1/page") == 3


def test_the_async_client_retries_within_one_budget_too(stand_in: MakeStandIn) -> None:
    own, proxy = stand_in([OVERLOADED]), stand_in([PROXY_503])

    async def main() -> tuple[ProblemError, ProblemError]:
        async with AsyncClient(own.url) as a, AsyncClient(proxy.url) as b:
            with pytest.raises(ProblemError) as first:
                await a.check_batch([("http://site.test/", "ExampleBot")])
            with pytest.raises(ProblemError) as second:
                await b.feedback([ReportItem(url="http://site.test/", status=503)])
        return first.value, second.value

    first, second = asyncio.run(main())
    assert first.type.endswith(":overloaded") and own.count() == 3
    assert second.type == "about:blank" and proxy.count() == 1


def test_the_async_client_bounds_the_whole_call_retries_included(stand_in: MakeStandIn) -> None:
    # Each wait (2 s) would fit in the time limit (3.5 s) on its own; the second would end past
    # it and is not taken: two requests, where a limit per request would make three.
    robotsd = stand_in([CACHE_FULL_2S])

    async def main() -> None:
        async with AsyncClient(robotsd.url, timeout=3.5) as client:
            with pytest.raises(ProblemError):
                await client.check("http://site.test/", "ExampleBot")

    start = time.monotonic()
    asyncio.run(main())
    assert robotsd.count() == 2 and time.monotonic() - start < 6


def test_retry_after_is_read_as_robotsd_writes_it_and_bounded() -> None:
    assert _retry_after("3") == 3.0
    assert _retry_after(None) == 1.0 and _retry_after("soon") == 1.0 and _retry_after("-1") == 1.0
    assert _retry_after("86400") == 60.0
    assert _retry_after("Thu, 01 Jan 1970 00:00:10 GMT", now=4.0) == 6.0
    assert _retry_after("Thu, 01 Jan 1970 00:00:10 GMT", now=20.0) == 0.0


def test_robotsd_down_is_unavailable_at_once_and_not_retried() -> None:
    start = time.monotonic()
    with Client(closed_url()) as client:
        with pytest.raises(UnavailableError):
            client.check("http://site.test/", "ExampleBot")
    assert time.monotonic() - start < 1


def test_a_site_without_robots_txt_is_allowed_everything(make_site: MakeSite, robotsd: Robotsd) -> None:
    # Not robotsd failing: a 404 for robots.txt allows everything (RFC 9309 §2.3.1.3), and
    # there is no crawl-delay (None); a paced check keeps robotsd's default interval.
    site = make_site(answers={"/robots.txt": [(404, {})]})
    with Client(robotsd.url) as client:
        answer = client.check(site.url + "/private/1", "ExampleBot")
        paced = client.check(site.url + "/p/1", "ExampleBot", pace=True)
        held = client.robots(site.url)
    assert answer.allowed and answer.reason == "no_robots_txt" and answer.rule is None
    assert answer.crawl_delay is None
    assert answer.robots and answer.robots.status == 404
    assert paced.pace and paced.pace.interval_source == "default"
    assert held.state == "no_robots_txt"
    assert site.hits["/robots.txt"] == 1


@pytest.mark.parametrize(("answer", "requests"), [(OVERLOADED, 3), (PROXY_503, 1)], ids=["robotsd", "proxy"])
def test_a_scrapy_crawl_asks_an_overloaded_robotsd_once_a_budget(
    site: Site, stand_in: MakeStandIn, tmp_path: Path, answer: Canned, requests: int
) -> None:
    # The middleware adds no retries of its own: the start page's check is one call, sent
    # three times to robotsd's own 503 and once to a proxy's, and then dropped (fail closed).
    robotsd = stand_in([answer])
    crawl = Crawl(robotsd.url, site, tmp_path)

    assert crawl.returncode == 1
    assert crawl.output == {"fetched": [], "disallowed": []}
    assert site.hits == {}
    assert robotsd.count("/v1/check") == requests
    assert crawl.stat("checked") == 1 and crawl.stat("batches") == 1
    assert crawl.stat("problem") == 1 and crawl.stat("fail_closed") == 1
    kind = "overloaded" if answer is OVERLOADED else "blank"
    assert crawl.stat(f"problem/{kind}") == 1
