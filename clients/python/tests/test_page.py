"""Client.page and AsyncClient.page (``POST /v1/page``) against the real robotsd: the answer's
positions (``rules[*].header``, ``content_usage_header.headers``) are positions among the
headers the client sent, and what it sent is seen on the way out (an httpx event hook)."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import httpx
import msgspec
import pytest
from conftest import CRAWLER_UA, Robotsd, Site, closed_url, robots_line

from robotsd import (
    MAX_DOCUMENT_BYTES,
    AsyncClient,
    Client,
    PageResponse,
    PageRobotsJson,
    ProblemError,
    UnavailableError,
    page_request,
)

HTML = """<!doctype html>
<html><head>
<meta name="robots" content="max-image-preview:standard">
<meta name="googlebot" content="noindex">
<meta name="ExampleBot" content="notranslate">
</head><body><a href="/next">next</a></body></html>
"""

#: A response's headers as received, of which robotsd reads five.
RECEIVED = [
    ("Date", "Wed, 03 Dec 2025 13:09:53 GMT"),
    ("Content-Type", "text/html; charset=utf-8"),
    ("Server", "loopback"),
    ("X-Robots-Tag", "otherbot: noindex"),
    ("Set-Cookie", "session=1"),
    ("x-robots-tag", "ExampleBot: nofollow, max-snippet:20"),
    ("Link", '<https://example.com/>; rel="canonical"'),
    ("Content-Usage", "train-ai=n"),
    ("X-Robots-Tag", "noarchive"),
]


class Sent:
    """The JSON bodies of the requests a client sends, recorded on their way out."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, request: httpx.Request) -> None:
        self.bodies.append(json.loads(request.content))

    def document(self) -> bytes:
        """The last document sent, as bytes."""
        body = self.bodies[-1]
        if "html" in body:
            text: str = body["html"]
            return text.encode()
        encoded: str = body["html_base64"]
        return base64.b64decode(encoded)


def recording_client(robotsd: Robotsd) -> tuple[Client, Sent, httpx.Client]:
    sent = Sent()
    http = httpx.Client(event_hooks={"request": [sent]}, trust_env=False)
    return Client(robotsd.url, http_client=http), sent, http


def rules(robots: PageRobotsJson) -> list[tuple[str, Any, Any, Any]]:
    """Each rule listed: its text, agent, header position and line."""
    return [(r.rule, r.agent, r.header or None, r.line or None) for r in robots.rules]


def test_page_combines_headers_and_meta_tags_for_the_crawler(
    site: Site, robotsd: Robotsd
) -> None:
    client, sent, http = recording_client(robotsd)
    with http:
        answer = client.page(site.url + "/p/1", CRAWLER_UA, RECEIVED, HTML.encode())

    assert isinstance(answer, PageResponse)
    assert answer.allowed and answer.check.allowed
    assert answer.check.url == site.url + "/p/1"
    robots = answer.robots
    assert robots
    # OtherBot's noindex (a header) and googlebot's (a meta tag) are not for ExampleBot.
    assert robots.index is True
    assert robots.follow is False
    assert robots.max_snippet == 20
    assert robots.translate is False
    assert robots.max_image_preview == "standard"
    assert robots.uninterpreted == ["noarchive"]
    # Positions among the five headers sent, not the nine received: Content-Type 0, OtherBot's
    # X-Robots-Tag 1, ExampleBot's 2, Content-Usage 3, the last X-Robots-Tag 4.
    assert rules(robots) == [
        ("nofollow", "ExampleBot", 2, None),
        ("max-snippet:20", "ExampleBot", 2, None),
        ("noarchive", None, 4, None),
        ("max-image-preview:standard", None, None, 3),
        ("notranslate", "examplebot", None, 5),  # a meta name, as robotsd gives it
    ]
    usage = answer.usage
    assert usage
    assert usage.content_usage_header.state == "stated"
    assert usage.content_usage_header.headers == [3]
    assert usage.content_usage_header.categories == {"train-ai": "n"}
    assert usage.combined["train-ai"].value == "n"
    assert usage.combined["train-ai"].sources == ["header"]
    assert answer.encoding == "UTF-8"
    assert not answer.document_cut

    [body] = sent.bodies
    assert body["url"] == site.url + "/p/1" and body["ua"] == CRAWLER_UA
    # Only the headers robotsd reads, in their order, as received.
    read = {
        "content-type",
        "robots-tag",
        "x-robots-tag",
        "content-usage",
        "tdm-reservation",
        "tdm-policy",
    }
    assert body["headers"] == [[n, v] for n, v in RECEIVED if n.lower() in read]
    assert len(body["headers"]) == 5
    # The bytes, for robotsd to decode.
    assert "html" not in body and sent.document() == HTML.encode()


LATIN_1 = """<html><head>
<meta name="robots" content="noindex, über">
<meta name="tdm-reservation" content="1">
<meta name="tdm-policy" content="https://example.com/licence-café">
</head><body>Grüße</body></html>
""".encode("latin-1")


def test_a_latin_1_page_is_read_in_its_own_charset(site: Site, robotsd: Robotsd) -> None:
    url = site.url + "/p/2"
    latin_1 = [("Content-Type", "text/html; charset=iso-8859-1")]
    with Client(robotsd.url) as client:
        by_header = client.page(url, "ExampleBot", latin_1, LATIN_1)
        # The charset in the document itself, which only its bytes carry.
        in_meta = LATIN_1.replace(b"<head>", b'<head><meta charset="iso-8859-1">')
        by_meta = client.page(url, "ExampleBot", [("Content-Type", "text/html")], in_meta)
        # The same bytes said to be UTF-8: robotsd goes by the charset it is given.
        utf_8 = [("Content-Type", "text/html; charset=utf-8")]
        mislabelled = client.page(url, "ExampleBot", utf_8, LATIN_1)
        # Text the caller decoded itself is sent as such.
        text = client.page(url, "ExampleBot", latin_1, LATIN_1.decode("latin-1"))

    for answer in (by_header, by_meta, text):
        assert answer.robots and answer.usage
        assert answer.robots.index is False
        assert ("über", None, None, 2) in rules(answer.robots)
        assert answer.usage.tdm.reservation is True
        assert answer.usage.tdm.policy == "https://example.com/licence-café"
    # WHATWG's Encoding Standard reads iso-8859-1 as windows-1252.
    assert by_header.encoding == "windows-1252" and by_meta.encoding == "windows-1252"
    assert text.encoding == "UTF-8"
    assert mislabelled.encoding == "UTF-8"
    assert mislabelled.usage
    assert mislabelled.usage.tdm.policy == "https://example.com/licence-caf\ufffd"


def test_a_document_past_2_mib_is_cut_and_robotsd_says_so(site: Site, robotsd: Robotsd) -> None:
    head = b'<html><head><meta name="robots" content="noindex"></head><body>'
    late = b'<meta name="robots" content="nofollow"></body></html>'
    long = head + b"<p>filler</p>\n" * (3 * 1024 * 1024 // 14) + late
    exact = head + b"x" * (MAX_DOCUMENT_BYTES - len(head) - len(late)) + late
    assert len(long) > 3 * 1024 * 1024 and len(exact) == MAX_DOCUMENT_BYTES
    headers = [("Content-Type", "text/html")]
    url = site.url + "/p/3"
    client, sent, http = recording_client(robotsd)
    with http:
        cut = client.page(url, "ExampleBot", headers, long)
        cut_sent = sent.document()
        whole = client.page(url, "ExampleBot", headers, exact)
        whole_sent = sent.document()
        text = long.decode().replace("filler", "fülle")
        cut_text = client.page(url, "ExampleBot", headers, text)
        text_sent = sent.document()

    # The first 2 MiB are read, and the tag past them is not; one byte more was sent, for
    # robotsd to see that the document went on.
    assert cut.document_cut is True
    assert cut.robots and cut.robots.index is False and cut.robots.follow is True
    assert cut_sent == long[: MAX_DOCUMENT_BYTES + 1]
    assert whole.document_cut in (None, msgspec.UNSET)
    assert whole.robots and whole.robots.index is False and whole.robots.follow is False
    assert whole_sent == exact
    # Text is cut the same way, at a character: 2 MiB of UTF-8 and one character more.
    assert cut_text.document_cut is True
    assert cut_text.robots and cut_text.robots.follow is True
    assert MAX_DOCUMENT_BYTES < len(text_sent) <= MAX_DOCUMENT_BYTES + 2
    assert text.encode().startswith(text_sent)


def test_a_page_robots_txt_disallows_is_not_read(site: Site, robotsd: Robotsd) -> None:
    with Client(robotsd.url) as client:
        answer = client.page(site.url + "/private/3", CRAWLER_UA, RECEIVED, HTML.encode())
    assert answer.allowed is False and answer.check.allowed is False
    assert answer.robots is None and answer.usage is None
    assert answer.check.rule and answer.check.rule.line == robots_line("Disallow: /private/")


def test_only_an_html_document_is_sent(site: Site, robotsd: Robotsd) -> None:
    url = site.url + "/docs/1"
    pdf = b'%PDF-1.7 <meta name="robots" content="nofollow">'
    client, sent, http = recording_client(robotsd)
    with http:
        headers = [("Content-Type", "application/pdf"), ("X-Robots-Tag", "noindex")]
        answer = client.page(url, "ExampleBot", headers, pdf)
        not_sent = sent.bodies[-1]
        headers = [("Content-Type", "application/xhtml+xml")]
        xhtml = client.page(url, "ExampleBot", headers, HTML.encode())
        # No Content-Type received: the caller says what the document is, and its charset.
        told = client.page(
            url, "ExampleBot", [("X-Robots-Tag", "nofollow")], LATIN_1,
            content_type="text/html; charset=iso-8859-1",
        )
        told_sent = sent.bodies[-1]
        untyped = client.page(url, "ExampleBot", [], HTML.encode())

    assert "html" not in not_sent and "html_base64" not in not_sent
    assert answer.robots and answer.robots.index is False and answer.robots.follow is True
    assert not answer.encoding
    assert xhtml.robots and xhtml.robots.translate is False
    assert told_sent["headers"] == [
        ["X-Robots-Tag", "nofollow"], ["Content-Type", "text/html; charset=iso-8859-1"]
    ]
    assert told.encoding == "windows-1252"
    assert told.robots and told.robots.follow is False and told.robots.index is False
    assert untyped.robots and untyped.robots.translate is True and not untyped.encoding


def test_headers_in_every_shape_keep_their_order_and_repeats() -> None:
    received = [(b"X-Robots-Tag", b"noindex"), (b"Server", b"x"), (b"X-Robots-Tag", b"nofollow")]
    expected = [["X-Robots-Tag", "noindex"], ["X-Robots-Tag", "nofollow"]]
    assert page_request("http://h/", "Bot", received).headers == expected
    # httpx would join repeated fields into one in items(): they are sent one by one.
    as_httpx = page_request("http://h/", "Bot", httpx.Headers(received)).headers
    assert isinstance(as_httpx, list)
    assert [[n.lower(), v] for n, v in as_httpx] == [[n.lower(), v] for n, v in expected]
    mapping = {"x-robots-tag": "none", "Age": "1"}
    assert page_request("http://h/", "Bot", mapping).headers == [["x-robots-tag", "none"]]


def test_the_async_client_asks_too_and_problems_are_raised(
    site: Site, robotsd: Robotsd
) -> None:
    async def main() -> PageResponse:
        async with AsyncClient(robotsd.url) as client:
            answer = await client.page(site.url + "/p/4", CRAWLER_UA, RECEIVED, HTML.encode())
            # More header lines than robotsd takes (256) is robotsd's to refuse.
            with pytest.raises(ProblemError) as raised:
                too_many = [("X-Robots-Tag", "noindex")] * 257
                await client.page(site.url + "/p/4", "ExampleBot", too_many)
            assert raised.value.status == 400 and raised.value.type.endswith(":invalid-page")
        return answer

    answer = asyncio.run(main())
    assert answer.allowed and answer.robots
    assert answer.robots.follow is False and answer.robots.index is True
    assert ("nofollow", "ExampleBot", 2, None) in rules(answer.robots)

    with Client(closed_url(), timeout=5) as down, pytest.raises(UnavailableError):
        down.page(site.url + "/p/4", "ExampleBot", RECEIVED, HTML.encode())
