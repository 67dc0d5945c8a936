"""Secrets are defaulted as Kubernetes defaults them: no type is ``Opaque``."""

from __future__ import annotations

from datetime import UTC, datetime

from fleetkeeper.api.admission import admit
from fleetkeeper.api.builtin import Secret

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
