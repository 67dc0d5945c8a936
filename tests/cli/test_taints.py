"""Taint arguments and edits of ``fleetkeeper taint``/``cordon`` (pure rules, as tables)."""

from __future__ import annotations

import pytest

from fleetkeeper.api.core import Taint
from fleetkeeper.cli.clusters import TaintEdit, cluster_name_problem, edit_taints, parse_taint


@pytest.mark.parametrize(("spec", "expected"), [
    ("dedicated=gpu:NoSchedule", TaintEdit("dedicated", "NoSchedule", "gpu")),
    ("maintenance:NoExecute", TaintEdit("maintenance", "NoExecute", None)),
    ("example.com/zone=a:NoSchedule", TaintEdit("example.com/zone", "NoSchedule", "a")),
    ("maintenance:NoExecute-", TaintEdit("maintenance", "NoExecute", remove=True)),
    ("maintenance-", TaintEdit("maintenance", None, remove=True)),
], ids=["key=value:Effect adds", "key:Effect adds without a value", "a prefixed key",
        "key:Effect- removes one effect", "key- removes every effect"])
def test_taint_arguments_parse(spec: str, expected: TaintEdit) -> None:
    assert parse_taint(spec) == expected


@pytest.mark.parametrize(("spec", "words"), [
    ("dedicated=gpu", "an effect is required"),
    ("dedicated=gpu:PreferNoSchedule", "effect must be NoSchedule or NoExecute"),
    ("=gpu:NoSchedule", "expected key[=value]:Effect"),
    ("bad key:NoSchedule", "invalid key"),
    ("k=bad value:NoSchedule", "invalid value"),
    ("k=v:NoSchedule-", "without a value"),
], ids=["no effect", "an effect a Cluster does not take", "no key", "a key with a space",
        "a value with a space", "a removal with a value"])
def test_bad_taint_arguments_say_what_is_wrong(spec: str, words: str) -> None:
    with pytest.raises(ValueError, match=words.replace("[", r"\[")):
        parse_taint(spec)


def _taint(key: str, effect: str, value: str | None = None) -> Taint:
    return Taint.from_dict({"key": key, "effect": effect, "value": value})


NOT_READY = _taint("cluster.karmada.io/not-ready", "NoSchedule")


@pytest.mark.parametrize(("before", "edits", "overwrite", "after", "changes"), [
    ([NOT_READY], [TaintEdit("a", "NoExecute", "1")], False, [NOT_READY, _taint("a", "NoExecute", "1")],
     ["added a=1:NoExecute"]),
    ([_taint("a", "NoExecute", "1")], [TaintEdit("a", "NoExecute", "1")], False,
     [_taint("a", "NoExecute", "1")], []),
    ([_taint("a", "NoExecute", "1")], [TaintEdit("a", "NoExecute", "2")], True,
     [_taint("a", "NoExecute", "2")], ["added a=2:NoExecute"]),
    ([_taint("a", "NoExecute"), _taint("a", "NoSchedule"), NOT_READY], [TaintEdit("a", None, remove=True)],
     False, [NOT_READY], ["removed a"]),
    ([_taint("a", "NoExecute"), _taint("a", "NoSchedule")], [TaintEdit("a", "NoSchedule", remove=True)],
     False, [_taint("a", "NoExecute")], ["removed a:NoSchedule"]),
], ids=["an addition keeps the other taints", "the same taint again changes nothing",
        "--overwrite changes the value", "key- removes every effect of the key",
        "key:Effect- removes that effect only"])
def test_edits(before: list[Taint], edits: list[TaintEdit], overwrite: bool, after: list[Taint],
               changes: list[str]) -> None:
    assert edit_taints(before, edits, overwrite=overwrite) == (after, changes)


@pytest.mark.parametrize(("before", "edit", "words"), [
    ([_taint("a", "NoExecute", "1")], TaintEdit("a", "NoExecute", "2"), "pass --overwrite"),
    ([], TaintEdit("a", None, remove=True), "not found"),
], ids=["a new value needs --overwrite", "removing an absent taint"])
def test_refused_edits(before: list[Taint], edit: TaintEdit, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        edit_taints(before, [edit], overwrite=False)


@pytest.mark.parametrize(("name", "problem"), [
    ("member1", None), ("edge-eu-1", None), ("", "must not be empty"), ("Member1", "must consist of"),
    ("a" * 49, "no more than 48"), ("-edge", "must consist of"),
], ids=["a plain name", "with dashes", "empty", "upper case", "too long for karmada-es-", "a leading dash"])
def test_cluster_names(name: str, problem: str | None) -> None:
    found = cluster_name_problem(name)
    assert (found is None) if problem is None else (found is not None and problem in found)
