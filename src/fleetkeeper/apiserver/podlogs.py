"""``GET …/pods/NAME/log``: a container's log, told by the member's
:class:`~fleetkeeper.apiserver.pods.ContainerRuntime`.

Kubernetes' query parameters are honoured: ``container`` (needed when the pod has several),
``tailLines`` (at most :data:`MAX_TAIL`), ``timestamps`` (each line then starts with its RFC 3339
time, where the runtime knows it) and ``follow`` — the lines so far, then each new one as the pod
changes (the pod is watched from the revision it was read at, so no change is missed), until the
container terminates or the pod is deleted, the client leaves, the server stops or the server's
watch timeout passes. A container that has not started answers ``400`` with Kubernetes' words
(``container "c" in pod "p" is waiting to start: ContainerCreating``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import Any

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from fleetkeeper import errors
from fleetkeeper.api.scheme import GroupKind
from fleetkeeper.apiserver.pods import ContainerRuntime, LogLine, container_named, waiting
from fleetkeeper.apiserver.request import parse_int
from fleetkeeper.apiserver.state import Context, ServerState
from fleetkeeper.store.interface import Watch

POD = GroupKind("", "Pod")
#: at most this many lines of ``tailLines``
MAX_TAIL = 100_000


def _render(lines: Sequence[LogLine], *, timestamps: bool) -> bytes:
    return b"".join((f"{when} {text}\n" if timestamps and when else f"{text}\n").encode()
                    for when, text in lines)


def _terminated(pod: Mapping[str, Any], container: str) -> bool:
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        if isinstance(status, Mapping) and status.get("name") == container:
            return bool((status.get("state") or {}).get("terminated"))
    return False


async def pod_log(state: ServerState, ctx: Context, runtime: ContainerRuntime) -> Response:
    """The answer to ``GET …/pods/NAME/log``: the lines so far, or (``follow``) a stream of them."""
    target = ctx.target
    pod = await state.store.get(POD, target.namespace or "", target.name or "")
    revision = state.store.revision  # read with the pod (no await between): following misses no change
    container = container_named(pod, ctx.param("container"))
    lines = list(runtime.log(pod, container))
    if not lines:
        raise waiting(pod, container)
    tail = parse_int("tailLines", ctx.param("tailLines"), minimum=0)
    if tail is not None and tail > MAX_TAIL:
        raise errors.BadRequest(f"tailLines: must be at most {MAX_TAIL}, got {tail}")
    timestamps = ctx.flag("timestamps")
    shown = lines if tail is None else lines[-tail:] if tail else []
    if not ctx.flag("follow"):
        return Response(_render(shown, timestamps=timestamps), media_type="text/plain")
    watch = state.store.watch(POD, target.namespace or "", since=revision,
                              field_selector=f"metadata.name={target.name}")

    async def more() -> AsyncGenerator[bytes, None]:
        yield _render(shown, timestamps=timestamps)
        told = set(lines)
        if _terminated(pod, container):
            return
        async for event in watch:
            if event.type == "DELETED":
                return
            new = [line for line in runtime.log(event.object, container) if line not in told]
            if new:
                yield _render(new, timestamps=timestamps)
                told.update(new)
            if _terminated(event.object, container):
                return

    return LogResponse(more(), watch, closing=state.closing, timeout=state.config.watch_timeout)


class LogResponse(Response):
    """Streams a followed log as plain text; ends with the log, when the client leaves, when the
    server stops or after ``timeout`` seconds."""

    def __init__(self, chunks: AsyncGenerator[bytes, None], watch: Watch, *, closing: asyncio.Event,
                 timeout: float) -> None:
        super().__init__(status_code=200, media_type="text/plain")
        self._chunks = chunks
        self._watch = watch
        self._closing = closing
        self._timeout = timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"cache-control", b"no-cache, private")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        producer = asyncio.ensure_future(self._produce(send))
        gone = asyncio.ensure_future(_disconnected(receive))
        stopping = asyncio.ensure_future(self._closing.wait())
        try:
            done, _ = await asyncio.wait({producer, gone, stopping}, timeout=self._timeout,
                                         return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (producer, gone, stopping):
                task.cancel()
            await asyncio.gather(producer, gone, stopping, return_exceptions=True)
            await self._watch.close()
        if gone not in done:
            with contextlib.suppress(OSError, RuntimeError):
                await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _produce(self, send: Send) -> None:
        try:
            async for chunk in self._chunks:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
        except errors.ApiError:
            return  # the watch was lost (its history compacted): the log ends here, as a restart would
        finally:
            await self._chunks.aclose()


async def _disconnected(receive: Receive) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return


__all__ = ["MAX_TAIL", "LogResponse", "pod_log"]
