"""The plugin framework: results, the two extension points, and the binding context.

Plugins answer per cluster, as in kube-scheduler and Karmada:

* a :class:`FilterPlugin` says whether one cluster may take the binding
  (:class:`Result` Success / Unschedulable with a human reason / Error);
* a :class:`ScorePlugin` gives a feasible cluster 0..100 points; scores add up.

Plugins run in the explicit order of the registry (:mod:`~fleetkeeper.scheduler.plugins`);
the first filter that does not succeed decides the cluster's verdict and reason.

**Equivalence.** A fleet has many bindings and few distinct policies, so most bindings
ask the same question of the same clusters. Each plugin therefore also names the part
of the binding its answer depends on (:meth:`FilterPlugin.equivalence`): bindings
whose keys are equal for every plugin get equal verdicts on every cluster of a
snapshot, and :class:`Framework` computes the verdicts once per snapshot and key. A key
is cheap (a few strings and frozensets); a plugin that cannot say returns ``None`` and
is then asked per binding. The verdicts are the same either way — the key only decides
how often the plugin is asked.

:class:`BindingView` is what plugins read: the binding's spec and status plus values
derived once per scheduling attempt (targets, evicted and blocked clusters, ``now``).
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol, runtime_checkable

from fleetkeeper.api.constants import DEFAULT_BLOCK_PREDECESSOR_SECONDS
from fleetkeeper.api.work import ResourceBindingSpec, ResourceBindingStatus
from fleetkeeper.runtime.karmada_metrics import child
from fleetkeeper.scheduler import metrics
from fleetkeeper.scheduler.errors import ScheduleError
from fleetkeeper.scheduler.placement import PlacementInfo, placement_info
from fleetkeeper.scheduler.snapshot import ClusterFacts, Snapshot

MIN_SCORE = 0
MAX_SCORE = 100


class Code(enum.Enum):
    SUCCESS = "Success"
    UNSCHEDULABLE = "Unschedulable"
    ERROR = "Error"


@dataclass(frozen=True, slots=True)
class Result:
    """A plugin's verdict on one cluster."""

    code: Code = Code.SUCCESS
    reasons: tuple[str, ...] = ()
    #: the plugin that gave a non-success verdict (filled by the framework)
    plugin: str = ""

    @property
    def is_success(self) -> bool:
        return self.code is Code.SUCCESS

    @property
    def message(self) -> str:
        """The reasons as one sentence list (empty on success)."""
        return ", ".join(self.reasons)


SUCCESS = Result()


def unschedulable(*reasons: str) -> Result:
    """The cluster cannot take the binding, for these human-readable reasons."""
    return Result(Code.UNSCHEDULABLE, reasons)


def error(*reasons: str) -> Result:
    """The plugin could not decide (an internal failure)."""
    return Result(Code.ERROR, reasons)


def merge(results: Sequence[Result]) -> Result | None:
    """Fold several verdicts into one: Error beats Unschedulable beats Success."""
    if not results:
        return None
    codes = {r.code for r in results}
    code = Code.SUCCESS
    if Code.ERROR in codes:
        code = Code.ERROR
    elif Code.UNSCHEDULABLE in codes:
        code = Code.UNSCHEDULABLE
    return Result(code, tuple(reason for r in results for reason in r.reasons))


# --------------------------------------------------------------------------- the binding as plugins see it


@dataclass(frozen=True, slots=True, eq=False)
class BindingView:
    """A binding's spec and status plus what is derived from them for one attempt."""

    spec: ResourceBindingSpec
    status: ResourceBindingStatus
    placement: PlacementInfo
    now: datetime
    #: ``spec.clusters`` as name → replicas
    targets: Mapping[str, int]
    #: clusters the workload is being evicted from (``gracefulEvictionTasks``)
    evicting: frozenset[str]
    #: clusters still blocked by ``evictionHistory`` at ``now``
    blocked: frozenset[str]
    #: ``status.schedulerObservingAffinityName`` ("" when unset)
    observed_affinity: str
    #: replicas > 0, requirements or components (Karmada's ``IsWorkload``)
    is_workload: bool

    @property
    def group_version_kind(self) -> tuple[str, str]:
        return (self.spec.resource.api_version, self.spec.resource.kind)


def view_of(spec: ResourceBindingSpec, status: ResourceBindingStatus, now: datetime,
            observed_affinity: str | None = None) -> BindingView:
    """Derive the :class:`BindingView` of a binding (``observed_affinity`` overrides the status)."""
    if spec.placement is None:
        raise ScheduleError("failed to schedule: the binding has no placement")
    return BindingView(
        spec=spec,
        status=status,
        placement=placement_info(spec.placement),
        now=now,
        targets={t.name: t.replicas for t in spec.clusters or ()},
        evicting=frozenset(t.from_cluster for t in spec.graceful_eviction_tasks or ()),
        blocked=blocked_clusters(spec, now),
        observed_affinity=(status.scheduler_observed_affinity_name or "") if observed_affinity is None
        else observed_affinity,
        is_workload=spec.replicas > 0 or spec.replica_requirements is not None or bool(spec.components),
    )


def blocked_clusters(spec: ResourceBindingSpec, now: datetime) -> frozenset[str]:
    """Clusters of ``spec.evictionHistory`` whose block has not expired at ``now``.

    An entry blocks its cluster until ``evictedAt + blockPredecessorSeconds`` (from
    ``spec.failover.application``, default 600 s); 0 blocks it for good."""
    history = spec.eviction_history
    if not history:
        return frozenset()
    app = spec.failover.application if spec.failover is not None else None
    seconds = app.block_seconds() if app is not None else DEFAULT_BLOCK_PREDECESSOR_SECONDS
    if seconds == 0:
        return frozenset(r.cluster_name for r in history)
    span = timedelta(seconds=seconds)
    return frozenset(r.cluster_name for r in history if now < r.evicted_at + span)


def next_block_expiry(spec: ResourceBindingSpec, now: datetime) -> datetime | None:
    """When the earliest still-running ``evictionHistory`` block ends (None: none will),
    so a binding that fits nowhere meanwhile is tried again exactly then."""
    history = spec.eviction_history
    if not history:
        return None
    app = spec.failover.application if spec.failover is not None else None
    seconds = app.block_seconds() if app is not None else DEFAULT_BLOCK_PREDECESSOR_SECONDS
    if seconds == 0:
        return None
    span = timedelta(seconds=seconds)
    ends = [r.evicted_at + span for r in history if now < r.evicted_at + span]
    return min(ends) if ends else None


# --------------------------------------------------------------------------- extension points


@runtime_checkable
class Plugin(Protocol):
    @property
    def name(self) -> str: ...


@runtime_checkable
class FilterPlugin(Plugin, Protocol):
    """Decides whether one cluster may take the binding."""

    def filter(self, binding: BindingView, cluster: ClusterFacts) -> Result: ...

    def equivalence(self, binding: BindingView, snapshot: Snapshot) -> Hashable:
        """What :meth:`filter` reads from the binding (``None``: ask for every binding)."""
        ...


@runtime_checkable
class ScorePlugin(Plugin, Protocol):
    """Rates a feasible cluster between :data:`MIN_SCORE` and :data:`MAX_SCORE`."""

    def score(self, binding: BindingView, cluster: ClusterFacts) -> int: ...

    def equivalence(self, binding: BindingView, snapshot: Snapshot) -> Hashable:
        """What :meth:`score` reads from the binding (``None``: ask for every binding)."""
        ...


# --------------------------------------------------------------------------- the run


@dataclass(frozen=True, slots=True)
class Fit:
    """The outcome of the filters over a snapshot."""

    feasible: tuple[ClusterFacts, ...]
    #: cluster name → the first non-success verdict
    diagnosis: Mapping[str, Result]
    #: the equivalence key it was computed for (``None``: computed for one binding only)
    key: Hashable = None


class FitError(ScheduleError):
    """No cluster passed the filters (condition reason ``NoClusterFit``)."""

    def __init__(self, num_all: int, diagnosis: Mapping[str, Result]) -> None:
        self.num_all = num_all
        self.diagnosis = dict(diagnosis)
        super().__init__(fit_error_message(num_all, self.diagnosis))

    def cluster_reasons(self) -> list[str]:
        """One line per rejected cluster, ordered by name."""
        return [f'cluster "{name}" is not fit, reason: {self.diagnosis[name].message}'
                for name in sorted(self.diagnosis)]


def fit_error_message(num_all: int, diagnosis: Mapping[str, Result]) -> str:
    """``0/N clusters are available: <count> <reason>, ….`` (reasons sorted as strings)."""
    if num_all == 0 or not diagnosis:
        return f"0/{num_all} clusters are available: no cluster exists."
    counts = Counter(reason for result in diagnosis.values() for reason in result.reasons)
    histogram = sorted(f"{n} {reason}" for reason, n in counts.items())
    return f"0/{num_all} clusters are available: {', '.join(histogram)}."


class Framework:
    """Runs the filter and score plugins of a registry, in registry order."""

    def __init__(self, plugins: Sequence[Plugin], *, timer: metrics.Timer | None = None) -> None:
        #: ``timer``: the extension points and plugin sweeps report their durations with it
        self._timer = timer
        self.plugins = tuple(plugins)
        self.filters = tuple(p for p in plugins if isinstance(p, FilterPlugin))
        self.scorers = tuple(p for p in plugins if isinstance(p, ScorePlugin))

    def run_filters(self, binding: BindingView, cluster: ClusterFacts) -> Result:
        """The first non-success verdict of the filters on one cluster (with its plugin), or success."""
        for plugin in self.filters:
            result = plugin.filter(binding, cluster)
            if not result.is_success:
                return Result(result.code, result.reasons, plugin.name)
        return SUCCESS

    def find_fit(self, binding: BindingView, snapshot: Snapshot) -> Fit:
        """Filter every live cluster; shared between equivalent bindings of a snapshot.

        Each plugin's verdicts are memoised by its own key, so a binding that differs
        from an earlier one in what one plugin reads only re-asks that plugin."""
        keys = tuple(p.equivalence(binding, snapshot) for p in self.filters)
        if any(k is None for k in keys):
            return self._timed_fit(binding, snapshot, keys, None)
        key = ("fit", id(self), keys)
        return snapshot.memo(key, lambda: self._timed_fit(binding, snapshot, keys, key), topology_only=True)

    def _timed_fit(self, binding: BindingView, snapshot: Snapshot, keys: tuple[Hashable, ...],
                   key: Hashable) -> Fit:
        if self._timer is None:
            return self._fit(binding, snapshot, keys, key)
        started = self._timer()
        fit = self._fit(binding, snapshot, keys, key)
        outcome = "Success" if fit.feasible else Code.UNSCHEDULABLE.value
        child(metrics.EXTENSION_POINT_SECONDS, metrics.FILTER, outcome).observe(self._timer() - started)
        return fit

    def _fit(self, binding: BindingView, snapshot: Snapshot, keys: tuple[Hashable, ...],
             key: Hashable) -> Fit:
        failures = [self._failures(i, plugin, binding, snapshot, keys[i])
                    for i, plugin in enumerate(self.filters)]
        rejected = set().union(*failures) if failures else set()
        feasible = tuple(c for c in snapshot.live if c.name not in rejected)
        diagnosis: dict[str, Result] = {}
        for cluster in snapshot.live:
            if cluster.name in rejected:
                diagnosis[cluster.name] = next(f[cluster.name] for f in failures if cluster.name in f)
        return Fit(feasible, diagnosis, key)

    def _failures(self, index: int, plugin: FilterPlugin, binding: BindingView, snapshot: Snapshot,
                  key: Hashable) -> dict[str, Result]:
        """One plugin's rejections over the live clusters (name → verdict with the plugin named)."""
        def compute() -> dict[str, Result]:
            started = self._timer() if self._timer is not None else 0.0
            out = {}
            for cluster in snapshot.live:
                result = plugin.filter(binding, cluster)
                if not result.is_success:
                    out[cluster.name] = Result(result.code, result.reasons, plugin.name)
            if self._timer is not None:
                outcome = "Success" if not out else Code.UNSCHEDULABLE.value
                seconds = self._timer() - started
                child(metrics.PLUGIN_SECONDS, plugin.name, metrics.FILTER, outcome).observe(seconds)
            return out

        if key is None:
            return compute()
        return snapshot.memo(("verdicts", id(self), index, key), compute, topology_only=True)

    def score(self, binding: BindingView, fit: Fit, snapshot: Snapshot) -> tuple[int, ...]:
        """Summed scores of the feasible clusters (same order); each plugin's memoised by its key."""
        started = self._timer() if self._timer is not None else 0.0
        totals = [0] * len(fit.feasible)
        for index, plugin in enumerate(self.scorers):
            key = plugin.equivalence(binding, snapshot)
            scores = self._scores(index, plugin, binding, snapshot, key)
            if scores:
                for i, cluster in enumerate(fit.feasible):
                    totals[i] += scores.get(cluster.name, 0)
        if self._timer is not None:
            child(metrics.EXTENSION_POINT_SECONDS, metrics.SCORE, "Success").observe(self._timer() - started)
        return tuple(totals)

    def score_keys(self, binding: BindingView, snapshot: Snapshot) -> tuple[Hashable, ...] | None:
        """The score plugins' keys (``None`` when one cannot say): bindings alike in them score alike."""
        keys = tuple(p.equivalence(binding, snapshot) for p in self.scorers)
        return None if any(k is None for k in keys) else keys

    def _scores(self, index: int, plugin: ScorePlugin, binding: BindingView, snapshot: Snapshot,
                key: Hashable) -> dict[str, int]:
        """One plugin's non-zero scores over the live clusters (sparse: most scores are 0)."""
        def compute() -> dict[str, int]:
            started = self._timer() if self._timer is not None else 0.0
            out = {}
            for cluster in snapshot.live:
                value = plugin.score(binding, cluster)
                if value:
                    out[cluster.name] = value
            if self._timer is not None:
                seconds = self._timer() - started
                child(metrics.PLUGIN_SECONDS, plugin.name, metrics.SCORE, "Success").observe(seconds)
            return out

        if key is None:
            return compute()
        return snapshot.memo(("scores", id(self), index, key), compute, topology_only=True)


__all__ = [
    "MAX_SCORE",
    "MIN_SCORE",
    "SUCCESS",
    "BindingView",
    "Code",
    "FilterPlugin",
    "Fit",
    "FitError",
    "Framework",
    "Plugin",
    "Result",
    "ScorePlugin",
    "blocked_clusters",
    "error",
    "fit_error_message",
    "merge",
    "next_block_expiry",
    "unschedulable",
    "view_of",
]
