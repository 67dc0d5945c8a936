"""The empty-table repair of Lua results: Karmada's lua_convert_test.go vectors, as data."""

from __future__ import annotations

from typing import Any

import pytest

from fleetkeeper.interpreter.convert import empty_paths, fix_empty_tables

TRAP = '\\"trap-string\\":[]'
SPEC = {
    "EmptyMap": [],
    "NonEmptyMap": {"test-key": TRAP},
    "EmptySlice": [],
    "NonEmptySlice": [TRAP],
    "OtherField": TRAP,
}


@pytest.mark.parametrize(
    ("result", "expect_object", "references", "expected"),
    [
        pytest.param(
            [], True, [], {}, id="an empty result becomes an empty object when an object is expected"
        ),
        pytest.param([], False, [], [], id="an empty result stays an empty list when a list is expected"),
        pytest.param({"Bar": []}, True, [], {}, id="a nested empty table without a reference is deleted"),
        pytest.param(
            {"Bar": {"Bar": "bar"}}, True, [], {"Bar": {"Bar": "bar"}}, id="non-empty values pass unchanged"
        ),
        pytest.param(["foo", "bar"], False, [], ["foo", "bar"], id="a list passes unchanged"),
        pytest.param(
            [{"apiVersion": "demo", "kind": "demo"}],
            False,
            [],
            [{"apiVersion": "demo", "kind": "demo"}],
            id="a list of objects passes unchanged",
        ),
        pytest.param(
            {"kind": "demo", "spec": SPEC},
            True,
            [],
            {
                "kind": "demo",
                "spec": {"NonEmptyMap": {"test-key": TRAP}, "NonEmptySlice": [TRAP], "OtherField": TRAP},
            },
            id="empty fields vanish without references, strings that look like JSON are untouched",
        ),
        pytest.param(
            {"kind": "demo", "spec": SPEC},
            True,
            [{"kind": "demo", "spec": {"EmptySlice": [], "EmptyMap": {}}}],
            {
                "kind": "demo",
                "spec": {
                    "EmptyMap": {},
                    "NonEmptyMap": {"test-key": TRAP},
                    "EmptySlice": [],
                    "NonEmptySlice": [TRAP],
                    "OtherField": TRAP,
                },
            },
            id="empty fields take the shape they had in a reference",
        ),
        pytest.param(
            {"spec": [{"aa": [], "bb": [], "cc": ["x"], "dd": {"ee": [], "ff": []}}]},
            True,
            [
                {"kind": "demo", "spec": [{"aa": {}, "bb": []}]},
                {"kind": "demo", "spec": [{"dd": {"ee": {}}}]},
            ],
            {"spec": [{"aa": {}, "bb": [], "cc": ["x"], "dd": {"ee": {}}}]},
            id="paths inside arrays ignore the index and references combine",
        ),
        pytest.param(
            {"spec": {"replicas": 3, ":colons": [], ".dots": [], ":.colonAndDot": [], ".:dotAndColon": []}},
            True,
            [
                {"spec": {"replicas": 3, ":colons": {}, ":.colonAndDot": {}, ".:dotAndColon": {}}},
                {"spec": {"replicas": 3, ".dots": []}},
            ],
            {"spec": {"replicas": 3, ":colons": {}, ".dots": [], ":.colonAndDot": {}, ".:dotAndColon": {}}},
            id="keys with dots and colons are matched exactly",
        ),
    ],
)
def test_fix_empty_tables(result: Any, expect_object: bool, references: list[Any], expected: Any) -> None:
    assert fix_empty_tables(result, expect_object=expect_object, references=references) == expected


def test_empty_paths_skip_array_indices() -> None:
    lists, objects = empty_paths([{"spec": [{"aa": {}, "bb": [], "cc": ["x"], "dd": {"ee": {}}}]}])
    assert lists == {("spec", "bb")}
    assert objects == {("spec", "aa"), ("spec", "dd", "ee")}
