"""A simulated cluster served as a Store (``ClusterStore``): the store's contract where it applies,
the cluster's controllers behind it, and the API server serving it."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from fleetkeeper import errors
from fleetkeeper.api.scheme import GroupKind
from fleetkeeper.apiserver.app import build_app
from fleetkeeper.apiserver.transport import InProcessTransport
from fleetkeeper.clock import Clock, SystemClock, VirtualClock
from fleetkeeper.members.simulated import SimulatedCluster
from fleetkeeper.members.simulated.api_store import ClusterStore
from fleetkeeper.store import (
    DEFAULT_HISTORY,
    _conformance_base,
    _conformance_crud,
    _conformance_limits,
    _conformance_watch,
)
from fleetkeeper.store.interface import Event, Watch
from fleetkeeper.store.testing import StoreConformance

from .helpers import workload

#: what the suite's Deployments stand for: a kind no controller of the cluster acts on
WIDGET = GroupKind("example.com", "Widget")
POD, CONFIGMAP = GroupKind("", "Pod"), GroupKind("", "ConfigMap")
DEPLOYMENT, REPLICASET = GroupKind("apps", "Deployment"), GroupKind("apps", "ReplicaSet")

_NEVER_EMPTY = "a cluster is never empty: its namespaces and nodes took the first revisions and uids"
_WORKLOAD = ("the case's Deployment (built when the suite is imported) is not a valid one, "
             "which a cluster refuses")
_FINALIZERS = "a simulated cluster deletes at once, with dependents first: finalizers hold nothing"
_EVERY_KIND = "a simulated cluster is watched one kind at a time"
_FROM_ZERO = "a kind's history starts when the store is first asked about it, not at revision 0"
_BATCH = "every write of a simulated cluster is one atomic step: a batch groups nothing"
#: the suite's cases that cannot hold for a simulated cluster, and why
NOT_APPLICABLE = {
    "test_create_fills_system_metadata_and_takes_a_later_revision": _NEVER_EMPTY,
    "test_create_rejects_bad_objects": _NEVER_EMPTY,
    "test_generate_name_appends_a_suffix_from_the_uid_factory": _NEVER_EMPTY,
    "test_a_seeded_uid_factory_gives_the_same_uids_and_names": _NEVER_EMPTY,
    "test_delete_preconditions[a matching uid precondition passes]": _NEVER_EMPTY,
    "test_create_refuses_an_existing_key[the same key already exists]": _WORKLOAD,
    "test_create_refuses_an_existing_key[another namespace is another key]": _WORKLOAD,
    "test_timestamps_come_from_the_injected_clock": _FINALIZERS,
    "test_finalizers_hold_a_deleted_object_until_the_last_is_removed": _FINALIZERS,
    "test_a_namespace_is_held_by_its_spec_finalizers_and_terminates": _FINALIZERS,
    "test_a_deleting_object_takes_no_new_finalizers": _FINALIZERS,
    "test_deletion_timestamp_cannot_be_set_or_cleared_by_updates": _FINALIZERS,
    "test_resuming_from_every_revision_gives_exactly_the_later_events": _EVERY_KIND,
    "test_close_ends_a_watch_and_store_close_ends_them_all": _EVERY_KIND,
    "test_watches_filter_by_kind_and_namespace[replayed from history]": _FROM_ZERO,
    "test_label_selectors_turn_matching_transitions_into_added_and_deleted[replayed from history]":
        _FROM_ZERO,
    "test_a_batch_commits_together_and_publishes_after_commit": _BATCH,
    "test_a_failed_batch_leaves_nothing_and_no_revision_gap": _BATCH,
    "test_other_writers_wait_for_the_batch": _BATCH,
    "test_nested_batches_join_the_outer_one": _BATCH,
    "test_a_batch_holding_an_object_over_the_limit_stores_nothing": _BATCH,
}


def widget(name: str, namespace: str = "default", **fields: Any) -> dict[str, Any]:
    obj = _conformance_base.deployment(name, namespace, **fields)
    obj["apiVersion"], obj["kind"] = "example.com/v1", "Widget"
    return obj


class TestClusterStoreConformance(StoreConformance):
    """The store's suite, its Deployments standing for a kind without a controller."""

    @pytest.fixture(autouse=True)
    def widgets(self, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> Iterator[None]:
        name = request.node.name
        reason = NOT_APPLICABLE.get(name) or NOT_APPLICABLE.get(name.partition("[")[0])
        if reason is not None:
            pytest.skip(reason)
        for module in (_conformance_crud, _conformance_watch, _conformance_limits):
            monkeypatch.setattr(module, "DEPLOY", WIDGET, raising=False)
            monkeypatch.setattr(module, "deployment", widget, raising=False)
        yield

    @pytest.fixture
    async def opener(self, tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
        opened: list[ClusterStore] = []

        def open_(*, history: int = DEFAULT_HISTORY, watch_queue: int | None = None,
                  uid_factory: Callable[[], str] | None = None, clock: Clock | None = None) -> ClusterStore:
            cluster = SimulatedCluster("conformance", clock=clock or SystemClock(), nodes=1,
                                       uid_factory=uid_factory)
            store = ClusterStore(cluster, history=history, watch_queue=watch_queue)
            opened.append(store)
            return store

        yield open_
        for store in opened:
            await store.close()


def test_every_case_set_aside_is_one_of_the_suite() -> None:
    names = {name for name in dir(StoreConformance) if name.startswith("test_")}
    assert {case.partition("[")[0] for case in NOT_APPLICABLE} <= names


# -- the cluster behind the store ----------------------------------------------------------------
def on_store(main: Callable[[ClusterStore, VirtualClock], Any], **options: Any) -> Any:
    clock = VirtualClock()

    history = options.pop("history", DEFAULT_HISTORY)

    async def wrapper() -> Any:
        store = ClusterStore(SimulatedCluster("member1", clock=clock, **options), history=history)
        try:
            return await main(store, clock)
        finally:
            await store.close()

    return clock.run(wrapper())


async def events(watch: Watch, n: int) -> list[tuple[str, str]]:
    """(type, name) of the next ``n`` events (virtual time passes while waiting)."""
    got: list[Event] = []
    iterator = aiter(watch)
    async with asyncio.timeout(60):
        while len(got) < n:
            got.append(await anext(iterator))
    return [(e.type, e.object["metadata"]["name"]) for e in got]


def names(items: list[dict[str, Any]]) -> list[str]:
    return [item["metadata"]["name"] for item in items]


def test_a_deployment_created_through_the_store_gets_its_replicaset_and_pods() -> None:
    async def main(store: ClusterStore, clock: VirtualClock) -> None:
        watch = store.watch(POD, "default", label_selector="app=web")
        created = await store.create(workload("Deployment", "web", replicas=2))
        (replicaset,) = (await store.list(REPLICASET, "default")).items
        assert replicaset["metadata"]["ownerReferences"][0]["uid"] == created["metadata"]["uid"]
        pods = (await store.list(POD, "default", label_selector="app=web")).items
        assert len(pods) == 2 and all(p["metadata"]["ownerReferences"][0]["name"] == names([replicaset])[0]
                                      for p in pods)
        assert sorted(await events(watch, 2)) == sorted(("ADDED", name) for name in names(pods))
        assert [kind for kind, _ in await events(watch, 2)] == ["MODIFIED", "MODIFIED"]  # they start
        listed = (await store.list(POD, "default", field_selector="status.phase=Running")).items
        assert sorted(names(listed)) == sorted(names(pods))

    on_store(main)


def test_a_pod_deleted_through_the_store_is_made_again_by_its_replicaset() -> None:
    async def main(store: ClusterStore, clock: VirtualClock) -> None:
        await store.create(workload("Deployment", "web", replicas=2))
        listed = await store.list(POD, "default")
        watch = store.watch(POD, "default", since=listed.revision)
        victim = names(listed.items)[0]
        last = await store.delete(POD, "default", victim)
        assert int(last["metadata"]["resourceVersion"]) > listed.revision
        now = names((await store.list(POD, "default")).items)
        assert len(now) == 2 and victim not in now
        (made,) = set(now) - set(names(listed.items))
        assert await events(watch, 2) == [("DELETED", victim), ("ADDED", made)]

    on_store(main)


def test_a_pod_watch_by_phase_sees_the_pod_when_it_starts_running() -> None:
    async def main(store: ClusterStore, clock: VirtualClock) -> None:
        running = store.watch(POD, "default", field_selector="status.phase=Running")
        await store.create(workload("Deployment", "web", replicas=1))
        (pod,) = names((await store.list(POD, "default")).items)
        assert await events(running, 1) == [("ADDED", pod)]  # the previous state was Pending
        relabelled = await store.get(POD, "default", pod)
        relabelled["metadata"]["labels"]["extra"] = "yes"
        await store.update(relabelled)
        assert await events(running, 1) == [("MODIFIED", pod)]  # an update as read keeps the pod running
        assert (await store.get(POD, "default", pod))["status"]["phase"] == "Running"

    on_store(main)


def test_the_status_the_controllers_write_cannot_be_written_through_the_store() -> None:
    async def main(store: ClusterStore, clock: VirtualClock) -> None:
        await store.create(workload("Deployment", "web"))
        live = await store.get(DEPLOYMENT, "default", "web")
        with pytest.raises(errors.MethodNotAllowed):
            await store.update({**live, "status": {"replicas": 9}}, subresource="status")

    on_store(main)


def test_writes_get_what_an_apply_gets_a_namespace_a_service_ip_and_a_check() -> None:
    async def main(store: ClusterStore, clock: VirtualClock) -> None:
        service = {"apiVersion": "v1", "kind": "Service", "spec": {"ports": [{"port": 80}]},
                   "metadata": {"generateName": "web-", "namespace": "team"}}
        made = await store.create(service)
        assert made["metadata"]["name"].startswith("web-") and made["spec"]["clusterIP"]
        assert (await store.get(GroupKind("", "Namespace"), "", "team"))["status"]["phase"] == "Active"
        with pytest.raises(errors.Invalid):
            await store.create({**workload("Deployment", "bad"), "spec": {"replicas": 1}})
        dry = await store.create(configmap("dry"), dry_run=True)
        assert "resourceVersion" not in dry["metadata"] and dry["metadata"]["uid"]
        with pytest.raises(errors.NotFound):
            await store.get(CONFIGMAP, "default", "dry")

    on_store(main)


def test_a_cluster_standing_for_a_real_one_refuses_a_missing_namespace() -> None:
    async def main(store: ClusterStore, clock: VirtualClock) -> None:
        with pytest.raises(errors.NotFound, match='namespaces "team" not found'):
            await store.create({**configmap("a"), "metadata": {"name": "a", "namespace": "team"}})

    on_store(main, create_namespaces=False)


def configmap(name: str, value: str = "v") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"},
            "data": {"k": value}}


def test_a_watch_resumes_from_a_listed_revision_and_is_gone_past_the_history() -> None:
    async def main(store: ClusterStore, clock: VirtualClock) -> None:
        listed = await store.list(CONFIGMAP, "default")
        for name in ("a", "b"):
            await store.create(configmap(name))
        resumed = store.watch(CONFIGMAP, since=listed.revision)
        assert await events(resumed, 2) == [("ADDED", "a"), ("ADDED", "b")]
        for value in ("1", "2", "3"):
            await store.update(configmap("a", value))
        with pytest.raises(errors.Gone):
            store.watch(CONFIGMAP, since=listed.revision)
        with pytest.raises(errors.Gone):
            await store.list(CONFIGMAP, "default", limit=1, continue_token=listed_token(listed.revision))

    on_store(main, history=3)


def listed_token(revision: int) -> str:
    """A continue token of ``revision`` (the list it came from cut after ``a``)."""
    return base64.urlsafe_b64encode(orjson.dumps({"rv": revision, "start": ["default", "a"]})).decode()


def test_a_down_cluster_fails_calls_and_ends_watches() -> None:
    async def main(store: ClusterStore, clock: VirtualClock) -> None:
        await store.create(configmap("a"))
        watch = store.watch(CONFIGMAP, "default")
        store.cluster.down()
        with pytest.raises(errors.ServiceUnavailable):
            await store.get(CONFIGMAP, "default", "a")
        with pytest.raises(errors.ServiceUnavailable):
            await store.create(configmap("b"))
        with pytest.raises(errors.ServiceUnavailable):
            await anext(aiter(watch))
        store.cluster.up()
        assert names((await store.list(CONFIGMAP, "default")).items) == ["a"]

    on_store(main)


def test_a_black_hole_answers_calls_and_watches_with_a_timeout() -> None:
    async def main(store: ClusterStore, clock: VirtualClock) -> float:
        watch = store.watch(CONFIGMAP, "default")
        started = clock.monotonic()
        store.cluster.blackhole()
        with pytest.raises(errors.Timeout):
            await anext(aiter(watch))
        with pytest.raises(errors.Timeout):
            await store.list(CONFIGMAP)
        return clock.monotonic() - started

    assert on_store(main, call_timeout=5.0) == 10.0


# -- served by the API server ---------------------------------------------------------------------
def test_the_api_server_serves_a_simulated_cluster() -> None:
    async def main(store: ClusterStore, clock: VirtualClock) -> None:
        app = build_app(store, clock=clock, tokens=None)
        async with httpx.AsyncClient(transport=InProcessTransport(app), base_url="http://member") as http:
            made = await http.post("/apis/apps/v1/namespaces/default/deployments",
                                   json=workload("Deployment", "web", replicas=2))
            assert made.status_code == 201, made.text
            listed = (await http.get("/api/v1/namespaces/default/pods")).json()
            assert listed["kind"] == "PodList" and len(listed["items"]) == 2
            revision = listed["metadata"]["resourceVersion"]
            seen: list[tuple[str, str]] = []
            async with http.stream("GET", "/api/v1/namespaces/default/pods",
                                   params={"watch": "1", "resourceVersion": revision}) as stream:
                async for line in stream.aiter_lines():
                    event = orjson.loads(line)
                    seen.append((event["type"], event["object"]["status"]["phase"]))
                    if len(seen) == 2:
                        break
            assert seen == [("MODIFIED", "Running"), ("MODIFIED", "Running")]
        app.close()

    on_store(main)
