"""Server-side apply over dicts: ownership per manager, removal, conflicts, generation."""

from __future__ import annotations

from typing import Any

import pytest

from fleetkeeper import errors
from fleetkeeper.members.simulated.apply import applied_paths, owned_fields, server_side_apply

NOW = "2026-01-01T00:00:00Z"


def cm(labels: dict[str, str] | None = None, data: dict[str, str] | None = None,
       **extra: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "cm", "namespace": "default"}
    if labels is not None:
        meta["labels"] = labels
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, **extra}
    if data is not None:
        obj["data"] = data
    return obj


def apply(live: dict[str, Any] | None, manifest: dict[str, Any], manager: str = "a",
          force: bool = True) -> dict[str, Any]:
    return server_side_apply(live, manifest, manager=manager, force=force, now=NOW).object


def test_applied_paths_track_labels_per_key_and_other_fields_whole() -> None:
    manifest = cm({"x": "1", "y": "2"}, {"k": "v"})
    manifest["metadata"]["annotations"] = {"note": "n"}
    manifest["metadata"]["finalizers"] = ["f"]
    manifest["status"] = {"ignored": True}
    assert applied_paths(manifest) == {
        ("metadata", "labels", "x"), ("metadata", "labels", "y"), ("metadata", "annotations", "note"),
        ("metadata", "finalizers"), ("data",),
    }


def test_create_records_the_manager_in_managed_fields() -> None:
    result = server_side_apply(None, cm({"x": "1"}, {"k": "v"}), manager="a", force=True, now=NOW)
    assert result.changed and result.body_changed
    assert result.object["metadata"]["managedFields"] == [{
        "manager": "a", "operation": "Apply", "apiVersion": "v1", "time": NOW, "fieldsType": "FieldsV1",
        "fieldsV1": {"f:data": {}, "f:metadata": {"f:labels": {"f:x": {}}}},
    }]
    assert owned_fields(result.object) == {"a": {("data",), ("metadata", "labels", "x")}}


@pytest.mark.parametrize("second, labels_after", [
    (cm({"x": "1"}, {"k": "v"}), {"x": "1", "y": "2"}),
    (cm(None, {"k": "v"}), {"y": "2"}),
    (cm({"x": "changed"}, {"k": "v"}), {"x": "changed", "y": "2"}),
], ids=[
    "re-applying the same fields keeps both managers' labels",
    "dropping a label removes only the applier's own",
    "changing an owned label changes only it",
])
def test_managers_own_their_labels(second: dict[str, Any], labels_after: dict[str, str]) -> None:
    live = apply(None, cm({"x": "1"}, {"k": "v"}), manager="a")
    live = apply(live, cm({"y": "2"}), manager="b")
    assert apply(live, second, manager="a")["metadata"].get("labels") == labels_after


def test_a_field_two_managers_own_survives_one_of_them_dropping_it() -> None:
    live = apply(None, cm({"x": "1"}), manager="a")
    live = apply(live, cm({"x": "1"}), manager="b")  # shared ownership of an equal value
    live = apply(live, cm({}), manager="a")
    assert live["metadata"]["labels"] == {"x": "1"}


def test_dropping_a_whole_field_removes_it() -> None:
    live = apply(None, cm(None, {"k": "v"}, binaryData={"b": "AA=="}))
    after = apply(live, cm(None, {"k": "v"}))
    assert "binaryData" not in after and after["data"] == {"k": "v"}


def test_status_is_never_applied_and_the_live_status_is_kept() -> None:
    live = {**apply(None, cm(None, {"k": "v"})), "status": {"phase": "Live"}}
    after = apply(live, cm(None, {"k": "v2"}, status={"phase": "Applied"}))
    assert after["status"] == {"phase": "Live"}


def test_conflicts_name_the_field_and_the_owner_unless_forced() -> None:
    live = apply(None, cm({"team": "a"}), manager="first")
    with pytest.raises(errors.Conflict) as caught:
        apply(live, cm({"team": "b"}), manager="second", force=False)
    causes = [(c.field, c.message) for c in caught.value.causes]
    assert causes == [("metadata.labels.team", "conflict with 'first'")]
    forced = apply(live, cm({"team": "b"}), manager="second", force=True)
    assert owned_fields(forced) == {"second": {("metadata", "labels", "team")}}


@pytest.mark.parametrize("second, changed, body_changed", [
    (cm({"x": "1"}, {"k": "v"}), False, False),
    (cm({"x": "2"}, {"k": "v"}), True, False),
    (cm({"x": "1"}, {"k": "w"}), True, True),
], ids=["the same manifest changes nothing", "a label change is a metadata change",
        "a data change is a body change"])
def test_change_detection(second: dict[str, Any], changed: bool, body_changed: bool) -> None:
    live = apply(None, cm({"x": "1"}, {"k": "v"}))
    result = server_side_apply(live, second, manager="a", force=True, now="2026-01-01T00:01:00Z")
    assert (result.changed, result.body_changed) == (changed, body_changed)
    if not changed:
        assert result.object is live
