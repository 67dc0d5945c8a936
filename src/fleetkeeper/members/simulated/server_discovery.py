"""Discovery documents of the member API server, rendered from the cluster's served resources.

Clients find out what a server serves, and under which plural and scope, from
``/api``, ``/api/v1``, ``/apis`` and ``/apis/{group}/{version}`` (the *legacy*
discovery every client understands). The simulated cluster already knows what it
serves (:class:`~fleetkeeper.members.simulated.discovery.Discovery`: the built-in
kinds, CRDs applied to it, kinds it was lenient about); :class:`ServedResources`
turns that into the documents and into the ``(groupVersion, plural) → kind`` lookup
the URL router needs. The table is rebuilt when a lookup misses, so a kind the cluster
starts serving (a CRD was applied) is found on the next request.

Resources list the ``status`` (and for scalable workloads ``scale``) subresources as
``deployments/status`` entries, as a real server does; what reads discovery for
``Cluster.status.apiEnablements`` must drop them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fleetkeeper import errors

if TYPE_CHECKING:
    from fleetkeeper.members.simulated.cluster import SimulatedCluster

VERBS = ["create", "delete", "get", "list", "patch", "update", "watch"]
WITH_STATUS = frozenset({
    "CronJob", "DaemonSet", "Deployment", "HorizontalPodAutoscaler", "Job", "Namespace", "Node",
    "PersistentVolume", "PersistentVolumeClaim", "Pod", "ReplicaSet", "ReplicationController", "Service",
    "StatefulSet",
})
#: kubectl's short names (``kubectl get deploy``)
SHORT_NAMES = {
    "CertificateSigningRequest": ["csr"], "ComponentStatus": ["cs"], "ConfigMap": ["cm"], "CronJob": ["cj"],
    "CustomResourceDefinition": ["crd", "crds"], "DaemonSet": ["ds"], "Deployment": ["deploy"],
    "Endpoints": ["ep"], "Event": ["ev"], "HorizontalPodAutoscaler": ["hpa"], "Ingress": ["ing"],
    "LimitRange": ["limits"], "Namespace": ["ns"], "NetworkPolicy": ["netpol"], "Node": ["no"],
    "PersistentVolume": ["pv"], "PersistentVolumeClaim": ["pvc"], "Pod": ["po"],
    "PodDisruptionBudget": ["pdb"], "PriorityClass": ["pc"], "ReplicaSet": ["rs"],
    "ReplicationController": ["rc"], "ResourceQuota": ["quota"], "Service": ["svc"],
    "ServiceAccount": ["sa"], "StatefulSet": ["sts"], "StorageClass": ["sc"],
}
WITH_SCALE = frozenset({"Deployment", "ReplicaSet", "ReplicationController", "StatefulSet"})
_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


@dataclass(frozen=True, slots=True)
class Served:
    """One served resource: where it lives in URLs and what it is."""

    group_version: str
    kind: str
    plural: str
    namespaced: bool

    @property
    def group(self) -> str:
        return self.group_version.rpartition("/")[0]


def not_found(served: Served, name: str) -> errors.NotFound:
    """The NotFound a kube-apiserver gives (``deployments.apps "web" not found``)."""
    resource = f"{served.plural}.{served.group}" if served.group else served.plural
    return errors.NotFound(f'{resource} "{name}" not found', name=name, group=served.group,
                           kind=served.plural)


def version_priority(version: str) -> tuple[int, int, int]:
    """Kubernetes' version order: GA before beta before alpha, higher numbers first (sort ascending)."""
    match = _VERSION.match(version)
    if match is None:
        return (3, 0, 0)
    major, stage, minor = int(match.group(1)), match.group(2), int(match.group(3) or 0)
    rank = {None: 0, "beta": 1, "alpha": 2}[stage]
    return (rank, -major, -minor)


def version_info(kubernetes_version: str) -> dict[str, Any]:
    """``/version`` of a server of this Kubernetes version (``v1.31.0``)."""
    numbers = kubernetes_version.lstrip("v").split(".")
    return {
        "major": numbers[0] if numbers else "1",
        "minor": numbers[1] if len(numbers) > 1 else "0",
        "gitVersion": kubernetes_version, "gitCommit": "", "gitTreeState": "clean",
        "buildDate": "2026-01-01T00:00:00Z", "goVersion": "go1.22", "compiler": "gc",
        "platform": "linux/amd64",
    }


class ServedResources:
    """The served resources of one simulated cluster, by URL and by kind."""

    def __init__(self, cluster: SimulatedCluster) -> None:
        self._cluster = cluster
        self._by_plural: dict[tuple[str, str], Served] = {}
        self._by_kind: dict[tuple[str, str], Served] = {}
        self.refresh()

    def refresh(self) -> None:
        """Read what the cluster serves now."""
        discovery = self._cluster.discovery
        by_plural: dict[tuple[str, str], Served] = {}
        for group in discovery.api_enablements():
            gv = group["groupVersion"]
            for resource in group["resources"]:
                kind = resource["kind"]
                namespaced = discovery.namespaced(gv.rpartition("/")[0], kind, "")
                by_plural[(gv, resource["name"])] = Served(gv, kind, resource["name"], namespaced)
        self._by_plural = by_plural
        self._by_kind = {(s.group_version, s.kind): s for s in by_plural.values()}

    def find(self, group_version: str, plural: str) -> Served | None:
        """The resource served at ``…/{group_version}/…/{plural}``."""
        found = self._by_plural.get((group_version, plural))
        if found is None:
            self.refresh()
            found = self._by_plural.get((group_version, plural))
        return found

    def namespaced_plural(self, group_version: str, plural: str) -> bool:
        found = self.find(group_version, plural)
        return found is not None and found.namespaced

    # -- documents -----------------------------------------------------------------------
    def api_versions(self, address: str) -> dict[str, Any]:
        return {"kind": "APIVersions", "versions": ["v1"],
                "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": address}]}

    def _groups(self) -> dict[str, list[str]]:
        groups: dict[str, set[str]] = {}
        for served in self._by_plural.values():
            if served.group:
                groups.setdefault(served.group, set()).add(served.group_version.rpartition("/")[2])
        return {name: sorted(versions, key=version_priority) for name, versions in sorted(groups.items())}

    def group_list(self) -> dict[str, Any]:
        self.refresh()
        return {"kind": "APIGroupList", "apiVersion": "v1",
                "groups": [self._group(name, versions) for name, versions in self._groups().items()]}

    def group(self, name: str) -> dict[str, Any] | None:
        self.refresh()
        versions = self._groups().get(name)
        if versions is None:
            return None
        return {"kind": "APIGroup", "apiVersion": "v1", **self._group(name, versions)}

    @staticmethod
    def _group(name: str, versions: list[str]) -> dict[str, Any]:
        entries = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
        return {"name": name, "versions": entries, "preferredVersion": entries[0]}

    def resource_list(self, group_version: str) -> dict[str, Any] | None:
        """``APIResourceList`` of one groupVersion (None when it is not served)."""
        self.refresh()
        served = sorted((s for s in self._by_plural.values() if s.group_version == group_version),
                        key=lambda s: s.plural)
        if not served:
            return None
        resources: list[dict[str, Any]] = []
        for item in served:
            entry = {"name": item.plural, "singularName": item.kind.lower(), "namespaced": item.namespaced,
                     "kind": item.kind, "verbs": VERBS}
            if item.kind in SHORT_NAMES and (item.group == "" or "." not in item.group
                                             or item.group.endswith(".k8s.io")):
                entry["shortNames"] = SHORT_NAMES[item.kind]
            resources.append(entry)
            subresources = [("status", item.kind)] if item.kind in WITH_STATUS else []
            if item.kind in WITH_SCALE:
                subresources.append(("scale", "Scale"))
            for sub, kind in subresources:
                resources.append({"name": f"{item.plural}/{sub}", "singularName": "", "kind": kind,
                                  "namespaced": item.namespaced, "verbs": ["get", "patch", "update"]})
        return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version,
                "resources": resources}


    # -- OpenAPI (only what kubectl needs to let the server validate) -------------------------
    def openapi_index(self) -> dict[str, Any]:
        """``/openapi/v3``: one document per served groupVersion."""
        self.refresh()
        paths = {}
        for gv in sorted({s.group_version for s in self._by_plural.values()}):
            prefix = "api" if "/" not in gv else "apis"
            url = f"/openapi/v3/{prefix}/{gv}?hash={len(self._by_plural)}"
            paths[f"{prefix}/{gv}"] = {"serverRelativeURL": url}
        return {"paths": paths}

    def openapi_document(self, group_version: str) -> dict[str, Any] | None:
        """A minimal OpenAPI 3 document: per kind, a PATCH carrying its group/version/kind and the
        ``fieldValidation`` parameter — what makes kubectl leave validation to the server."""
        served = [s for s in self._by_plural.values() if s.group_version == group_version]
        if not served:
            return None
        prefix = "/api" if "/" not in group_version else "/apis"
        parameters = [{"name": name, "in": "query", "schema": {"type": "string"}}
                      for name in ("fieldValidation", "dryRun", "fieldManager", "force")]
        paths: dict[str, Any] = {}
        for item in served:
            scope = "/namespaces/{namespace}" if item.namespaced else ""
            gvk = {"group": item.group, "version": group_version.rpartition("/")[2], "kind": item.kind}
            paths[f"{prefix}/{group_version}{scope}/{item.plural}/{{name}}"] = {"patch": {
                "x-kubernetes-group-version-kind": gvk, "parameters": parameters,
                "responses": {"200": {"description": "OK"}}}}
        return {"openapi": "3.0.0", "info": {"title": "fleetkeeper member-sim", "version": "v1"},
                "paths": paths}


__all__ = [
    "SHORT_NAMES", "VERBS", "WITH_SCALE", "WITH_STATUS", "Served", "ServedResources", "not_found",
    "version_info", "version_priority",
]
