"""The scheme: group/version/kind ↔ model class ↔ plural ↔ scope.

Kinds register themselves (``@register``) when their module is imported; importing
:mod:`fleetkeeper.api` imports them all. Anything not registered decodes as an
:class:`~fleetkeeper.api.meta.Unstructured` subclass for its kind, so resource
templates of any group/version/kind can be stored.

The store keys objects by :class:`GroupKind` (versions of one kind share storage).

The scheme can change while a process runs: a CustomResourceDefinition adds the kinds it
defines and takes them away when it is deleted (:mod:`fleetkeeper.api.crd`).
:attr:`Scheme.generation` counts the changes, so documents derived from the scheme
(discovery, OpenAPI) know when to rebuild.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeVar

from fleetkeeper import errors
from fleetkeeper.api.meta import Resource, Unstructured

R = TypeVar("R", bound=type[Resource])


class GroupKind(NamedTuple):
    group: str
    kind: str

    def __str__(self) -> str:
        return f"{self.kind}.{self.group}" if self.group else self.kind


def split_api_version(api_version: str) -> tuple[str, str]:
    """``apps/v1`` → (``apps``, ``v1``); ``v1`` → (``""``, ``v1``)."""
    group, _, version = api_version.rpartition("/")
    return group, version


def group_kind_of(api_version: str, kind: str) -> GroupKind:
    return GroupKind(split_api_version(api_version)[0], kind)


@dataclass(frozen=True)
class ResourceInfo:
    """What the API server and store need to know about one served kind."""

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    short_names: tuple[str, ...]
    categories: tuple[str, ...]
    model: type[Resource]
    has_status: bool
    #: the singular resource name when it is not the lowercase kind
    singular_name: str = ""

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_kind(self) -> GroupKind:
        return GroupKind(self.group, self.kind)

    @property
    def singular(self) -> str:
        return self.singular_name or self.kind.lower()


class Scheme:
    """A registry of kinds."""

    def __init__(self) -> None:
        self._by_gvk: dict[tuple[str, str], ResourceInfo] = {}
        self._by_plural: dict[tuple[str, str, str], ResourceInfo] = {}
        self._by_gk: dict[GroupKind, ResourceInfo] = {}
        #: how many times the served kinds changed
        self.generation = 0

    def add(self, model: type[Resource]) -> type[Resource]:
        group, version = split_api_version(model.API_VERSION)
        info = ResourceInfo(
            group=group, version=version, kind=model.KIND, plural=model.PLURAL,
            namespaced=model.NAMESPACED, short_names=model.SHORT_NAMES, categories=model.CATEGORIES,
            model=model, has_status=model.HAS_STATUS, singular_name=model.SINGULAR,
        )
        self._by_gvk[(model.API_VERSION, model.KIND)] = info
        self._by_plural[(group, version, model.PLURAL)] = info
        self._by_gk.setdefault(info.group_kind, info)
        self.generation += 1
        return model

    def remove(self, gk: GroupKind) -> list[ResourceInfo]:
        """Stop serving every version of a kind; what was served."""
        removed = [info for info in self._by_gvk.values() if info.group_kind == gk]
        for info in removed:
            del self._by_gvk[(info.api_version, info.kind)]
            if self._by_plural.get((info.group, info.version, info.plural)) is info:
                del self._by_plural[(info.group, info.version, info.plural)]
        if self._by_gk.pop(gk, None) is not None or removed:
            self.generation += 1
        return removed

    def replace(self, gk: GroupKind, models: Sequence[type[Resource]], stored: type[Resource]) -> None:
        """Serve exactly ``models`` (versions of one kind) for ``gk``, replacing whatever was
        served for it; ``stored`` is the version its objects are stored at."""
        self.remove(gk)
        for model in models:
            self.add(model)
        self._by_gk[gk] = self._by_gvk[(stored.API_VERSION, stored.KIND)]

    def register(self, model: R) -> R:
        """Class decorator: add a kind to this scheme."""
        self.add(model)
        return model

    def infos(self) -> list[ResourceInfo]:
        return list(self._by_gvk.values())

    def lookup(self, api_version: str, kind: str) -> ResourceInfo | None:
        info = self._by_gvk.get((api_version, kind))
        if info is None:
            # another version of a known kind: same storage, same model
            gk_info = self._by_gk.get(group_kind_of(api_version, kind))
            if gk_info is not None and issubclass(gk_info.model, Unstructured):
                return gk_info
        return info

    def by_plural(self, group: str, version: str, plural: str) -> ResourceInfo | None:
        return self._by_plural.get((group, version, plural))

    def by_group_kind(self, gk: GroupKind) -> ResourceInfo | None:
        return self._by_gk.get(gk)

    def model_for(self, api_version: str, kind: str) -> type[Resource]:
        """The model class of a kind; an Unstructured subclass when the kind is unknown."""
        info = self.lookup(api_version, kind)
        if info is not None:
            return info.model
        return Unstructured.for_kind(api_version, kind)

    def decode(self, data: dict[str, Any]) -> Resource:
        """Build the typed object for a wire dict (raises ``errors.Invalid``)."""
        api_version = data.get("apiVersion")
        kind = data.get("kind")
        if not isinstance(api_version, str) or not api_version:
            raise errors.Invalid("apiVersion: Required value",
                                 causes=[errors.Cause("apiVersion", "Required value", "FieldValueRequired")])
        if not isinstance(kind, str) or not kind:
            raise errors.Invalid("kind: Required value",
                                 causes=[errors.Cause("kind", "Required value", "FieldValueRequired")])
        return self.model_for(api_version, kind).from_dict(data)


#: The default scheme; every kind in :mod:`fleetkeeper.api` registers here.
SCHEME = Scheme()
register = SCHEME.register

__all__ = ["SCHEME", "GroupKind", "ResourceInfo", "Scheme", "group_kind_of", "register", "split_api_version"]
