"""Resource templates of any kind: their queue keys and their on-demand caches.

A resource template can be of any group/version/kind — a Deployment, a ConfigMap, a
custom ``apps.example.io/v1 Workload`` — and the kinds in play are only known at run
time (they are named by policies and by bindings). The manager refuses new runnables
once it runs, but its shared :class:`~fleetkeeper.runtime.cache.InformerFactory` starts
an informer asked for late at once, in its own task group. :class:`TemplateCache` builds
on that: the first time a controller needs a kind it asks the factory for the kind's
informer (shared with every other controller) and attaches its own handler, which is
replayed an add for everything already cached. A kind, once watched, stays watched for
the life of the process: kinds are few, and dropping an informer that another
controller may share would need reference counting for no real gain.

Reading before the informer's first list completed would mistake "not loaded yet" for
"deleted", so :meth:`TemplateCache.get` says which it is (:class:`NotSynced`); callers
requeue, and the handler's replay wakes them anyway when the list lands.

:func:`template_request` / :func:`parse_template_request` encode a template's identity
(apiVersion, kind, namespace, name) in a :class:`~fleetkeeper.runtime.reconcile.Request`
(``name`` = ``<apiVersion>/<kind>/<name>``: object names never contain ``/``), which is
how the detector keys its queue, as Karmada keys its detector queue by GVK + name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fleetkeeper.api.meta import Resource
from fleetkeeper.api.scheme import SCHEME
from fleetkeeper.api.work import Binding
from fleetkeeper.runtime.cache import InformerFactory
from fleetkeeper.runtime.handler import EventHandler
from fleetkeeper.runtime.informer import Informer
from fleetkeeper.runtime.reconcile import Request

Kind = tuple[str, str]
#: builds the handler one controller attaches to the informer of a newly watched kind
HandlerFactory = Callable[[Kind], EventHandler[Any]]


class NotSynced(Exception):
    """The informer of this kind has not loaded its first list yet."""


@dataclass(frozen=True, slots=True)
class TemplateRef:
    """Where a template lives: apiVersion, kind, namespace (``""`` when cluster-scoped), name."""

    api_version: str
    kind: str
    namespace: str
    name: str

    @classmethod
    def of(cls, obj: Resource) -> TemplateRef:
        return cls(obj.api_version, obj.kind, obj.metadata.namespace or "", obj.name)

    @classmethod
    def of_binding(cls, binding: Binding) -> TemplateRef:
        """The template a binding stands for (its ``spec.resource``)."""
        resource = binding.spec.resource
        return cls(resource.api_version, resource.kind, resource.namespace or "", resource.name)

    def __str__(self) -> str:
        where = f"{self.namespace}/{self.name}" if self.namespace else self.name
        return f"{self.kind}({self.api_version}) {where}"


def template_request(ref: TemplateRef) -> Request:
    """The queue key of a template (see the module notes)."""
    return Request(ref.namespace, f"{ref.api_version}/{ref.kind}/{ref.name}")


def parse_template_request(request: Request) -> TemplateRef:
    """Inverse of :func:`template_request` (``ValueError`` for a key it did not make)."""
    head, sep, name = request.name.rpartition("/")
    api_version, sep2, kind = head.rpartition("/")
    if not sep or not sep2 or not api_version or not kind or not name:
        raise ValueError(f"{request.name!r} is not a template key (<apiVersion>/<kind>/<name>)")
    return TemplateRef(api_version, kind, request.namespace, name)


def model_of(api_version: str, kind: str) -> type[Resource]:
    """The model class templates of a kind decode into (Unstructured for unknown kinds)."""
    return SCHEME.model_for(api_version, kind)


class TemplateCache:
    """Templates of any kind through shared informers, watched from their first use."""

    def __init__(self, factory: InformerFactory, handler: HandlerFactory | None = None) -> None:
        self._factory = factory
        self._handler = handler
        self._informers: dict[Kind, Informer[Any]] = {}

    def informer(self, api_version: str, kind: str) -> Informer[Any]:
        """The informer of a kind, watched (and handled) from now on."""
        key = (api_version, kind)
        informer = self._informers.get(key)
        if informer is None:
            informer = self._factory.informer_for(model_of(api_version, kind))
            self._informers[key] = informer
            if self._handler is not None:
                informer.add_handler(self._handler(key))
        return informer

    def watched(self) -> list[Kind]:
        """The kinds watched so far (in the order they were first asked for)."""
        return list(self._informers)

    def get(self, ref: TemplateRef) -> Resource | None:
        """The cached template, ``None`` when absent; :class:`NotSynced` while loading."""
        informer = self.informer(ref.api_version, ref.kind)
        if not informer.has_synced:
            raise NotSynced(f"the cache of {ref.kind} ({ref.api_version}) is still loading")
        found: Resource | None = informer.get(f"{ref.namespace}/{ref.name}" if ref.namespace else ref.name)
        return found

    def list(self, api_version: str, kind: str) -> list[Resource]:
        """Every cached template of a kind (empty while loading)."""
        return list(self.informer(api_version, kind).list())


__all__ = [
    "HandlerFactory", "Kind", "NotSynced", "TemplateCache", "TemplateRef", "model_of",
    "parse_template_request", "template_request",
]
