"""What a reconciler is given and what it answers: a key in, an outcome out.

A :class:`Request` is a key and nothing else — ``(namespace, name)`` — never the
object, never the event that woke the controller. The reconciler reads the current
state itself (a missing object means "deleted") and drives the world towards it. Since
it never learns *why* it was called, it cannot branch on the event type, and running it
twice in a row is harmless: that is what makes coalescing of keys in the workqueue safe.

There are three outcomes, and the controller's worker loop handles each in one line:

* return ``Result()`` — done; the key's retry backoff is forgotten;
* return ``Result(requeue_after=x)`` — done for now, come back in ``x`` seconds (a
  periodic re-check; the backoff is forgotten too, this is not a failure);
* raise — a rate-limited retry with per-key exponential backoff, except for
  :class:`~fleetkeeper.errors.TerminalError`, which means "retrying cannot fix this":
  the failure is logged and the key dropped until something enqueues it again. The
  worker loop treats the failures no retry can mend the same way (an object the API
  refuses as invalid, an interpreter rule failing on the object, a customization that
  keeps failing: :func:`~fleetkeeper.runtime.controller.gives_up`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from fleetkeeper.api.meta import Resource
from fleetkeeper.errors import TerminalError


@dataclass(frozen=True, slots=True, order=True)
class Request:
    """The key of one object to reconcile; ``namespace`` is ``""`` for cluster-scoped kinds."""

    namespace: str
    name: str

    @classmethod
    def for_object(cls, obj: Resource) -> Request:
        """The request that reconciles ``obj`` itself."""
        return cls(obj.metadata.namespace or "", obj.metadata.name or "")

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


@dataclass(frozen=True, slots=True)
class Result:
    """How a reconcile ended: ``requeue_after`` seconds until the next look, or never."""

    requeue_after: float | None = None


class Reconciler(Protocol):
    """Drives the object named by a request towards its desired state."""

    async def reconcile(self, request: Request) -> Result:
        """Reconcile one key; raise to retry with backoff, ``TerminalError`` to drop."""
        ...


class FuncReconciler:
    """A :class:`Reconciler` made of one async function (handy for small controllers)."""

    def __init__(self, fn: Callable[[Request], Awaitable[Result]]) -> None:
        self._fn = fn

    async def reconcile(self, request: Request) -> Result:
        return await self._fn(request)


__all__ = ["FuncReconciler", "Reconciler", "Request", "Result", "TerminalError"]
