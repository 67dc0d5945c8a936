"""Optimistic-concurrency writes, retried in place on Conflict: the one retry path of the controllers.

Reconcilers read from informer caches, which may lag the store by a few events, and
write with the resourceVersion they read — so a write can meet ``Conflict``. Raising
would retry the whole reconcile through the controller's rate limiter, whose token
bucket (10/s) is shared by every key: under load, a burst of harmless conflicts would
then crawl. Instead :func:`write` re-reads the object from the client, recomputes the
desired object with the same ``change`` step, and tries again at once — the desired
object is always computed from the version being replaced, never blindly overwritten.
Only persistent conflicts (another writer winning ``attempts`` times in a row) surface
as an error, and then the controller's backoff is the right answer.

:func:`write_planned` is the same loop for a reconciler that needs more than the stored
object: its step returns the object to write *and* the plan it came from (an eviction
assessment, the taints added), and the outcome says which version the standing plan was
made from, so what is recorded afterwards matches what was written. A step may be async
(it may await the interpreter).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar, cast

from fleetkeeper import errors
from fleetkeeper.api.meta import Resource
from fleetkeeper.client.interface import Client

T = TypeVar("T", bound=Resource)
P = TypeVar("P")
R = TypeVar("R")

ATTEMPTS = 8

#: current object → the object to write, or None when it already is as desired (may be async)
Change = Callable[[T], T | Awaitable[T | None] | None]


@dataclass(frozen=True, slots=True)
class Step(Generic[T, P]):
    """What a step decided for one version: the object to write (None: nothing) and why."""

    desired: T | None
    plan: P


@dataclass(frozen=True, slots=True)
class Planned(Generic[T, P]):
    """How a planned write ended: the version the standing plan was made from, the plan,
    and the stored object (None when the plan needed no write)."""

    base: T
    plan: P
    stored: T | None


#: current object → its step, or None when there is nothing to do at all (may be async)
Plan = Callable[[T], Step[T, P] | Awaitable[Step[T, P] | None] | None]
#: told the version, its plan and the error when a write fails otherwise than by Conflict
OnError = Callable[[T, P, errors.ApiError], Awaitable[None]]


async def write(client: Client, current: T, change: Change[T], *,
                subresource: Literal["main", "status"] = "main", attempts: int = ATTEMPTS) -> T | None:
    """Write ``change(current)`` (main resource or ``/status``); re-read and retry on Conflict.

    Returns the stored object, or None when there was nothing to write. ``NotFound``
    (the object went away meanwhile) propagates.
    """
    async def step(obj: T) -> Step[T, None]:
        return Step(await _resolved(change(obj)), None)

    outcome = await write_planned(client, current, step, subresource=subresource, attempts=attempts)
    return None if outcome is None else outcome.stored


async def write_planned(client: Client, current: T, plan: Plan[T, P], *,
                        subresource: Literal["main", "status"] = "main", attempts: int = ATTEMPTS,
                        missing: Literal["raise", "none"] = "raise",
                        pause: Callable[[], Awaitable[None]] | None = None,
                        on_error: OnError[T, P] | None = None) -> Planned[T, P] | None:
    """Write what ``plan(current)`` decides; on Conflict re-read, plan again and retry.

    Returns None when a step found nothing to do, or (``missing="none"``) when the re-read
    found the object gone; otherwise the :class:`Planned` outcome. ``pause`` is awaited
    between a conflict and the re-read; ``on_error`` hears of a write failing otherwise
    than by Conflict (``NotFound`` included) before the error propagates.
    """
    model = type(current)
    for attempt in range(attempts):
        if attempt:
            if pause is not None:
                await pause()
            try:
                current = await client.get(model, current.name, current.metadata.namespace or "")
            except errors.NotFound:
                if missing == "none":
                    return None
                raise
        step = await _resolved(plan(current))
        if step is None:
            return None
        if step.desired is None:
            return Planned(current, step.plan, None)
        try:
            if subresource == "status":
                stored = await client.update_status(step.desired)
            else:
                stored = await client.update(step.desired)
        except errors.Conflict:
            continue
        except errors.ApiError as exc:
            if on_error is not None:
                await on_error(current, step.plan, exc)
            raise
        return Planned(current, step.plan, stored)
    raise errors.Conflict(f"{model.KIND} {current.key}: gave up after {attempts} conflicting writes",
                          kind=model.KIND, name=current.name)


async def _resolved(value: R | Awaitable[R]) -> R:
    """The value of a step that may be sync or async."""
    if inspect.isawaitable(value):
        return cast("R", await value)
    return value


__all__ = ["ATTEMPTS", "Change", "OnError", "Plan", "Planned", "Step", "write", "write_planned"]
