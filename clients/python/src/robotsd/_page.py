"""After the fetch: what a page says of itself, asked of robotsd with ``POST /v1/page``
(robotsd's docs/page.md). A crawler hands over a response as it received it; this module sends
robotsd only what it reads: the headers it reads, and the document when it is HTML, cut to the
part robotsd reads."""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping
from typing import Optional, Union

import httpx
import msgspec

from ._call import UserAgent, _agents, _Call
from ._models import PageRequest, PageResponse

#: The response headers robotsd reads of a page, by lower-case name: the others are not sent.
PAGE_HEADERS = frozenset(
    {
        "robots-tag",
        "x-robots-tag",
        "content-usage",
        "tdm-reservation",
        "tdm-policy",
        "content-type",
    }
)

#: The media types whose documents are sent: robotsd reads robots and TDMRep ``meta`` tags in
#: HTML only.
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})

#: How much of a document robotsd reads, in bytes: the first 2 MiB, as Googlebot reads HTML.
MAX_DOCUMENT_BYTES = 2 * 1024 * 1024

HeaderField = Union[str, bytes]
"""A header's name or value: text, or the bytes received (read as Latin-1, which keeps every
byte)."""

PageHeaders = Union[Mapping[str, str], Iterable[tuple[HeaderField, HeaderField]]]
"""A response's headers: ``(name, value)`` pairs in the order received, repeated ones kept; or
an ``httpx.Headers`` (its field lines, one by one); or a mapping of names to values."""

PageBody = Union[bytes, str, None]
"""A response's document: its bytes as received, or text already decoded, or ``None``."""

_page_decoder = msgspec.json.Decoder(PageResponse)


def _text(field: HeaderField) -> str:
    return field.decode("latin-1") if isinstance(field, bytes) else field


def page_headers(headers: PageHeaders) -> list[list[str]]:
    """The headers robotsd reads of ``headers`` (:data:`PAGE_HEADERS`, names compared without
    regard to case), in their order, repeated ones kept, as ``[name, value]`` pairs. The
    positions in robotsd's answer (``robots.rules[*].header``,
    ``usage.content_usage_header.headers``) are positions in this list."""
    pairs: Iterable[tuple[HeaderField, HeaderField]]
    if isinstance(headers, httpx.Headers):
        pairs = headers.multi_items()  # items() would join repeated fields into one
    elif isinstance(headers, Mapping):
        pairs = headers.items()
    else:
        pairs = headers
    sent: list[list[str]] = []
    for name, value in pairs:
        text = _text(name)
        if text.lower() in PAGE_HEADERS:
            sent.append([text, _text(value)])
    return sent


def _media_type(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def _first_content_type(headers: list[list[str]]) -> Optional[str]:
    # The first, as robotsd takes the first for the charset: what is sent and how robotsd
    # decodes it are decided by the same field.
    return next((value for name, value in headers if name.lower() == "content-type"), None)


def _cut_text(text: str) -> str:
    """``text`` as sent: whole when its UTF-8 is at most :data:`MAX_DOCUMENT_BYTES`, else cut
    just past them (see :func:`page_request`)."""
    if len(text) <= MAX_DOCUMENT_BYTES // 4:  # at most 4 bytes a character
        return text
    encoded = text.encode("utf-8")
    if len(encoded) <= MAX_DOCUMENT_BYTES:
        return text
    # The characters whole within the first 2 MiB (a character cut in two is dropped), and one.
    read = encoded[:MAX_DOCUMENT_BYTES].decode("utf-8", "ignore")
    return text[: len(read) + 1]


def page_request(
    url: str,
    ua: UserAgent,
    headers: PageHeaders,
    body: PageBody = None,
    *,
    content_type: Optional[str] = None,
) -> PageRequest:
    """The body of ``POST /v1/page`` for a response to ``url``, as :meth:`Client.page` sends it.

    Of ``headers``, only those robotsd reads are sent (:func:`page_headers`). The document is
    sent only when it is HTML: ``content_type``, by default the headers' first
    ``Content-Type``, is ``text/html`` or ``application/xhtml+xml`` (a response without one is
    not sniffed). A ``content_type`` given when the headers have none is sent after them as a
    ``Content-Type`` header too, so that robotsd reads its charset.

    Bytes are sent as ``html_base64``, and robotsd decodes them as a browser does: their byte
    order mark, the ``Content-Type`` charset, a ``meta`` charset, else UTF-8 or windows-1252.
    This client never guesses a page's charset. Base64 also keeps the request within robotsd's
    limit (4 MiB) whatever the bytes: it is 4/3 of them, where text is JSON-escaped, a quote
    or a control character taking 2 to 6 bytes. Text (``str``, a document the caller already
    decoded, from a browser, say) is sent as ``html``, which robotsd reads as it is.

    robotsd reads a document's first 2 MiB (:data:`MAX_DOCUMENT_BYTES`). Of a longer one, one
    byte more (of text, one character more) is sent and the rest never is: robotsd then sees
    that the document went on, reads the same 2 MiB, and says ``document_cut``, exactly as it
    would of the whole document.
    """
    sent = page_headers(headers)
    if content_type is None:
        content_type = _first_content_type(sent)
    elif _first_content_type(sent) is None:
        sent.append(["Content-Type", content_type])
    html: Union[str, msgspec.UnsetType] = msgspec.UNSET
    html_base64: Union[str, msgspec.UnsetType] = msgspec.UNSET
    if body is not None and content_type and _media_type(content_type) in HTML_TYPES:
        if isinstance(body, str):
            html = _cut_text(body)
        else:
            document = memoryview(body)[: MAX_DOCUMENT_BYTES + 1]
            html_base64 = base64.b64encode(document).decode("ascii")
    return PageRequest(
        url=url, ua=_agents(ua), headers=sent, html=html, html_base64=html_base64
    )


def _page_call(
    url: str,
    ua: UserAgent,
    headers: PageHeaders,
    body: PageBody,
    content_type: Optional[str],
) -> _Call:
    request = page_request(url, ua, headers, body, content_type=content_type)
    return _Call("POST", "/v1/page", _page_decoder.decode, body=request)
