"""The failover-readiness controller: a ``FailoverReady`` condition on every binding, kept current.

Its keys are failure domains (cluster names, or zone or region names as the
``failover_readiness_domain`` option says). One reconcile assesses one domain
(:func:`~fleetkeeper.readiness.assess.assess_domain`: the what-if of losing it, over the
bindings placed on it, found through an informer index) and keeps what it risks per
binding; then each binding whose risks changed gets its condition — the worst risk over
every domain, or True — written on its status, only when it differs from what is there.

**What wakes a domain.** A cluster whose spec, labels, Ready status, resource summary or
APIs change may change every domain's outcome (its room takes the evicted replicas), so
every domain is looked at again; a binding whose generation or applied placement changes
wakes the domains of its clusters. Each ask waits :data:`SETTLE` seconds and asks coalesce
(the earliest deadline wins), so a fleet reporting status all the time is assessed once
per period, not per report; its own status writes wake nothing.

**Never in a failover's way.** It is of the lowest tier: each reconcile waits until the
failover's decisions and their dispatch are done (:mod:`~fleetkeeper.runtime.turns`). A
domain's what-if may cover thousands of bindings, so it runs in slices of :data:`SLICE`
workloads with a loop turn between them (cluster probes and watches never wait behind it);
when failover work appears meanwhile it stops and looks again :data:`SETTLE` seconds later,
and each condition it writes waits its turn too. A cluster that keeps reporting asks for one
look at every domain per period, not one per report. When a cluster stops being Ready a failover
may begin, and what it moves is in flux until it is done: no domain is assessed until
:data:`FAILOVER_QUIET` seconds after the last such loss (the conditions meanwhile are those from
before it). Off unless ``failover_readiness`` is set.

Cluster facts are parsed once per cluster version and shared by every domain's what-if;
equivalent bindings share one scheduling decision per domain. ``/metrics`` counts the
bindings by the status of their condition (:data:`COLLECTOR`).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Hashable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import cast

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import REGISTRY, Collector

from fleetkeeper.api import constants
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.conditions import get_condition, set_condition
from fleetkeeper.api.taintpolicy import ClusterTaintPolicy
from fleetkeeper.api.work import Binding, ResourceBinding
from fleetkeeper.controllers.writes import write
from fleetkeeper.readiness import assess
from fleetkeeper.readiness.whatif import Fleet
from fleetkeeper.runtime.bindings import BindingInformers
from fleetkeeper.runtime.context import Context
from fleetkeeper.runtime.controller import Keys
from fleetkeeper.runtime.informer import Informer
from fleetkeeper.runtime.reconcile import FuncReconciler, Reconciler, Request, Result
from fleetkeeper.runtime.spec import ControllerSpec, Deps, Runs, Tier
from fleetkeeper.runtime.turns import OTHERS, Turns
from fleetkeeper.scheduler.core import Scheduler
from fleetkeeper.scheduler.snapshot import ClusterFacts, facts_of

NAME = "failover-readiness"
#: index of the binding informers: target cluster name → bindings
BY_CLUSTER = "failover-readiness/spec.clusters"
#: seconds between a change and the look it asks for (asks meanwhile coalesce)
SETTLE = 5.0
STATUSES = ("True", "False")
#: workloads a reconcile assesses between two loop turns (a few milliseconds of work)
SLICE = 16
#: seconds after a cluster stops being Ready during which no domain is assessed
FAILOVER_QUIET = 30.0


def _targets(binding: Binding) -> list[str]:
    return [t.name for t in binding.spec.clusters or ()]


def _request(key: str) -> Request:
    namespace, _, name = key.rpartition("/")
    return Request(namespace, name)


class Readiness:
    """The domains' risks and the reconcile that keeps them (see the module notes)."""

    def __init__(self, ctx: Context, clusters: Informer[Cluster], bindings: BindingInformers,
                 policies: Informer[ClusterTaintPolicy], keys: Keys, *, turns: Turns | None = None) -> None:
        self._ctx, self._clusters, self._bindings, self._policies, self._keys = (
            ctx, clusters, bindings, policies, keys)
        self._turns = turns or Turns()
        self._scheduler = Scheduler()
        self._facts: dict[str, ClusterFacts] = {}
        #: binding key → (resourceVersion, equivalence class), so a binding's class is worked out once
        #: per version, not once per domain it is on
        self._classes: dict[str, tuple[str, Hashable]] = {}
        #: domain → binding key → what losing the domain risks for it
        self.risks: dict[str, dict[str, assess.Risk]] = {}
        #: binding key → domain → risk (the same, the other way round)
        self._by_binding: dict[str, dict[str, assess.Risk]] = {}
        #: cluster name → its domains (kept as clusters change: a binding event only looks it up)
        self._domains_of: dict[str, list[str]] = {}
        #: the domains the last :meth:`_refresh` found (``None``: none yet)
        self._known: frozenset[str] | None = None
        #: when the last look at every domain was asked for (monotonic), and at which domains
        self._all_asked: tuple[float, frozenset[str]] | None = None
        #: no domain is assessed before this (monotonic): a cluster was lost, a failover may be under way
        self._quiet_until = 0.0

    @property
    def by(self) -> str:
        return self._ctx.options.failover_readiness_domain

    def domains(self) -> dict[str, list[str]]:
        return assess.domains(self._clusters.list(), self.by)

    def _refresh(self) -> dict[str, list[str]]:
        """The domains now, and each cluster's."""
        found = self.domains()
        self._domains_of = {}
        for domain, members in found.items():
            for name in members:
                self._domains_of.setdefault(name, []).append(domain)
        self._known = frozenset(found)
        return found

    # ---------------------------------------------------------------- events
    def look_again(self, names: Iterable[str]) -> None:
        for name in names:
            self._keys.enqueue_after(Request("", name), SETTLE)

    def cluster_changed(self, *, moved: bool = True) -> None:
        """A cluster changed what a what-if reads; ``moved``: maybe which domains it is in, too."""
        known = self._known if not moved and self._known is not None else frozenset(self._refresh())
        names = known | self.risks.keys()
        now = self._ctx.clock.monotonic()
        if self._all_asked is not None and now < self._all_asked[0] + SETTLE and names <= self._all_asked[1]:
            return  # every domain is already asked for, and not looked at yet
        self._all_asked = (now, names)
        self.look_again(names)

    def cluster_lost(self) -> None:
        """A cluster stopped being Ready: stand back while the failover runs, then look at everything."""
        self._quiet_until = self._ctx.clock.monotonic() + FAILOVER_QUIET
        self.cluster_changed()

    def _quiet_for(self) -> float:
        return self._quiet_until - self._ctx.clock.monotonic()

    def binding_changed(self, binding: Binding) -> None:
        if self._quiet_for() > 0:
            return  # every domain is asked for already, for when the failover is over
        self.look_again({d for name in _targets(binding) for d in self._domains_of.get(name, ())})

    def binding_deleted(self, binding: Binding) -> None:
        self._classes.pop(str(Request.for_object(binding)), None)
        self.binding_changed(binding)

    # ---------------------------------------------------------------- reconcile
    async def reconcile(self, request: Request) -> Result:
        """Assess one domain; write the conditions that changed."""
        domain, now = request.name, self._ctx.clock.now()
        quiet = self._quiet_for()
        if quiet > 0:
            self._keys.enqueue_after(request, quiet)
            return Result()
        self._all_asked = None  # a cluster's change from now on is one this look may not see
        members = self.domains().get(domain)
        risks: dict[str, assess.Risk] = {}
        placed: set[str] = set()
        if members is not None:
            on = {str(Request.for_object(b)): b for name in members
                  for b in self._bindings.by_index(BY_CLUSTER, name)}
            threshold = self._ctx.options.eviction_circuit_breaker_threshold
            fleet = Fleet(self._clusters.list(), on.values(), self._policies.list(), threshold=threshold,
                          facts=self._parsed(), classes=self._classes)
            found = await self._assess(fleet, domain, members, now)
            if found is None:  # failover work appeared: it goes first
                self._keys.enqueue_after(request, SETTLE)
                return Result()
            risks, placed = found, set(on)
        before = self.risks.pop(domain, {})
        if risks:
            self.risks[domain] = risks
        for key in before:
            self._by_binding.get(key, {}).pop(domain, None)
        for key, risk in risks.items():
            self._by_binding.setdefault(key, {})[domain] = risk
        for key in sorted({*before, *risks, *placed}):
            if not self._by_binding.get(key, True):
                del self._by_binding[key]
            await self._turns.wait(OTHERS)
            await self._write(key)
            await asyncio.sleep(0)
        return Result()

    async def _assess(self, fleet: Fleet, domain: str, members: list[str], now: datetime
                      ) -> dict[str, assess.Risk] | None:
        """What losing ``domain`` risks per binding, :data:`SLICE` workloads per loop turn; ``None``
        when failover work became ready, or a cluster was lost, meanwhile."""
        steps = assess.assess_steps(fleet, self.by, domain, members, now, scheduler=self._scheduler)
        done = 0
        while True:
            try:
                next(steps)
            except StopIteration as end:
                _, risks = end.value
                return cast(dict[str, assess.Risk], risks)
            done += 1
            if done % SLICE == 0:
                await asyncio.sleep(0)
                if self._turns.busy_before(OTHERS) or self._quiet_for() > 0:
                    return None

    def _parsed(self) -> dict[str, ClusterFacts]:
        """Every cluster's facts, parsed again only for a new version."""
        out = {}
        for cluster in self._clusters.list():
            version = cluster.metadata.resource_version or ""
            known = self._facts.get(cluster.name)
            out[cluster.name] = known if known is not None and version and known.version == version \
                else facts_of(cluster)
        self._facts = out
        return out

    async def _write(self, key: str) -> None:
        binding = self._bindings.get(_request(key))
        if binding is None or not binding.spec.clusters or binding.metadata.deletion_timestamp is not None:
            return
        wanted = assess.condition_of(self._by_binding.get(key, {}).values(), self.by)
        now = self._ctx.clock.now()

        def change(current: Binding) -> Binding | None:
            have = get_condition(current.status.conditions, assess.CONDITION)
            if have is not None and (have.status, have.reason, have.message) == (
                    wanted.status, wanted.reason, wanted.message):
                return None
            status = current.status.model_copy(
                update={"conditions": set_condition(current.status.conditions, wanted, now)})
            return current.model_copy(update={"status": status})

        if change(binding) is not None:
            await write(self._ctx.client, binding, change, subresource="status")


class _ClusterEvents:
    def __init__(self, readiness: Readiness) -> None:
        self._readiness = readiness

    def on_add(self, obj: Cluster) -> None:
        self._readiness.cluster_changed()

    def on_update(self, old: Cluster, new: Cluster) -> None:
        if _ready(old) == "True" and _ready(new) != "True":
            self._readiness.cluster_lost()
        elif _seen(old) != _seen(new):
            self._readiness.cluster_changed(moved=_placed(old) != _placed(new))

    def on_delete(self, obj: Cluster) -> None:
        self._readiness.cluster_changed()


def _placed(cluster: Cluster) -> tuple[object, ...]:
    """What of a cluster decides its failure domains."""
    spec = cluster.spec
    return spec.zone, spec.zones, spec.region


def _ready(cluster: Cluster) -> str | None:
    ready = get_condition(cluster.status.conditions, constants.COND_READY)
    return ready.status if ready is not None else None


def _seen(cluster: Cluster) -> tuple[object, ...]:
    """What of a cluster a what-if reads."""
    return (cluster.labels(), cluster.spec, _ready(cluster),
            cluster.status.resource_summary, cluster.status.api_enablements,
            cluster.metadata.deletion_timestamp)


class _BindingEvents:
    def __init__(self, readiness: Readiness) -> None:
        self._readiness = readiness

    def on_add(self, obj: Binding) -> None:
        self._readiness.binding_changed(obj)

    def on_update(self, old: Binding, new: Binding) -> None:
        applied = constants.APPLIED_PLACEMENT_ANNOTATION
        if old.metadata.generation != new.metadata.generation or \
                old.annotations().get(applied) != new.annotations().get(applied):
            self._readiness.binding_changed(old)
            self._readiness.binding_changed(new)

    def on_delete(self, obj: Binding) -> None:
        self._readiness.binding_deleted(obj)


# ---------------------------------------------------------------- metrics


@dataclass(frozen=True, eq=False)
class _Caches:
    bindings: BindingInformers


class ReadinessCollector(Collector):
    """``fleetkeeper_bindings_failover_ready{status}``: bindings by their condition's status, read from
    every running plane's caches at scrape time."""

    def __init__(self) -> None:
        self.planes: list[_Caches] = []

    def describe(self) -> list[Metric]:
        return []

    def collect(self) -> Iterator[Metric]:
        family = GaugeMetricFamily("fleetkeeper_bindings_failover_ready",
                                   "Bindings whose FailoverReady condition has this status (True: they keep "
                                   "all their replicas if any one failure domain fails; False: at risk).",
                                   labels=["status"])
        counts: Counter[str] = Counter()
        for plane in list(self.planes):
            for binding in plane.bindings.list():
                found = get_condition(binding.status.conditions, assess.CONDITION)
                if found is not None:
                    counts[found.status] += 1
        for status in STATUSES:
            family.add_metric([status], float(counts[status]))
        yield family


#: the process's collector, in the default registry (what ``/metrics`` serves)
COLLECTOR = ReadinessCollector()
REGISTRY.register(COLLECTOR)


class _Exported:
    """Adds a plane's caches to :data:`COLLECTOR` while the plane runs."""

    needs_leader_election = False
    name = f"{NAME}-metrics"

    def __init__(self, caches: _Caches) -> None:
        self.caches = caches

    async def run(self) -> None:
        COLLECTOR.planes.append(self.caches)
        try:
            await asyncio.Event().wait()
        finally:
            COLLECTOR.planes.remove(self.caches)


def _new(deps: Deps) -> Reconciler:
    informers = deps.informers
    clusters = informers.informer_for(Cluster)
    bindings = BindingInformers(informers)
    bindings.add_indexer(BY_CLUSTER, _targets)
    readiness = Readiness(deps.ctx, clusters, bindings, informers.informer_for(ClusterTaintPolicy), deps.keys,
                          turns=deps.turns)
    clusters.add_handler(_ClusterEvents(readiness))
    bindings.add_handler(_BindingEvents(readiness))
    deps.add(_Exported(_Caches(bindings)))
    return FuncReconciler(readiness.reconcile)


#: the FailoverReady condition (control plane only, lowest tier, when failover_readiness is set)
SPEC = ControllerSpec(NAME, reconciler=_new, kind=ResourceBinding, tier=Tier.OTHERS, runs=Runs.PLANE,
                      enabled=lambda options: options.failover_readiness)


__all__ = ["BY_CLUSTER", "COLLECTOR", "FAILOVER_QUIET", "NAME", "SETTLE", "SLICE", "SPEC", "Readiness",
           "ReadinessCollector"]
