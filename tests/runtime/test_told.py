"""The recorder says a lasting state once: per object and topic, until the topic clears or
the object is deleted, and remembers nothing of objects that are gone."""

from __future__ import annotations

from fleetkeeper.api import cluster, core
from fleetkeeper.api import timeline as tl
from fleetkeeper.api.meta import ObjectMeta
from fleetkeeper.client.local import LocalClient
from fleetkeeper.clock import VirtualClock
from fleetkeeper.runtime.recorder import Recorder, Sink
from fleetkeeper.runtime.told import GONE, SubjectKey, Told
from fleetkeeper.store import open_store


def _cluster(name: str) -> cluster.Cluster:
    return cluster.Cluster(metadata=ObjectMeta(name=name), spec=cluster.ClusterSpec(sync_mode="Push"))


def _recorded(body: object) -> tuple[list[core.Event], list[tl.TimelineEntry]]:
    clock = VirtualClock()

    async def main() -> tuple[list[core.Event], list[tl.TimelineEntry]]:
        client = LocalClient(open_store("memory://", clock=clock), clock=clock)
        rec = Recorder(Sink(client), clock, "taint-manager")
        await body(rec)  # type: ignore[operator]
        await rec.flush()
        return (await client.list(core.Event, "default")).items, (await client.list(tl.TimelineEntry)).items

    return clock.run(main())


def test_once_records_the_event_then_the_entry_only_the_first_time() -> None:
    member1 = _cluster("member1")
    said: list[bool] = []

    async def body(rec: Recorder) -> None:
        for _ in range(3):
            said.append(await rec.once(member1, "paused", event=("Warning", "EvictionPaused", "paused"),
                                       timeline=(tl.EVICTION_BLOCKED, "paused", "CircuitBreaker")))

    events, entries = _recorded(body)
    assert said == [True, False, False]
    assert [e.reason for e in events] == ["EvictionPaused"] and events[0].count == 1
    assert [(e.action, e.reason) for e in entries] == [(tl.EVICTION_BLOCKED, "CircuitBreaker")]


def test_a_new_value_is_told_again_and_a_cleared_topic_too() -> None:
    member1 = _cluster("member1")

    async def body(rec: Recorder) -> None:
        for clusters in (("a",), ("a",), ("a", "b"), ("a", "b")):
            await rec.once(member1, "waiting", value=clusters,
                           timeline=(tl.DISPATCH_WAITING, ", ".join(clusters), "PurgeDirectly"))
        assert rec.said(member1, "waiting") == ("a", "b")
        assert rec.clear(member1, "waiting") and not rec.clear(member1, "waiting")
        assert rec.said(member1, "waiting") is None
        await rec.once(member1, "waiting", value=("a", "b"),
                       timeline=(tl.DISPATCH_WAITING, "again", "PurgeDirectly"))

    _, entries = _recorded(body)
    assert sorted(e.message for e in entries) == ["a", "a, b", "again"]


def test_topics_are_per_object_and_cleared_for_every_object_at_once() -> None:
    told = Told()
    web = SubjectKey("ResourceBinding", "default", "web")
    api = SubjectKey("ResourceBinding", "default", "api")
    assert told.tell(web, ("tolerated", "member1")) and told.tell(api, ("tolerated", "member1"))
    assert told.tell(web, ("tolerated", "member2"))
    assert not told.tell(web, ("tolerated", "member1"))
    told.clear_topic(("tolerated", "member1"))
    assert told.tell(api, ("tolerated", "member1")), "told again once the topic cleared"
    assert not told.tell(web, ("tolerated", "member2")), "another topic stays"
    told.clear_topic(("tolerated", "nobody"))


def test_a_deleted_object_is_forgotten_and_the_memory_stays_bounded() -> None:
    told = Told()
    for round_ in range(3):
        for i in range(1000):
            subject = SubjectKey("ResourceBinding", "default", f"b{i}")
            assert told.tell(subject, "held", round_)
            assert told.tell(subject, ("tolerated", f"member{i % 7}"))
        assert len(told) == 1000
        for i in range(1000):
            told.forget(SubjectKey("ResourceBinding", "default", f"b{i}"))
        assert len(told) == 0
        assert not told._subjects, "the topic index holds no deleted object"


def test_the_forgetting_handler_forgets_deleted_objects_only() -> None:
    member1, member2 = _cluster("member1"), _cluster("member2")

    async def body(rec: Recorder) -> None:
        handler = rec.forgetting()
        for obj in (member1, member2):
            rec.first(obj, "paused")
            handler.on_add(obj)
        handler.on_update(member1, member1)
        assert rec.said(member1, "paused") is True
        handler.on_delete(member1)
        assert rec.said(member1, "paused") is None and rec.said(member2, "paused") is True
        assert len(rec.told) == 1
        assert rec.first(member1, "paused"), "a cluster made again under the name is told anew"

    _recorded(body)


def test_subjects_of_objects_and_of_timeline_subjects_are_the_same() -> None:
    member1 = _cluster("member1")
    subject = tl.Subject(api_version=member1.api_version, kind="Cluster", name="member1", namespace=None)
    assert SubjectKey.of(member1) == SubjectKey.of(subject) == SubjectKey("Cluster", "", "member1")


def test_what_is_told_late_about_a_deleted_object_is_not_remembered() -> None:
    told = Told()
    web = SubjectKey("ResourceBinding", "default", "web")
    assert told.tell(web, "held", uid="uid-1")
    told.forget(web, uid="uid-1")
    assert told.tell(web, "held", uid="uid-1"), "a reconcile that read it before it went still tells"
    assert len(told) == 0, "but nothing is remembered of it"
    assert told.tell(web, "held", uid="uid-2") and not told.tell(web, "held", uid="uid-2"), "made again"
    for i in range(GONE + 10):
        told.forget(SubjectKey("ResourceBinding", "default", f"b{i}"), uid=f"gone-{i}")
    assert len(told._gone) == GONE, "the deleted uids kept are bounded"
