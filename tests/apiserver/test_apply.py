"""Field ownership and server-side apply: conflicts, force, shared ownership, removal."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from fleetkeeper import errors
from fleetkeeper.api import managedfields as fields
from fleetkeeper.api.serverapply import ApplyRequest, apply

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def request(manager: str, *, force: bool = False) -> ApplyRequest:
    return ApplyRequest(manager=manager, force=force, api_version="v1", now=NOW, has_status=True)


def cm(**data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "d"},
            "data": data}


def owners(obj: dict[str, Any]) -> dict[str, set[fields.Path]]:
    return {f"{e['manager']}/{e['operation']}": fields.from_fields_v1(e["fieldsV1"])
            for e in obj["metadata"]["managedFields"]}


def test_leaf_paths_skip_identity_and_status() -> None:
    obj = {"apiVersion": "v1", "kind": "X",
           "metadata": {"name": "n", "resourceVersion": "3", "labels": {"a": "b"}},
           "spec": {"list": [1, 2], "map": {"k": {}}}, "status": {"ready": True}}
    assert fields.leaf_paths(obj) == {("metadata", "labels", "a"), ("spec", "list"), ("spec", "map", "k")}
    assert fields.leaf_paths(obj, subresource="status") == {("status", "ready")}


def test_fields_v1_round_trips() -> None:
    paths = {("spec", "a"), ("spec", "b", "c"), ("metadata", "labels", "x.y/z")}
    assert fields.from_fields_v1(fields.to_fields_v1(paths)) == paths
    keyed: dict[str, Any] = {"f:spec": {"f:containers": {'k:{"name":"a"}': {}}}}
    assert fields.from_fields_v1(keyed) == {("spec", "containers")}


@pytest.mark.parametrize("obj", [
    {"apiVersion": "v1", "kind": "X", "metadata": {"name": "n", "labels": {"b": "1", "a": "2"}, "uid": "u"},
     "spec": {"z": {"y": 1, "x": {}}, "list": [{"a": 1}]}, "status": {"s": 1}},
    {"apiVersion": "v1", "kind": "X", "metadata": {"name": "n"}, "data": {}},
    {"metadata": "not a map", "spec": None},
])
def test_fields_of_renders_the_leaf_paths_in_one_walk(obj: dict[str, Any]) -> None:
    for scope in ({}, {"subresource": "status"}, {"has_status": False}):
        assert fields.fields_of(obj, **scope) == fields.to_fields_v1(fields.leaf_paths(obj, **scope))


def test_an_update_moves_changed_fields_to_its_manager() -> None:
    old = cm(a="1", b="2")
    old["metadata"]["managedFields"] = fields.record_update(None, old, manager="maker", api_version="v1",
                                                            now=NOW)
    new = cm(a="1", b="3")
    result = fields.record_update(old, new, manager="editor", api_version="v1", now=NOW)
    assert {e["manager"]: fields.from_fields_v1(e["fieldsV1"]) for e in result} == {
        "maker": {("data", "a")}, "editor": {("data", "b")}}


def test_apply_creates_with_its_ownership() -> None:
    made = apply(None, cm(a="1"), request("ops"))
    assert made["data"] == {"a": "1"} and owners(made) == {"ops/Apply": {("data", "a")}}


def test_a_different_value_owned_by_another_manager_conflicts() -> None:
    live = apply(None, cm(a="1"), request("ops"))
    with pytest.raises(errors.Conflict) as caught:
        apply(live, cm(a="2"), request("dev"))
    assert 'conflict with "ops"' in caught.value.message and ".data.a" in caught.value.message
    assert caught.value.causes[0].reason == "FieldManagerConflict"


def test_force_takes_the_field_over() -> None:
    live = apply(None, cm(a="1", b="1"), request("ops"))
    taken = apply(live, cm(a="2"), request("dev", force=True))
    assert taken["data"] == {"a": "2", "b": "1"}
    assert owners(taken) == {"ops/Apply": {("data", "b")}, "dev/Apply": {("data", "a")}}


def test_the_same_value_is_shared_and_survives_one_owner_leaving() -> None:
    live = apply(None, cm(a="1", b="1"), request("ops"))
    shared = apply(live, cm(a="1"), request("dev"))
    assert owners(shared)["dev/Apply"] == {("data", "a")} and ("data", "a") in owners(shared)["ops/Apply"]
    ops_left = apply(shared, cm(b="1"), request("ops"))
    assert ops_left["data"] == {"a": "1", "b": "1"}, "dev still owns data.a"


def test_a_field_no_longer_applied_is_removed() -> None:
    live = apply(None, cm(a="1", b="1"), request("ops"))
    assert apply(live, cm(a="1"), request("ops"))["data"] == {"a": "1"}


def test_apply_carries_the_live_resource_version_as_precondition() -> None:
    live = apply(None, cm(a="1"), request("ops"))
    live["metadata"]["resourceVersion"] = "7"
    assert apply(live, cm(a="2"), request("ops"))["metadata"]["resourceVersion"] == "7"


def test_applying_the_same_object_later_changes_nothing_not_even_the_field_times() -> None:
    from datetime import timedelta

    from fleetkeeper.api.serverapply import ApplyRequest as Req

    made = apply(None, cm(a="1"), request("ops"))
    later = Req(manager="ops", force=False, api_version="v1", now=NOW + timedelta(seconds=5), has_status=True)
    again = apply(made, cm(a="1"), later)
    assert again["metadata"]["managedFields"] == made["metadata"]["managedFields"]
    changed = apply(made, cm(a="2"), later)
    assert changed["metadata"]["managedFields"][0]["time"] == "2026-01-01T00:00:00Z", "same fields"
    grown = apply(made, cm(a="1", b="2"), later)
    assert grown["metadata"]["managedFields"][0]["time"] == "2026-01-01T00:00:05Z", "new fields: a new time"


def test_an_update_that_changes_nothing_keeps_the_field_times() -> None:
    from datetime import timedelta

    old = cm(a="1")
    old["metadata"]["managedFields"] = fields.record_update(None, old, manager="maker", api_version="v1",
                                                            now=NOW)
    same = fields.record_update(old, cm(a="1"), manager="maker", api_version="v1",
                                now=NOW + timedelta(seconds=5))
    assert same == old["metadata"]["managedFields"]


def test_a_repeated_apply_after_another_managers_write_changes_nothing() -> None:
    live = apply(None, cm(a="1", b="2"), request("ops"))
    live["metadata"]["resourceVersion"] = "5"
    edited = cm(a="1", b="2", c="3")
    live["metadata"]["managedFields"] = fields.record_update(live, edited, manager="editor", api_version="v1",
                                                             now=datetime(2026, 1, 2, tzinfo=UTC))
    live["data"] = edited["data"]
    assert apply(live, cm(a="1", b="2"), request("ops")) == live


def test_metadata_the_server_sets_is_not_taken_from_an_intent() -> None:
    live = apply(None, cm(a="1"), request("ops"))
    live["metadata"].update(resourceVersion="5", creationTimestamp="2026-01-01T00:00:00Z", generation=2)
    intent = cm(a="1")
    intent["metadata"].update(creationTimestamp="2001-01-01T00:00:00Z", generation=9)
    assert apply(live, intent, request("ops")) == live
