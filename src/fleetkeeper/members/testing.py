"""The Member conformance suite: what every member backend must do alike.

A backend's test module subclasses :class:`MemberConformance`, names itself ``Test…``
and says how to run a test body against a fresh member::

    class TestSimulatedMember(MemberConformance):
        def run(self, body):
            clock = VirtualClock()
            async def main():
                member = SimulatedCluster("conformance", clock=clock)
                await body(member, clock)
            clock.run(main())

        async def take_down(self, member): member.down()
        async def bring_up(self, member): member.up()

Every ``test_*`` method below then runs against that backend. Bodies only use the
:class:`~fleetkeeper.members.interface.Member` protocol, bound every wait by
``WAIT`` seconds of the member's clock, and keep their objects in ``NAMESPACE``.
``take_down``/``bring_up`` are optional: a backend that cannot make its cluster refuse
connections (a real cluster) leaves them as they are and those tests skip.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from fleetkeeper import errors
from fleetkeeper.clock import Clock
from fleetkeeper.members.interface import FIELD_MANAGER, Member, MemberEvent, ObjectRef

Body = Callable[[Member, Clock], Awaitable[None]]

NAMESPACE = "fleetkeeper-conformance"
#: the longest any body waits for a change (seconds on the member's clock)
WAIT = 30.0


def config_map(name: str, data: dict[str, str] | None = None,
               labels: dict[str, str] | None = None) -> dict[str, Any]:
    """A ConfigMap manifest in the conformance namespace."""
    meta: dict[str, Any] = {"name": name, "namespace": NAMESPACE}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data or {"key": "value"}}


def deployment(name: str, *, replicas: int = 1, image: str = "nginx:1.25") -> dict[str, Any]:
    """A small Deployment manifest in the conformance namespace."""
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": {"app": name}},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"containers": [{"name": "main", "image": image}]}}},
    }


def ref_of(manifest: dict[str, Any]) -> ObjectRef:
    meta = manifest["metadata"]
    return ObjectRef(manifest["apiVersion"], manifest["kind"], meta.get("namespace", ""), meta["name"])


async def next_event(stream: AsyncIterator[MemberEvent]) -> MemberEvent:
    """The next event of a watch, or ``TimeoutError`` after ``WAIT`` seconds."""
    return await asyncio.wait_for(anext(stream), timeout=WAIT)


async def close_stream(stream: AsyncIterator[MemberEvent]) -> None:
    """Stop a watch (``aclose`` when the stream has one, as async generators do)."""
    aclose = getattr(stream, "aclose", None)
    if aclose is not None:
        await aclose()


class MemberConformance:
    """Behaviour every Member backend shares (see the module notes)."""

    def run(self, body: Body) -> None:
        """Run ``body`` against a fresh member on its clock, to completion."""
        raise NotImplementedError("a backend's test class says how to run a body")

    async def take_down(self, member: Member) -> None:
        """Make the member refuse connections (optional capability)."""
        pytest.skip("this backend cannot take its member down")

    async def bring_up(self, member: Member) -> None:
        """Undo ``take_down``."""
        pytest.skip("this backend cannot take its member down")

    # -- apply --------------------------------------------------------------------------
    def test_apply_creates_the_object_with_server_fields(self) -> None:
        async def body(member: Member, clock: Clock) -> None:
            live = await member.apply(config_map("created"))
            meta = live["metadata"]
            assert (live["kind"], meta["name"], meta["namespace"]) == ("ConfigMap", "created", NAMESPACE)
            assert meta["uid"] and meta["resourceVersion"] and meta["creationTimestamp"]
            assert live["data"] == {"key": "value"}
            assert await member.get(ref_of(live)) == live

        self.run(body)

    def test_applying_the_same_manifest_again_changes_nothing(self) -> None:
        async def body(member: Member, clock: Clock) -> None:
            first = await member.apply(config_map("same"))
            again = await member.apply(config_map("same"))
            assert again["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
            assert again == first

        self.run(body)

    def test_a_spec_change_bumps_generation_and_a_label_change_does_not(self) -> None:
        async def body(member: Member, clock: Clock) -> None:
            first = await member.apply(deployment("gen"))
            relabelled = deployment("gen")
            relabelled["metadata"]["labels"]["tier"] = "web"
            second = await member.apply(relabelled)
            assert second["metadata"]["generation"] == first["metadata"]["generation"]
            assert second["metadata"]["resourceVersion"] != first["metadata"]["resourceVersion"]
            scaled = deployment("gen", replicas=2)
            scaled["metadata"]["labels"]["tier"] = "web"
            third = await member.apply(scaled)
            assert third["metadata"]["generation"] == first["metadata"]["generation"] + 1
            assert third["spec"]["replicas"] == 2

        self.run(body)

    def test_apply_never_writes_status(self) -> None:
        async def body(member: Member, clock: Clock) -> None:
            manifest = deployment("no-status")
            manifest["status"] = {"replicas": 99, "readyReplicas": 99}
            live = await member.apply(manifest)
            assert (live.get("status") or {}).get("readyReplicas") != 99

        self.run(body)

    def test_each_field_manager_removes_only_the_fields_it_applied(self) -> None:
        async def body(member: Member, clock: Clock) -> None:
            await member.apply(config_map("shared", labels={"mine": "a"}))
            await member.apply(config_map("shared", labels={"theirs": "b"}), field_manager="other")
            await member.apply(config_map("shared"))  # the default manager stops applying its label
            live = await member.get(ref_of(config_map("shared")))
            assert live is not None
            assert live["metadata"].get("labels") == {"theirs": "b"}
            managers = {entry["manager"] for entry in live["metadata"].get("managedFields", [])}
            assert {FIELD_MANAGER, "other"} <= managers

        self.run(body)

    def test_taking_over_another_managers_field_needs_force(self) -> None:
        async def body(member: Member, clock: Clock) -> None:
            await member.apply(config_map("owned", labels={"team": "a"}), field_manager="first")
            taking_over = config_map("owned", labels={"team": "b"})
            with pytest.raises(errors.Conflict):
                await member.apply(taking_over, field_manager="second", force=False)
            live = await member.apply(taking_over, field_manager="second", force=True)
            assert live["metadata"]["labels"] == {"team": "b"}

        self.run(body)

    # -- get, delete, list ----------------------------------------------------------------
    def test_get_and_delete_of_a_missing_object(self) -> None:
        async def body(member: Member, clock: Clock) -> None:
            missing = ObjectRef("v1", "ConfigMap", NAMESPACE, "never-created")
            assert await member.get(missing) is None
            assert await member.delete(missing) is False

        self.run(body)

    def test_delete_removes_the_object(self) -> None:
        async def body(member: Member, clock: Clock) -> None:
            live = await member.apply(config_map("doomed"))
            assert await member.delete(ref_of(live)) is True
            assert await member.get(ref_of(live)) is None

        self.run(body)

    def test_list_filters_by_namespace_and_label_selector_in_name_order(self) -> None:
        async def body(member: Member, clock: Clock) -> None:
            for name, tier in (("c", "web"), ("a", "web"), ("b", "db")):
                await member.apply(config_map(name, labels={"tier": tier}))
            names = [o["metadata"]["name"] for o in await member.list("v1", "ConfigMap", NAMESPACE)]
            assert [n for n in names if n in ("a", "b", "c")] == ["a", "b", "c"]
            web = await member.list("v1", "ConfigMap", NAMESPACE, label_selector="tier=web")
            assert [o["metadata"]["name"] for o in web] == ["a", "c"]
            assert await member.list("v1", "ConfigMap", NAMESPACE, label_selector="tier in (none)") == []

        self.run(body)

    # -- watch --------------------------------------------------------------------------
    def test_watch_starts_with_what_exists_then_follows_changes(self) -> None:
        async def body(member: Member, clock: Clock) -> None:
            await member.apply(config_map("watched", labels={"w": "yes"}))
            stream = member.watch("v1", "ConfigMap", label_selector="w=yes")
            try:
                first = await next_event(stream)
                assert (first.type, first.object["metadata"]["name"]) == ("ADDED", "watched")
                await member.apply(config_map("watched", {"key": "changed"}, labels={"w": "yes"}))
                changed = await next_event(stream)
                assert (changed.type, changed.object["data"]) == ("MODIFIED", {"key": "changed"})
                await member.apply(config_map("ignored", labels={"w": "no"}))
                await member.delete(ref_of(config_map("watched")))
                gone = await next_event(stream)
                assert (gone.type, gone.object["metadata"]["name"]) == ("DELETED", "watched")
            finally:
                await close_stream(stream)

        self.run(body)

    # -- health and summary -------------------------------------------------------------
    @pytest.mark.parametrize("path, code", [("/readyz", 200), ("/healthz", 200), ("/no-such-endpoint", 404)],
                             ids=["readyz answers 200", "healthz answers 200", "an unknown path answers 404"])
    def test_probe(self, path: str, code: int) -> None:
        async def body(member: Member, clock: Clock) -> None:
            assert await member.probe(path) == code

        self.run(body)

    def test_summary_has_the_shape_cluster_status_needs(self) -> None:
        async def body(member: Member, clock: Clock) -> None:
            summary = await member.summary()
            assert summary.kubernetes_version.startswith("v")
            group_versions = [g["groupVersion"] for g in summary.api_enablements]
            assert group_versions == sorted(group_versions)
            for group in summary.api_enablements:
                names = [r["name"] for r in group["resources"]]
                assert names == sorted(names) and all("/" not in n for n in names)
            apps = next(g for g in summary.api_enablements if g["groupVersion"] == "apps/v1")
            assert {"name": "deployments", "kind": "Deployment"} in apps["resources"]
            nodes = summary.node_summary
            assert nodes["totalNum"] >= nodes["readyNum"] >= 1
            for part in ("allocatable", "allocating", "allocated"):
                assert {"cpu", "memory", "pods"} <= set(summary.resource_summary[part])

        self.run(body)

    # -- faults -------------------------------------------------------------------------
    def test_every_call_fails_while_the_member_is_down(self) -> None:
        async def body(member: Member, clock: Clock) -> None:
            await self.take_down(member)
            ref = ObjectRef("v1", "ConfigMap", NAMESPACE, "x")
            calls: list[Callable[[], Awaitable[Any]]] = [
                lambda: member.apply(config_map("x")), lambda: member.get(ref), lambda: member.delete(ref),
                lambda: member.list("v1", "ConfigMap"), lambda: member.probe("/readyz"), member.summary,
                lambda: anext(member.watch("v1", "ConfigMap")),
            ]
            for call in calls:
                with pytest.raises(errors.MemberUnreachable):
                    await call()
            await self.bring_up(member)
            assert await member.probe("/readyz") == 200

        self.run(body)


__all__ = [
    "NAMESPACE", "WAIT", "Body", "MemberConformance", "close_stream", "config_map", "deployment",
    "next_event", "ref_of",
]
