"""The scheduling algorithm: find fit → prioritise → select → assign.

:class:`Scheduler` is the one core every entry point uses — the scheduling controller,
the what-if CLI and the benchmark — so they cannot disagree. It is pure: it reads a
binding's spec and status, a :class:`~fleetkeeper.scheduler.snapshot.Snapshot` of the
clusters and ``now``, and returns a result or raises; writing the result back is the
controller's business.

One run (Karmada's ``genericScheduler.Schedule``):

1. **find fit** — every cluster not being deleted goes through the filter plugins; the
   first failing filter is the cluster's diagnosis. No survivor → :class:`FitError`.
2. **prioritise** — score plugins add up per feasible cluster.
3. **select** — candidates get their capacity (general estimator, plus what the binding
   already runs there) and overflow tier, are put in global order, and spread
   constraints pick among them.
4. **assign** — the replica strategy divides the replicas over the selection.

:meth:`Scheduler.schedule_binding` adds the ``clusterAffinities`` fallback around it:
try the observed term, then each later term, and stop at the first success.

Per-snapshot sharing: filter verdicts, scores, capacity estimates and static weights are
memoised per snapshot by what they depend on (see the plugins' equivalence keys). A
binding with no previous result is fully decided by such keys plus its placement,
replica count and tie-break direction, so its whole decision — candidates, selection,
assignment — is computed once per snapshot and shared by every equivalent binding: a
fleet of bindings from a few policies costs little more than one binding per policy.
Bindings with a previous result share the verdicts but are decided one by one.

A scheduler made with a ``timer`` (the controller's clock) reports how long each step
took when it computed it (:mod:`~fleetkeeper.scheduler.metrics`); a shared decision is
timed once, where it is made.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TypeVar

from fleetkeeper.api.work import ResourceBindingSpec, ResourceBindingStatus
from fleetkeeper.scheduler import candidates, metrics
from fleetkeeper.scheduler.assignment import Assignment, assign_replicas
from fleetkeeper.scheduler.errors import ScheduleError
from fleetkeeper.scheduler.framework import BindingView, Fit, FitError, Framework, Plugin, view_of
from fleetkeeper.scheduler.plugins import new_plugins
from fleetkeeper.scheduler.snapshot import Snapshot
from fleetkeeper.scheduler.spread import select_clusters
from fleetkeeper.scheduler.triggers import affinity_index, reschedule_required
from fleetkeeper.scheduler.webster import larger_name_wins

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a scheduling attempt decided, for the controller (or the CLI) to apply.

    ``clusters`` is the new ``spec.clusters`` when it must be written (a result, or the
    empty list after a fit error); ``None`` leaves ``spec.clusters`` alone."""

    clusters: Assignment | None
    error: ScheduleError | None = None
    #: the clusterAffinities term that succeeded (``None``: leave the status field alone)
    affinity_name: str | None = None
    #: one message per clusterAffinities term that failed before the outcome (warning events)
    term_failures: list[str] = field(default_factory=list)


class Scheduler:
    """Karmada's generic scheduler over a registry of plugins."""

    def __init__(self, plugins: Sequence[Plugin] | None = None, *, empty_workload_propagation: bool = False,
                 timer: metrics.Timer | None = None) -> None:
        self.framework = Framework(new_plugins() if plugins is None else plugins, timer=timer)
        self.empty_workload_propagation = empty_workload_propagation
        self._timer = timer

    # -- one affinity ------------------------------------------------------------------
    def schedule(self, spec: ResourceBindingSpec, status: ResourceBindingStatus, snapshot: Snapshot,
                 now: datetime, *, observed_affinity: str | None = None) -> Assignment:
        """Schedule once; returns ``[(cluster, replicas), …]`` or raises :class:`ScheduleError`."""
        binding = view_of(spec, status, now, observed_affinity)
        started = self._timer() if self._timer is not None else 0.0
        fit = self.framework.find_fit(binding, snapshot)
        started = self._step(metrics.FILTER, started)
        if not fit.feasible:
            raise FitError(len(snapshot), fit.diagnosis)
        key = self._shared_key(binding, fit, snapshot)
        if key is None:
            return self._decide(binding, fit, snapshot, None)
        return list(_remember(snapshot, ("decision", id(self), key),
                              lambda: tuple(self._decide(binding, fit, snapshot, key))))

    def _shared_key(self, binding: BindingView, fit: Fit, snapshot: Snapshot) -> tuple[Hashable, ...] | None:
        """What a first schedule's decision depends on, or ``None`` when it is the binding's own.

        A binding with no previous result (and no clusterAffinities term to track) is
        decided by its equivalence keys, capacity needs, placement, replica count and
        tie-break direction alone, so equal bindings share one decision per snapshot."""
        if binding.targets or fit.key is None or binding.placement.placement.cluster_affinities is not None:
            return None
        scoring = self.framework.score_keys(binding, snapshot)
        if scoring is None:
            return None
        spec = binding.spec
        return (fit.key, scoring, candidates.capacity_key(spec, snapshot), binding.placement.json,
                spec.replicas, _divides(spec), larger_name_wins(spec.resource.uid or ""),
                reschedule_required(spec, binding.status))

    def _decide(self, binding: BindingView, fit: Fit, snapshot: Snapshot, key: tuple[Hashable, ...] | None
                ) -> Assignment:
        """Select and assign (the part of a run after the filters)."""
        spec = binding.spec
        started = self._timer() if self._timer is not None else 0.0
        if key is None:
            ordered = candidates.build(binding, fit, self.framework.score(binding, fit, snapshot), snapshot)
        else:
            ordered = list(snapshot.memo(("candidates", id(self), key[:3]), lambda: tuple(candidates.build(
                binding, fit, self.framework.score(binding, fit, snapshot), snapshot))))
        started = self._step(metrics.SCORE, started)
        try:
            selected = select_clusters(ordered, binding.placement, spec.replicas)
        except ScheduleError as exc:
            raise exc.wrap("failed to select clusters") from None
        finally:
            started = self._step(metrics.SELECT, started)
        try:
            result = assign_replicas(
                selected, binding.placement, replicas=spec.replicas, divide=_divides(spec),
                previous=[(t.name, t.replicas) for t in spec.clusters or ()], uid=spec.resource.uid or "",
                fresh=reschedule_required(spec, binding.status), observed=binding.observed_affinity,
                weights=candidates.static_weights_of(binding.placement, snapshot))
        except ScheduleError as exc:
            raise exc.wrap("failed to assign replicas") from None
        finally:
            self._step(metrics.ASSIGN, started)
        if self.empty_workload_propagation:
            placed = {name for name, _ in result}
            result = result + [(c.name, 0) for c in selected if c.name not in placed]
        return result

    def _step(self, name: str, started: float) -> float:
        """Report step ``name`` begun at ``started``; the time it ended (0 without a timer)."""
        if self._timer is None:
            return 0.0
        ended = self._timer()
        metrics.step(name, ended - started)
        return ended

    # -- the clusterAffinities fallback ----------------------------------------------------
    def schedule_binding(self, spec: ResourceBindingSpec, status: ResourceBindingStatus, snapshot: Snapshot,
                         now: datetime, *, describe: str = "ResourceBinding") -> Outcome:
        """Schedule with Karmada's full-run rules (single affinity or ordered fallback).

        ``describe`` names the binding in term-failure messages (``ResourceBinding(ns/name)``)."""
        placement = spec.placement
        if placement is None:
            return Outcome(None, ScheduleError("failed to schedule: the binding has no placement"))
        if placement.cluster_affinities is None:
            try:
                return Outcome(self.schedule(spec, status, snapshot, now))
            except FitError as exc:
                return Outcome([], exc)
            except ScheduleError as exc:
                return Outcome(None, exc)
        terms = placement.cluster_affinities
        start = 0 if reschedule_required(spec, status) else affinity_index(
            terms, status.scheduler_observed_affinity_name or "")
        first: ScheduleError | None = None
        failures: list[str] = []
        for i in range(start, len(terms)):
            try:
                result = self.schedule(spec, status, snapshot, now, observed_affinity=terms[i].affinity_name)
            except ScheduleError as exc:
                first = first or exc
                failures.append(f"failed to schedule {describe} with clusterAffiliates index({i}): {exc}")
                continue
            return Outcome(result, None, terms[i].affinity_name, failures)
        error = first or ScheduleError("no clusterAffinities term to schedule with")
        return Outcome([] if isinstance(error, FitError) else None, error, None, failures)



def _divides(spec: ResourceBindingSpec) -> bool:
    """Whether replicas are divided (a single-template workload), else placed without counts."""
    return (spec.replicas > 0 or spec.replica_requirements is not None) and len(spec.components or ()) <= 1


def _remember(snapshot: Snapshot, key: Hashable, compute: Callable[[], T]) -> T:
    """:meth:`Snapshot.memo` that also remembers a :class:`ScheduleError` and raises it again."""
    def attempt() -> tuple[T | None, ScheduleError | None]:
        try:
            return compute(), None
        except ScheduleError as exc:
            return None, exc

    value, error = snapshot.memo(key, attempt)
    if error is not None:
        raise error.with_traceback(None)
    return value  # type: ignore[return-value]


__all__ = ["Outcome", "Scheduler"]
