"""Conflict-safe writes: a conflict re-reads and recomputes, a plan travels with its write."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest

from fleetkeeper import errors
from fleetkeeper.api.core import Namespace
from fleetkeeper.api.meta import ObjectMeta
from fleetkeeper.client.interface import Client
from fleetkeeper.controllers.writes import Step, write, write_planned


class Scripted:
    """A client over one Namespace whose writes fail as scripted (then store), counting reads."""

    def __init__(self, *failures: errors.ApiError, gone_after: int | None = None) -> None:
        self.stored = Namespace(metadata=ObjectMeta(name="team-a", resource_version="1"))
        self.failures = list(failures)
        self.reads = 0
        self.gone_after = gone_after

    async def get(self, model: Any, name: str, namespace: str = "") -> Namespace:
        self.reads += 1
        if self.gone_after is not None and self.reads > self.gone_after:
            raise errors.NotFound("gone")
        return self.stored

    async def update(self, obj: Namespace) -> Namespace:
        if self.failures:
            failure = self.failures.pop(0)
            if isinstance(failure, errors.Conflict):
                version = int(self.stored.metadata.resource_version or "0") + 1
                self.stored = self.stored.model_copy(update={"metadata": self.stored.metadata.model_copy(
                    update={"resource_version": str(version)})})
            raise failure
        self.stored = obj
        return obj

    update_status = update


def client(fake: Scripted) -> Client:
    return cast(Client, fake)


def labelled(current: Namespace) -> Namespace | None:
    if current.labels().get("seen"):
        return None
    return current.model_copy(update={"metadata": current.metadata.model_copy(update={
        "labels": {"seen": current.metadata.resource_version or ""}})})


def test_a_conflict_re_reads_and_recomputes_from_the_version_replaced() -> None:
    fake = Scripted(errors.Conflict("x"), errors.Conflict("y"))
    written = asyncio.run(write(client(fake), fake.stored, labelled))
    assert written is not None and written.labels() == {"seen": "3"}
    assert fake.reads == 2


def test_an_async_change_is_awaited() -> None:
    async def change(current: Namespace) -> Namespace | None:
        await asyncio.sleep(0)
        return labelled(current)

    fake = Scripted(errors.Conflict("x"))
    written = asyncio.run(write(client(fake), fake.stored, change))
    assert written is not None and written.labels() == {"seen": "2"}


def test_persistent_conflicts_give_up_after_the_attempts_without_a_last_read() -> None:
    fake = Scripted(*(errors.Conflict(str(i)) for i in range(5)))
    with pytest.raises(errors.Conflict, match="gave up after 5 conflicting writes"):
        asyncio.run(write(client(fake), fake.stored, labelled, attempts=5))
    assert fake.reads == 4


def test_nothing_to_write_writes_nothing() -> None:
    fake = Scripted()
    first = asyncio.run(write(client(fake), fake.stored, labelled))
    assert first is not None
    assert asyncio.run(write(client(fake), fake.stored, labelled)) is None


def test_a_planned_write_tells_the_plan_and_the_version_it_was_made_from() -> None:
    def plan(current: Namespace) -> Step[Namespace, str]:
        return Step(labelled(current), f"from {current.metadata.resource_version}")

    fake = Scripted(errors.Conflict("x"))
    outcome = asyncio.run(write_planned(client(fake), fake.stored, plan))
    assert outcome is not None
    assert outcome.plan == "from 2" and outcome.base.metadata.resource_version == "2"
    assert outcome.stored is not None and outcome.stored.labels() == {"seen": "2"}


def test_an_object_gone_on_the_re_read_is_none_when_asked() -> None:
    fake = Scripted(errors.Conflict("x"), gone_after=0)
    assert asyncio.run(write_planned(client(fake), fake.stored, lambda c: Step(labelled(c), None),
                                     missing="none")) is None
    fake = Scripted(errors.Conflict("x"), gone_after=0)
    with pytest.raises(errors.NotFound):
        asyncio.run(write(client(fake), fake.stored, labelled))


def test_a_failed_write_is_told_with_its_version_and_plan_then_raised() -> None:
    told: list[tuple[str, str, str]] = []

    async def on_error(current: Namespace, plan: str, exc: errors.ApiError) -> None:
        told.append((current.metadata.resource_version or "", plan, type(exc).__name__))

    fake = Scripted(errors.Conflict("x"), errors.Forbidden("no"))
    with pytest.raises(errors.Forbidden):
        asyncio.run(write_planned(client(fake), fake.stored, lambda c: Step(labelled(c), "plan"),
                                  on_error=on_error))
    assert told == [("2", "plan", "Forbidden")]


def test_the_pause_comes_between_a_conflict_and_the_re_read() -> None:
    pauses: list[int] = []
    fake = Scripted(errors.Conflict("x"), errors.Conflict("y"), errors.Conflict("z"))

    async def pause() -> None:
        pauses.append(fake.reads)

    with pytest.raises(errors.Conflict):
        asyncio.run(write_planned(client(fake), fake.stored, lambda c: Step(labelled(c), None),
                                  attempts=3, pause=pause))
    assert pauses == [0, 1]
