"""The synchronous in-memory store a simulated cluster keeps its objects in, and its revision log."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from fleetkeeper import errors
from fleetkeeper.api.scheme import GroupKind
from fleetkeeper.store import objects as o
from fleetkeeper.store.backend import Change, Key, Record
from fleetkeeper.store.local import LocalStore, RevisionLog, Write

CONFIGMAP = GroupKind("", "ConfigMap")
NOW = "2026-01-01T00:00:00Z"


def new_store() -> tuple[LocalStore, list[Write]]:
    count = itertools.count(1)
    store = LocalStore(uid_factory=lambda: f"uid-{next(count)}", now=lambda: NOW)
    heard: list[Write] = []
    store.listeners.append(heard.append)
    return store, heard


def configmap(name: str, namespace: str = "default", **fields: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace},
            **fields}


def key(name: str, namespace: str = "default") -> Key:
    return Key("", "ConfigMap", namespace, name)


def test_a_create_gets_the_server_owned_metadata_and_the_next_revision() -> None:
    store, heard = new_store()
    created = store.create(configmap("a", data={"x": "1"}))
    assert created["metadata"] == {"name": "a", "namespace": "default", "uid": "uid-1",
                                   "creationTimestamp": NOW, "generation": 1, "resourceVersion": "1"}
    assert store.revision == 1 and store.get(key("a")) is created
    assert heard == [Write(key("a"), None, created)]
    with pytest.raises(errors.AlreadyExists, match='configmaps "a" already exists'):
        store.create(configmap("a"))


def test_a_create_keeps_a_uid_it_is_given() -> None:
    store, _ = new_store()
    given = configmap("a")
    given["metadata"]["uid"] = "mine"
    assert store.create(given)["metadata"]["uid"] == "mine"
    assert store.create(configmap("b"))["metadata"]["uid"] == "uid-1", "no uid was taken for the first"


def test_an_update_keeps_identity_and_moves_generation_only_when_the_body_changes() -> None:
    store, heard = new_store()
    first = store.create(configmap("a", data={"x": "1"}))
    status = store.replace(key("a"), status={"seen": True})
    assert status["metadata"]["generation"] == 1 and status["metadata"]["resourceVersion"] == "2"
    body = store.replace(key("a"), data={"x": "2"})
    assert (body["metadata"]["generation"], body["metadata"]["uid"]) == (2, "uid-1")
    assert body["metadata"]["creationTimestamp"] == NOW
    assert first["data"] == {"x": "1"} and first["metadata"]["resourceVersion"] == "1", \
        "a stored dict is never changed in place"
    assert heard[-1] == Write(key("a"), status, body)


def test_replacing_with_what_is_stored_writes_nothing() -> None:
    store, heard = new_store()
    created = store.create(configmap("a", data={"x": "1"}))
    assert store.replace(key("a"), data={"x": "1"}) is created
    assert store.revision == 1 and len(heard) == 1
    with pytest.raises(errors.NotFound, match='configmaps "b" not found'):
        store.replace(key("b"), data={})


def test_rows_kept_outside_the_store_share_its_revisions() -> None:
    store, _ = new_store()
    store.create(configmap("a"))
    assert store.next_version() == "2"
    assert store.create(configmap("b"))["metadata"]["resourceVersion"] == "3"


def test_reads_are_ordered_by_namespace_and_name() -> None:
    store, _ = new_store()
    for namespace, name in [("b", "y"), ("a", "z"), ("b", "x"), ("a", "w")]:
        store.create(configmap(name, namespace))
    assert [(m["metadata"]["namespace"], m["metadata"]["name"]) for m in store.items(CONFIGMAP)] == [
        ("a", "w"), ("a", "z"), ("b", "x"), ("b", "y")]
    assert [m["metadata"]["name"] for m in store.items(CONFIGMAP, "b")] == ["x", "y"]
    assert store.namespace_keys("a") == [key("w", "a"), key("z", "a")]


def test_the_owner_index_follows_owner_references_and_removal() -> None:
    store, heard = new_store()
    owned = configmap("a")
    owned["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "X", "name": "x", "uid": "owner"}]
    store.create(owned)
    assert store.dependents("owner") == [key("a")]
    live = store.get(key("a"))
    assert live is not None
    store.replace(key("a"), metadata={**live["metadata"], "ownerReferences": []})
    assert store.dependents("owner") == []
    last = store.get(key("a"))
    gone = store.remove(key("a"))
    assert gone is not None and gone["metadata"]["resourceVersion"] == str(store.revision) == "3"
    assert heard[-1] == Write(key("a"), last, gone, deleted=True)
    assert store.get(key("a")) is None and store.remove(key("a")) is None
    assert list(store.items(CONFIGMAP)) == []


def change(revision: int) -> Change:
    return Change("ADDED", key(f"c{revision}"), Record(b"{}", revision), None)


def test_a_revision_log_gives_the_changes_after_a_revision_and_gone_past_what_it_keeps() -> None:
    log = RevisionLog(start=10, capacity=3)
    for revision in (12, 15, 17):
        log.append(change(revision))
    assert [c.revision for c in log.after(10)] == [12, 15, 17]
    assert [c.revision for c in log.after(14)] == [15, 17]
    assert log.after(17) == []
    log.append(change(20))  # evicts 12: a watch from before it would miss it
    assert log.start == 12 and len(log) == 3
    assert [c.revision for c in log.after(12)] == [15, 17, 20]
    with pytest.raises(errors.Gone, match=r"too old resource version: 11 \(13\)"):
        log.after(11)


@pytest.mark.parametrize(("new", "old", "changed"), [
    ({"spec": {"a": 1}, "status": {"x": 1}}, {"spec": {"a": 1}}, False),
    ({"spec": {"a": 2}}, {"spec": {"a": 1}}, True),
    ({"spec": None}, {}, True),
    ({}, {"data": {}}, True),
    ({"metadata": {"labels": {}}, "kind": "X"}, {"metadata": {}}, False),
], ids=["status only", "a spec value", "a field added as null", "a field removed", "metadata and kind"])
def test_the_generation_moves_on_when_a_field_outside_metadata_and_status_changes(
        new: dict[str, Any], old: dict[str, Any], changed: bool) -> None:
    assert o.spec_changed(new, old) is changed
    meta: dict[str, Any] = {}
    o.carry_identity(meta, {"uid": "u", "creationTimestamp": NOW, "generation": 4}, changed=changed)
    assert meta == {"uid": "u", "creationTimestamp": NOW, "generation": 5 if changed else 4}
