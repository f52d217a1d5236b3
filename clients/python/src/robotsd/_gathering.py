"""The Scrapy middleware's traffic to robotsd, gathered: checks that arrive together go as one
batch, and reports of what the sites answered go as one ``POST /v1/feedback``, in the
background."""

from __future__ import annotations

import asyncio
from typing import Callable, Optional

from ._client import AsyncClient, FeedbackResult, Result
from ._errors import RobotsdError
from ._models import ReportItem
from ._sign import SignMethod


class _Batcher:
    """Gathers the checks that arrive within ``wait`` seconds (at most ``max_size``) into one
    ``POST /v1/check``. Scrapy hands a burst of requests to the middlewares in one go (up to
    CONCURRENT_REQUESTS), so a burst costs one round trip instead of one each. ``pace`` says,
    as each batch is sent, whether it reserves slots (``pace=true``). ``sign`` has robotsd sign
    each allowed request for that method (``sign=GET``): a batch signs for one method, so the
    requests of each method have a batcher of their own."""

    def __init__(
        self,
        client: AsyncClient,
        max_size: int,
        wait: float,
        on_batch: Callable[[int], None],
        pace: Callable[[], bool],
        sign: Optional[SignMethod] = None,
    ) -> None:
        self._client = client
        self._max_size = max_size
        self._wait = wait
        self._on_batch = on_batch
        self._pace = pace
        self._sign: Optional[SignMethod] = sign
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
            results = await self._client.check_batch(
                [(url, ua) for url, ua, _ in batch], pace=self._pace(), sign=self._sign
            )
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


class _Reporter:
    """Sends the reports made within ``wait`` seconds (at most ``max_size``) as one
    ``POST /v1/feedback``, in the background: a report is never waited for by the crawl, and a
    failure to deliver one is counted and logged, never raised. :meth:`settled` waits until
    the reports about an origin made so far have reached robotsd (or failed to)."""

    def __init__(
        self,
        client: AsyncClient,
        max_size: int,
        wait: float,
        on_sent: Callable[[list[FeedbackResult]], None],
        on_failed: Callable[[int, Exception], None],
    ) -> None:
        self._client = client
        self._max_size = max_size
        self._wait = wait
        self._on_sent = on_sent
        self._on_failed = on_failed
        self._pending: list[ReportItem] = []
        self._pending_done: Optional[asyncio.Future[None]] = None
        # Each origin with reports not yet delivered, and the sending of the latest one.
        self._unsettled: dict[str, asyncio.Future[None]] = {}
        self._timer: Optional[asyncio.TimerHandle] = None
        self._tasks: set[asyncio.Task[None]] = set()

    def add(self, origin: str, report: ReportItem, settle: bool = True) -> None:
        """Queues ``report``; with ``settle``, :meth:`settled` waits for it too."""
        loop = asyncio.get_running_loop()
        if self._pending_done is None:
            self._pending_done = loop.create_future()
        self._pending.append(report)
        if settle:
            self._unsettled[origin] = self._pending_done
        if len(self._pending) >= self._max_size:
            self._flush()
        elif self._timer is None:
            self._timer = loop.call_later(self._wait, self._flush)

    async def settled(self, origin: str) -> None:
        done = self._unsettled.get(origin)
        if done is not None:
            await asyncio.shield(done)

    def _flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        batch, self._pending = self._pending, []
        done, self._pending_done = self._pending_done, None
        if batch and done is not None:
            task = asyncio.ensure_future(self._send(batch, done))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _send(self, batch: list[ReportItem], done: asyncio.Future[None]) -> None:
        try:
            results = await self._client.feedback(batch)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # noqa: BLE001 - reporting never fails the crawl
            self._on_failed(len(batch), e)
        else:
            self._on_sent(results)
        finally:
            if not done.done():
                done.set_result(None)
            for origin in [o for o, f in self._unsettled.items() if f is done]:
                del self._unsettled[origin]

    async def close(self) -> None:
        self._flush()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
