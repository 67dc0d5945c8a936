"""CustomResourceDefinitions for the API server tests: Karmada's guestbook sample (namespaced, a
``status`` subresource) and a cluster-scoped kind with a ``scale`` subresource and printer columns."""

from __future__ import annotations

from typing import Any

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
GUESTBOOKS = "/apis/webapp.my.domain/v1/namespaces/default/guestbooks"
CLUSTER_WIDE = "/apis/infra.test.io/v1/racks"


def guestbook_crd() -> dict[str, Any]:
    """``samples/guestbook/guestbooks-crd.yaml`` of Karmada, as kubectl sends it."""
    spec_schema = {"type": "object", "required": ["configMapName", "size"], "properties": {
        "alias": {"type": "string", "enum": ["Phone", "Address", "Name"]},
        "configMapName": {"type": "string", "description": "Name of the ConfigMap for GuestbookSpec's "
                          "configuration", "maxLength": 15, "minLength": 1},
        "size": {"type": "integer", "format": "int32", "description": "Quantity of instances",
                 "minimum": 1, "maximum": 10}}}
    status_schema = {"type": "object", "properties": {
        "active": {"type": "string"}, "standby": {"type": "array", "items": {"type": "string"}}}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "guestbooks.webapp.my.domain", "creationTimestamp": None,
                     "annotations": {"controller-gen.kubebuilder.io/version": "v0.8.0"}},
        "spec": {
            "group": "webapp.my.domain", "scope": "Namespaced",
            "names": {"kind": "Guestbook", "listKind": "GuestbookList", "plural": "guestbooks",
                      "singular": "guestbook"},
            "versions": [{
                "name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {
                    "type": "object", "description": "Guestbook is the Schema for the guestbooks API",
                    "properties": {"apiVersion": {"type": "string"}, "kind": {"type": "string"},
                                   "metadata": {"type": "object"}, "spec": spec_schema,
                                   "status": status_schema}}},
            }],
        },
        "status": {"acceptedNames": {"kind": "", "plural": ""}, "conditions": [], "storedVersions": []},
    }


def guestbook(name: str, size: int = 2) -> dict[str, Any]:
    return {"apiVersion": "webapp.my.domain/v1", "kind": "Guestbook", "metadata": {"name": name},
            "spec": {"size": size, "configMapName": "test", "alias": "Name"}}


def rack_crd() -> dict[str, Any]:
    """A cluster-scoped kind with short names, a category, printer columns and ``/scale``."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "racks.infra.test.io"},
        "spec": {
            "group": "infra.test.io", "scope": "Cluster",
            "names": {"kind": "Rack", "plural": "racks", "shortNames": ["rk"], "categories": ["infra"]},
            "versions": [{
                "name": "v1", "served": True, "storage": True,
                "schema": {"openAPIV3Schema": {"type": "object",
                                               "x-kubernetes-preserve-unknown-fields": True}},
                "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.units",
                                                         "statusReplicasPath": ".status.units",
                                                         "labelSelectorPath": ".status.selector"}},
                "additionalPrinterColumns": [
                    {"name": "Units", "type": "integer", "jsonPath": ".spec.units"},
                    {"name": "Room", "type": "string", "jsonPath": ".spec.room", "priority": 1},
                    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
                ],
            }],
        },
    }


def rack(name: str, units: int = 4) -> dict[str, Any]:
    return {"apiVersion": "infra.test.io/v1", "kind": "Rack", "metadata": {"name": name},
            "spec": {"units": units, "room": "b2"}}
