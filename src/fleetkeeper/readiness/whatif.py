"""What losing some clusters would do to every workload, decided before it happens.

Pure (values in, values out): ``fleetkeeper whatif`` runs it on files or on the live
state, the readiness controller on its caches, and the tests against the real failover
of the same scenario. Nothing here re-states a rule; each step is the part that makes
that decision in a real failure, applied to a copy of the fleet:

1. **the clusters fail** — each named cluster gets the ``Ready=False`` a failing probe
   writes (cluster-status), the NoSchedule taint the cluster controller adds for it, and
   the taints the ClusterTaintPolicies add (the default policy's ``not-ready:NoExecute``);
2. **the circuit breaker** reads the failed fleet: open, nothing is evicted (``blocked``; so is
   a binding whose dispatching is suspended: its eviction waits);
3. **the taint-manager's rule** decides, per binding and failed target, from the applied
   tolerations: evict now, after ``tolerationSeconds`` (``movesAfterSeconds``), or never;
4. **the eviction** takes the clusters out of ``spec.clusters`` with a graceful-eviction
   task each, and **the scheduler** — with the estimator on the remaining clusters —
   decides the new placement (on the capacity the clusters reported, as in a burst of
   evictions); a failed schedule leaves the replicas without a new home (``homeless``);
5. **the room** the moved replicas take is booked in eviction order (highest
   ``schedulePriority`` first, :mod:`~fleetkeeper.readiness.capacity`): replicas placed
   where no room is left stay Pending (``pendingReplicas``).

Equivalent bindings (same spec but for their name, same applied placement and status)
share one scheduling decision per what-if.
"""

from __future__ import annotations

from collections.abc import Collection, Generator, Hashable, Iterable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar, cast

from fleetkeeper.api import conditions, constants
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.taintpolicy import ClusterTaintPolicy
from fleetkeeper.api.work import Binding, ClusterResourceBinding, ResourceBindingSpec, TargetCluster
from fleetkeeper.controllers import cluster_rules, cluster_status_rules, eviction_rules, taint_policy_rules
from fleetkeeper.controllers import taint_manager_rules as taint_rules
from fleetkeeper.readiness.capacity import Ledger
from fleetkeeper.scheduler import estimator
from fleetkeeper.scheduler.core import Scheduler
from fleetkeeper.scheduler.placement import placement_info
from fleetkeeper.scheduler.snapshot import ClusterFacts, Snapshot, facts_of
from fleetkeeper.scheduler.triggers import is_workload, reschedule_required, schedule_trigger
from fleetkeeper.scheduler.webster import larger_name_wins

Placement = Mapping[str, int]
#: why a workload whose dispatching is suspended stays (the taint-manager holds its eviction)
HELD = "the eviction waits: dispatching is suspended"
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Workload:
    """What the failure does to one binding placed on a failed cluster."""

    binding: str
    before: Placement
    after: Placement
    #: replicas that would not run: placed where no room is left, or left without a placement
    pending_replicas: int = 0
    #: the evicted replicas found no new placement (the old copy stays, on the failed cluster)
    homeless: bool = False
    #: the circuit breaker would pause the eviction
    blocked: bool = False
    #: seconds after the taint until it leaves (0: at once; ``None``: it never leaves)
    moves_after_seconds: float | None = None
    #: why, in a sentence (the scheduler's error, the breaker's reading, a toleration)
    reason: str = ""

    @property
    def moved(self) -> bool:
        return not self.blocked and dict(self.after) != dict(self.before)

    @property
    def short(self) -> bool:
        return self.pending_replicas > 0 and not self.homeless

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape of ``fleetkeeper whatif -o json``."""
        seconds = self.moves_after_seconds
        return {"binding": self.binding, "before": dict(sorted(self.before.items())),
                "after": dict(sorted(self.after.items())), "pendingReplicas": self.pending_replicas,
                "homeless": self.homeless, "blocked": self.blocked,
                "movesAfterSeconds": None if seconds is None else round(seconds)}


@dataclass(frozen=True, slots=True)
class Report:
    """The what-if of one failure: the clusters lost and what happens to each workload on them."""

    down: tuple[str, ...]
    workloads: tuple[Workload, ...]

    def summary(self) -> dict[str, int]:
        w = self.workloads
        return {"moved": sum(x.moved for x in w), "homeless": sum(x.homeless for x in w),
                "short": sum(x.short for x in w), "blocked": sum(x.blocked for x in w)}

    @property
    def whole(self) -> bool:
        """Every workload keeps all its replicas (nothing homeless, short or blocked)."""
        return not any(x.homeless or x.short or x.blocked for x in self.workloads)

    def as_dict(self) -> dict[str, Any]:
        return {"down": list(self.down), "workloads": [x.as_dict() for x in self.workloads],
                "summary": self.summary()}


class Fleet:
    """What a what-if reads: the clusters (with status), the bindings, the taint policies and
    the circuit breaker's threshold. Cluster facts are parsed once and shared by every what-if."""

    def __init__(self, clusters: Iterable[Cluster], bindings: Iterable[Binding],
                 policies: Iterable[ClusterTaintPolicy], *, threshold: float,
                 facts: Mapping[str, ClusterFacts] | None = None,
                 classes: MutableMapping[str, tuple[str, Hashable]] | None = None) -> None:
        self.clusters: dict[str, Cluster] = {c.name: c for c in clusters}
        self.bindings: tuple[Binding, ...] = tuple(bindings)
        self.policies: tuple[ClusterTaintPolicy, ...] = tuple(policies)
        self.threshold = threshold
        #: each cluster's facts (``facts``: parsed beforehand, by name, for the same versions)
        known = facts or {}
        self.facts: dict[str, ClusterFacts] = {name: known.get(name) or facts_of(c)
                                               for name, c in self.clusters.items()}
        self._on: dict[str, list[Binding]] | None = None
        self._classes: dict[int, Hashable] = {}
        #: binding key → (resourceVersion, class): kept by a caller across fleets of later versions
        self._known = classes

    def placed_on(self, names: Collection[str]) -> list[Binding]:
        """The bindings with a target among ``names``, in the fleet's order (an index built once)."""
        if self._on is None:
            self._on = {}
            for b in self.bindings:
                for name in {t.name for t in b.spec.clusters or ()}:
                    self._on.setdefault(name, []).append(b)
        found = {id(b): b for name in names for b in self._on.get(name, ())}
        return [b for b in self.bindings if id(b) in found] if len(names) > 1 else list(found.values())

    def class_of(self, binding: Binding) -> Hashable:
        """:func:`equivalence` of one of the fleet's bindings, computed once (once per version of the
        binding with ``classes``)."""
        key = self._classes.get(id(binding))
        if key is not None:
            return key
        known, version = self._known, binding.metadata.resource_version
        if known is None or not version:
            key = equivalence(binding)
        else:
            name = binding_key(binding)
            found = known.get(name)
            if found is None or found[0] != version:
                found = known[name] = (version, equivalence(binding))
            key = found[1]
        self._classes[id(binding)] = key
        return key

    def in_domain(self, *, region: str | None = None, zone: str | None = None,
                  provider: str | None = None) -> list[str]:
        """The clusters of a region, zone or provider (``spec.zones`` counts for zones)."""
        out = []
        for name, c in sorted(self.clusters.items()):
            spec = c.spec
            if ((region is not None and spec.region == region)
                    or (zone is not None and (spec.zone == zone or zone in (spec.zones or ())))
                    or (provider is not None and spec.provider == provider)):
                out.append(name)
        return out


def binding_key(binding: Binding) -> str:
    """``NS/NAME`` for a ResourceBinding, ``NAME`` for a ClusterResourceBinding."""
    ns = binding.metadata.namespace
    return f"{ns}/{binding.name}" if ns else binding.name


def failed_cluster(cluster: Cluster, policies: Iterable[ClusterTaintPolicy], now: datetime) -> Cluster:
    """``cluster`` as the plane would see it once it stops answering: Ready=False, and the taints
    the cluster controller and the taint policies add for that."""
    ready = cluster_status_rules.observed_ready(cluster_status_rules.OFFLINE)
    status = cluster.status.model_copy(update={
        "conditions": conditions.set_condition(cluster.status.conditions, ready, now)})
    taints = cluster_rules.sync_ready_taints(cluster.spec.taints, ready, now)
    spec = cluster.spec if taints is None else cluster.spec.model_copy(update={"taints": taints})
    down = cluster.model_copy(update={"spec": spec, "status": status})
    tainted = taint_policy_rules.apply_policies(down, policies, now).taints
    return down.model_copy(update={"spec": spec.model_copy(update={"taints": tainted})})


def whatif(fleet: Fleet, down: Collection[str], now: datetime, *, scheduler: Scheduler | None = None
           ) -> Report:
    """What losing ``down`` (cluster names of ``fleet``) would do to the workloads on them."""
    return finish(whatif_steps(fleet, down, now, scheduler=scheduler))


Steps = Generator[None, None, T]


def finish(steps: Steps[T]) -> T:
    """Run a computation of steps (:func:`whatif_steps`) to its end, at once."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return cast(T, done.value)


def whatif_steps(fleet: Fleet, down: Collection[str], now: datetime, *, scheduler: Scheduler | None = None
                 ) -> Steps[Report]:
    """:func:`whatif` one workload at a time: it yields after each, so a caller on an event loop
    can give the loop a turn between them (the same report in the end)."""
    lost = {name: failed_cluster(fleet.clusters[name], fleet.policies, now) for name in down
            if name in fleet.clusters}
    clusters = [lost.get(name, c) for name, c in fleet.clusters.items()]
    breaker = taint_rules.breaker(clusters, fleet.threshold)
    snapshot = Snapshot(facts_of(lost[name]) if name in lost else fleet.facts[name]
                        for name in fleet.clusters)
    plans = [p for p in (_plan(b, lost, now) for b in fleet.placed_on(lost)) if p is not None]
    plans.sort(key=lambda p: p.order)
    ledger = Ledger({f.name: f.capacity for f in snapshot.clusters})
    decide = _Decider(fleet, scheduler or Scheduler(), snapshot, now)
    out = []
    for plan in plans:
        if plan.delay is None:
            out.append(Workload(plan.key, plan.before, plan.before, reason="tolerated forever"))
        elif breaker.open:
            out.append(Workload(plan.key, plan.before, plan.before, blocked=True, reason=breaker.message()))
        elif taint_rules.dispatch_held(plan.binding.spec.suspension):
            out.append(Workload(plan.key, plan.before, plan.before, blocked=True, reason=HELD))
        else:
            out.append(_moved(plan, decide(plan), ledger))
        yield
    return Report(tuple(sorted(lost)), tuple(out))


@dataclass(frozen=True, slots=True)
class _Plan:
    """One binding on a failed cluster: what the taint-manager would do with it."""

    binding: Binding
    key: str
    before: Placement
    evict: tuple[str, ...]
    #: seconds until it is evicted; ``None``: tolerated forever
    delay: float | None
    order: tuple[int, float, bool, str]


def _plan(binding: Binding, lost: Mapping[str, Cluster], now: datetime) -> _Plan | None:
    targets = binding.spec.clusters or ()
    if binding.metadata.deletion_timestamp is not None or not any(t.name in lost for t in targets):
        return None
    try:
        tolerations = eviction_rules.applied_tolerations(binding.annotations())
    except ValueError:
        tolerations = None
    evict, delays = [], []
    for target in targets:
        if target.name in lost:
            decision = taint_rules.decide(taint_rules.no_execute_taints(lost[target.name]), tolerations, now)
            if decision.action != "never":
                evict.append(target.name)
                delays.append(decision.delay if decision.action == "later" else 0.0)
    delay = min(delays) if delays else None
    key = binding_key(binding)
    order = (-binding.spec.schedule_priority_value(), delay or 0.0,
             isinstance(binding, ClusterResourceBinding), key)
    return _Plan(binding, key, {t.name: t.replicas for t in targets}, tuple(evict), delay, order)


@dataclass(frozen=True, slots=True)
class _Decision:
    """The scheduler's answer for an evicted binding: the new ``spec.clusters``, or why none."""

    after: Placement
    error: str = ""


class _Decider:
    """Evicts and schedules, once per class of equivalent bindings."""

    def __init__(self, fleet: Fleet, scheduler: Scheduler, snapshot: Snapshot, now: datetime) -> None:
        self._fleet, self._scheduler, self._snapshot, self._now = fleet, scheduler, snapshot, now
        self._memo: dict[Hashable, _Decision] = {}

    def __call__(self, plan: _Plan) -> _Decision:
        key = (self._fleet.class_of(plan.binding), plan.evict)
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = self._decide(plan)
        return found

    def _decide(self, plan: _Plan) -> _Decision:
        binding = plan.binding
        options = eviction_rules.TaskOptions(
            producer=constants.PRODUCER_TAINT_MANAGER, reason=constants.EVICTION_REASON_TAINT_UNTOLERATED,
            purge_mode=taint_rules.purge_mode(binding.spec.failover, constants.PURGE_GRACEFULLY),
            creation_timestamp=self._now)
        spec, _, _ = taint_rules.evict_clusters(binding.spec, binding.status, plan.evict, options)
        kept = {t.name: t.replicas for t in spec.clusters or ()}
        applied = binding.annotations().get(constants.APPLIED_PLACEMENT_ANNOTATION, "")
        if schedule_trigger(spec, binding.status, applied, self._snapshot.deleting) is None:
            return _Decision(kept)
        outcome = self._scheduler.schedule_binding(spec, binding.status, self._snapshot, self._now)
        if outcome.error is not None:
            return _Decision(kept if outcome.clusters is None else dict(outcome.clusters), str(outcome.error))
        return _Decision(dict(outcome.clusters or ()))


def equivalence(binding: Binding) -> Hashable:
    """What decides a binding's scheduling but its name: bindings with equal keys are placed alike.

    Of the resource's UID only the tie-break it gives counts, and of the time it was last
    scheduled only whether a reschedule was asked for after it."""
    spec = binding.spec
    resource = spec.resource
    status = binding.status
    return (spec.model_dump_json(exclude={"resource"}), resource.api_version, resource.kind,
            larger_name_wins(resource.uid or ""),
            binding.annotations().get(constants.APPLIED_PLACEMENT_ANNOTATION, ""),
            status.scheduler_observed_affinity_name, reschedule_required(spec, status))


def _moved(plan: _Plan, decision: _Decision, ledger: Ledger) -> Workload:
    """The workload once moved: book the room its new replicas take, count what does not run."""
    spec = plan.binding.spec
    request = _request(spec)
    kept = {name: n for name, n in plan.before.items() if name not in plan.evict}
    pending = 0
    for name, replicas in sorted(decision.after.items()):
        new = replicas - kept.get(name, 0)
        pending += new - ledger.start(name, request, new)
    homeless = bool(decision.error) or (not decision.after and bool(plan.before))
    if _divided(spec):
        pending += max(spec.replicas - sum(decision.after.values()), 0)
    elif homeless:
        pending += sum(plan.before[name] for name in plan.evict)
    return Workload(plan.key, plan.before, decision.after, pending_replicas=pending, homeless=homeless,
                    moves_after_seconds=plan.delay, reason=decision.error)


def _divided(spec: ResourceBindingSpec) -> bool:
    placement = spec.placement
    return (placement is not None and is_workload(spec) and len(spec.components or ()) <= 1
            and placement.replica_scheduling_type() != constants.REPLICA_SCHEDULING_DUPLICATED)


def _request(spec: ResourceBindingSpec) -> estimator.Request | None:
    key = estimator.request_key(spec.replica_requirements)
    return None if key is None else estimator.request_of(key)


def applied(binding: Binding, clusters: Sequence[tuple[str, int]]) -> Binding:
    """``binding`` as the scheduler leaves it after placing it on ``clusters`` (its ``spec.clusters``
    and applied-placement annotation): a binding read from a file, scheduled for the what-if."""
    assert binding.spec.placement is not None
    meta = binding.metadata.model_copy(update={"annotations": {
        **binding.annotations(),
        constants.APPLIED_PLACEMENT_ANNOTATION: placement_info(binding.spec.placement).json}})
    targets = [TargetCluster(name=n, replicas=r) for n, r in clusters]
    spec = binding.spec.model_copy(update={"clusters": targets})
    return binding.model_copy(update={"metadata": meta, "spec": spec})


__all__ = ["HELD", "Fleet", "Report", "Steps", "Workload", "applied", "binding_key", "equivalence",
           "failed_cluster", "finish", "whatif", "whatif_steps"]
