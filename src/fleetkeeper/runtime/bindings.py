"""The informers of both binding kinds, used as one.

ResourceBinding and ClusterResourceBinding share spec and status, and every controller of
the pipeline and the scheduler handles both: :class:`BindingInformers` is the pair of shared
informers (from the manager's factory, so every controller sees the same caches) with the
lookups written once — a key names its kind the way Karmada's keys do (``ns/name`` is a
ResourceBinding, a bare ``name`` a ClusterResourceBinding), lists and index lookups give
the ResourceBindings first. :func:`watch_bindings` declares a controller's watch of both.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable

from fleetkeeper.api.work import Binding, ClusterResourceBinding, ResourceBinding
from fleetkeeper.runtime.cache import InformerFactory
from fleetkeeper.runtime.handler import EventHandler, MapFunc, Predicate
from fleetkeeper.runtime.informer import Informer
from fleetkeeper.runtime.reconcile import Request
from fleetkeeper.runtime.spec import Watch


class BindingInformers:
    """The shared ResourceBinding and ClusterResourceBinding informers, looked up as one."""

    def __init__(self, informers: InformerFactory) -> None:
        self.rbs: Informer[ResourceBinding] = informers.informer_for(ResourceBinding)
        self.crbs: Informer[ClusterResourceBinding] = informers.informer_for(ClusterResourceBinding)

    @property
    def pair(self) -> tuple[Informer[ResourceBinding], Informer[ClusterResourceBinding]]:
        return self.rbs, self.crbs

    @property
    def has_synced(self) -> bool:
        return self.rbs.has_synced and self.crbs.has_synced

    def get(self, request: Request) -> Binding | None:
        """The cached binding a key names (namespaced → ResourceBinding), None when absent."""
        if request.namespace:
            return self.rbs.get(str(request))
        return self.crbs.get(request.name)

    def list(self) -> list[Binding]:
        """Every cached binding, ResourceBindings first."""
        return [*self.rbs.list(), *self.crbs.list()]

    def add_indexer(self, name: str, fn: Callable[[Binding], builtins.list[str]]) -> None:
        """Index both informers by ``fn``."""
        self.rbs.add_indexer(name, fn)
        self.crbs.add_indexer(name, fn)

    def by_index(self, name: str, value: str) -> builtins.list[Binding]:
        """The cached bindings of both kinds under ``value`` in index ``name``."""
        return [*self.rbs.by_index(name, value), *self.crbs.by_index(name, value)]

    def add_handler(self, handler: EventHandler[Binding]) -> None:
        """Tell ``handler`` the events of both kinds."""
        self.rbs.add_handler(handler)
        self.crbs.add_handler(handler)


def watch_bindings(map_to: MapFunc[Binding] | None = None, *, predicate: Predicate[Binding] | None = None
                   ) -> tuple[Watch[ResourceBinding], Watch[ClusterResourceBinding]]:
    """The watches of both binding kinds, alike (for a controller's spec)."""
    return (Watch(ResourceBinding, map_to, predicate=predicate),
            Watch(ClusterResourceBinding, map_to, predicate=predicate))


__all__ = ["BindingInformers", "watch_bindings"]
