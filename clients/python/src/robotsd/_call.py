"""What both clients send robotsd, the same for :class:`Client` and :class:`AsyncClient`: one
request and how to read its answer, and the agents a call names."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Callable, Optional, Union

import msgspec

UserAgent = Union[str, Sequence[str]]
"""One agent (a product token or a whole User-Agent header), or several names of one crawler."""

_encoder = msgspec.json.Encoder()


class _Call:
    """One request to robotsd, the same for both clients, and how to read its answer."""

    __slots__ = ("method", "path", "params", "body", "decode")

    def __init__(
        self,
        method: str,
        path: str,
        decode: Callable[[bytes], Any],
        params: Sequence[tuple[str, str]] = (),
        body: Optional[msgspec.Struct] = None,
    ) -> None:
        self.method = method
        self.path = path
        self.decode = decode
        # A tuple, which httpx's parameter types accept (a list of str pairs is invariant).
        self.params = tuple(params)
        self.body = None if body is None else _encoder.encode(body)


def _agents(ua: UserAgent) -> Union[str, list[str]]:
    if isinstance(ua, str):
        return ua
    agents = list(ua)
    if not agents:
        raise ValueError("ua: give at least one user agent")
    return agents
