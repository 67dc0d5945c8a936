"""What a simulated cluster serves: its API resources and their scope, for its status.

A fresh cluster serves what a Kubernetes v1.31 API server serves
(:data:`fleetkeeper.api.kuberesources.RESOURCES`, the table the API server serving a member
uses for its discovery too). Two things widen it, so propagating any kind works as it would
on a cluster that has the right CRDs installed:

* applying a ``CustomResourceDefinition`` serves the kind it defines (every served
  version, its plural and scope);
* applying an object of a kind nobody declared still succeeds (the simulation is lenient
  rather than answering "no matches for kind"), and the kind is served from then on —
  namespaced when the object had a namespace.

``api_enablements()`` renders what ``Cluster.status.apiEnablements`` holds:
groups sorted by groupVersion, resources sorted by name.
"""

from __future__ import annotations

from typing import Any

from fleetkeeper.api.kuberesources import RESOURCES, KubeResource
from fleetkeeper.api.meta import default_plural


class ServedResources:
    """The served resources of one cluster (Kubernetes' own plus what was added)."""

    def __init__(self) -> None:
        self._served: dict[tuple[str, str], KubeResource] = {}
        self._scope: dict[tuple[str, str], bool] = {}  # (group, kind) → namespaced
        for resource in RESOURCES:
            self._add(resource)

    def _add(self, resource: KubeResource) -> None:
        self._served[(resource.group_version, resource.kind)] = resource
        self._scope.setdefault((resource.group, resource.kind), resource.namespaced)

    def namespaced(self, group: str, kind: str, namespace: str) -> bool:
        """Whether objects of a kind live in namespaces (unknown kinds: as the object says)."""
        known = self._scope.get((group, kind))
        return bool(namespace) if known is None else known

    def observe(self, api_version: str, kind: str, namespaced: bool) -> None:
        """Serve a kind an object was just stored for (no-op when already served)."""
        if (api_version, kind) not in self._served:
            self._add(KubeResource(api_version, kind, default_plural(kind), namespaced))

    def serve_crd(self, crd: dict[str, Any]) -> None:
        """Serve what a ``CustomResourceDefinition`` defines."""
        spec = crd.get("spec") or {}
        names = spec.get("names") or {}
        group, kind = str(spec.get("group") or ""), str(names.get("kind") or "")
        if not group or not kind:
            return
        plural = str(names.get("plural") or default_plural(kind))
        namespaced = spec.get("scope", "Namespaced") != "Cluster"
        for version in spec.get("versions") or []:
            if isinstance(version, dict) and version.get("served", True) and version.get("name"):
                self._add(KubeResource(f"{group}/{version['name']}", kind, plural, namespaced))

    def api_enablements(self) -> list[dict[str, Any]]:
        """``[{groupVersion, resources: [{name, kind}]}]`` sorted as Cluster status wants."""
        by_gv: dict[str, list[KubeResource]] = {}
        for resource in self._served.values():
            by_gv.setdefault(resource.group_version, []).append(resource)
        return [
            {"groupVersion": gv,
             "resources": [{"name": r.plural, "kind": r.kind}
                           for r in sorted(by_gv[gv], key=lambda r: r.plural)]}
            for gv in sorted(by_gv)
        ]


__all__ = ["ServedResources"]
