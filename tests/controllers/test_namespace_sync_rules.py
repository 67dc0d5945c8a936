"""Which namespaces are propagated, and the Work that carries one (pure rules)."""

from __future__ import annotations

import pytest

from fleetkeeper.api import constants
from fleetkeeper.api.core import Namespace
from fleetkeeper.api.meta import ObjectMeta, OwnerReference
from fleetkeeper.api.work import Work
from fleetkeeper.controllers import namespace_sync_rules as rules
from fleetkeeper.options import namespace_patterns

DEFAULT = namespace_patterns("kube-.*")


@pytest.mark.parametrize(("name", "synced"), [
    pytest.param("prod", True, id="a user namespace is propagated"),
    pytest.param("default", False, id="default is not"),
    pytest.param("karmada-system", False, id="karmada-system is not"),
    pytest.param("karmada-cluster", False, id="karmada-cluster is not"),
    pytest.param("karmada-es-member1", False, id="an execution namespace is not"),
    pytest.param("kube-system", False, id="a kube- namespace is skipped by default"),
    pytest.param("my-kube-tools", True, id="a pattern matches the whole name, not a part of it"),
])
def test_which_namespaces_are_propagated(name: str, synced: bool) -> None:
    assert rules.is_synced(name, DEFAULT) is synced


@pytest.mark.parametrize(("value", "opted_out"), [
    pytest.param("true", True, id="the label true opts out"),
    pytest.param("True", True, id="in any case"),
    pytest.param("false", False, id="false does not"),
    pytest.param(None, False, id="nor no label"),
])
def test_the_opt_out_label(value: str | None, opted_out: bool) -> None:
    labels = {} if value is None else {constants.NAMESPACE_SKIP_AUTO_PROPAGATION_LABEL: value}
    assert rules.opted_out(Namespace(metadata=ObjectMeta(name="n", labels=labels))) is opted_out


def test_the_work_of_a_namespace_is_owned_by_it_and_carries_it_marked_as_karmadas() -> None:
    namespace = Namespace(metadata=ObjectMeta(name="prod", uid="u1", labels={"team": "shop"},
                                              annotations={"note": "x"}))
    work = rules.desired_work(namespace, "member1", None)
    assert (work.namespace, work.name) == ("karmada-es-member1", constants.work_name("Namespace", "prod", ""))
    assert work.metadata.finalizers == [constants.EXECUTION_CONTROLLER_FINALIZER]
    assert rules.owned_by(work) == "prod" and rules.owned_by(work, namespace) == "prod"
    renamed = namespace.model_copy(update={"metadata": namespace.metadata.model_copy(update={"uid": "u2"})})
    assert rules.owned_by(work, renamed) is None, "a namespace created again is another owner"
    [manifest] = work.spec.workload.manifests or []
    assert manifest["metadata"]["labels"] == {"team": "shop", constants.MANAGED_BY_KARMADA_LABEL: "true"}
    assert manifest["metadata"]["annotations"] == {
        "note": "x", constants.RESOURCE_TEMPLATE_UID_ANNOTATION: "u1",
        constants.WORK_NAME_ANNOTATION: work.name, constants.WORK_NAMESPACE_ANNOTATION: "karmada-es-member1"}
    assert not rules.differs(work, rules.desired_work(namespace, "member1", work))


def test_a_work_of_the_same_name_that_a_namespace_does_not_control_is_not_its_own() -> None:
    policy_made = Work(metadata=ObjectMeta(name="prod-x", namespace="karmada-es-member1", owner_references=[
        OwnerReference(api_version="v1", kind="Namespace", name="prod", uid="u1", controller=False)]))
    assert rules.owned_by(policy_made) is None


@pytest.mark.parametrize(("value", "problem"), [
    pytest.param("kube-(", "is not a regular expression", id="a pattern that does not compile is refused"),
    pytest.param("a" * 254, "at most 253 characters", id="a pattern longer than a name is refused"),
    pytest.param(",".join(["x"] * 101), "at most 100 patterns", id="more than 100 patterns are refused"),
])
def test_bad_skipped_namespace_patterns_are_refused_naming_the_rule(value: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        namespace_patterns(value)
