"""CustomResourceDefinitions: the kinds they define, served like the built-in ones.

A CRD (``apiextensions.k8s.io/v1``) declares a kind: its group, names (plural, singular,
kind, list kind, short names, categories), scope, versions (which are served, which one
objects are stored at, each with its OpenAPI schema, printer columns and subresources).
:func:`parse` reads that into a :class:`CustomKind`; :class:`CustomKinds` registers it in
a scheme — one :class:`~fleetkeeper.api.meta.Unstructured` subclass per served version,
with the declared plural and scope — and takes it out again when the CRD is deleted.

Registration replaces whatever the scheme held for the kind before: an earlier version of
the same CRD, or — in the process's scheme (:data:`~fleetkeeper.api.scheme.SCHEME`) — a class
:meth:`Unstructured.for_kind` made with guessed facts (a namespaced kind, a guessed plural)
before the CRD was known: that class is updated in place, so caches holding it see the
declared scope (unregistering puts the guesses back). Any other scheme (a member cluster's,
served beside the plane's) gets classes of its own, so what it defines or drops changes
nothing another scheme serves. :func:`definition` is the CRD a served kind's class was made
from, whichever scheme serves it.
Kinds the scheme serves on its own (the built-in ones) are never replaced: admission
refuses such a CRD, and registration refuses it too. Two CRDs naming the same kind (or
list kind) conflict: the first keeps it, the second is not served, and its status says
why, as kube-apiserver's naming controller does.

:func:`desired_status` is the status kube-apiserver gives a served CRD: ``acceptedNames``
(the names, with ``singular`` and ``listKind`` defaulted), the ``NamesAccepted`` and
``Established`` conditions, and ``storedVersions`` (every version objects were ever stored
at, the current storage version included).
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, NamedTuple

from fleetkeeper.api.meta import Resource, Unstructured
from fleetkeeper.api.scheme import SCHEME, GroupKind, ResourceInfo, Scheme

CRD: Final = GroupKind("apiextensions.k8s.io", "CustomResourceDefinition")
SCOPES: Final = ("Namespaced", "Cluster")
COLUMN_TYPES: Final = ("integer", "number", "string", "boolean", "date")


@dataclass(frozen=True)
class PrinterColumn:
    """One of a version's ``additionalPrinterColumns``."""

    name: str
    type: str
    json_path: str
    description: str = ""
    priority: int = 0
    format: str = ""


@dataclass(frozen=True)
class ScalePaths:
    """A ``scale`` subresource: where the replicas and the selector live (``.spec.replicas`` …)."""

    spec_replicas: str = ".spec.replicas"
    status_replicas: str = ".status.replicas"
    label_selector: str | None = None


@dataclass(frozen=True)
class CustomVersion:
    """One entry of ``spec.versions``."""

    name: str
    served: bool
    storage: bool
    #: the version's ``schema.openAPIV3Schema`` (``None`` when absent)
    schema: Mapping[str, Any] | None = None
    printer_columns: tuple[PrinterColumn, ...] = ()
    #: a ``status`` subresource is declared
    status: bool = False
    scale: ScalePaths | None = None


@dataclass(frozen=True)
class CustomKind:
    """What one CRD defines."""

    #: the CRD's ``metadata.name`` (``<plural>.<group>``)
    name: str
    group: str
    kind: str
    plural: str
    singular: str
    list_kind: str
    short_names: tuple[str, ...]
    categories: tuple[str, ...]
    namespaced: bool
    versions: tuple[CustomVersion, ...]

    @property
    def group_kind(self) -> GroupKind:
        return GroupKind(self.group, self.kind)

    @property
    def served(self) -> tuple[CustomVersion, ...]:
        return tuple(v for v in self.versions if v.served)

    @property
    def storage(self) -> CustomVersion | None:
        """The version objects are stored at."""
        return next((v for v in self.versions if v.storage), None)

    def version(self, name: str) -> CustomVersion | None:
        return next((v for v in self.versions if v.name == name), None)

    def accepted_names(self) -> dict[str, Any]:
        """``status.acceptedNames`` as kube-apiserver writes it."""
        names: dict[str, Any] = {"plural": self.plural, "singular": self.singular, "kind": self.kind,
                                 "listKind": self.list_kind}
        if self.short_names:
            names["shortNames"] = list(self.short_names)
        if self.categories:
            names["categories"] = list(self.categories)
        return names


class NameConflict(NamedTuple):
    """Why a CRD's names cannot be accepted (``reason`` as kube-apiserver's naming controller says it)."""

    reason: str
    message: str


def wire(crd: Mapping[str, Any] | Resource) -> Mapping[str, Any]:
    """A CRD as its wire dict."""
    return crd.to_dict() if isinstance(crd, Resource) else crd


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


def _columns(value: Any) -> tuple[PrinterColumn, ...]:
    out = []
    for entry in value if isinstance(value, list) else ():
        if isinstance(entry, Mapping) and entry.get("name") and entry.get("jsonPath"):
            priority = entry.get("priority")
            out.append(PrinterColumn(
                name=str(entry["name"]), type=str(entry.get("type") or "string"),
                json_path=str(entry["jsonPath"]),
                description=str(entry.get("description") or ""), format=str(entry.get("format") or ""),
                priority=priority if isinstance(priority, int) else 0))
    return tuple(out)


def _scale(subresources: Mapping[str, Any]) -> ScalePaths | None:
    if "scale" not in subresources:
        return None
    scale = _map(subresources.get("scale"))
    selector = scale.get("labelSelectorPath")
    return ScalePaths(spec_replicas=str(scale.get("specReplicasPath") or ".spec.replicas"),
                      status_replicas=str(scale.get("statusReplicasPath") or ".status.replicas"),
                      label_selector=str(selector) if selector else None)


def _version(entry: Mapping[str, Any]) -> CustomVersion:
    schema = _map(entry.get("schema")).get("openAPIV3Schema")
    subresources = _map(entry.get("subresources"))
    return CustomVersion(
        name=str(entry.get("name") or ""), served=entry.get("served") is not False,
        storage=entry.get("storage") is True, schema=schema if isinstance(schema, Mapping) else None,
        printer_columns=_columns(entry.get("additionalPrinterColumns")),
        status="status" in subresources, scale=_scale(subresources))


def parse(crd: Mapping[str, Any] | Resource) -> CustomKind:
    """What a CRD defines, with Kubernetes' defaults (``ValueError`` when it names no group or kind)."""
    data = wire(crd)
    spec = _map(data.get("spec"))
    names = _map(spec.get("names"))
    group, kind = str(spec.get("group") or ""), str(names.get("kind") or "")
    plural = str(names.get("plural") or "")
    if not group or not kind or not plural:
        raise ValueError("a CustomResourceDefinition needs spec.group, spec.names.kind and spec.names.plural")
    versions = tuple(_version(v) for v in spec.get("versions") or ()
                     if isinstance(v, Mapping) and v.get("name"))
    return CustomKind(
        name=str(_map(data.get("metadata")).get("name") or f"{plural}.{group}"), group=group, kind=kind,
        plural=plural, singular=str(names.get("singular") or kind.lower()),
        list_kind=str(names.get("listKind") or f"{kind}List"), short_names=_strings(names.get("shortNames")),
        categories=_strings(names.get("categories")), namespaced=spec.get("scope") != "Cluster",
        versions=versions)


#: the CRD each served class of a CRD-defined kind was made from (by the class)
_DEFINITIONS: weakref.WeakKeyDictionary[type[Resource], CustomKind] = weakref.WeakKeyDictionary()


def definition(info: ResourceInfo) -> CustomKind | None:
    """The CRD that defines a served kind, in the scheme ``info`` is from (None for other kinds)."""
    return _DEFINITIONS.get(info.model)


class CustomKinds:
    """The CRD-defined kinds a scheme serves (see the module notes).

    ``shared``: the kinds' classes are the process's (:meth:`Unstructured.for_kind`'s), as
    :data:`~fleetkeeper.api.scheme.SCHEME`'s are; by default only that scheme's are."""

    def __init__(self, scheme: Scheme, *, shared: bool | None = None) -> None:
        self._scheme = scheme
        self._shared = scheme is SCHEME if shared is None else shared
        self._by_name: dict[str, CustomKind] = {}
        #: the same, by the kind they define (two CRDs never serve one kind: they conflict)
        self._by_gk: dict[GroupKind, CustomKind] = {}

    @property
    def scheme(self) -> Scheme:
        return self._scheme

    def get(self, gk: GroupKind) -> CustomKind | None:
        """The kind a registered CRD defines, if one does."""
        return self._by_gk.get(gk)

    def by_name(self, name: str) -> CustomKind | None:
        return self._by_name.get(name)

    def names(self) -> list[str]:
        """The names of the registered CRDs."""
        return sorted(self._by_name)

    def builtin_conflict(self, group: str, kind: str, plural: str) -> NameConflict | None:
        """Why a CRD may not define this kind (it is one the scheme serves on its own), else None."""
        for info in self._scheme.infos():
            if info.group != group or info.group_kind in self._by_gk:
                continue
            if info.kind == kind:
                return NameConflict("KindConflict", f"{kind}.{group} is a built-in kind and cannot be "
                                                    "redefined by a CustomResourceDefinition")
            if info.plural == plural:
                return NameConflict("PluralConflict", f"{plural}.{group} is the resource of the built-in "
                                                      f"kind {info.kind} and cannot be redefined by a "
                                                      "CustomResourceDefinition")
        return None

    def conflict(self, kind: CustomKind) -> NameConflict | None:
        """Why ``kind`` cannot be served next to the other registered CRDs and the built-in kinds."""
        builtin = self.builtin_conflict(kind.group, kind.kind, kind.plural)
        if builtin is not None:
            return builtin
        for other in self._by_name.values():
            if other.name == kind.name or other.group != kind.group:
                continue
            if other.kind == kind.kind:
                return NameConflict("KindConflict", f'"{kind.kind}" is already in use by the '
                                                    f"CustomResourceDefinition {other.name}")
            if other.list_kind == kind.list_kind:
                return NameConflict("ListKindConflict", f'"{kind.list_kind}" is already in use by the '
                                                        f"CustomResourceDefinition {other.name}")
        return None

    def register(self, crd: Mapping[str, Any] | Resource) -> NameConflict | None:
        """Serve what ``crd`` defines (replacing what it defined before); the conflict that keeps it
        from being served, or None once served."""
        kind = parse(crd)
        conflict = self.conflict(kind)
        if conflict is not None:
            return conflict
        if self._by_name.get(kind.name) == kind:
            return None
        previous = self._by_name.pop(kind.name, None)
        if previous is not None:
            self._by_gk.pop(previous.group_kind, None)
            self._drop(previous.group_kind, undeclare=previous.group_kind != kind.group_kind)
        served = kind.served
        if served:
            models: list[type[Resource]] = [
                Unstructured.define(f"{kind.group}/{v.name}", kind.kind, plural=kind.plural,
                                    namespaced=kind.namespaced, singular=kind.singular,
                                    short_names=kind.short_names, has_status=v.status,
                                    categories=kind.categories, shared=self._shared)
                for v in served]
            storage = kind.storage
            stored = next((m for m, v in zip(models, served, strict=True) if v is storage), models[0])
            self._scheme.replace(kind.group_kind, models, stored)
            _DEFINITIONS.update((model, kind) for model in models)
        self._by_name[kind.name] = kind
        self._by_gk[kind.group_kind] = kind
        return None

    def unregister(self, name: str) -> CustomKind | None:
        """Stop serving what the CRD ``name`` defined; what it defined (None if it was not registered)."""
        kind = self._by_name.pop(name, None)
        if kind is not None:
            self._by_gk.pop(kind.group_kind, None)
            self._drop(kind.group_kind, undeclare=True)
        return kind

    def _drop(self, gk: GroupKind, *, undeclare: bool) -> None:
        """Stop serving a kind; ``undeclare``: the process's classes of it get their guesses back."""
        for info in self._scheme.remove(gk):
            _DEFINITIONS.pop(info.model, None)
            if undeclare and self._shared:
                Unstructured.undeclare(info.api_version, info.kind)


#: the CRD-defined kinds of :data:`~fleetkeeper.api.scheme.SCHEME`
CUSTOM_KINDS: Final = CustomKinds(SCHEME)


def custom_kind(gk: GroupKind) -> CustomKind | None:
    """The registered CRD's definition of a kind (None for built-in and unknown kinds)."""
    return CUSTOM_KINDS.get(gk)


NAMES_ACCEPTED: Final = "NamesAccepted"
ESTABLISHED: Final = "Established"


def _condition(previous: Mapping[str, Any], kind: str, ok: bool, reason: str, message: str,
               now: str) -> dict[str, Any]:
    status = "True" if ok else "False"
    old = _map(previous.get(kind))
    since = old.get("lastTransitionTime") if old.get("status") == status else None
    return {"type": kind, "status": status, "lastTransitionTime": since or now, "reason": reason,
            "message": message}


def desired_status(crd: Mapping[str, Any] | Resource, *, conflict: NameConflict | None,
                   now: str) -> dict[str, Any]:
    """The status kube-apiserver gives ``crd`` (``now``: the time a changed condition is stamped with)."""
    data = wire(crd)
    kind = parse(data)
    status = _map(data.get("status"))
    previous = {str(c.get("type")): c for c in status.get("conditions") or () if isinstance(c, Mapping)}
    stored = [str(v) for v in status.get("storedVersions") or ()]
    storage = kind.storage
    if storage is not None and storage.name not in stored:
        stored.append(storage.name)
    if conflict is None:
        names = kind.accepted_names()
        conditions = [
            _condition(previous, NAMES_ACCEPTED, True, "NoConflicts", "no conflicts found", now),
            _condition(previous, ESTABLISHED, True, "InitialNamesAccepted",
                       "the initial names have been accepted", now),
        ]
    else:
        names = dict(_map(status.get("acceptedNames"))) or {"plural": "", "kind": ""}
        conditions = [
            _condition(previous, NAMES_ACCEPTED, False, conflict.reason, conflict.message, now),
            _condition(previous, ESTABLISHED, False, "NotAccepted", "not all names are accepted", now),
        ]
    return {"conditions": conditions, "acceptedNames": names, "storedVersions": stored}


__all__ = [
    "COLUMN_TYPES", "CRD", "CUSTOM_KINDS", "ESTABLISHED", "NAMES_ACCEPTED", "SCOPES", "CustomKind",
    "CustomKinds", "CustomVersion", "NameConflict", "PrinterColumn", "ScalePaths", "custom_kind",
    "definition", "desired_status", "parse", "wire",
]
