"""The member API server's watch streams: each line as it comes, and an end when the server closes,
the client leaves or the timeout passes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import orjson

from fleetkeeper.members.simulated.server_watch import WatchResponse, event_line

GUARD = 10.0


async def _lines(first: bytes, forever: asyncio.Event) -> AsyncIterator[bytes]:
    yield first
    await forever.wait()  # an idle watch: nothing more happens


async def _stream(*, lasting: float, close_after_first: bool = False,
                  leave_after_first: bool = False) -> list[dict[str, Any]]:
    closing, left, never = asyncio.Event(), asyncio.Event(), asyncio.Event()
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)
        if message.get("body"):
            if close_after_first:
                closing.set()
            if leave_after_first:
                left.set()

    async def receive() -> dict[str, Any]:
        await left.wait()
        return {"type": "http.disconnect"}

    line = event_line("ADDED", {"metadata": {"name": "a"}})
    response = WatchResponse(_lines(line, never), timeout=lasting, closing=closing)
    async with asyncio.timeout(GUARD):
        await response({"type": "http"}, receive, send)  # type: ignore[arg-type]
    return sent


async def test_a_watch_sends_each_line_and_ends_cleanly_when_the_server_closes() -> None:
    sent = await _stream(lasting=GUARD * 10, close_after_first=True)
    assert sent[0]["status"] == 200 and (b"content-type", b"application/json") in sent[0]["headers"]
    assert orjson.loads(sent[1]["body"]) == {"type": "ADDED", "object": {"metadata": {"name": "a"}}}
    assert sent[2] == {"type": "http.response.body", "body": b"", "more_body": False}


async def test_a_watch_whose_client_left_sends_nothing_more() -> None:
    sent = await _stream(lasting=GUARD * 10, leave_after_first=True)
    assert [m.get("body") for m in sent[1:]] == [event_line("ADDED", {"metadata": {"name": "a"}})]


async def test_an_idle_watch_ends_at_its_timeout() -> None:
    sent = await _stream(lasting=0.05)
    assert sent[-1] == {"type": "http.response.body", "body": b"", "more_body": False} and len(sent) == 3
