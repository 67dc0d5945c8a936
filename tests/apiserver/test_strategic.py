"""Strategic merge patch over unstructured built-in kinds."""

from __future__ import annotations

from typing import Any

import pytest

from fleetkeeper import errors
from fleetkeeper.apiserver.strategic import strategic_merge, strip_directives

POD: dict[str, Any] = {"containers": [{"name": "app", "image": "a:1", "env": [{"name": "X", "value": "1"}]},
                      {"name": "side", "image": "s:1"}],
       "volumes": [{"name": "v1"}], "finalizers": ["a"]}


@pytest.mark.parametrize(("patch", "expected"), [
    ({"containers": [{"name": "app", "image": "a:2"}]},
     {**POD, "containers": [{"name": "app", "image": "a:2", "env": [{"name": "X", "value": "1"}]},
                            {"name": "side", "image": "s:1"}]}),
    ({"containers": [{"name": "new", "image": "n:1"}]},
     {**POD, "containers": [*POD["containers"], {"name": "new", "image": "n:1"}]}),
    ({"containers": [{"name": "side", "$patch": "delete"}]},
     {**POD, "containers": [POD["containers"][0]]}),
    ({"containers": [{"name": "only", "image": "o:1"}, {"$patch": "replace"}]},
     {**POD, "containers": [{"name": "only", "image": "o:1"}]}),
    ({"$setElementOrder/containers": [{"name": "side"}, {"name": "app"}],
      "containers": [{"name": "app", "image": "a:3"}]},
     {**POD, "containers": [{"name": "side", "image": "s:1"},
                            {"name": "app", "image": "a:3", "env": [{"name": "X", "value": "1"}]}]}),
    ({"finalizers": ["b"]}, {**POD, "finalizers": ["a", "b"]}),
    ({"$deleteFromPrimitiveList/finalizers": ["a"]}, {**POD, "finalizers": []}),
    ({"volumes": None}, {k: v for k, v in POD.items() if k != "volumes"}),
    ({"$retainKeys": ["containers"], "containers": [{"name": "app", "image": "a:1"}]},
     {"containers": POD["containers"]}),
    ({"$setElementOrder/containers": [{"name": "side"}] * 1000 + [{"name": "app"}] * 1000},
     {**POD, "containers": [POD["containers"][1], POD["containers"][0]]}),
    ({"containers": [{"name": "side", "$patch": "delete"}, {"name": "side", "$patch": "delete"},
                     {"name": "new", "image": "n:1"}, {"name": "new", "image": "n:2"}]},
     {**POD, "containers": [POD["containers"][0], {"name": "new", "image": "n:2"}]}),
], ids=["a container merges by name", "a new container is appended", "a $patch: delete removes by key",
        "$patch: replace replaces the list", "$setElementOrder orders the list",
        "finalizers merge as a set", "$deleteFromPrimitiveList removes values", "null deletes a field",
        "$retainKeys drops the other keys", "an order naming an element many times keeps it once",
        "elements of one key delete once and merge into one"])
def test_strategic_merge(patch: dict[str, Any], expected: dict[str, Any]) -> None:
    assert strategic_merge(POD, patch) == expected


def test_the_target_is_never_modified() -> None:
    before = repr(POD)
    strategic_merge(POD, {"containers": [{"name": "app", "image": "z"}], "volumes": None})
    assert repr(POD) == before


def test_an_unknown_directive_is_a_bad_request() -> None:
    with pytest.raises(errors.BadRequest):
        strategic_merge(POD, {"$patch": "explode"})
    with pytest.raises(errors.BadRequest):
        strategic_merge(POD, ["not", "a", "map"])


def test_directives_are_stripped_for_merge_patch_kinds() -> None:
    patch = {"a": {"$patch": "x", "b": 1}, "$retainKeys": ["a"], "l": [{"$patch": "replace"}, 2]}
    assert strip_directives(patch) == {"a": {"b": 1}, "l": [2]}
