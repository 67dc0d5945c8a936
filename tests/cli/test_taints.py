"""Taint arguments and edits of ``fleetkeeper taint``/``cordon`` (pure rules, as tables)."""

from __future__ import annotations

import pytest

from fleetkeeper.api.core import Taint
from fleetkeeper.cli.clusters import cluster_name_problem
from fleetkeeper.cli.taints import TaintEdit, edit_taints, parse_taint, parse_taint_args, taint_operation


@pytest.mark.parametrize(("spec", "expected"), [
    ("dedicated=gpu:NoSchedule", TaintEdit("dedicated", "NoSchedule", "gpu")),
    ("maintenance:NoExecute", TaintEdit("maintenance", "NoExecute", None)),
    ("example.com/zone=a:NoSchedule", TaintEdit("example.com/zone", "NoSchedule", "a")),
    ("maintenance:NoExecute-", TaintEdit("maintenance", "NoExecute", remove=True)),
    ("maintenance-", TaintEdit("maintenance", None, remove=True)),
    ("k=v:NoSchedule-", TaintEdit("k", "NoSchedule", remove=True)),
], ids=["key=value:Effect adds", "key:Effect adds without a value", "a prefixed key",
        "key:Effect- removes one effect", "key- removes every effect", "a removal ignores a value"])
def test_taint_arguments_parse(spec: str, expected: TaintEdit) -> None:
    assert parse_taint(spec) == expected


@pytest.mark.parametrize(("spec", "message"), [
    ("dedicated=gpu", "invalid taint spec: dedicated=gpu, "),
    ("dedicated=gpu:PreferNoSchedule", "invalid taint effect: PreferNoSchedule, unsupported taint effect "
                                       "(a Cluster takes NoSchedule or NoExecute)"),
    ("=gpu:NoSchedule", "invalid taint spec: =gpu:NoSchedule, "),
    ("bad key:NoSchedule", "invalid taint spec: bad key:NoSchedule, "),
    ("k=bad value:NoSchedule", "invalid taint spec: k=bad value:NoSchedule, "),
    ("a:b:NoSchedule", "invalid taint spec: a:b:NoSchedule"),
    ("a=b=c:NoSchedule", "invalid taint spec: a=b=c:NoSchedule"),
], ids=["no effect", "an effect a Cluster does not take", "no key", "a key with a space",
        "a value with a space", "two colons", "two equals signs"])
def test_bad_taint_arguments_are_refused_in_kubectl_words(spec: str, message: str) -> None:
    with pytest.raises(ValueError) as refused:
        parse_taint(spec)
    assert str(refused.value).startswith(message)


@pytest.mark.parametrize(("args", "names", "edits"), [
    (["member1", "dedicated=special:NoSchedule"], ["member1"],
     [TaintEdit("dedicated", "NoSchedule", "special")]),
    (["clusters", "member1", "dedicated=special:NoSchedule"], ["member1"],
     [TaintEdit("dedicated", "NoSchedule", "special")]),
    (["cluster", "m1", "m2", "k-", "j:NoExecute-"], ["m1", "m2"],
     [TaintEdit("k", None, remove=True), TaintEdit("j", "NoExecute", remove=True)]),
    (["cluster/member1", "k:NoExecute"], ["member1"], [TaintEdit("k", "NoExecute")]),
    (["clusters", "k:NoExecute"], ["clusters"], [TaintEdit("k", "NoExecute")]),
], ids=["fleetkeeper's NAME SPEC", "karmadactl's clusters NAME SPEC", "several clusters",
        "cluster/NAME", "a cluster named clusters"])
def test_taint_command_arguments(args: list[str], names: list[str], edits: list[TaintEdit]) -> None:
    assert parse_taint_args(args) == (names, edits)


@pytest.mark.parametrize(("args", "message"), [
    (["clusters", "member1"], "at least one taint update is required"),
    (["clusters", "m1", "k:NoSchedule", "m2"], "all resources must be specified before taint changes: m2"),
    (["nodes", "n1", "k:NoSchedule"],
     'invalid resource type nodes, only ["cluster" "clusters"] are supported'),
    (["m1", "k:NoSchedule", "k=v:NoSchedule"],
     "duplicated taints with the same key and effect: k=v:NoSchedule"),
    (["m1", "k:NoSchedule", "k-"],
     'can not both modify and remove the following taint(s) in the same command: {"k":""}'),
], ids=["no taint", "a name after a taint", "another resource type", "the same taint twice",
        "added and removed"])
def test_bad_taint_commands_are_refused_in_kubectl_words(args: list[str], message: str) -> None:
    with pytest.raises(ValueError) as refused:
        parse_taint_args(args)
    assert str(refused.value) == message


def _taint(key: str, effect: str, value: str | None = None) -> Taint:
    return Taint.from_dict({"key": key, "effect": effect, "value": value})


NOT_READY = _taint("cluster.karmada.io/not-ready", "NoSchedule")


@pytest.mark.parametrize(("before", "edits", "overwrite", "after", "changes"), [
    ([NOT_READY], [TaintEdit("a", "NoExecute", "1")], False, [NOT_READY, _taint("a", "NoExecute", "1")],
     ["added a=1:NoExecute"]),
    ([_taint("a", "NoExecute", "1")], [TaintEdit("a", "NoExecute", "1")], True,
     [_taint("a", "NoExecute", "1")], []),
    ([_taint("a", "NoExecute", "1")], [TaintEdit("a", "NoExecute", "2")], True,
     [_taint("a", "NoExecute", "2")], ["added a=2:NoExecute"]),
    ([_taint("a", "NoExecute"), _taint("a", "NoSchedule"), NOT_READY], [TaintEdit("a", None, remove=True)],
     False, [NOT_READY], ["removed a"]),
    ([_taint("a", "NoExecute"), _taint("a", "NoSchedule")], [TaintEdit("a", "NoSchedule", remove=True)],
     False, [_taint("a", "NoExecute")], ["removed a:NoSchedule"]),
], ids=["an addition keeps the other taints", "the same taint again with --overwrite changes nothing",
        "--overwrite changes the value", "key- removes every effect of the key",
        "key:Effect- removes that effect only"])
def test_edits(before: list[Taint], edits: list[TaintEdit], overwrite: bool, after: list[Taint],
               changes: list[str]) -> None:
    assert edit_taints(before, edits, overwrite=overwrite) == (after, changes)


@pytest.mark.parametrize(("before", "edits", "message"), [
    ([_taint("a", "NoExecute", "1")], [TaintEdit("a", "NoExecute", "2")],
     "cluster m1 already has a taint(s) with same effect(s) and --overwrite is false"),
    ([_taint("a", "NoExecute", "1")], [TaintEdit("a", "NoExecute", "1")],
     "cluster m1 already has a taint(s) with same effect(s) and --overwrite is false"),
    ([], [TaintEdit("a", None, remove=True)], 'taint "a" not found'),
    ([], [TaintEdit("a", "NoSchedule", remove=True), TaintEdit("b", None, remove=True)],
     '[taint "a:NoSchedule" not found, taint "b" not found]'),
], ids=["a new value needs --overwrite", "so does the same value", "removing an absent taint",
        "removing two absent taints"])
def test_refused_edits(before: list[Taint], edits: list[TaintEdit], message: str) -> None:
    with pytest.raises(ValueError) as refused:
        edit_taints(before, edits, overwrite=False, cluster="m1")
    assert str(refused.value) == message


@pytest.mark.parametrize(("edits", "overwrite", "word"), [
    ([TaintEdit("a", "NoExecute")], False, "tainted"),
    ([TaintEdit("a", None, remove=True)], False, "untainted"),
    ([TaintEdit("a", "NoExecute"), TaintEdit("b", None, remove=True)], False, "modified"),
    ([TaintEdit("a", "NoExecute")], True, "modified"),
], ids=["an addition", "a removal", "both", "--overwrite"])
def test_the_result_is_named_as_kubectl_names_it(edits: list[TaintEdit], overwrite: bool, word: str) -> None:
    assert taint_operation(edits, overwrite=overwrite) == word


@pytest.mark.parametrize(("name", "problem"), [
    ("member1", None), ("edge-eu-1", None), ("", "must not be empty"), ("Member1", "must consist of"),
    ("a" * 49, "no more than 48"), ("-edge", "must consist of"),
], ids=["a plain name", "with dashes", "empty", "upper case", "too long for karmada-es-", "a leading dash"])
def test_cluster_names(name: str, problem: str | None) -> None:
    found = cluster_name_problem(name)
    assert (found is None) if problem is None else (found is not None and problem in found)
