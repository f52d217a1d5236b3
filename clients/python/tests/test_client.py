"""Client and AsyncClient against the real robotsd and a loopback site."""

from __future__ import annotations

import asyncio
import hashlib
import socket
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import httpx
import msgspec
import pytest
from conftest import (
    CRAWLER_UA,
    HOSTILE_FLAGS,
    SITE_ROBOTS,
    MakeSite,
    Robotsd,
    Site,
    StartRobotsd,
    closed_url,
    hostile_paths,
    hostile_robots,
    robots_line,
    site_paths,
)

from robotsd import (
    MAX_BATCH,
    AsyncClient,
    CheckResponse,
    Client,
    PaceJson,
    PaceStateJson,
    Problem,
    ProblemError,
    RecordJson,
    ReportItem,
    ReportTaken,
    RobotsResponse,
    RobotsSourceJson,
    RslJson,
    UnavailableError,
    VerdictResponse,
)

UNSUPPORTED_SCHEME = "urn:robotsd:problem:unsupported-scheme"


def test_check_answers_with_the_rule_that_decided_and_its_line(site: Site, robotsd: Robotsd) -> None:
    with Client(robotsd.url) as client:
        denied = client.check(site.url + "/private/3", CRAWLER_UA)
        allowed = client.check(site.url + "/private/public/2", "ExampleBot")
        pdf = client.check(site.url + "/docs/1.pdf", "ExampleBot")
        page = client.check(site.url + "/p/7", "ExampleBot")

    assert isinstance(denied, CheckResponse)
    assert denied.allowed is False and denied.verdict == "disallow"
    assert denied.reason == "matched_rule"
    assert denied.rule and denied.rule.line == robots_line("Disallow: /private/")
    assert denied.rule.directive == "disallow" and denied.rule.pattern == "/private/"
    assert denied.agent.input == [CRAWLER_UA] and denied.agent.tokens == ["ExampleBot"]
    assert denied.robots_url == site.url + "/robots.txt"
    assert denied.robots and denied.robots.status == 200 and denied.robots.bytes == len(SITE_ROBOTS)
    assert denied.crawl_delay == 0.01
    assert denied.usage is None

    assert allowed.allowed and allowed.rule and allowed.rule.line == robots_line("Allow: /private/public")
    assert not pdf.allowed and pdf.rule and pdf.rule.pattern == "/*.pdf$"
    assert page.allowed and page.reason == "no_matching_rule" and page.rule is None
    assert page.group and page.group.global_ and page.group.agents == ["*"]
    # Four checks, one fetch: robotsd caches the file.
    assert site.hits["/robots.txt"] == 1


def test_check_gives_a_record_of_robots_txt_when_asked(site: Site, robotsd: Robotsd) -> None:
    with Client(robotsd.url) as client:
        plain = client.check(site.url + "/private/3", "ExampleBot")
        answer = client.check(site.url + "/private/3", "ExampleBot", record=True)
    assert plain.record is msgspec.UNSET
    record = answer.record
    assert isinstance(record, RecordJson)
    assert record.format == "robotsd-record/1" and record.url == site.url + "/private/3"
    assert record.vocabulary == "draft-ietf-aipref-vocab-08"
    assert record.robots_txt.allowed is False
    assert record.robots_txt.sha256 == hashlib.sha256(SITE_ROBOTS.encode()).hexdigest()
    assert record.robots_txt.rule and record.robots_txt.rule.line == robots_line("Disallow: /private/")
    # A check does not read the page.
    assert record.robots is None and record.usage is None


def test_check_takes_several_agents(site: Site, robotsd: Robotsd) -> None:
    with Client(robotsd.url) as client:
        answer = client.check(site.url + "/p/1", ["OtherBot", "ExampleBot"])
    assert answer.agent.input == ["OtherBot", "ExampleBot"]
    assert answer.agent.tokens == ["OtherBot", "ExampleBot"]
    assert answer.group and answer.group.agents == ["OtherBot"]
    assert not answer.allowed


class _Counter:
    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> None:
        self.requests.append(request)


def test_check_many_splits_batches_of_1000_keeping_order_and_problems_in_their_slots(
    site: Site, robotsd: Robotsd
) -> None:
    paths = [site_paths()[i % len(site_paths())] + f"?n={i}" for i in range(2 * MAX_BATCH + 101)]
    urls = [site.url + p for p in paths]
    bad = 1500
    urls[bad] = "ftp://127.0.0.1/file"
    counter = _Counter()
    with httpx.Client(event_hooks={"request": [counter]}, trust_env=False) as http:
        client = Client(robotsd.url, http_client=http)
        results = client.check_many(urls, "ExampleBot")
        posts = len(counter.requests)
        # The order, across the chunk boundaries: each slot as a single check answers.
        sample = [0, 1, 2, 3, 11, 40, 41, 48, 49, 999, 1000, 1001, 1999, 2000, 2001, len(urls) - 1]
        singles = {i: client.check(urls[i], "ExampleBot") for i in sample}

    assert posts == 3
    assert robotsd.metric("robotsd_http_requests_total", route="/v1/check", method="POST") == 3
    assert len(results) == len(urls)
    for i, (url, result) in enumerate(zip(urls, results)):
        if i == bad:
            assert isinstance(result, Problem) and result.type == UNSUPPORTED_SCHEME
            assert result.status == 400
            continue
        assert isinstance(result, CheckResponse), f"{url}: {result}"
        assert result.url == url
    for i, single in singles.items():
        result = results[i]
        assert isinstance(result, CheckResponse)
        assert (result.allowed, result.rule) == (single.allowed, single.rule), urls[i]
    verdicts = {r.allowed for r in results if isinstance(r, CheckResponse)}
    assert verdicts == {True, False}
    assert site.hits["/robots.txt"] == 1


def test_check_batch_takes_an_agent_per_url(site: Site, robotsd: Robotsd) -> None:
    with Client(robotsd.url) as client:
        results = client.check_batch(
            [
                (site.url + "/p/1", "ExampleBot"),
                (site.url + "/p/1", "OtherBot"),
                (site.url + "/p/1", ""),
                (site.url + "/private/public/1", ["ExampleBot", "Another"]),
            ]
        )
    first, second, third, fourth = results
    assert isinstance(first, CheckResponse) and first.allowed
    assert isinstance(second, CheckResponse) and not second.allowed
    assert second.rule and second.rule.line == robots_line("User-agent: OtherBot") + 1
    assert isinstance(third, Problem) and third.type.endswith(":invalid-user-agent"), third
    assert isinstance(fourth, CheckResponse) and fourth.allowed
    assert fourth.agent.input == ["ExampleBot", "Another"]


def test_a_problem_is_raised_typed(site: Site, robotsd: Robotsd) -> None:
    with Client(robotsd.url) as client:
        with pytest.raises(ProblemError) as raised:
            client.check("ftp://127.0.0.1/file", "ExampleBot")
        with pytest.raises(ProblemError) as no_agent:
            client.check(site.url + "/", "")
    e = raised.value
    assert e.type == UNSUPPORTED_SCHEME and e.status == 400
    assert e.title and "ftp" in e.detail
    assert isinstance(e.problem, Problem)
    assert "ftp" in str(e)
    assert no_agent.value.type.endswith(":invalid-user-agent") or no_agent.value.type.endswith(
        ":missing-user-agent"
    )
    assert site.hits["/robots.txt"] == 0


def test_an_unknown_route_is_a_problem_too(robotsd: Robotsd) -> None:
    with Client(robotsd.url + "/no-such-prefix") as client:
        with pytest.raises(ProblemError) as raised:
            client.robots("http://127.0.0.1:1/")
    assert raised.value.status == 404


def test_robots_shows_what_robotsd_holds(site: Site, robotsd: Robotsd) -> None:
    with Client(robotsd.url) as client:
        held = client.robots(site.url + "/p/1", include_robots_txt=True)
    assert isinstance(held, RobotsResponse)
    assert held.origin == site.url and held.state == "parsed"
    assert held.robots_txt == SITE_ROBOTS
    assert held.parsed
    star, other = held.parsed.groups
    assert [a.value for a in star.agents] == ["*"] and star.crawl_delay == 0.01
    assert [(r.directive, r.pattern, r.line) for r in star.rules] == [
        ("disallow", "/private/", robots_line("Disallow: /private/")),
        ("allow", "/private/public", robots_line("Allow: /private/public")),
        ("disallow", "/*.pdf$", robots_line("Disallow: /*.pdf$")),
    ]
    assert [a.value for a in other.agents] == ["OtherBot"]


def test_evaluate_checks_a_given_robots_txt_without_fetching(site: Site, robotsd: Robotsd) -> None:
    with Client(robotsd.url) as client:
        evaluation = client.evaluate(
            "User-agent: *\nDisallow: /private\nAllow: /private/press\n",
            ["/private/a", "/private/press/1", "ftp://x/"],
            "ExampleBot",
            parsed=True,
        )
    a, press, bad = evaluation.results
    assert isinstance(a, CheckResponse) and not a.allowed and a.rule and a.rule.line == 2
    assert isinstance(press, CheckResponse) and press.allowed and press.robots is None
    assert isinstance(bad, Problem)
    assert evaluation.parsed and evaluation.parsed.lines >= 3
    assert evaluation.cut_at_bytes is None
    assert site.hits == {}


LICENSE = """<rsl xmlns="https://rslstandard.org/rsl">
  <content url="/articles/*" server="https://license.example/">
    <license>
      <permits type="usage">ai-input search</permits>
      <prohibits type="usage">ai-train</prohibits>
      <payment type="crawl"><amount currency="USD">0.015</amount></payment>
    </license>
  </content>
</rsl>
"""


def test_rsl_license_terms_decode(make_site: MakeSite, start_robotsd: StartRobotsd) -> None:
    licenses = make_site(paths=["/"], documents={"/license.xml": LICENSE})
    site = make_site(robots=f"User-agent: *\nDisallow: /private/\nLicense: {licenses.url}/license.xml\n")
    robotsd = start_robotsd("--rsl")
    with Client(robotsd.url) as client:
        article = client.check(site.url + "/articles/1", "ExampleBot")
        about = client.check(site.url + "/about", "ExampleBot")
        private = client.check(site.url + "/private/x", "ExampleBot")
    assert article.usage and article.usage.rsl
    report = article.usage.rsl[0]
    assert isinstance(report, RslJson)
    assert report.state == "covered" and report.line == 3
    assert report.license_url == licenses.url + "/license.xml"
    content = report.contents[0]
    assert content.url == "/articles/*" and content.server == "https://license.example/"
    terms = content.licenses[0]
    assert terms.permits.usage == ["ai-input", "search"] and terms.prohibits.usage == ["ai-train"]
    assert terms.payment and terms.payment.type == "crawl"
    assert terms.payment.amounts[0].value == "0.015" and terms.payment.amounts[0].currency == "USD"
    assert report.source and report.source.status == 200 and report.source.cache == "miss"
    # A URL the document does not cover, and a disallowed one (no terms at all).
    assert about.usage and about.usage.rsl and about.usage.rsl[0].state == "not_covered"
    assert private.usage is None
    assert licenses.hits["/license.xml"] == 1


def test_a_batch_cut_at_its_bound_gives_verdicts_past_it(
    make_site: MakeSite, start_robotsd: StartRobotsd
) -> None:
    # A hostile site: each full answer about it is 6 KB and more, and echoes a 4 KB URL, so
    # robotsd's answer to a batch of 1,000 reaches its 8 MiB bound and goes on in verdicts.
    robots = hostile_robots()
    site = make_site(robots=robots, paths=["/"])
    robotsd = start_robotsd(*HOSTILE_FLAGS)
    paths = hostile_paths()
    with Client(robotsd.url) as client:
        results = client.check_many([site.url + p for p in paths], "a")
        evaluation = client.evaluate(robots, paths, "a")

    for got in (results, evaluation.results):
        assert len(got) == len(paths)
        full = next(i for i, r in enumerate(got) if not isinstance(r, CheckResponse))
        assert 100 < full < len(paths), full
        # From the first verdict on, every answer is a verdict, and every verdict is right.
        assert all(isinstance(r, VerdictResponse) for r in got[full:])
        for path, result in zip(paths, got):
            assert not isinstance(result, Problem), (path[:10], result)
            assert result.allowed == (not path.startswith("/d")), (path[:10], result)
            assert result.reason == "matched_rule"
    assert evaluation.truncated

    # The bounds of each full answer, decoded: 16 of the 20 agents, each cut, and the pattern.
    first = results[0]
    assert isinstance(first, CheckResponse) and not first.allowed
    assert first.group and first.group.truncated is True and first.group.agents_total == 20
    assert len(first.group.agents) == 16
    assert first.rule and first.rule.truncated is True and len(first.rule.pattern) == 2_048
    assert first.rule.directive == "disallow"
    assert site.hits["/robots.txt"] == 1


def test_robotsd_down_is_unavailable() -> None:
    with Client(closed_url()) as client:
        with pytest.raises(UnavailableError):
            client.check("http://127.0.0.1:1/", "ExampleBot")


@pytest.fixture
def silent_server() -> Iterator[str]:
    """A loopback port that accepts connections and never answers."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(16)
        yield f"http://127.0.0.1:{s.getsockname()[1]}"


def test_a_robotsd_that_does_not_answer_times_out_as_unavailable(silent_server: str) -> None:
    start = time.monotonic()
    with Client(silent_server, timeout=0.5) as client:
        with pytest.raises(UnavailableError):
            client.check("http://127.0.0.1:1/", "ExampleBot")
    assert time.monotonic() - start < 5


def test_a_token_is_sent_as_a_bearer(site: Site, start_robotsd: StartRobotsd, token_file: tuple[Path, str]) -> None:
    path, token = token_file
    robotsd = start_robotsd("--api-token-file", str(path))
    with Client(robotsd.url) as anonymous, Client(robotsd.url, token=token + "x") as wrong:
        for client in (anonymous, wrong):
            with pytest.raises(ProblemError) as raised:
                client.check(site.url + "/p/1", "ExampleBot")
            assert raised.value.status == 401 and raised.value.type.endswith(":unauthorized")
    with Client(robotsd.url, token=token) as client:
        assert client.check(site.url + "/p/1", "ExampleBot").allowed
        [result] = client.check_many([site.url + "/private/1"], "ExampleBot")
        assert isinstance(result, CheckResponse) and not result.allowed


def test_the_async_client(site: Site, start_robotsd: StartRobotsd, token_file: tuple[Path, str]) -> None:
    path, token = token_file
    robotsd = start_robotsd("--api-token-file", str(path))

    async def main() -> None:
        async with AsyncClient(robotsd.url, token=token) as client:
            answers = await asyncio.gather(
                *(client.check(site.url + p, "ExampleBot") for p in site_paths())
            )
            many = await client.check_many([site.url + p for p in site_paths()], "ExampleBot")
            pairs = await client.check_batch([(site.url + "/p/1", "OtherBot")])
            held = await client.robots(site.url)
            evaluation = await client.evaluate("User-agent: *\nDisallow: /\n", ["/a"], "Bot")
        async with AsyncClient(robotsd.url) as anonymous:
            with pytest.raises(ProblemError) as raised:
                await anonymous.check(site.url + "/", "ExampleBot")
        async with AsyncClient(closed_url()) as down:
            with pytest.raises(UnavailableError):
                await down.check(site.url + "/", "ExampleBot")

        assert raised.value.status == 401
        assert [a.allowed for a in answers] == [
            m.allowed for m in many if isinstance(m, CheckResponse)
        ]
        assert len(many) == len(site_paths())
        assert any(a.allowed for a in answers) and not all(a.allowed for a in answers)
        assert isinstance(pairs[0], CheckResponse) and not pairs[0].allowed
        assert held.state == "parsed"
        first = evaluation.results[0]
        assert isinstance(first, CheckResponse) and not first.allowed

    asyncio.run(main())
    assert site.hits["/robots.txt"] == 1


def test_the_async_client_bounds_a_whole_call(silent_server: str) -> None:
    async def main() -> None:
        async with AsyncClient(silent_server, timeout=0.5) as client:
            with pytest.raises(UnavailableError):
                await client.check("http://127.0.0.1:1/", "ExampleBot")

    start = time.monotonic()
    asyncio.run(main())
    assert time.monotonic() - start < 5


def test_an_answer_from_a_newer_robotsd_still_decodes(site: Site, robotsd: Robotsd) -> None:
    # A later robotsd may add a reason, a cache outcome or a field: a crawler that upgrades
    # robotsd before its client must keep getting answers, so the generated types hold these
    # as plain strings (generate-models.sh: --ignore-enum-constraints) and skip unknown fields.
    real = httpx.get(robotsd.url + "/v1/check", params={"url": site.url + "/p/1", "ua": CRAWLER_UA}).json()
    real["reason"] = "a_reason_added_later"
    real["robots"]["cache"] = "a_cache_outcome_added_later"
    real["a_field_added_later"] = {"any": ["thing"]}
    answer = msgspec.json.decode(msgspec.json.encode(real), type=CheckResponse)
    assert answer.allowed is True
    assert answer.reason == "a_reason_added_later"
    assert isinstance(answer.robots, RobotsSourceJson)
    assert answer.robots.cache == "a_cache_outcome_added_later"


PACED_ROBOTS = """User-agent: *
Disallow: /private/
Crawl-delay: 0.2
"""


def instant(rfc3339: str) -> datetime:
    # fromisoformat takes a "Z" from Python 3.11 on only.
    return datetime.fromisoformat(rfc3339.replace("Z", "+00:00"))


def test_pace_reserves_staggered_slots(make_site: MakeSite, robotsd: Robotsd) -> None:
    # Two seconds: however slowly these calls follow each other, each slot is still the one
    # after the last (nothing here waits for a slot).
    site = make_site(PACED_ROBOTS.replace("0.2", "2"), ["/"])
    with Client(robotsd.url) as client:
        unpaced = client.check(site.url + "/p/0", "ExampleBot")
        first = client.check(site.url + "/p/0", "ExampleBot", pace=True)
        batch = client.check_many(
            [site.url + p for p in ("/p/1", "/private/1", "/p/2")], "ExampleBot", pace=True
        )
        pairs = client.check_batch([(site.url + "/p/3", "OtherBot")], pace=True)

    assert unpaced.pace is msgspec.UNSET  # not asked: no member at all
    assert isinstance(first.pace, PaceJson)
    assert first.pace.outcome == "reserved" and first.pace.scope == "local"
    assert first.pace.interval_ms == 2000 and first.pace.interval_source == "crawl_delay"
    assert first.pace.crawl_delay_line == 3 and first.pace.capped is False
    assert first.pace.slowdown == 1.0 and not first.pace.retry_after_until
    one, disallowed, two = batch
    assert isinstance(one, CheckResponse) and isinstance(one.pace, PaceJson)
    assert isinstance(two, CheckResponse) and isinstance(two.pace, PaceJson)
    assert isinstance(disallowed, CheckResponse) and not disallowed.allowed
    assert disallowed.pace is None  # nothing reserved for it
    # One origin: each slot a crawl-delay and robotsd's guard band (--pace-guard, 50 ms) after
    # the one before, whatever the agent.
    [other] = pairs
    assert isinstance(other, CheckResponse) and isinstance(other.pace, PaceJson)
    slots = [instant(p.not_before) for p in (first.pace, one.pace, two.pace, other.pace)]
    assert [b - a for a, b in zip(slots, slots[1:])] == [timedelta(seconds=2.05)] * 3
    assert one.pace.wait_ms < two.pace.wait_ms <= 2 * 2050


def test_feedback_returns_the_origins_pacing_state(make_site: MakeSite, robotsd: Robotsd) -> None:
    site = make_site(PACED_ROBOTS, ["/"])
    with Client(robotsd.url) as client:
        slot = client.check(site.url + "/p/0", "ExampleBot", pace=True)
        refused = client.report(site.url + "/p/0", status=429, retry_after="1")
        results = client.feedback(
            [
                ReportItem(url=site.url + "/p/1", timeout=True),
                ReportItem(url="ftp://127.0.0.1/file", status=503),
                ReportItem(url=site.url + "/p/2", status=200),
            ]
        )
        # A response time is taken with a report: the first few only make the lane's baseline.
        timed = client.report(site.url + "/p/2", status=200, response_ms=40)
        after = client.check(site.url + "/p/3", "ExampleBot", pace=True)
        held = client.robots(site.url)
        with pytest.raises(ProblemError) as neither:
            client.report(site.url + "/p/4")

    assert isinstance(slot.pace, PaceJson)
    assert isinstance(refused, ReportTaken) and refused.origin == site.url
    assert isinstance(refused.pace, PaceStateJson)
    assert refused.pace.slowdown == 2.0 and refused.pace.scope == "local"
    assert isinstance(timed, ReportTaken) and timed.origin == site.url
    assert refused.pace.last_slot == slot.pace.not_before
    assert refused.pace.retry_after_until
    held_until = instant(refused.pace.retry_after_until)
    timed_out, bad, success = results
    # Each pushback doubles the slowdown (which decays meanwhile, by the millisecond).
    assert isinstance(timed_out, ReportTaken) and 3.9 < timed_out.pace.slowdown <= 4.0
    assert isinstance(bad, Problem) and bad.type == "urn:robotsd:problem:unsupported-scheme"
    assert isinstance(success, ReportTaken)  # a success eases the slowdown
    assert 2.0 < success.pace.slowdown < timed_out.pace.slowdown
    # The Retry-After holds the origin's next slot back, slowed down.
    assert isinstance(after.pace, PaceJson) and after.pace.interval_source == "pushback"
    assert after.pace.retry_after_until == refused.pace.retry_after_until
    assert instant(after.pace.not_before) >= held_until
    assert after.pace.interval_ms > 200
    assert isinstance(held.pace, PaceStateJson) and held.pace.slowdown > 2.0
    assert neither.value.status == 400 and neither.value.type.endswith(":invalid-report")


def test_the_async_client_paces_and_reports(make_site: MakeSite, robotsd: Robotsd) -> None:
    site = make_site(PACED_ROBOTS, ["/"])

    async def main() -> None:
        async with AsyncClient(robotsd.url) as client:
            answer = await client.check(site.url + "/p/0", "ExampleBot", pace=True)
            many = await client.check_many([site.url + "/p/1"], "ExampleBot", pace=True)
            pairs = await client.check_batch([(site.url + "/p/2", "ExampleBot")], pace=True)
            state = await client.report(site.url + "/p/0", status=503)
            [result] = await client.feedback([ReportItem(url=site.url + "/p/1", status=500)])

        assert isinstance(answer.pace, PaceJson) and answer.pace.outcome == "reserved"
        for item in (*many, *pairs):
            assert isinstance(item, CheckResponse) and isinstance(item.pace, PaceJson)
        assert state.origin == site.url and state.pace.slowdown == 2.0
        assert isinstance(result, ReportTaken) and 3.9 < result.pace.slowdown <= 4.0

    asyncio.run(main())
