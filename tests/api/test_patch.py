"""JSON merge patch (RFC 7386 appendix A) and JSON patch (RFC 6902 appendix A), as tables."""

from __future__ import annotations

from typing import Any

import pytest

from fleetkeeper import errors
from fleetkeeper.api.patch import apply_json_patch, apply_merge_patch, json_equal, pointer_get

MERGE_CASES: list[tuple[Any, Any, Any, str]] = [
    ({"a": "b"}, {"a": "c"}, {"a": "c"}, "a member is replaced"),
    ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}, "a member is added"),
    ({"a": "b"}, {"a": None}, {}, "null removes a member"),
    ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}, "null removes only that member"),
    ({"a": ["b"]}, {"a": "c"}, {"a": "c"}, "an array is replaced by a scalar"),
    ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}, "a scalar is replaced by an array"),
    ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}, "objects merge recursively"),
    ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}, "arrays are never merged"),
    (["a", "b"], ["c", "d"], ["c", "d"], "a top-level array is replaced"),
    ({"a": "b"}, ["c"], ["c"], "an array patch replaces an object"),
    ({"a": "foo"}, None, None, "a null patch replaces everything"),
    ({"a": "foo"}, "bar", "bar", "a string patch replaces everything"),
    ({"e": None}, {"a": 1}, {"e": None, "a": 1}, "existing nulls are kept"),
    ([1, 2], {"a": "b", "c": None}, {"a": "b"}, "an object patch over an array starts from empty"),
    ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}, "nested nulls never appear in new members"),
]


@pytest.mark.parametrize(
    ("target", "patch", "expected"), [c[:3] for c in MERGE_CASES], ids=[c[3] for c in MERGE_CASES]
)
def test_merge_patch_follows_rfc_7386(target: Any, patch: Any, expected: Any) -> None:
    assert apply_merge_patch(target, patch) == expected


def test_merge_patch_leaves_its_inputs_untouched() -> None:
    target, patch = {"a": {"b": 1}}, {"a": {"c": [1]}}
    result = apply_merge_patch(target, patch)
    result["a"]["c"].append(2)
    assert target == {"a": {"b": 1}} and patch == {"a": {"c": [1]}}


JSON_CASES: list[tuple[Any, list[dict[str, Any]], Any, str]] = [
    (
        {"foo": "bar"},
        [{"op": "add", "path": "/baz", "value": "qux"}],
        {"baz": "qux", "foo": "bar"},
        "add an object member",
    ),
    (
        {"foo": ["bar", "baz"]},
        [{"op": "add", "path": "/foo/1", "value": "qux"}],
        {"foo": ["bar", "qux", "baz"]},
        "add an array element",
    ),
    (
        {"baz": "qux", "foo": "bar"},
        [{"op": "remove", "path": "/baz"}],
        {"foo": "bar"},
        "remove an object member",
    ),
    (
        {"foo": ["bar", "qux", "baz"]},
        [{"op": "remove", "path": "/foo/1"}],
        {"foo": ["bar", "baz"]},
        "remove an array element",
    ),
    (
        {"baz": "qux", "foo": "bar"},
        [{"op": "replace", "path": "/baz", "value": "boo"}],
        {"baz": "boo", "foo": "bar"},
        "replace a value",
    ),
    (
        {"foo": {"bar": "baz", "waldo": "fred"}, "qux": {"corge": "grault"}},
        [{"op": "move", "from": "/foo/waldo", "path": "/qux/thud"}],
        {"foo": {"bar": "baz"}, "qux": {"corge": "grault", "thud": "fred"}},
        "move a value",
    ),
    (
        {"foo": ["all", "grass", "cows", "eat"]},
        [{"op": "move", "from": "/foo/1", "path": "/foo/3"}],
        {"foo": ["all", "cows", "eat", "grass"]},
        "move an array element",
    ),
    (
        {"baz": "qux", "foo": ["a", 2, "c"]},
        [{"op": "test", "path": "/baz", "value": "qux"}, {"op": "test", "path": "/foo/1", "value": 2}],
        {"baz": "qux", "foo": ["a", 2, "c"]},
        "test values that match",
    ),
    (
        {"foo": "bar"},
        [{"op": "add", "path": "/child", "value": {"grandchild": {}}}],
        {"foo": "bar", "child": {"grandchild": {}}},
        "add a nested member object",
    ),
    (
        {"foo": "bar"},
        [{"op": "add", "path": "/baz", "value": "qux", "xyz": 123}],
        {"foo": "bar", "baz": "qux"},
        "ignore unrecognized elements",
    ),
    (
        {"foo": ["bar"]},
        [{"op": "add", "path": "/foo/-", "value": ["abc", "def"]}],
        {"foo": ["bar", ["abc", "def"]]},
        "append an array value with dash",
    ),
    (
        {"/": 9, "~1": 10},
        [{"op": "test", "path": "/~01", "value": 10}],
        {"/": 9, "~1": 10},
        "tilde escapes are decoded in order",
    ),
    ({"foo": 1}, [{"op": "copy", "from": "/foo", "path": "/bar"}], {"foo": 1, "bar": 1}, "copy a value"),
    ({"foo": 1}, [{"op": "replace", "path": "", "value": [1]}], [1], "replace the whole document"),
    ({"foo": None}, [{"op": "test", "path": "/foo", "value": None}], {"foo": None}, "test a null"),
]


@pytest.mark.parametrize(
    ("doc", "patch", "expected"), [c[:3] for c in JSON_CASES], ids=[c[3] for c in JSON_CASES]
)
def test_json_patch_follows_rfc_6902(doc: Any, patch: list[dict[str, Any]], expected: Any) -> None:
    original = repr(doc)
    assert apply_json_patch(doc, patch) == expected
    assert repr(doc) == original


FAILING: list[tuple[Any, Any, type[errors.ApiError], str]] = [
    (
        {"foo": "bar"},
        [{"op": "add", "path": "/baz/bat", "value": "qux"}],
        errors.Invalid,
        "adding under a missing parent fails",
    ),
    ({"baz": "qux"}, [{"op": "test", "path": "/baz", "value": "bar"}], errors.Invalid, "a failed test fails"),
    (
        {"foo": ["bar", "baz"]},
        [{"op": "add", "path": "/foo/3", "value": 1}],
        errors.Invalid,
        "an index past the end fails",
    ),
    (
        {"foo": [1]},
        [{"op": "remove", "path": "/foo/01"}],
        errors.Invalid,
        "an index with a leading zero fails",
    ),
    ({"foo": 1}, [{"op": "remove", "path": "/bar"}], errors.Invalid, "removing a missing member fails"),
    (
        {"foo": 1},
        [{"op": "replace", "path": "/bar", "value": 2}],
        errors.Invalid,
        "replacing a missing member fails",
    ),
    (
        {"a": {"b": 1}},
        [{"op": "move", "from": "/a", "path": "/a/b/c"}],
        errors.Invalid,
        "moving a value into its own child fails",
    ),
    (
        {"foo": 1},
        [{"op": "test", "path": "/foo", "value": True}],
        errors.Invalid,
        "true is not the number one",
    ),
    ({"foo": 1}, [{"op": "frobnicate", "path": "/foo"}], errors.BadRequest, "an unknown op is malformed"),
    (
        {"foo": 1},
        [{"op": "add", "path": "foo", "value": 1}],
        errors.BadRequest,
        "a pointer without a slash is malformed",
    ),
    ({"foo": 1}, [{"op": "add", "path": "/bar"}], errors.BadRequest, "an add without a value is malformed"),
    ({"foo": 1}, {"op": "add"}, errors.BadRequest, "a patch that is not an array is malformed"),
]


@pytest.mark.parametrize(("doc", "patch", "error"), [c[:3] for c in FAILING], ids=[c[3] for c in FAILING])
def test_json_patch_errors_say_whether_the_patch_or_the_document_is_at_fault(
    doc: Any, patch: Any, error: type[errors.ApiError]
) -> None:
    with pytest.raises(error):
        apply_json_patch(doc, patch)


def test_a_json_patch_applies_all_or_nothing() -> None:
    doc = {"a": 1}
    with pytest.raises(errors.Invalid):
        apply_json_patch(doc, [{"op": "replace", "path": "/a", "value": 2}, {"op": "remove", "path": "/zz"}])
    assert doc == {"a": 1}


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        (1, 1.0, True),
        (True, 1, False),
        ({"x": [1, {"y": None}]}, {"x": [1, {"y": None}]}, True),
        ([1, 2], [2, 1], False),
        ("1", 1, False),
    ],
    ids=[
        "numbers compare numerically",
        "a boolean is not a number",
        "nested structures compare deeply",
        "array order matters",
        "a string is not a number",
    ],
)
def test_json_equality(a: Any, b: Any, equal: bool) -> None:
    assert json_equal(a, b) is equal


def test_pointer_get_reads_a_value_and_says_when_there_is_none() -> None:
    doc = {"spec": {"containers": [{"name": "a/b", "image": "x"}], "a/b": 1}}
    assert pointer_get(doc, "/spec/containers/0/image") == "x"
    assert pointer_get(doc, "/spec/a~1b") == 1
    with pytest.raises(errors.Invalid, match="does not exist"):
        pointer_get(doc, "/spec/missing")
    with pytest.raises(errors.BadRequest, match="must start with"):
        pointer_get(doc, "spec")
