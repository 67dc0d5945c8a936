"""What every kind's ``metadata`` and ``status`` must be, as kube-apiserver checks them: finalizers
are qualified names (standard or domain-qualified on Kubernetes' own kinds), metadata fields have
their types, and ``status`` is an object."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from fleetkeeper import errors
from fleetkeeper.api import admission
from fleetkeeper.api.builtin import Deployment
from fleetkeeper.api.scheme import SCHEME

NOW = datetime(2026, 1, 1, tzinfo=UTC)
LABELS = {"app": "web"}


def deployment(**meta: Any) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "default", **meta},
            "spec": {"selector": {"matchLabels": LABELS},
                     "template": {"metadata": {"labels": LABELS},
                                  "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}}


def policy(**meta: Any) -> dict[str, Any]:
    return {"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
            "metadata": {"name": "web", "namespace": "default", **meta},
            "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}]}}


def config_map(**meta: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "cfg", "namespace": "default", **meta}}


def admit(doc: dict[str, Any], operation: admission.Operation = "CREATE") -> dict[str, Any]:
    return admission.admit(SCHEME.decode(doc), None, operation=operation, now=NOW).to_dict()  # type: ignore[arg-type]


def refusals(doc: dict[str, Any], operation: admission.Operation = "CREATE") -> dict[str, str]:
    with pytest.raises(errors.Invalid) as refused:
        admit(doc, operation)
    return {c.field: c.message for c in refused.value.causes}


NOT_QUALIFIED = "name part must consist of alphanumeric characters"
BARE = "name is neither a standard finalizer name nor is it fully qualified"


@pytest.mark.parametrize("operation", ["CREATE", "UPDATE"])
@pytest.mark.parametrize(("doc", "field", "message"), [
    pytest.param(deployment(finalizers=["bad finalizer"]), "metadata.finalizers[0]",
                 f'Invalid value: "bad finalizer": {NOT_QUALIFIED}',
                 id="a Deployment's finalizer with a space"),
    pytest.param(policy(finalizers=["example.com/ok", "bad finalizer"]), "metadata.finalizers[1]",
                 NOT_QUALIFIED, id="a PropagationPolicy's finalizer with a space"),
    pytest.param(config_map(finalizers=["example.com/"]), "metadata.finalizers[0]",
                 "name part must be non-empty",
                 id="a prefix without a name"),
    pytest.param(config_map(finalizers=["Bad_Domain/x"]), "metadata.finalizers[0]",
                 "prefix part a lowercase RFC",
                 id="a prefix that is not a DNS subdomain"),
    pytest.param(deployment(finalizers=["cleanup"]), "metadata.finalizers[0]",
                 f'Invalid value: "cleanup": {BARE}',
                 id="a bare name on a Kubernetes kind"),
    pytest.param(config_map(finalizers=["kubernetes", "cleanup"]), "metadata.finalizers[1]", BARE,
                 id="a bare name after a standard one"),
    pytest.param(deployment(finalizers=["orphan", "foregroundDeletion"]), "metadata.finalizers",
                 "finalizer orphan and foregroundDeletion cannot be both set",
                 id="orphan and foreground at once"),
])
def test_finalizers_kubernetes_refuses_are_refused(doc: dict[str, Any], field: str, message: str,
                                                   operation: admission.Operation) -> None:
    found = refusals(doc, operation)
    assert field in found, found
    assert message in found[field]


@pytest.mark.parametrize(("doc", "finalizers"), [
    pytest.param(deployment(finalizers=["example.com/cleanup", "orphan"]), ["example.com/cleanup", "orphan"],
                 id="domain-qualified and standard on a Kubernetes kind"),
    pytest.param(deployment(finalizers=["foregroundDeletion", "kubernetes"]),
                 ["foregroundDeletion", "kubernetes"],
                 id="Kubernetes' standard finalizers"),
    pytest.param(policy(finalizers=["karmada.io/propagation-policy-controller", "cleanup"]),
                 ["karmada.io/propagation-policy-controller", "cleanup"],
                 id="a bare name on a Karmada kind (Kubernetes only warns there)"),
])
def test_finalizers_kubernetes_accepts_are_kept(doc: dict[str, Any], finalizers: list[str]) -> None:
    assert admit(doc)["metadata"]["finalizers"] == finalizers


@pytest.mark.parametrize(("meta", "field", "message"), [
    pytest.param({"labels": {"app": 1}}, "metadata.labels.app", "Invalid value: 1: must be a string",
                 id="a label value that is a number"),
    pytest.param({"annotations": "note"}, "metadata.annotations", 'Invalid value: "note": must be an object',
                 id="annotations that are a string"),
    pytest.param({"finalizers": "example.com/x"}, "metadata.finalizers",
                 'Invalid value: "example.com/x": must be a list', id="finalizers that are a string"),
    pytest.param({"finalizers": [7]}, "metadata.finalizers[0]", "Invalid value: 7: must be a string",
                 id="a finalizer that is a number"),
    pytest.param({"ownerReferences": ["web"]}, "metadata.ownerReferences[0]",
                 'Invalid value: "web": must be an object',
                 id="an owner reference that is a string"),
    pytest.param({"ownerReferences": [{"name": "web"}]}, "metadata.ownerReferences[0].uid", "Required value",
                 id="an owner reference without a uid"),
])
def test_metadata_fields_have_their_types(meta: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(errors.Invalid) as refused:
        SCHEME.decode(deployment(**meta))
    found = {c.field: c.message for c in refused.value.causes}
    assert message in found[field], found


@pytest.mark.parametrize(("status", "shown"), [
    pytest.param("Running", '"Running"', id="a string"),
    pytest.param([{"type": "Ready"}], "list", id="a list"),
    pytest.param(3, "3", id="a number"),
    pytest.param(False, "false", id="a boolean"),
])
def test_a_status_that_is_not_an_object_has_no_wire_form(status: Any, shown: str) -> None:
    """Every write encodes what it stores: a status that is not an object is refused there, naming
    the field, while an object stored that way before can still be read."""
    read = Deployment.from_dict({**deployment(), "status": status})
    with pytest.raises(errors.Invalid) as refused:
        read.to_dict()
    assert [(c.field, c.message) for c in refused.value.causes] == [
        ("status", f"Invalid value: {shown}: must be an object")]
    assert refused.value.kind == "Deployment" and refused.value.name == "web"


@pytest.mark.parametrize("status", [None, {}, {"replicas": 1}], ids=["null", "empty", "an object"])
def test_a_status_that_is_an_object_or_null_is_kept(status: Any) -> None:
    written = Deployment.from_dict({**deployment(), "status": status}).to_dict()
    assert written.get("status") == status


@pytest.mark.parametrize("meta", [
    {"labels": {"bad key!": "x"}},
    {"finalizers": ["cleanup"]},
    {"name": "Web_1"},
    {"namespace": "Not_A_Label"},
])
def test_metadata_alone_is_refused_as_full_admission_refuses_it(meta: dict[str, Any]) -> None:
    doc = deployment(**meta)
    with pytest.raises(errors.Invalid) as full:
        admit(doc)
    with pytest.raises(errors.Invalid) as alone:
        admission.admit_metadata(Deployment.from_dict({**doc, "spec": {"replicas": -1}}))
    assert alone.value.causes == full.value.causes and str(alone.value) == str(full.value)


def test_metadata_alone_ignores_a_cluster_scoped_objects_namespace() -> None:
    role = SCHEME.decode({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                         "metadata": {"name": "reader", "namespace": "Not_A_Label"}})
    admission.admit_metadata(role)
    assert role.metadata.namespace == "Not_A_Label", "the object given is not changed"
    admission.admit_metadata(Deployment.from_dict(deployment()))
