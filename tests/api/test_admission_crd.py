"""CustomResourceDefinitions admitted as kube-apiserver admits them: defaults, a fresh status, and
every mistake named by its field — a CRD may never redefine a kind fleetkeeper serves itself."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import pytest

from fleetkeeper import errors
from fleetkeeper.api.admission import admit
from fleetkeeper.api.builtin import CustomResourceDefinition

NOW = datetime(2026, 1, 1, tzinfo=UTC)
SCHEMA = {"openAPIV3Schema": {"type": "object"}}


def guestbook() -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "guestbooks.webapp.my.domain"},
        "spec": {"group": "webapp.my.domain", "scope": "Namespaced",
                 "names": {"kind": "Guestbook", "plural": "guestbooks"},
                 "versions": [{"name": "v1", "served": True, "storage": True, "schema": SCHEMA,
                               "subresources": {"status": {}}}]},
        "status": {"acceptedNames": {"kind": "", "plural": ""}, "conditions": [], "storedVersions": []},
    }


def admitted(body: dict[str, Any], old: dict[str, Any] | None = None) -> dict[str, Any]:
    previous = CustomResourceDefinition.from_dict(old) if old is not None else None
    result = admit(CustomResourceDefinition.from_dict(body), previous,
                   operation="CREATE" if old is None else "UPDATE", now=NOW)
    return result.to_dict()


def refused(body: dict[str, Any], old: dict[str, Any] | None = None) -> errors.Invalid:
    with pytest.raises(errors.Invalid) as caught:
        admitted(body, old)
    return caught.value


def test_a_crd_is_defaulted_and_starts_with_only_its_storage_version() -> None:
    crd = admitted(guestbook())
    assert crd["spec"]["names"] == {"kind": "Guestbook", "plural": "guestbooks", "singular": "guestbook",
                                    "listKind": "GuestbookList"}
    assert crd["spec"]["conversion"] == {"strategy": "None"}
    assert crd["status"] == {"acceptedNames": {"plural": "", "kind": ""}, "storedVersions": ["v1"]}


def _set(body: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    node: Any = body
    keys = path.split(".")
    for key in keys[:-1]:
        node = node[int(key)] if isinstance(node, list) else node[key]
    if value is _DROP:
        node.pop(keys[-1])
    elif isinstance(node, list):
        node[int(keys[-1])] = value
    else:
        node[keys[-1]] = value
    return body


_DROP = object()
V1 = {"name": "v1", "served": True, "storage": True, "schema": SCHEMA}


@pytest.mark.parametrize(("path", "value", "field", "words"), [
    ("metadata.name", "guestbook.webapp.my.domain", "metadata.name", 'spec.names.plural+"."+spec.group'),
    ("spec.group", _DROP, "spec.group", "Required value"),
    ("spec.group", "local", "spec.group", "at least one dot"),
    ("spec.names.plural", _DROP, "spec.names.plural", "Required value"),
    ("spec.names.kind", _DROP, "spec.names.kind", "Required value"),
    ("spec.names.kind", "Guest_Book", "spec.names.kind", "DNS-1035"),
    ("spec.names.listKind", "Guestbook", "spec.names.listKind", "may not be the same"),
    ("spec.names.shortNames", ["gb", "G B"], "spec.names.shortNames[1]", "DNS-1035"),
    ("spec.scope", _DROP, "spec.scope", "Required value"),
    ("spec.scope", "Global", "spec.scope", 'supported values: "Namespaced", "Cluster"'),
    ("spec.versions", [], "spec.versions", "at least one version"),
    ("spec.versions", [V1, {**V1, "name": "v2"}], "spec.versions", "exactly one version marked as storage"),
    ("spec.versions", [{**V1, "storage": False}], "spec.versions", "exactly one version marked as storage"),
    ("spec.versions", [V1, {**V1, "storage": False}], "spec.versions[1].name", "Duplicate value"),
    ("spec.versions.0.served", _DROP, "spec.versions[0].served", "Required value"),
    ("spec.versions.0.schema", _DROP, "spec.versions[0].schema.openAPIV3Schema", "schemas are required"),
    ("spec.versions.0.schema", {"openAPIV3Schema": {"type": "string"}},
     "spec.versions[0].schema.openAPIV3Schema.type", "must be object at the root"),
    ("spec.versions.0.subresources", {"scale": {"specReplicasPath": ".status.size"}},
     "spec.versions[0].subresources.scale.specReplicasPath", "under .spec"),
    ("spec.versions.0.additionalPrinterColumns", [{"name": "Size", "type": "int", "jsonPath": ".spec.size"}],
     "spec.versions[0].additionalPrinterColumns[0].type", "supported values"),
    ("spec.versions.0.additionalPrinterColumns", [{"name": "Size", "type": "integer"}],
     "spec.versions[0].additionalPrinterColumns[0].jsonPath", "Required value"),
], ids=["name not plural.group", "no group", "group without a dot", "no plural", "no kind",
        "kind not a label", "listKind equals kind", "bad short name", "no scope", "unknown scope",
        "no versions", "two storage versions", "no storage version", "duplicate version", "served missing",
        "no schema", "schema not an object", "scale path outside spec", "unknown column type",
        "column without a path"])
def test_a_mistake_is_refused_naming_its_field(path: str, value: Any, field: str, words: str) -> None:
    problem = refused(_set(guestbook(), path, value))
    causes = {cause.field: cause.message for cause in problem.causes}
    assert field in causes, problem.message
    assert words in causes[field], causes[field]


@pytest.mark.parametrize(("group", "kind", "plural", "field"), [
    ("apps", "Deployment", "deployments", "spec.names.kind"),
    ("policy.karmada.io", "PropagationPolicy", "propagationpolicies", "spec.names.kind"),
    ("apps", "Rollout", "deployments", "spec.names.plural"),
], ids=["Deployment.apps", "a Karmada kind", "a built-in plural"])
def test_a_crd_redefining_a_built_in_kind_is_refused(group: str, kind: str, plural: str, field: str) -> None:
    body = guestbook()
    body["metadata"]["name"] = f"{plural}.{group}"
    body["spec"].update(group=group, names={"kind": kind, "plural": plural})
    problem = refused(body)
    causes = {cause.field: cause.message for cause in problem.causes}
    assert "built-in" in causes[field] and group in causes[field]


def test_an_update_keeps_the_scope_and_every_stored_version() -> None:
    stored = admitted(guestbook())
    moved = _set(copy.deepcopy(stored), "spec.scope", "Cluster")
    assert {c.field for c in refused(moved, stored).causes} == {"spec.scope"}
    renamed = _set(copy.deepcopy(stored), "spec.versions", [{**V1, "name": "v2"}])
    assert {c.field for c in refused(renamed, stored).causes} == {"status.storedVersions[0]"}
    added = _set(copy.deepcopy(stored), "spec.versions", [{**V1, "storage": False}, {**V1, "name": "v2"}])
    assert [v["name"] for v in admitted(added, stored)["spec"]["versions"]] == ["v1", "v2"]
