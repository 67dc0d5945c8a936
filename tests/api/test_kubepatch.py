"""JSON patch as kube-apiserver applies it: each op on present, absent and array paths, as a table
of results and of the exact sentences it refuses with."""

from __future__ import annotations

from typing import Any

import pytest

from fleetkeeper import errors
from fleetkeeper.api.kubepatch import apply_kube_json_patch

DOC: dict[str, Any] = {"a": {"b": 1, "n": None}, "l": [1, 2, 3], "s": "x"}


def doc(**changes: Any) -> dict[str, Any]:
    """DOC with top-level members changed (``None`` removes one)."""
    result = {"a": {"b": 1, "n": None}, "l": [1, 2, 3], "s": "x", **changes}
    return {k: v for k, v in result.items() if v is not None}


def a(**changes: Any) -> dict[str, Any]:
    return doc(a={"b": 1, "n": None, **changes})


APPLIES: list[tuple[dict[str, Any], dict[str, Any], str]] = [
    # add
    ({"op": "add", "path": "/a/b", "value": 9}, a(b=9), "add over a present member"),
    ({"op": "add", "path": "/a/c", "value": 9}, a(c=9), "add of an absent member"),
    ({"op": "add", "path": "/a/c"}, a(c=None), "add without a value writes null"),
    ({"op": "add", "path": "/l/1", "value": 9}, doc(l=[1, 9, 2, 3]), "add inside an array"),
    ({"op": "add", "path": "/l/-", "value": 9}, doc(l=[1, 2, 3, 9]), "add at - appends"),
    ({"op": "add", "path": "/l/3", "value": 9}, doc(l=[1, 2, 3, 9]), "add at the length appends"),
    ({"op": "add", "path": "/l/-1", "value": 9}, doc(l=[1, 2, 3, 9]), "add at -1 appends"),
    ({"op": "add", "path": "/l/-4", "value": 9}, doc(l=[9, 1, 2, 3]), "add at -length-1 prepends"),
    ({"op": "add", "path": "/l/+1", "value": 9}, doc(l=[1, 9, 2, 3]), "add at +1 is at 1"),
    ({"op": "add", "path": "/l/01", "value": 9}, doc(l=[1, 9, 2, 3]), "add at 01 is at 1"),
    ({"op": "add", "path": "/a~1b~0", "value": 9}, doc(**{"a/b~": 9}), "~1 and ~0 are unescaped"),
    ({"op": "add", "path": "spec/s", "value": "y"}, doc(s="y"), "a path's first segment is ignored"),
    # remove
    ({"op": "remove", "path": "/a/b"}, doc(a={"n": None}), "remove of a present member"),
    ({"op": "remove", "path": "/a/n"}, doc(a={"b": 1}), "remove of a null member"),
    ({"op": "remove", "path": "/l/0"}, doc(l=[2, 3]), "remove inside an array"),
    ({"op": "remove", "path": "/l/-1"}, doc(l=[1, 2]), "remove at -1 removes the last"),
    # replace
    ({"op": "replace", "path": "/a/b", "value": 9}, a(b=9), "replace of a present member"),
    ({"op": "replace", "path": "/a/c", "value": True}, a(c=True), "replace of an absent member sets it"),
    ({"op": "replace", "path": "/l/1", "value": 9}, doc(l=[1, 9, 3]), "replace inside an array"),
    ({"op": "replace", "path": "/l/-1", "value": 9}, doc(l=[1, 2, 9]), "replace at -1 replaces the last"),
    ({"op": "replace", "path": "", "value": {"z": 1}}, {"z": 1}, "replace at the root swaps the document"),
    # move
    ({"op": "move", "from": "/a/b", "path": "/c"}, {**doc(a={"n": None}), "c": 1},
     "move of a present member"),
    ({"op": "move", "from": "/l/0", "path": "/l/-"}, doc(l=[2, 3, 1]), "move inside an array"),
    ({"op": "move", "from": "/a", "path": "/a"}, doc(), "move onto itself"),
    # copy
    ({"op": "copy", "from": "/a/b", "path": "/c"}, {**doc(), "c": 1}, "copy of a present member"),
    ({"op": "copy", "from": "/a/zz", "path": "/c"}, {**doc(), "c": None},
     "copy of an absent member writes null"),
    ({"op": "copy", "from": "/l/-1", "path": "/l/0"}, doc(l=[3, 1, 2, 3]), "copy inside an array"),
    # test
    ({"op": "test", "path": "/a/b", "value": 1}, doc(), "test of a present member"),
    ({"op": "test", "path": "/a/zz", "value": None}, doc(), "test of an absent member against null"),
    ({"op": "test", "path": "/a/zz"}, doc(), "test of an absent member without a value"),
    ({"op": "test", "path": "/a/n", "value": None}, doc(), "test of a null member against null"),
    ({"op": "test", "path": "/l/-1", "value": 3}, doc(), "test at -1"),
    ({"op": "test", "path": "", "value": doc()}, doc(), "test of the whole document"),
    ({"op": "test", "path": "/s", "value": "x"}, doc(), "test of a string"),
]


@pytest.mark.parametrize(("op", "expected"), [c[:2] for c in APPLIES], ids=[c[2] for c in APPLIES])
def test_an_operation_applies_as_in_kubernetes(op: dict[str, Any], expected: Any) -> None:
    assert apply_kube_json_patch(DOC, [op]) == expected


REFUSED: list[tuple[dict[str, Any] | None, str, str]] = [
    # add
    ({"op": "add", "path": "/x/y", "value": 9},
     'add operation does not apply: doc is missing path: "/x/y": missing value',
     "add under an absent parent"),
    ({"op": "add", "path": "/s/y", "value": 9},
     'add operation does not apply: doc is missing path: "/s/y": missing value', "add under a string"),
    ({"op": "add", "path": "/a/n/y", "value": 9},
     'add operation does not apply: doc is missing path: "/a/n/y": missing value', "add under null"),
    ({"op": "add", "path": "/l/4", "value": 9},
     "error in add for path: '/l/4': Unable to access invalid index: 4: invalid index referenced",
     "add past the end of an array"),
    ({"op": "add", "path": "/l/-5", "value": 9},
     "error in add for path: '/l/-5': Unable to access invalid index: -5: invalid index referenced",
     "add before the start of an array"),
    ({"op": "add", "path": "/l/x", "value": 9},
     "error in add for path: '/l/x': value was not a proper array index: 'x': "
     'strconv.Atoi: parsing "x": invalid syntax', "add at a word in an array"),
    ({"op": "add", "path": "", "value": {}},
     'add operation does not apply: doc is missing path: "": missing value', "add at the root"),
    ({"op": "add", "value": 1}, "add operation failed to decode path: missing value", "add without a path"),
    # remove
    ({"op": "remove", "path": "/a/zz"},
     "error in remove for path: '/a/zz': Unable to remove nonexistent key: zz: missing value",
     "remove of an absent member"),
    ({"op": "remove", "path": "/x/y"},
     'remove operation does not apply: doc is missing path: "/x/y": missing value',
     "remove under an absent parent"),
    ({"op": "remove", "path": "/l/3"},
     "error in remove for path: '/l/3': Unable to access invalid index: 3: invalid index referenced",
     "remove past the end of an array"),
    ({"op": "remove", "path": "/l/-"},
     "error in remove for path: '/l/-': strconv.Atoi: parsing \"-\": invalid syntax", "remove at -"),
    ({"op": "remove", "path": ""},
     'remove operation does not apply: doc is missing path: "": missing value', "remove of the root"),
    # replace
    ({"op": "replace", "path": "/x/y", "value": 9},
     "replace operation does not apply: doc is missing path: /x/y: missing value",
     "replace under an absent parent"),
    ({"op": "replace", "path": "/l/3", "value": 9},
     "replace operation does not apply: doc is missing key: /l/3: missing value",
     "replace past the end of an array"),
    ({"op": "replace", "path": "/l/-", "value": 9},
     "replace operation does not apply: doc is missing key: /l/-: missing value", "replace at -"),
    ({"op": "replace", "path": "", "value": 1},
     "replace operation value must be object or array: %!w(<nil>)", "replace of the root by a scalar"),
    ({"op": "replace", "value": 1},
     "replace operation failed to decode path: operation missing path field: missing value",
     "replace without a path"),
    ({"op": "replace", "path": 5, "value": 1},
     "replace operation failed to decode path: json: cannot unmarshal number into Go value of type string",
     "replace at a number"),
    # move
    ({"op": "move", "from": "/a/zz", "path": "/c"},
     "error in move for path: 'zz': Unable to remove nonexistent key: zz: missing value",
     "move of an absent member"),
    ({"op": "move", "from": "/x/y", "path": "/c"},
     "move operation does not apply: doc is missing from path: /x/y: missing value",
     "move from an absent parent"),
    ({"op": "move", "from": "/a/b", "path": "/x/y"},
     "move operation does not apply: doc is missing destination path: /x/y: missing value",
     "move to an absent parent"),
    ({"op": "move", "from": "/a", "path": "/a/z"},
     "move operation does not apply: doc is missing destination path: /a/z: missing value",
     "move into its own child"),
    ({"op": "move", "from": "/l/5", "path": "/c"},
     "error in move for path: '5': Unable to access invalid index: 5: invalid index referenced",
     "move from past the end of an array"),
    ({"op": "move", "path": "/c"},
     "move operation failed to decode from: operation, missing from field: missing value",
     "move without from"),
    # copy
    ({"op": "copy", "from": "/x/y", "path": "/c"},
     "copy operation does not apply: doc is missing from path: /x/y: missing value",
     "copy from an absent parent"),
    ({"op": "copy", "from": "/a", "path": "/x/y"},
     "copy operation does not apply: doc is missing destination path: /x/y: missing value",
     "copy to an absent parent"),
    ({"op": "copy", "from": "/l/5", "path": "/c"},
     "error in copy for from: '/l/5': Unable to access invalid index: 5: invalid index referenced",
     "copy from past the end of an array"),
    ({"op": "copy", "from": "/a/b", "path": "/l/9"},
     "error while adding value during copy: Unable to access invalid index: 9: invalid index referenced",
     "copy past the end of an array"),
    ({"op": "copy", "from": "", "path": "/c"},
     "copy operation does not apply: doc is missing from path: : missing value", "copy of the root"),
    # test
    ({"op": "test", "path": "/a/b", "value": 2}, "testing value /a/b failed: test failed",
     "test of a different value"),
    ({"op": "test", "path": "/a/b", "value": 1.0}, "testing value /a/b failed: test failed",
     "test of 1 against 1.0"),
    ({"op": "test", "path": "/a/b", "value": True}, "testing value /a/b failed: test failed",
     "test of 1 against true"),
    ({"op": "test", "path": "/a/zz", "value": 1}, "testing value /a/zz failed: test failed",
     "test of an absent member"),
    ({"op": "test", "path": "/a/b"}, "testing value /a/b failed: test failed", "test without a value"),
    ({"op": "test", "path": "/x/y", "value": 1},
     "test operation does not apply: is missing path: /x/y: missing value", "test under an absent parent"),
    ({"op": "test", "path": "/l/3", "value": 1},
     "error in test for path: '/l/3': Unable to access invalid index: 3: invalid index referenced",
     "test past the end of an array"),
    # the op itself
    ({"op": "frobnicate", "path": "/a"}, "Unexpected kind: frobnicate", "an unknown op"),
    ({"path": "/a"}, "Unexpected kind: unknown", "no op"),
    (None, "Unexpected kind: unknown", "a null operation"),
]


@pytest.mark.parametrize(("op", "message"), [c[:2] for c in REFUSED], ids=[c[2] for c in REFUSED])
def test_an_operation_is_refused_with_kubernetes_words(op: dict[str, Any] | None, message: str) -> None:
    with pytest.raises(errors.Invalid) as refused:
        apply_kube_json_patch(DOC, [op])
    assert refused.value.message == message
    assert refused.value.to_status()["code"] == 422


def test_the_patch_is_atomic_and_leaves_its_inputs_untouched() -> None:
    value = {"k": [1]}
    ops = [{"op": "add", "path": "/c", "value": value}, {"op": "remove", "path": "/nope"}]
    with pytest.raises(errors.Invalid):
        apply_kube_json_patch(DOC, ops)
    assert doc() == DOC
    patched = apply_kube_json_patch(DOC, [*ops[:1], {"op": "add", "path": "/c/k/-", "value": 2}])
    assert patched["c"] == {"k": [1, 2]} and value == {"k": [1]}


def test_a_copy_shares_nothing_with_its_source() -> None:
    patched = apply_kube_json_patch(DOC, [{"op": "copy", "from": "/a", "path": "/c"},
                                          {"op": "add", "path": "/c/b", "value": 2}])
    assert patched["a"]["b"] == 1 and patched["c"]["b"] == 2


@pytest.mark.parametrize(("patch", "message"), [
    ({"op": "add"}, "json: cannot unmarshal object into Go value of type jsonpatch.Patch"),
    (["add"], "json: cannot unmarshal string into Go value of type jsonpatch.Operation"),
])
def test_a_body_that_is_not_a_list_of_operations_is_a_bad_request(patch: Any, message: str) -> None:
    with pytest.raises(errors.BadRequest) as refused:
        apply_kube_json_patch(DOC, patch)
    assert refused.value.message == message


def test_a_null_patch_changes_nothing() -> None:
    assert apply_kube_json_patch(DOC, None) == DOC


def test_a_test_value_beyond_64_bits_fails_the_test() -> None:
    with pytest.raises(errors.Invalid) as refused:
        apply_kube_json_patch({"n": 1}, [{"op": "test", "path": "/n", "value": 2**70}])
    assert refused.value.message == "testing value /n failed: test failed"
