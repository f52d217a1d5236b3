"""Web Bot Auth (robotsd's docs/bot-auth.md): the methods robotsd signs, and the headers a
request it signed is sent with."""

from __future__ import annotations

from typing import Literal

from ._models import SignJson

SignMethod = Literal["GET", "HEAD"]
"""The methods robotsd signs a request for (``sign=GET`` or ``sign=HEAD``)."""

SIGN_METHODS: frozenset[str] = frozenset(("GET", "HEAD"))

#: The headers robotsd's ``sign.headers`` holds, as a request is sent with them.
SIGNATURE_HEADERS = ("Signature-Agent", "Signature-Input", "Signature")


def signature_headers(sign: SignJson) -> dict[str, str]:
    """The headers to send the signed request with (``Signature-Agent``, ``Signature-Input``
    and ``Signature``), by name, as robotsd gave them: set them on the request, replacing any of
    the same name, and send ``sign.method`` to ``sign.url`` before ``sign.expires``."""
    headers = sign.headers
    return {
        "Signature-Agent": headers.Signature_Agent,
        "Signature-Input": headers.Signature_Input,
        "Signature": headers.Signature,
    }
