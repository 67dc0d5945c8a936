"""Built-in kinds defaulted as Kubernetes defaults them: a Secret without a type is ``Opaque``,
a new Namespace is ``Active``."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from fleetkeeper import errors
from fleetkeeper.api.admission import admit
from fleetkeeper.api.builtin import Secret
from fleetkeeper.api.core import Namespace

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def secret(**fields: object) -> dict[str, object]:
    meta = {"name": "s", "namespace": "d"}
    sent = Secret.from_dict({"apiVersion": "v1", "kind": "Secret", "metadata": meta, **fields})
    before = sent.to_dict()
    admitted = admit(sent, None, operation="CREATE", now=NOW).to_dict()
    assert sent.to_dict() == before, "admission changed the object it was given"
    return admitted


def test_a_secret_without_a_type_is_opaque() -> None:
    assert secret()["type"] == "Opaque"
    assert secret(type="")["type"] == "Opaque"


def test_a_secrets_type_is_kept() -> None:
    assert secret(type="kubernetes.io/tls")["type"] == "kubernetes.io/tls"


def test_a_new_namespace_is_active_and_an_update_keeps_what_it_says() -> None:
    created = admit(Namespace.from_dict({"metadata": {"name": "prod"}}), None, operation="CREATE", now=NOW)
    assert created.status.phase == "Active"
    going = Namespace.from_dict({"metadata": {"name": "prod"}, "status": {"phase": "Terminating"}})
    assert admit(going, created, operation="UPDATE", now=NOW).status.phase == "Terminating"


@pytest.mark.parametrize(("given", "kept"), [
    (None, ["kubernetes"]),
    (["example.com/hold"], ["example.com/hold", "kubernetes"]),
    (["kubernetes", "example.com/hold"], ["kubernetes", "example.com/hold"]),
], ids=["none: kubernetes", "others first, then kubernetes", "kubernetes already there"])
def test_a_new_namespace_keeps_its_finalizers_and_gets_kubernetes_s(given: list[str] | None,
                                                                     kept: list[str]) -> None:
    body = {"metadata": {"name": "prod"}, "spec": {"finalizers": given}, "status": {"phase": "Terminating"}}
    created = admit(Namespace.from_dict(body), None, operation="CREATE", now=NOW)
    assert created.spec.finalizers == kept
    assert created.status.phase == "Active", "a namespace is created Active, whatever it says"


def test_a_new_namespace_s_finalizers_are_qualified_names() -> None:
    body = {"metadata": {"name": "prod"}, "spec": {"finalizers": ["ok.example/x", "not ok!"]}}
    with pytest.raises(errors.Invalid) as refused:
        admit(Namespace.from_dict(body), None, operation="CREATE", now=NOW)
    assert [cause.field for cause in refused.value.causes] == ["spec.finalizers[1]"]


def test_every_namespace_is_labelled_with_its_name_whatever_it_says() -> None:
    created = admit(Namespace.from_dict({"metadata": {"name": "prod", "labels": {"team": "a"}}}), None,
                    operation="CREATE", now=NOW)
    assert created.metadata.labels == {"team": "a", "kubernetes.io/metadata.name": "prod"}
    forged = Namespace.from_dict({"metadata": {"name": "prod",
                                               "labels": {"kubernetes.io/metadata.name": "dev"}}})
    updated = admit(forged, created, operation="UPDATE", now=NOW)
    assert updated.metadata.labels == {"kubernetes.io/metadata.name": "prod"}
