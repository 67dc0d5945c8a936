"""Conformance: create, get, update, status, delete, finalizers, list, concurrency."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest

from fleetkeeper import errors
from fleetkeeper.api.scheme import GroupKind
from fleetkeeper.clock import VIRTUAL_EPOCH, VirtualClock
from fleetkeeper.store import Store
from fleetkeeper.store._conformance_base import (
    CLUSTER,
    DEPLOY,
    Opener,
    StoreFixtures,
    cluster,
    configmap,
    counting_uids,
    deployment,
    rv,
    summary,
    take,
)
from fleetkeeper.store.listing import CHUNK
from fleetkeeper.store.objects import generated_name


class CreateGetConformance(StoreFixtures):
    async def test_create_fills_system_metadata_and_takes_a_later_revision(self, store: Store) -> None:
        assert store.revision == 0
        first = await store.create(deployment("a"))
        assert store.revision == rv(first) > 0
        second = await store.create(deployment("b"))
        meta = first["metadata"]
        assert meta["uid"] == "uid-1" and meta["generation"] == 1
        assert meta["creationTimestamp"].endswith("Z")
        assert rv(first) < rv(second) == store.revision
        assert rv(await store.get(DEPLOY, "default", "a")) == rv(first)

    async def test_create_and_get_hand_out_private_copies(self, store: Store) -> None:
        given = deployment("a", spec={"replicas": 1, "nested": {"x": 1}})
        created = await store.create(given)
        given["spec"]["nested"]["x"] = 99
        created["spec"]["nested"]["x"] = 98
        fetched = await store.get(DEPLOY, "default", "a")
        fetched["spec"]["nested"]["x"] = 97
        assert (await store.get(DEPLOY, "default", "a"))["spec"]["nested"]["x"] == 1

    @pytest.mark.parametrize(("second", "fails"), [
        (deployment("a"), True),
        (deployment("a", namespace="other"), False),
        (configmap("a"), False),
    ], ids=["the same key already exists", "another namespace is another key", "another kind is another key"])
    async def test_create_refuses_an_existing_key(
        self, store: Store, second: dict[str, Any], fails: bool
    ) -> None:
        first = await store.create(deployment("a"))
        if fails:
            with pytest.raises(errors.AlreadyExists):
                await store.create(second)
            assert store.revision == rv(first)
        else:
            assert rv(await store.create(second)) > rv(first)

    @pytest.mark.parametrize(("obj", "error"), [
        ({**deployment("a"), "metadata": {"namespace": "default"}}, errors.Invalid),
        ({"kind": "Deployment", "metadata": {"name": "a"}}, errors.Invalid),
        ({**deployment("a"), "metadata": {"name": "a", "resourceVersion": "7"}}, errors.BadRequest),
    ], ids=["a missing name is invalid", "a missing apiVersion is invalid",
            "a resourceVersion on create is a bad request"])
    async def test_create_rejects_bad_objects(self, store: Store, obj: dict[str, Any],
                                              error: type[errors.ApiError]) -> None:
        with pytest.raises(error):
            await store.create(obj)
        assert store.revision == 0

    async def test_generate_name_appends_a_suffix_from_the_uid_factory(self, store: Store) -> None:
        obj = deployment("x")
        obj["metadata"] = {"generateName": "web-", "namespace": "default"}
        first, second = await store.create(obj), await store.create(obj)
        assert first["metadata"]["name"] == generated_name("web-", "uid-1")
        assert second["metadata"]["name"] != first["metadata"]["name"]
        assert first["metadata"]["name"].startswith("web-") and len(first["metadata"]["name"]) == 9

    async def test_cluster_scoped_objects_live_in_the_empty_namespace(self, store: Store) -> None:
        await store.create(cluster("member1"))
        got = await store.get(CLUSTER, "", "member1")
        assert "namespace" not in got["metadata"]

    async def test_get_of_an_absent_object_is_not_found(self, store: Store) -> None:
        with pytest.raises(errors.NotFound) as info:
            await store.get(DEPLOY, "default", "nope")
        assert info.value.code == 404 and info.value.name == "nope"

    def test_timestamps_come_from_the_injected_clock(self, opener: Opener) -> None:
        clock = VirtualClock()

        async def main() -> tuple[str, str]:
            store = opener(clock=clock)
            created = await store.create(deployment("a", finalizers=["x/y"]))
            await clock.sleep(90)
            deleting = await store.delete(DEPLOY, "default", "a")
            await store.close()
            return created["metadata"]["creationTimestamp"], deleting["metadata"]["deletionTimestamp"]

        assert clock.run(main()) == ("2026-01-01T00:00:00Z", "2026-01-01T00:01:30Z")
        assert clock.now() == VIRTUAL_EPOCH + timedelta(seconds=90)


class UpdateConformance(StoreFixtures):
    async def test_a_stale_resource_version_conflicts(self, store: Store) -> None:
        old = await store.create(deployment("a"))
        await store.update({**old, "spec": {"replicas": 2}})
        with pytest.raises(errors.Conflict):
            await store.update({**old, "spec": {"replicas": 3}})
        assert (await store.get(DEPLOY, "default", "a"))["spec"] == {"replicas": 2}

    async def test_an_update_without_resource_version_is_unconditional(self, store: Store) -> None:
        created = await store.create(deployment("a"))
        obj = deployment("a", spec={"replicas": 5})
        updated = await store.update(obj)
        assert rv(updated) > rv(created) and updated["spec"] == {"replicas": 5}
        assert rv(updated) == store.revision == rv(await store.get(DEPLOY, "default", "a"))

    async def test_updating_an_absent_object_is_not_found(self, store: Store) -> None:
        with pytest.raises(errors.NotFound):
            await store.update(deployment("ghost"))

    @pytest.mark.parametrize(("change", "bumps"), [
        ({"spec": {"replicas": 9}}, True),
        ({"template": {"x": 1}}, True),
        ({"labels": {"a": "b"}}, False),
        ({"annotations": {"a": "b"}}, False),
        ({"status": {"ready": 1}}, False),
    ], ids=["a spec change bumps generation", "a new top-level field bumps generation",
            "a label change keeps generation", "an annotation change keeps generation",
            "a status change on the main resource keeps generation"])
    async def test_generation_counts_spec_changes_only(self, store: Store, change: dict[str, Any],
                                                       bumps: bool) -> None:
        obj = await store.create(deployment("a"))
        for field, value in change.items():
            if field in ("labels", "annotations"):
                obj["metadata"][field] = value
            else:
                obj[field] = value
        updated = await store.update(obj)
        assert updated["metadata"]["generation"] == (2 if bumps else 1)

    async def test_a_main_update_keeps_the_stored_status(self, store: Store) -> None:
        obj = await store.create(deployment("a", status={"phase": "Ready"}))
        obj["status"] = {"phase": "Hacked"}
        obj["spec"] = {"replicas": 3}
        updated = await store.update(obj)
        assert updated["status"] == {"phase": "Ready"} and updated["spec"] == {"replicas": 3}

    async def test_a_status_update_changes_only_status(self, store: Store) -> None:
        obj = await store.create(deployment("a", labels={"l": "1"}))
        obj["status"] = {"phase": "Ready"}
        obj["spec"] = {"replicas": 42}
        obj["metadata"]["labels"] = {"l": "2"}
        updated = await store.update(obj, subresource="status")
        assert updated["status"] == {"phase": "Ready"}
        assert updated["spec"] == {"replicas": 1} and updated["metadata"]["labels"] == {"l": "1"}
        assert updated["metadata"]["generation"] == 1 and rv(updated) > rv(obj)
        assert rv(updated) == store.revision

    async def test_a_status_update_checks_the_resource_version(self, store: Store) -> None:
        obj = await store.create(deployment("a"))
        await store.update({**obj, "spec": {"replicas": 2}})
        with pytest.raises(errors.Conflict):
            await store.update({**obj, "status": {"x": 1}}, subresource="status")

    async def test_system_metadata_cannot_be_changed_by_updates(self, store: Store) -> None:
        obj = await store.create(deployment("a"))
        original = dict(obj["metadata"])
        obj["metadata"]["creationTimestamp"] = "1999-01-01T00:00:00Z"
        obj["metadata"]["generation"] = 77
        obj["spec"] = {"replicas": 2}
        updated = await store.update(obj)
        assert updated["metadata"]["creationTimestamp"] == original["creationTimestamp"]
        assert updated["metadata"]["generation"] == 2
        updated["metadata"]["uid"] = "someone-else"
        with pytest.raises(errors.Invalid):
            await store.update(updated)

    async def test_an_update_that_changes_nothing_writes_nothing(self, store: Store) -> None:
        obj = await store.create(deployment("a", labels={"x": "y"}))
        same = await store.update(obj)
        assert rv(same) == rv(obj) and store.revision == rv(obj)

    async def test_an_unknown_subresource_is_a_bad_request(self, store: Store) -> None:
        obj = await store.create(deployment("a"))
        with pytest.raises(errors.BadRequest):
            await store.update(obj, subresource="scale")

    async def test_concurrent_updates_at_one_version_have_exactly_one_winner(self, store: Store) -> None:
        base = await store.create(deployment("a"))

        async def attempt(i: int) -> int | None:
            obj = {**base, "spec": {"replicas": i}}
            await asyncio.sleep(0)
            try:
                return rv(await store.update(obj))
            except errors.Conflict:
                return None

        results = await asyncio.gather(*(attempt(i) for i in range(2, 34)))
        winners = [i for i, r in enumerate(results, start=2) if r is not None]
        assert len(winners) == 1
        assert (await store.get(DEPLOY, "default", "a"))["spec"]["replicas"] == winners[0]

    async def test_retrying_on_conflict_loses_no_increment(self, store: Store) -> None:
        await store.create(deployment("counter", spec={"n": 0}))

        async def bump(times: int) -> None:
            for _ in range(times):
                for _attempt in range(1000):
                    obj = await store.get(DEPLOY, "default", "counter")
                    obj["spec"]["n"] += 1
                    await asyncio.sleep(0)
                    try:
                        await store.update(obj)
                        break
                    except errors.Conflict:
                        continue

        await asyncio.gather(*(bump(10) for _ in range(8)))
        assert (await store.get(DEPLOY, "default", "counter"))["spec"]["n"] == 80

    async def test_concurrent_creates_of_one_name_have_exactly_one_winner(self, store: Store) -> None:
        async def attempt() -> bool:
            await asyncio.sleep(0)
            try:
                await store.create(deployment("only"))
                return True
            except errors.AlreadyExists:
                return False

        assert sum(await asyncio.gather(*(attempt() for _ in range(16)))) == 1


class DeleteConformance(StoreFixtures):
    async def test_delete_removes_and_returns_the_last_state_at_a_new_revision(self, store: Store) -> None:
        created = await store.create(deployment("a"))
        gone = await store.delete(DEPLOY, "default", "a")
        assert rv(gone) > rv(created) and store.revision == rv(gone)
        assert {k: v for k, v in gone.items() if k != "metadata"} == {
            k: v for k, v in created.items() if k != "metadata"}
        with pytest.raises(errors.NotFound):
            await store.get(DEPLOY, "default", "a")
        with pytest.raises(errors.NotFound):
            await store.delete(DEPLOY, "default", "a")

    @pytest.mark.parametrize(("precondition", "ok"), [
        ({"resource_version": "current"}, True),
        ({"resource_version": "stale"}, False),
        ({"resource_version": "later"}, False),
        ({"uid": "uid-1"}, True),
        ({"uid": "uid-9"}, False),
    ], ids=["a current resourceVersion precondition passes", "a stale resourceVersion precondition conflicts",
            "a resourceVersion no write has made conflicts",
            "a matching uid precondition passes", "another uid precondition conflicts"])
    async def test_delete_preconditions(self, store: Store, precondition: dict[str, str], ok: bool) -> None:
        first = await store.create(deployment("a"))
        current = await store.update({**first, "spec": {"replicas": 2}})
        versions = {"current": rv(current), "stale": rv(first), "later": rv(current) + 1}
        if "resource_version" in precondition:
            precondition = {"resource_version": str(versions[precondition["resource_version"]])}
        if ok:
            await store.delete(DEPLOY, "default", "a", **precondition)
        else:
            with pytest.raises(errors.Conflict):
                await store.delete(DEPLOY, "default", "a", **precondition)
            await store.get(DEPLOY, "default", "a")

    async def test_finalizers_hold_a_deleted_object_until_the_last_is_removed(self, store: Store) -> None:
        watch = store.watch(DEPLOY)
        created = await store.create(deployment("a", finalizers=["one/x", "two/y"]))
        held = await store.delete(DEPLOY, "default", "a")
        stamp = held["metadata"]["deletionTimestamp"]
        assert stamp and rv(held) > rv(created)
        again = await store.delete(DEPLOY, "default", "a")
        assert again["metadata"]["deletionTimestamp"] == stamp and store.revision == rv(again) == rv(held)
        current = await store.get(DEPLOY, "default", "a")
        current["metadata"]["finalizers"] = ["two/y"]
        current = await store.update(current)
        assert current["metadata"]["deletionTimestamp"] == stamp and rv(current) > rv(held)
        current["metadata"]["finalizers"] = []
        last = await store.update(current)
        assert rv(last) > rv(current) and store.revision == rv(last)
        with pytest.raises(errors.NotFound):
            await store.get(DEPLOY, "default", "a")
        events = await take(watch, 4)
        assert summary(events) == [("ADDED", "a", rv(created)), ("MODIFIED", "a", rv(held)),
                                   ("MODIFIED", "a", rv(current)), ("DELETED", "a", rv(last))]
        assert events[3].object["metadata"]["deletionTimestamp"] == stamp

    async def test_a_namespace_is_held_by_its_spec_finalizers_and_terminates(self, store: Store) -> None:
        namespace = GroupKind("", "Namespace")
        await store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "prod"},
                            "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}})
        held = await store.delete(namespace, "", "prod")
        assert held["metadata"]["deletionTimestamp"] and held["status"] == {"phase": "Terminating"}
        current = await store.get(namespace, "", "prod")
        assert current["status"]["phase"] == "Terminating"
        current["spec"] = {"finalizers": []}
        current["metadata"]["labels"] = {"team": "a"}
        kept = await store.update(current)
        assert kept["spec"] == {"finalizers": ["kubernetes"]}, "a plain update keeps them"
        assert kept["metadata"]["labels"] == {"team": "a"}
        kept["spec"] = {"finalizers": []}
        kept["metadata"]["labels"] = {"team": "b"}
        await store.update(kept, subresource="finalize")
        with pytest.raises(errors.NotFound):
            await store.get(namespace, "", "prod")
        # another kind's spec.finalizers hold nothing
        await store.create(deployment("a", spec={"finalizers": ["kubernetes"]}))
        assert (await store.delete(DEPLOY, "default", "a"))["metadata"].get("deletionTimestamp") is None
        with pytest.raises(errors.NotFound):
            await store.get(DEPLOY, "default", "a")

    async def test_finalize_writes_a_namespace_s_spec_finalizers_only(self, store: Store) -> None:
        namespace = GroupKind("", "Namespace")
        created = await store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "dev"},
                                      "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}})
        sent = {**created, "metadata": {**created["metadata"], "labels": {"x": "y"}},
                "spec": {"finalizers": ["kubernetes", "example.com/hold"]},
                "status": {"phase": "Terminating"}}
        written = await store.update(sent, subresource="finalize")
        assert written["spec"] == {"finalizers": ["kubernetes", "example.com/hold"]}
        assert written["status"] == {"phase": "Active"} and "labels" not in written["metadata"]
        assert written["metadata"]["generation"] == created["metadata"]["generation"]
        stale = {**written, "metadata": {**written["metadata"],
                                         "resourceVersion": created["metadata"]["resourceVersion"]}}
        with pytest.raises(errors.Conflict):
            await store.update(stale, subresource="finalize")
        with pytest.raises(errors.BadRequest):
            await store.update(deployment("a"), subresource="finalize")
        stored = await store.get(namespace, "", "dev")
        assert stored["spec"]["finalizers"] == ["kubernetes", "example.com/hold"]

    async def test_a_deleting_object_takes_no_new_finalizers(self, store: Store) -> None:
        await store.create(deployment("a", finalizers=["one/x"]))
        held = await store.delete(DEPLOY, "default", "a")
        held["metadata"]["finalizers"] = ["one/x", "sneaky/z"]
        with pytest.raises(errors.Invalid):
            await store.update(held)

    async def test_deletion_timestamp_cannot_be_set_or_cleared_by_updates(self, store: Store) -> None:
        obj = await store.create(deployment("a", finalizers=["one/x"]))
        obj["metadata"]["deletionTimestamp"] = "2030-01-01T00:00:00Z"
        obj["spec"] = {"replicas": 2}
        assert "deletionTimestamp" not in (await store.update(obj))["metadata"]
        held = await store.delete(DEPLOY, "default", "a")
        del held["metadata"]["deletionTimestamp"]
        held["spec"] = {"replicas": 3}
        kept = await store.update(held)
        assert kept["metadata"]["deletionTimestamp"]


class ListConformance(StoreFixtures):
    async def _populate(self, store: Store) -> int:
        """Four Deployments and a ConfigMap; the revision of the last write."""
        rows = [("b", "x", "front"), ("a", "z", "back"), ("a", "y", "front"), ("c", "w", "db")]
        for ns, name, tier in rows:
            await store.create(deployment(name, namespace=ns, labels={"tier": tier}))
        return rv(await store.create(configmap("y", namespace="a")))

    async def test_list_is_sorted_by_namespace_and_name_at_the_current_revision(self, store: Store) -> None:
        last = await self._populate(store)
        result = await store.list(DEPLOY)
        assert [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in result.items] == [
            ("a", "y"), ("a", "z"), ("b", "x"), ("c", "w")]
        assert result.revision == store.revision == last and result.continue_token is None
        assert all(rv(i) < last for i in result.items)

    @pytest.mark.parametrize(("namespace", "labels", "fields", "expected"), [
        ("a", None, None, ["y", "z"]),
        (None, "tier=front", None, ["y", "x"]),
        (None, "tier in (back,db)", None, ["z", "w"]),
        (None, "tier!=front", None, ["z", "w"]),
        ("a", "tier=front", None, ["y"]),
        (None, None, "metadata.name=w", ["w"]),
        (None, None, "metadata.namespace!=a", ["x", "w"]),
        (None, "tier", "metadata.name!=x,metadata.name!=w", ["y", "z"]),
        ("zzz", None, None, []),
    ], ids=["a namespace narrows the list", "an equality label selector", "a set label selector",
            "an inequality label selector", "namespace and labels combine", "a field selector on the name",
            "a field selector on the namespace", "label and field selectors combine",
            "an empty namespace lists nothing"])
    async def test_list_filters_like_kubernetes(self, store: Store, namespace: str | None, labels: str | None,
                                                fields: str | None, expected: list[str]) -> None:
        await self._populate(store)
        result = await store.list(DEPLOY, namespace, label_selector=labels, field_selector=fields)
        assert [i["metadata"]["name"] for i in result.items] == expected

    async def test_a_bad_selector_is_a_bad_request(self, store: Store) -> None:
        with pytest.raises(errors.BadRequest):
            await store.list(DEPLOY, label_selector="a in b")
        with pytest.raises(errors.BadRequest):
            await store.list(DEPLOY, field_selector="metadata.name")

    @pytest.mark.parametrize(("limit", "labels"), [(1, None), (7, None), (3, "even=yes"), (400, None)],
                             ids=["pages of one", "pages of seven", "pages of three with a selector",
                                  "one page larger than the list"])
    async def test_pages_cover_the_list_exactly_once(
        self, store: Store, limit: int, labels: str | None
    ) -> None:
        for i in range(23):
            last = await store.create(deployment(f"d{i:02}", namespace=f"ns{i % 3}",
                                                 labels={"even": "yes" if i % 2 == 0 else "no"}))
        whole = [i["metadata"]["name"] for i in (await store.list(DEPLOY, label_selector=labels)).items]
        seen: list[str] = []
        token: str | None = None
        for _ in range(100):
            page = await store.list(DEPLOY, label_selector=labels, limit=limit, continue_token=token)
            assert len(page.items) <= limit and page.revision == rv(last)
            seen.extend(i["metadata"]["name"] for i in page.items)
            token = page.continue_token
            if token is None:
                break
        assert seen == whole

    @pytest.mark.parametrize("labels", [None, "v=1"], ids=["every object", "with a label selector"])
    async def test_a_continued_list_shows_what_was_there_when_its_first_page_was_cut(
        self, store: Store, labels: str | None
    ) -> None:
        """Kubernetes serves later pages from the first page's revision: objects created,
        changed or deleted between pages do not show through."""
        for i in range(6):
            await store.create(deployment(f"d{i}", namespace="ns", labels={"v": "1"}))
        first = await store.list(DEPLOY, label_selector=labels, limit=2)
        cut = first.revision
        await store.delete(DEPLOY, "ns", "d3")
        changed = await store.get(DEPLOY, "ns", "d4")
        changed["metadata"]["labels"] = {"v": "2"}
        await store.update(changed)
        await store.create(deployment("d2a", namespace="ns", labels={"v": "1"}))
        await store.delete(DEPLOY, "ns", "d0")  # on the first page already
        items = list(first.items)
        token = first.continue_token
        for _ in range(10):
            if token is None:
                break
            page = await store.list(DEPLOY, label_selector=labels, limit=2, continue_token=token)
            assert page.revision == cut
            items.extend(page.items)
            token = page.continue_token
        assert [i["metadata"]["name"] for i in items] == ["d0", "d1", "d2", "d3", "d4", "d5"]
        assert all(rv(i) <= cut for i in items), "each as it was then, deleted ones too"
        assert items[4]["metadata"]["labels"] == {"v": "1"}
        fresh = await store.list(DEPLOY, label_selector=labels)
        assert [i["metadata"]["name"] for i in fresh.items] == (
            ["d1", "d2", "d2a", "d4", "d5"] if labels is None else ["d1", "d2", "d2a", "d5"])

    async def test_a_continued_list_stays_consistent_across_scan_chunks(self, store: Store) -> None:
        """Changes in several of the chunks a later page is read in (CHUNK records each)."""
        names = [f"d{i:03}" for i in range(CHUNK * 2 + 40)]
        async with store.batch():
            for name in names:
                await store.create(deployment(name))
        first = await store.list(DEPLOY, limit=1)
        await store.delete(DEPLOY, "default", names[CHUNK + 3])
        await store.create(deployment(names[CHUNK * 2 + 10] + "x"))
        await store.delete(DEPLOY, "default", names[-1])
        seen = [i["metadata"]["name"] for i in first.items]
        token = first.continue_token
        for _ in range(20):
            if token is None:
                break
            page = await store.list(DEPLOY, limit=CHUNK - 1, continue_token=token)
            seen.extend(i["metadata"]["name"] for i in page.items)
            token = page.continue_token
        assert seen == names

    async def test_a_continue_token_older_than_the_history_is_gone(self, opener: Opener) -> None:
        store = opener(history=5)
        for i in range(4):
            await store.create(deployment(f"d{i}"))
        first = await store.list(DEPLOY, limit=1)
        for i in range(30):
            await store.create(deployment(f"e{i:02}"))
        with pytest.raises(errors.Gone, match="continue"):
            await store.list(DEPLOY, limit=1, continue_token=first.continue_token)

    async def test_a_garbled_continue_token_is_a_bad_request(self, store: Store) -> None:
        with pytest.raises(errors.BadRequest):
            await store.list(DEPLOY, limit=1, continue_token="not-a-token")


class DeterminismConformance(StoreFixtures):
    async def test_a_seeded_uid_factory_gives_the_same_uids_and_names(self, opener: Opener) -> None:
        store = opener(uid_factory=counting_uids("seed"))
        obj = deployment("x")
        obj["metadata"] = {"generateName": "job-", "namespace": "default"}
        made = await store.create(obj)
        assert made["metadata"]["uid"] == "seed-2"
        assert made["metadata"]["name"] == generated_name("job-", "seed-1")


__all__ = ["CreateGetConformance", "DeleteConformance", "DeterminismConformance", "ListConformance",
           "UpdateConformance"]
