"""JSON patch within bounds: an operation count, a budget of bytes written, and no deepening
past the nesting limit — for every caller (the API server, the local client, overrides)."""

from __future__ import annotations

from typing import Any

import pytest

from fleetkeeper import errors
from fleetkeeper.api.limits import MAX_DEPTH, MAX_PATCH_BYTES, MAX_PATCH_OPERATIONS, depth_of, too_deep
from fleetkeeper.api.patch import apply_json_patch


def doubling(path: str, copies: int, leaf: Any) -> list[dict[str, Any]]:
    ops: list[dict[str, Any]] = [{"op": "add", "path": path, "value": {"v": leaf}}]
    return ops + [{"op": "copy", "from": path, "path": f"{path}/k{i}"} for i in range(copies)]


def test_operations_up_to_the_limit_apply_and_one_more_is_refused() -> None:
    ops = [{"op": "replace", "path": "/a", "value": i} for i in range(MAX_PATCH_OPERATIONS)]
    assert apply_json_patch({"a": 0}, ops) == {"a": MAX_PATCH_OPERATIONS - 1}
    with pytest.raises(errors.RequestEntityTooLarge, match=f"{MAX_PATCH_OPERATIONS + 1} operations, more "
                                                           f"than the limit of {MAX_PATCH_OPERATIONS}"):
        apply_json_patch({"a": 0}, [*ops, ops[0]])


def test_doubling_copies_stop_at_the_budget_naming_the_operation() -> None:
    doc = {"a": 1}
    with pytest.raises(errors.RequestEntityTooLarge) as refused:
        apply_json_patch(doc, doubling("/x", 40, "y" * 256))
    message = refused.value.message
    assert message.startswith("json patch operation 1") and "(copy at '/x/k" in message
    assert str(MAX_PATCH_BYTES) in message
    assert doc == {"a": 1}


def test_copies_within_the_budget_apply() -> None:
    result = apply_json_patch({}, doubling("/x", 8, "y" * 256))
    assert len(result["x"]["k7"]["k6"]["k5"]["k4"]["k3"]["k2"]["k1"]["k0"]["v"]) == 256


@pytest.mark.parametrize("op", ["add", "replace"])
def test_a_value_a_program_shares_between_operations_counts_each_time(op: str) -> None:
    shared = {"blob": "z" * 100_000}  # one object written twenty times is twenty copies
    ops = [{"op": op, "path": f"/k{i}" if op == "add" else "/k", "value": shared} for i in range(20)]
    with pytest.raises(errors.RequestEntityTooLarge, match="json patch operation 15"):
        apply_json_patch({"k": 0}, ops)


def test_copies_that_nest_past_the_depth_limit_are_refused() -> None:
    ops = [{"op": "add", "path": "/x", "value": {"v": 1}}]
    ops += [{"op": "copy", "from": "/x", "path": "/x/v"} for _ in range(MAX_DEPTH)]
    with pytest.raises(errors.Invalid, match=f"more than {MAX_DEPTH} levels deep"):
        apply_json_patch({}, ops)
    assert depth_of(apply_json_patch({}, ops[:MAX_DEPTH - 1])) == MAX_DEPTH


def test_a_document_already_past_the_limit_can_be_patched_without_deepening_it() -> None:
    deep: Any = 1
    for _ in range(MAX_DEPTH + 5):
        deep = {"d": deep}
    assert too_deep(deep)
    patched = apply_json_patch(deep, [{"op": "add", "path": "/label", "value": "x"}])
    assert patched["label"] == "x"
    with pytest.raises(errors.Invalid):
        apply_json_patch(deep, [{"op": "copy", "from": "", "path": "/more"}])


def test_a_value_too_deep_to_encode_is_refused_naming_the_operation() -> None:
    deep: Any = {}
    for _ in range(300):  # what a program could hand the local client
        deep = {"d": deep}
    ops = [{"op": "add", "path": "/a", "value": 1}, {"op": "add", "path": "/z", "value": deep}]
    with pytest.raises(errors.Invalid, match=r"operation 1 \(add\) cannot write this value"):
        apply_json_patch({}, ops)
    with pytest.raises(errors.BadRequest, match="cannot be patched"):
        apply_json_patch({"deep": deep}, ops[:1])
