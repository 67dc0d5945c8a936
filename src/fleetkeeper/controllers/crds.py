"""The CRD controller: the kinds CustomResourceDefinitions define, known wherever controllers run.

The API server serves what a CRD defines (:mod:`fleetkeeper.apiserver.crds`). The
controllers must know it too: they decode, store and write templates of custom kinds, and
a cluster-scoped kind guessed namespaced would be refused by admission (its objects have
no namespace), while a REST client would build its URLs from a guessed plural. A
controller-manager running apart from the API server (``fleetkeeper controller-manager
--store …`` or ``--kubeconfig …``) has no API server in its process to learn from, so
this controller watches CustomResourceDefinitions through the client and keeps the
scheme's CRD-defined kinds equal to them (:mod:`fleetkeeper.api.crd`).

Like the customizations controller, it does so **synchronously, in the informer's
handler**: informers sync before any controller starts, so the kinds of the CRDs present
at start are known before the detector looks at a single template. A CRD whose names
another CRD holds is left out (the API server says why in its status).
"""

from __future__ import annotations

import structlog

from fleetkeeper.api.builtin import CustomResourceDefinition
from fleetkeeper.api.crd import CUSTOM_KINDS, CustomKinds
from fleetkeeper.api.meta import Unstructured
from fleetkeeper.runtime.handler import FuncHandler
from fleetkeeper.runtime.informer import Informer
from fleetkeeper.runtime.spec import ControllerSpec, Deps, Runs

_log = structlog.get_logger("fleetkeeper.crds")


class CustomResourceDefinitions:
    """Keeps the scheme's CRD-defined kinds equal to the CustomResourceDefinitions in the cache."""

    def __init__(self, informer: Informer[Unstructured], kinds: CustomKinds = CUSTOM_KINDS) -> None:
        self._informer = informer
        self._kinds = kinds
        #: the CRD names registered by this controller
        self.registered: set[str] = set()

    def sync(self, old: Unstructured | None = None, new: Unstructured | None = None) -> None:
        """Register a CRD added or changed, unregister one deleted (an informer handler)."""
        if new is not None:
            self._register(new)
            return
        if old is None or old.name not in self.registered:
            return
        self._kinds.unregister(old.name)
        self.registered.discard(old.name)
        for obj in self._informer.list():  # a CRD may have been waiting for the names the deleted one held
            if obj.name not in self.registered:
                self._register(obj)

    def _register(self, obj: Unstructured) -> None:
        try:
            conflict = self._kinds.register(obj)
        except ValueError as exc:
            _log.warning("CustomResourceDefinition not served", name=obj.name, error=str(exc))
            return
        if conflict is None:
            self.registered.add(obj.name)
        else:
            _log.info("CustomResourceDefinition names not accepted", name=obj.name, reason=conflict.reason)


def _subscribe(deps: Deps) -> None:
    informer = deps.informers.informer_for(CustomResourceDefinition)
    definitions = CustomResourceDefinitions(informer)
    informer.add_handler(FuncHandler(definitions.sync))


#: watches CustomResourceDefinitions; registers the kinds they define in the scheme (as they
#: come: no queue, so a kind is known before any controller looks at a template of it)
SPEC = ControllerSpec("crd-kinds", runnable=_subscribe, kind=CustomResourceDefinition, runs=Runs.PLANE)


__all__ = ["SPEC", "CustomResourceDefinitions"]
