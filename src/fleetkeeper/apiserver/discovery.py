"""API discovery: which groups, versions and resources this server serves.

Two shapes, both derived from the scheme (:data:`fleetkeeper.api.scheme.SCHEME`):

* **legacy** — ``GET /api`` (``APIVersions``), ``GET /apis`` (``APIGroupList``) and one
  ``GET /apis/{group}/{version}`` (``APIResourceList``) per group-version;
* **aggregated** (``apidiscovery.k8s.io/v2`` ``APIGroupDiscoveryList``) — everything in
  two answers, sent when the client's ``Accept`` asks for it. kubectl uses the
  aggregated form only when *both* ``/api`` and ``/apis`` answer with it, so both do.

``/api`` lists ``v1`` only when core kinds are registered: kubectl treats an empty
``/api/v1`` as an error. Versions of a group are ordered the Kubernetes way (GA before
beta before alpha, higher numbers first); the first is the preferred version.

The scheme changes while the server runs (a CustomResourceDefinition adds or removes
kinds), so the documents are rebuilt whenever :attr:`Scheme.generation` moved. The
aggregated documents carry an ``ETag`` (a hash of their content), as kube-apiserver's
do: a client's HTTP cache revalidates with ``If-None-Match`` and gets ``304`` while
nothing changed, the new document as soon as a kind was added or removed.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from typing import Any

import orjson

from fleetkeeper.api.crd import definition
from fleetkeeper.api.scheme import ResourceInfo, Scheme

#: (group, kind) of the templates with a ``/scale`` subresource (``autoscaling/v1`` Scale)
SCALABLE = frozenset({("apps", "Deployment"), ("apps", "StatefulSet"), ("apps", "ReplicaSet")})
SCALE_KIND = {"group": "autoscaling", "version": "v1", "kind": "Scale"}
VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
STATUS_VERBS = ["get", "patch", "update"]
AGGREGATED_CONTENT_TYPE = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def version_priority(version: str) -> tuple[int, int, int, str]:
    """Sort key: smaller is preferred (v2 < v1 < v1beta2 < v1beta1 < v1alpha1 < other)."""
    match = _VERSION.match(version)
    if not match:
        return (3, 0, 0, version)
    major, level, minor = match.groups()
    rank = {None: 0, "beta": 1, "alpha": 2}[level]
    return (rank, -int(major), -int(minor or 0), version)


def has_scale(info: ResourceInfo) -> bool:
    """Whether a kind has a ``/scale`` subresource (the scalable workloads, CRDs that declare one)."""
    if (info.group, info.kind) in SCALABLE:
        return True
    custom = definition(info)
    version = custom.version(info.version) if custom is not None else None
    return version is not None and version.scale is not None


def wants_aggregated(accept: str | None) -> bool:
    """Whether an ``Accept`` header asks for aggregated discovery."""
    for part in (accept or "").split(","):
        params = {p.strip() for p in part.split(";")[1:]}
        if "as=APIGroupDiscoveryList" in params and "g=apidiscovery.k8s.io" in params:
            return True
    return False


class Discovery:
    """Discovery documents for one scheme, rebuilt when the scheme changes."""

    def __init__(self, scheme: Scheme) -> None:
        self._scheme = scheme
        self._generation = -1
        self._group_map: dict[str, dict[str, list[ResourceInfo]]] = {}
        self._documents: dict[bool, tuple[bytes, str]] = {}

    @property
    def _groups(self) -> dict[str, dict[str, list[ResourceInfo]]]:
        return self._refresh()

    def _refresh(self) -> dict[str, dict[str, list[ResourceInfo]]]:
        """The served kinds by group and version, rebuilt when the scheme changed since last time."""
        if self._generation != self._scheme.generation:
            self._generation = self._scheme.generation
            groups: dict[str, dict[str, list[ResourceInfo]]] = defaultdict(lambda: defaultdict(list))
            for info in self._scheme.infos():
                groups[info.group][info.version].append(info)
            self._group_map = {
                group: {v: sorted(infos, key=lambda i: i.plural)
                        for v, infos in sorted(versions.items(), key=lambda kv: version_priority(kv[0]))}
                for group, versions in sorted(groups.items())
            }
            self._documents = {}
        return self._group_map

    # ------------------------------------------------------------------ legacy
    def api_versions(self) -> dict[str, Any]:
        versions = list(self._groups.get("", {}))
        return {"kind": "APIVersions", "apiVersion": "v1", "versions": versions,
                "serverAddressByClientCIDRs": []}

    def group_list(self) -> dict[str, Any]:
        return {"kind": "APIGroupList", "apiVersion": "v1",
                "groups": [self._group(name) for name in self._groups if name]}

    def group(self, name: str) -> dict[str, Any] | None:
        if not name or name not in self._groups:
            return None
        return {"kind": "APIGroup", "apiVersion": "v1", **self._group(name)}

    def _group(self, name: str) -> dict[str, Any]:
        versions = [{"groupVersion": f"{name}/{v}", "version": v} for v in self._groups[name]]
        return {"name": name, "versions": versions, "preferredVersion": versions[0]}

    def resource_list(self, group: str, version: str) -> dict[str, Any] | None:
        infos = self._groups.get(group, {}).get(version)
        if infos is None:
            return None
        resources: list[dict[str, Any]] = []
        for info in infos:
            entry: dict[str, Any] = {
                "name": info.plural, "singularName": info.singular, "namespaced": info.namespaced,
                "kind": info.kind, "verbs": VERBS,
            }
            if info.short_names:
                entry["shortNames"] = list(info.short_names)
            if info.categories:
                entry["categories"] = list(info.categories)
            resources.append(entry)
            if info.has_status:
                resources.append({"name": f"{info.plural}/status", "singularName": "",
                                  "namespaced": info.namespaced, "kind": info.kind, "verbs": STATUS_VERBS})
            if has_scale(info):
                resources.append({"name": f"{info.plural}/scale", "singularName": "",
                                  "namespaced": info.namespaced, **SCALE_KIND, "verbs": STATUS_VERBS})
            if (info.group, info.kind) == ("", "Namespace"):
                resources.append({"name": "namespaces/finalize", "singularName": "", "namespaced": False,
                                  "kind": "Namespace", "verbs": ["update"]})
        group_version = f"{group}/{version}" if group else version
        return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version,
                "resources": resources}

    # ------------------------------------------------------------------ aggregated
    def aggregated_document(self, *, core: bool) -> tuple[bytes, str]:
        """:meth:`aggregated` as JSON bytes, and its ETag (cached until the scheme changes)."""
        self._refresh()  # a changed scheme forgets the documents
        found = self._documents.get(core)
        if found is None:
            body = orjson.dumps(self.aggregated(core=core))
            found = self._documents[core] = (body, hashlib.sha256(body).hexdigest()[:32].upper())
        return found

    def aggregated(self, *, core: bool) -> dict[str, Any]:
        """``APIGroupDiscoveryList`` of the core group (``/api``) or of the named groups (``/apis``)."""
        names = [""] if core else [n for n in self._groups if n]
        items = [self._aggregated_group(n) for n in names if n in self._groups]
        return {"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2",
                "metadata": {}, "items": items}

    def _aggregated_group(self, name: str) -> dict[str, Any]:
        versions = []
        for version, infos in self._groups[name].items():
            versions.append({"version": version, "freshness": "Current",
                             "resources": [self._aggregated_resource(i) for i in infos]})
        return {"metadata": {"name": name, "creationTimestamp": None}, "versions": versions}

    @staticmethod
    def _aggregated_resource(info: ResourceInfo) -> dict[str, Any]:
        kind = {"group": info.group, "version": info.version, "kind": info.kind}
        entry: dict[str, Any] = {
            "resource": info.plural, "responseKind": kind,
            "scope": "Namespaced" if info.namespaced else "Cluster",
            "singularResource": info.singular, "verbs": VERBS,
        }
        if info.short_names:
            entry["shortNames"] = list(info.short_names)
        if info.categories:
            entry["categories"] = list(info.categories)
        subresources = []
        if info.has_status:
            subresources.append({"subresource": "status", "responseKind": kind, "verbs": STATUS_VERBS})
        if has_scale(info):
            subresources.append({"subresource": "scale", "responseKind": SCALE_KIND, "verbs": STATUS_VERBS})
        if (info.group, info.kind) == ("", "Namespace"):
            subresources.append({"subresource": "finalize", "responseKind": kind, "verbs": ["update"]})
        if subresources:
            entry["subresources"] = subresources
        return entry

    def group_versions(self) -> list[tuple[str, str]]:
        """Every served (group, version)."""
        return [(g, v) for g, versions in self._groups.items() for v in versions]


def version_info(*, minor: int = 37, fleetkeeper_version: str = "0.1.0") -> dict[str, str]:
    """``GET /version``: the Kubernetes version we are compatible with (kubectl warns on skew)."""
    return {
        "major": "1", "minor": str(minor), "gitVersion": f"v1.{minor}.0-fleetkeeper.{fleetkeeper_version}",
        "gitCommit": "", "gitTreeState": "clean", "buildDate": "", "goVersion": "", "compiler": "cpython",
        "platform": "linux/amd64",
    }


__all__ = [
    "AGGREGATED_CONTENT_TYPE", "SCALABLE", "SCALE_KIND", "VERBS", "Discovery", "has_scale", "version_info",
    "version_priority", "wants_aggregated",
]
