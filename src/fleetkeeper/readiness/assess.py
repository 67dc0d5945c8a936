"""Failover readiness: does each binding survive the loss of any one failure domain?

A binding is ready for failover when, for every domain it runs in — a cluster, or a zone
or a region (the ``failover_readiness_domain`` option) — losing that domain leaves it all
its replicas: the what-if of that loss (:func:`~fleetkeeper.readiness.whatif.whatif`)
finds it a new home with room for every replica, and the circuit breaker lets it move.
Pure, over a :class:`~fleetkeeper.readiness.whatif.Fleet`:

* :func:`domains` — the failure domains of a fleet and their clusters;
* :func:`assess_domain` — what losing one domain risks, per binding on it (a :class:`Risk`);
* :func:`condition_of` — the ``FailoverReady`` condition of a binding from its risks: the
  worst risk, the domain that breaks it named in the message;
* :func:`full_pass` — every domain, every binding (the benchmark's pass); :func:`each` — the
  what-if of every single domain's loss (``fleetkeeper whatif --each``).

A risk's reason says why: ``PinnedToOneCluster`` (a single cluster can take the binding at
all), ``NoOtherClusterMatches`` (losing the domain leaves no placement for the evicted
replicas), ``NoSpareCapacity`` (placed, but some replicas would find no room) and
``EvictionsWouldPause`` (the loss trips the circuit breaker, or the binding's dispatching is
suspended, which holds its eviction). Equivalent bindings share one
scheduling decision per domain (see :func:`~fleetkeeper.readiness.whatif.equivalence`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.meta import Condition
from fleetkeeper.api.work import Binding
from fleetkeeper.readiness.whatif import HELD, Fleet, Report, Steps, binding_key, finish, whatif, whatif_steps
from fleetkeeper.scheduler.core import Scheduler
from fleetkeeper.scheduler.framework import view_of
from fleetkeeper.scheduler.snapshot import Snapshot

CONDITION = "FailoverReady"
DOMAINS = ("cluster", "zone", "region")
PINNED = "PinnedToOneCluster"
NO_MATCH = "NoOtherClusterMatches"
NO_CAPACITY = "NoSpareCapacity"
PAUSED = "EvictionsWouldPause"
#: the worst first: a condition names the worst of a binding's risks
SEVERITY = {PINNED: 0, NO_MATCH: 1, NO_CAPACITY: 2, PAUSED: 3}


def ready_reason(by: str) -> str:
    """``SurvivesClusterLoss``, ``SurvivesZoneLoss``, ``SurvivesRegionLoss``."""
    return f"Survives{by.capitalize()}Loss"


@dataclass(frozen=True, slots=True)
class Risk:
    """What losing one domain does to one binding, when it does not keep all its replicas."""

    reason: str
    domain: str
    message: str

    @property
    def rank(self) -> tuple[int, str]:
        return SEVERITY[self.reason], self.domain


def domains(clusters: Iterable[Cluster], by: str) -> dict[str, list[str]]:
    """The failure domains (cluster, zone or region names) and their clusters; a cluster with no
    zone (or region) is in no such domain."""
    if by not in DOMAINS:
        raise ValueError(f"failure domain must be one of {', '.join(DOMAINS)}, got {by!r}")
    out: dict[str, list[str]] = {}
    for cluster in sorted(clusters, key=lambda c: c.name):
        name, spec = cluster.name, cluster.spec
        if by == "cluster":
            keys = [name]
        elif by == "zone":
            keys = sorted({*([spec.zone] if spec.zone else []), *(spec.zones or ())})
        else:
            keys = [spec.region] if spec.region else []
        for key in keys:
            out.setdefault(key, []).append(name)
    return out


def assess_domain(fleet: Fleet, by: str, domain: str, clusters: list[str], now: datetime, *,
                  scheduler: Scheduler | None = None) -> tuple[Report, dict[str, Risk]]:
    """The what-if of losing ``domain`` (its ``clusters``), and the risk per binding key."""
    return finish(assess_steps(fleet, by, domain, clusters, now, scheduler=scheduler))


def assess_steps(fleet: Fleet, by: str, domain: str, clusters: list[str], now: datetime, *,
                 scheduler: Scheduler | None = None) -> Steps[tuple[Report, dict[str, Risk]]]:
    """:func:`assess_domain` one workload at a time (as :func:`.whatif_steps`)."""
    scheduler = scheduler or Scheduler()
    report = yield from whatif_steps(fleet, clusters, now, scheduler=scheduler)
    named = f"{by} {domain}"
    risks: dict[str, Risk] = {}
    healthy: Snapshot | None = None
    by_key: dict[str, Binding] = {}
    for w in report.workloads:
        if w.blocked:
            why = "its eviction waits: dispatching is suspended" if w.reason == HELD else \
                "the circuit breaker pauses evictions"
            risks[w.binding] = Risk(PAUSED, domain, f"if {named} fails, {why}")
        elif w.homeless:
            healthy = healthy or Snapshot(fleet.facts.values())
            by_key = by_key or {binding_key(b): b for b in fleet.bindings}
            only = _only_cluster(by_key[w.binding], scheduler, healthy, now)
            if only is not None:
                risks[w.binding] = Risk(PINNED, domain, f"only cluster {only} can take it: if {named} fails, "
                                        "its replicas have no placement")
            else:
                risks[w.binding] = Risk(NO_MATCH, domain, f"if {named} fails, no other cluster takes its "
                                        f"replicas: {w.reason or 'no placement'}")
        elif w.short:
            n = w.pending_replicas
            risks[w.binding] = Risk(NO_CAPACITY, domain, f"if {named} fails, {n} replica{'s' * (n != 1)} "
                                    "would stay Pending for lack of capacity")
    return report, risks


def _only_cluster(binding: Binding, scheduler: Scheduler, healthy: Snapshot, now: datetime) -> str | None:
    """The one cluster the binding's filters let through on the healthy fleet, if there is just one."""
    if binding.spec.placement is None:
        return None
    fit = scheduler.framework.find_fit(view_of(binding.spec, binding.status, now), healthy)
    return fit.feasible[0].name if len(fit.feasible) == 1 else None


def condition_of(risks: Iterable[Risk], by: str) -> Condition:
    """The ``FailoverReady`` condition: True when nothing is at risk, else the worst risk."""
    worst = min(risks, key=lambda r: r.rank, default=None)
    if worst is None:
        return Condition(type=CONDITION, status="True", reason=ready_reason(by),
                         message=f"keeps all its replicas if any one {by} fails")
    return Condition(type=CONDITION, status="False", reason=worst.reason, message=worst.message)


def each(fleet: Fleet, by: str, now: datetime) -> list[tuple[str, Report]]:
    """The N+1 matrix: the what-if of losing each single domain, by domain name."""
    scheduler = Scheduler()
    return [(domain, whatif(fleet, clusters, now, scheduler=scheduler))
            for domain, clusters in domains(fleet.clusters.values(), by).items()]


@dataclass(frozen=True, slots=True)
class Pass:
    """A full pass: each binding's condition, and how many equivalence classes the bindings form."""

    conditions: Mapping[str, Condition]
    classes: int


def full_pass(fleet: Fleet, by: str, now: datetime) -> Pass:
    """Every domain of ``fleet`` assessed, every scheduled binding's condition."""
    scheduler = Scheduler()
    at_risk: dict[str, list[Risk]] = {}
    for domain, clusters in domains(fleet.clusters.values(), by).items():
        _, risks = assess_domain(fleet, by, domain, clusters, now, scheduler=scheduler)
        for key, risk in risks.items():
            at_risk.setdefault(key, []).append(risk)
    scheduled = [b for b in fleet.bindings if b.spec.clusters]
    conditions = {binding_key(b): condition_of(at_risk.get(binding_key(b), ()), by) for b in scheduled}
    return Pass(conditions, len({fleet.class_of(b) for b in scheduled}))


__all__ = ["CONDITION", "DOMAINS", "NO_CAPACITY", "NO_MATCH", "PAUSED", "PINNED", "Pass", "Risk",
           "assess_domain", "assess_steps", "condition_of", "domains", "each", "full_pass", "ready_reason"]
