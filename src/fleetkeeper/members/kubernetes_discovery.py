"""What a real member cluster serves: plural and scope of a kind, and its API enablements.

The control plane propagates any kind — Deployments, ConfigMaps, a CRD only some
members have — and holds only ``apiVersion`` + ``kind``. A URL needs the *plural* and
the *scope*, which only the member's discovery documents know (``/api/v1``,
``/apis/{group}/{version}``). :class:`ApiDiscovery` fetches the document of a
groupVersion the first time one of its kinds is used and keeps it; a kind missing from
a kept document is looked up again, at most once per :data:`REFRESH` seconds of the
member's clock (a CRD may have been installed since), so an unserved kind costs one
request per period, not one per call.

Objects travel as lightkube generic resources, one class per served resource built
here and owned by this member (not lightkube's process-wide registry: two members may
serve one kind with different scopes, which the registry refuses).

``enablements()`` renders ``Cluster.status.apiEnablements``: every
groupVersion of ``/api`` and ``/apis``, resources as ``{name, kind}`` sorted by name,
subresources (names with a ``/``) dropped, groups sorted by groupVersion.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import httpx2
from lightkube.generic_resource import GenericGlobalResource, GenericNamespacedResource, create_api_info

from fleetkeeper.clock import Clock

#: seconds before a groupVersion's document is fetched again for a kind it lacked
REFRESH = 30.0


@dataclass(frozen=True, slots=True)
class Resource:
    """A served resource: how to reach it and the lightkube class that stands for it."""

    api_version: str
    kind: str
    plural: str
    namespaced: bool
    cls: type[Any]


def resource_class(api_version: str, kind: str, plural: str, namespaced: bool) -> type[Any]:
    """A lightkube generic resource class for one served resource (not registered globally)."""
    group, _, version = api_version.rpartition("/")
    base: type[Any] = GenericNamespacedResource if namespaced else GenericGlobalResource
    return type(kind, (base,), {"_api_info": create_api_info(group, version, kind, plural)})


def document_path(api_version: str) -> str:
    """The discovery document of a groupVersion (``v1`` → ``/api/v1``)."""
    return f"/apis/{api_version}" if "/" in api_version else f"/api/{api_version}"


def enablement(document: dict[str, Any]) -> dict[str, Any]:
    """One ``apiEnablements`` entry from an ``APIResourceList``."""
    resources = [{"name": r["name"], "kind": r["kind"]} for r in document.get("resources") or []
                 if "/" not in str(r.get("name", ""))]
    return {"groupVersion": document["groupVersion"], "resources": sorted(resources, key=lambda r: r["name"])}


class ApiDiscovery:
    """Discovery of one member, cached (see the module notes)."""

    def __init__(self, http: httpx2.AsyncClient, clock: Clock) -> None:
        self._http = http
        self._clock = clock
        #: groupVersion → kind → Resource; a groupVersion the member does not serve maps to {}
        self._served: dict[str, dict[str, Resource]] = {}
        self._fetched: dict[str, float] = {}

    async def resource(self, api_version: str, kind: str) -> Resource | None:
        """The served resource of a kind, or None when the member does not serve it."""
        found = self._served.get(api_version, {}).get(kind)
        if found is not None:
            return found
        fetched = self._fetched.get(api_version)
        if fetched is None or self._clock.monotonic() - fetched >= REFRESH:
            await self.refresh(api_version)
        return self._served.get(api_version, {}).get(kind)

    async def refresh(self, api_version: str) -> None:
        """Fetch the discovery document of one groupVersion again."""
        document = await self._document(document_path(api_version))
        self._fetched[api_version] = self._clock.monotonic()
        self._served[api_version] = self._resources(api_version, document or {})

    def _resources(self, api_version: str, document: dict[str, Any]) -> dict[str, Resource]:
        known = self._served.get(api_version, {})
        served: dict[str, Resource] = {}
        for entry in document.get("resources") or []:
            name, kind = str(entry.get("name", "")), str(entry.get("kind", ""))
            if not name or "/" in name or not kind:
                continue
            namespaced = bool(entry.get("namespaced"))
            old = known.get(kind)
            if old is not None and (old.plural, old.namespaced) == (name, namespaced):
                served[kind] = old
            else:
                served[kind] = Resource(api_version, kind, name, namespaced,
                                        resource_class(api_version, kind, name, namespaced))
        return served

    async def enablements(self) -> list[dict[str, Any]]:
        """``Cluster.status.apiEnablements`` of the member (fetched now, in parallel)."""
        core, groups = await asyncio.gather(self._document("/api"), self._document("/apis"))
        versions = [str(v) for v in (core or {}).get("versions") or []]
        for group in (groups or {}).get("groups") or []:
            versions.extend(str(v["groupVersion"]) for v in group.get("versions") or []
                            if v.get("groupVersion"))
        documents = await asyncio.gather(
            *(self._document(document_path(gv), tolerant=True) for gv in versions))
        now = self._clock.monotonic()
        found = []
        for gv, document in zip(versions, documents, strict=True):
            if document is None:
                continue  # a group that fails to answer (an aggregated API down) is left out
            self._served[gv] = self._resources(gv, document)
            self._fetched[gv] = now
            found.append(enablement({**document, "groupVersion": gv}))
        return sorted(found, key=lambda g: g["groupVersion"])

    async def _document(self, path: str, *, tolerant: bool = False) -> dict[str, Any] | None:
        """A discovery document; None when it is not served (404) — or, ``tolerant``, when the
        member fails to produce it (5xx). Any other error answer raises ``httpx2.HTTPStatusError``
        (a refused token must not read as "serves nothing"); the caller translates it."""
        response = await self._http.get(path, headers={"Accept": "application/json"})
        code = response.status_code
        if code == 404 or (tolerant and code >= 500):
            return None
        response.raise_for_status()
        body = response.json()
        return body if isinstance(body, dict) else None


__all__ = ["REFRESH", "ApiDiscovery", "Resource", "document_path", "enablement", "resource_class"]
