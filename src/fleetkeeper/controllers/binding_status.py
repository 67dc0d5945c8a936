"""The binding-status controller: Works → binding status → template status.

One reconciler for ResourceBindings and ClusterResourceBindings (the key says which).

**What wakes a binding.** Its creation and spec changes (which clusters count for
``FullyApplied``); any status change, deletion mark or removal of one of its Works; its
template's spec changing (the template's ``observedGeneration`` follows the members).
Work changes are gathered for :data:`AGGREGATION_DELAY` before the binding is looked at:
the Works of a binding report within moments of each other, and aggregating each report
on its own would rewrite the binding (and its template) once per cluster.

**Reconcile** (decisions in :mod:`~fleetkeeper.controllers.status_rules`):

1. ``status.aggregatedStatus`` — one item per Work not being deleted, sorted by cluster
   — and the ``FullyApplied`` condition, written through ``/status`` when they changed;
2. when the template's kind has an AggregateStatus rule (native or a customization),
   the template's ``.status`` is rebuilt from the items (e.g. a Deployment's
   ``readyReplicas`` summed over the members) and written through the template's
   ``/status`` when it changed.

Only failures are reported as events (``AggregateStatusFailed``); a success event per
status change of every workload would drown the rest.
"""

from __future__ import annotations

import contextlib
from typing import Any

from fleetkeeper import errors
from fleetkeeper.api import constants
from fleetkeeper.api.conditions import set_condition
from fleetkeeper.api.meta import Resource
from fleetkeeper.api.work import AggregatedStatusItem, Binding, ResourceBinding, Work
from fleetkeeper.controllers import bindings as b
from fleetkeeper.controllers import status_rules as rules
from fleetkeeper.controllers.binding_rules import existing_clusters
from fleetkeeper.controllers.templates import Kind, NotSynced, TemplateCache, TemplateRef
from fleetkeeper.controllers.writes import write
from fleetkeeper.interpreter import Operation
from fleetkeeper.runtime.bindings import BindingInformers, watch_bindings
from fleetkeeper.runtime.cache import InformerFactory
from fleetkeeper.runtime.context import Context
from fleetkeeper.runtime.controller import Keys, awaiting_io
from fleetkeeper.runtime.handler import Delayed, EnqueueMapped, generation_changed
from fleetkeeper.runtime.informer import Informer
from fleetkeeper.runtime.reconcile import Request, Result
from fleetkeeper.runtime.spec import ControllerSpec, Deps, Runs, concurrent_syncs

CONTROLLER_NAME = "binding-status-controller"
NOT_SYNCED_RETRY = 1.0
#: Work status changes are gathered this long before a binding is aggregated: the Works of one
#: binding report within moments of each other, and one write then carries all their news
AGGREGATION_DELAY = 0.5


def work_changed(old: Work | None, new: Work | None) -> bool:
    """Work adds and removals, status changes and deletion marks."""
    if old is None or new is None:
        return True
    return old.status != new.status or old.metadata.deletion_timestamp != new.metadata.deletion_timestamp


def _binding_of_work(work: Work) -> list[Request]:
    request = b.binding_request_of_work(work)
    return [request] if request is not None else []


def _binding_of_template(obj: Resource) -> list[Request]:
    return [Request(obj.metadata.namespace or "", constants.binding_name(obj.kind, obj.name))]


def with_status(template: Resource, status: Any) -> Resource:
    """``template`` with ``.status`` replaced."""
    data = template.to_dict()
    if status is None:
        data.pop("status", None)
    else:
        data["status"] = status
    return type(template).from_dict(data)


class BindingStatus:
    """Aggregates the status of one binding of either kind (see the module notes)."""

    def __init__(self, ctx: Context, informers: InformerFactory, keys: Keys) -> None:
        self._ctx = ctx
        self._recorder = ctx.recorder(CONTROLLER_NAME)
        self._bindings = BindingInformers(informers)
        self._works: Informer[Work] = informers.informer_for(Work)
        b.ensure_work_index(self._works)
        self._keys = keys
        self.templates = TemplateCache(informers, self._template_handler)
        self._works.add_handler(EnqueueMapped(Delayed(keys, AGGREGATION_DELAY), _binding_of_work,
                                              predicate=work_changed))
        #: binding key → (template resourceVersion, items) of the last aggregation that was written
        #: or found current: the template's status is a function of both, so it is up to date
        self._aggregated: dict[str, tuple[str | None, list[AggregatedStatusItem]]] = {}

    def _template_handler(self, kind: Kind) -> EnqueueMapped[Resource]:
        return EnqueueMapped(self._keys, _binding_of_template, predicate=generation_changed)

    async def reconcile(self, request: Request) -> Result:
        binding = self._bindings.get(request)
        if binding is None or binding.metadata.deletion_timestamp is not None:
            self._aggregated.pop(str(request), None)
            return Result()
        ref = TemplateRef.of_binding(binding)
        items = rules.aggregated_status(b.works_of(self._works, binding), ref.api_version, ref.kind,
                                        ref.namespace, ref.name)
        await self._write_binding(binding, items)
        return await self._aggregate_template(binding, ref, items)

    async def _write_binding(self, binding: Binding, items: list[AggregatedStatusItem]) -> None:
        now = self._ctx.clock.now()

        def change(current: Binding) -> Binding | None:
            condition = rules.fully_applied(items, existing_clusters(current.spec))
            conditions = set_condition(current.status.conditions, condition, now)
            wanted = items or None
            if current.status.aggregated_status == wanted and conditions == (current.status.conditions or []):
                return None
            status = current.status.model_copy(update={"aggregated_status": wanted, "conditions": conditions})
            return current.model_copy(update={"status": status})

        with contextlib.suppress(errors.NotFound):
            await write(self._ctx.client, binding, change, subresource="status")

    async def _aggregate_template(self, binding: Binding, ref: TemplateRef,
                                  items: list[AggregatedStatusItem]) -> Result:
        interpreter = self._ctx.interpreter
        if not interpreter.hook_enabled(ref.api_version, ref.kind, Operation.AGGREGATE_STATUS):
            return Result()
        try:
            template = self.templates.get(ref)
        except NotSynced:
            return Result(requeue_after=NOT_SYNCED_RETRY)
        if template is None or not type(template).HAS_STATUS:
            return Result()
        key = binding.key
        if self._aggregated.get(key) == (template.metadata.resource_version, items):
            return Result()
        wire_items = [item.to_dict() for item in items]
        try:
            written = await self._write_aggregated(template, wire_items)
            version = (written or template).metadata.resource_version
            self._aggregated[key] = (version, items)
        except errors.NotFound:
            pass
        except errors.InterpreterError as exc:
            await self._recorder.event(binding, "Warning", constants.EVENT_AGGREGATE_STATUS_FAILED,
                                       f"Failed to aggregate status of {ref}: {exc}")
            raise
        return Result()

    async def _write_aggregated(self, template: Resource, items: list[dict[str, Any]]) -> Resource | None:
        """Write the template's status aggregated from ``items`` when it changed, recomputed from
        the version being replaced after a Conflict, with the interpreter awaited: a customization
        runs off the loop."""
        aio = self._ctx.interpreter.aio(awaiting_io)

        async def change(current: Resource) -> Resource | None:
            data = current.to_dict()
            status = (await aio.aggregate_status(data, items)).get("status")
            return None if status == data.get("status") else with_status(current, status)

        return await write(self._ctx.client, template, change, subresource="status")


def _new(deps: Deps) -> BindingStatus:
    return BindingStatus(deps.ctx, deps.informers, deps.keys)


#: the binding-status controller: watches bindings, Works (a little later) and templates; writes
#: ``aggregatedStatus``/``FullyApplied`` on bindings and the aggregated template status
SPEC = ControllerSpec(
    CONTROLLER_NAME, reconciler=_new, kind=ResourceBinding, workers=concurrent_syncs, runs=Runs.PLANE,
    watches=watch_bindings(predicate=generation_changed),
)


__all__ = ["CONTROLLER_NAME", "SPEC", "BindingStatus", "with_status", "work_changed"]
