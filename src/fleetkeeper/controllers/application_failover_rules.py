"""Application failover decisions, as pure functions over a binding and ``now``.

**What is tracked, per binding and target cluster** (an :class:`Observation`): when the
workload's status was first collected there, whether it has ever been Healthy there,
and its *unhealthy clock* — seconds counted so far plus the start of the current
Unhealthy run. The clock follows docs/architecture.md (Failover safety): only Healthy resets it; Unknown (the
member cannot be reached, the Work is not applied) pauses it without losing what was
counted — so Unhealthy 200 s, Unknown 50 s, Unhealthy 100 s with toleration 300 s is an
eviction at 350 s, where Karmada (which resets on Unknown) would start over.

**Where it is kept.** In the binding's annotation :data:`OBSERVATIONS_ANNOTATION`
(fleetkeeper's, JSON, written only on a transition), not in memory: a restarted or newly
elected control plane reads the clocks back and evicts at the same instant the old one
would have (Karmada's in-memory timers restart from zero).

**When the clock counts** (the proposal's ``preConditions``, fleetkeeper additive):
``delaySeconds`` — only from ``firstSeen + delaySeconds`` on; ``healthyState: Healthy``
— only once the workload has been Healthy in that cluster (a workload that never ran
there is left to be fixed there). With neither, from the first Unhealthy observation.

**The decision** (:func:`decide`): a cluster is evicted at the exact instant its
counted unhealthy time reaches ``tolerationSeconds`` (0: at the first Unhealthy
observation); otherwise the reconcile comes back at the earliest such deadline. Clusters
already being evicted (a graceful-eviction task exists) are not counted. An eviction is
Karmada's ``GracefulEvictCluster`` with producer ``resource-binding-application-failover-
controller`` (or the cluster-binding variant), reason ``ApplicationFailure``, the purge
mode, ``gracePeriodSeconds`` for Gracefully, ``suppressDeletion: true`` for Never, and —
with state preservation — the preserved labels and ``clustersBeforeFailover``; and an
``evictionHistory`` record, which the scheduler's ClusterEviction filter honours for
``blockPredecessorSeconds`` (0: for good).

**The timeline** gets an Unhealthy episode once it has lasted :data:`ANNOUNCE_AFTER`
(with when failover will happen), then its pause, resumption and end — a rollout's pods
starting for a few seconds is not an event worth reading about.

**Repeated failovers keep the original state**: when the workload never became Healthy
in the cluster it is now leaving, that cluster's own status says nothing about the job —
the labels it was started with (the state injected into it) are carried on instead.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from fleetkeeper.api import constants
from fleetkeeper.api.base import format_time, parse_time
from fleetkeeper.api.policy import ApplicationFailoverBehavior
from fleetkeeper.api.work import EvictionRecord, ResourceBindingSpec, ResourceBindingStatus
from fleetkeeper.controllers import eviction_rules as evictions
from fleetkeeper.controllers import state_preservation as state

#: fleetkeeper's bookkeeping on the binding: per-cluster unhealthy clocks (JSON)
OBSERVATIONS_ANNOTATION = "applicationfailover.fleetkeeper.io/observations"
#: an Unhealthy episode goes on the timeline once it has lasted this long (seconds)
ANNOUNCE_AFTER = 10.0

@dataclass(frozen=True, slots=True)
class Observation:
    """What application failover knows about the workload in one cluster."""

    first_seen: datetime
    healthy_seen: bool = False
    #: start of the current Unhealthy run (None: not Unhealthy now)
    unhealthy_since: datetime | None = None
    #: unhealthy seconds counted before the current run
    counted: float = 0.0
    #: the current Unhealthy episode (until Healthy) is on the timeline
    announced: bool = False


@dataclass(frozen=True, slots=True)
class Settings:
    """The binding's ``failover.application``, with defaults applied."""

    toleration: float = float(constants.DEFAULT_TOLERATION_SECONDS)
    delay: float = 0.0
    require_healthy: bool = False
    block_seconds: int = constants.DEFAULT_BLOCK_PREDECESSOR_SECONDS
    #: ``decisionConditions.healthyState`` lists Unknown: unknown time counts, it does not pause
    count_unknown: bool = False

    @classmethod
    def of(cls, app: ApplicationFailoverBehavior) -> Settings:
        pre = app.pre_conditions
        states = app.decision_conditions.healthy_state or ()
        return cls(toleration=float(app.decision_conditions.toleration_seconds),
                   delay=float(pre.delay_seconds or 0) if pre is not None else 0.0,
                   require_healthy=pre is not None and pre.healthy_state == constants.HEALTHY,
                   block_seconds=app.block_seconds(),
                   count_unknown="Unknown" in states)


# --------------------------------------------------------------------------- bookkeeping


def decode(annotations: Mapping[str, str]) -> dict[str, Observation]:
    """The observations stored on a binding; unreadable bookkeeping counts as none."""
    text = annotations.get(OBSERVATIONS_ANNOTATION)
    if not text:
        return {}
    try:
        raw = json.loads(text)
        return {name: Observation(
            first_seen=parse_time(entry["firstSeen"]), healthy_seen=bool(entry.get("healthySeen", False)),
            unhealthy_since=parse_time(entry["unhealthySince"]) if entry.get("unhealthySince") else None,
            counted=float(entry.get("unhealthySeconds", 0.0)), announced=bool(entry.get("announced", False)),
        ) for name, entry in raw.get("clusters", {}).items()}
    except (ValueError, TypeError, KeyError, AttributeError):
        return {}


def encode(observations: Mapping[str, Observation]) -> str | None:
    """The annotation value (None: nothing to keep); deterministic, so unchanged state compares equal."""
    if not observations:
        return None
    clusters: dict[str, dict[str, Any]] = {}
    for name in sorted(observations):
        obs = observations[name]
        entry: dict[str, Any] = {"firstSeen": format_time(obs.first_seen)}
        if obs.healthy_seen:
            entry["healthySeen"] = True
        if obs.unhealthy_since is not None:
            entry["unhealthySince"] = format_time(obs.unhealthy_since)
        if obs.counted:
            entry["unhealthySeconds"] = round(obs.counted, 6)
        if obs.announced:
            entry["announced"] = True
        clusters[name] = entry
    return json.dumps({"clusters": clusters}, sort_keys=True, separators=(",", ":"))


# --------------------------------------------------------------------------- the clock


def armed_at(obs: Observation, settings: Settings) -> datetime | None:
    """From when unhealthy time counts (None: not yet — the workload was never Healthy here)."""
    if settings.require_healthy and not obs.healthy_seen:
        return None
    return obs.first_seen + timedelta(seconds=settings.delay)


def _counted_since(obs: Observation, settings: Settings, now: datetime) -> float:
    """Seconds the current Unhealthy run adds to the clock at ``now``."""
    armed = armed_at(obs, settings)
    if obs.unhealthy_since is None or armed is None:
        return 0.0
    return max(0.0, (now - max(obs.unhealthy_since, armed)).total_seconds())


def unhealthy_seconds(obs: Observation, settings: Settings, now: datetime) -> float:
    """The unhealthy time counted at ``now``."""
    return obs.counted + _counted_since(obs, settings, now)


def observe(previous: Observation | None, health: str | None, settings: Settings,
            now: datetime) -> Observation | None:
    """The observation after seeing ``health`` at ``now`` (None: nothing collected yet)."""
    if previous is None:
        if health not in (constants.HEALTHY, constants.UNHEALTHY):
            return None
        previous = Observation(first_seen=now)
    if health == constants.HEALTHY:
        return replace(previous, healthy_seen=True, unhealthy_since=None, counted=0.0, announced=False)
    if health == constants.UNHEALTHY or settings.count_unknown:
        return previous if previous.unhealthy_since is not None else replace(previous, unhealthy_since=now)
    if previous.unhealthy_since is None:  # Unknown: pause the clock, keep what was counted
        return previous
    return replace(previous, unhealthy_since=None, counted=unhealthy_seconds(previous, settings, now))


def deadline(obs: Observation, settings: Settings) -> datetime | None:
    """When the counted time reaches the toleration (None: the clock is not running)."""
    armed = armed_at(obs, settings)
    if obs.unhealthy_since is None or armed is None:
        return None
    return max(obs.unhealthy_since, armed) + timedelta(seconds=max(0.0, settings.toleration - obs.counted))


# --------------------------------------------------------------------------- tasks and history


def task_options(app: ApplicationFailoverBehavior, *, producer: str, now: datetime,
                 preserved: Mapping[str, str] | None = None,
                 clusters_before: Sequence[str] | None = None) -> evictions.TaskOptions:
    """The eviction task application failover creates for one cluster."""
    mode = app.purge_mode
    grace = None
    if mode == constants.PURGE_GRACEFULLY:
        grace = app.grace_period_seconds if app.grace_period_seconds is not None \
            else constants.DEFAULT_GRACE_PERIOD_SECONDS
    return evictions.TaskOptions(
        producer=producer, reason=constants.EVICTION_REASON_APPLICATION_FAILURE, purge_mode=mode,
        grace_period_seconds=grace, suppress_deletion=True if mode == constants.PURGE_NEVER else None,
        preserved_label_state=preserved, clusters_before_failover=clusters_before, creation_timestamp=now)


def record_eviction(history: Sequence[EvictionRecord] | None, record: EvictionRecord, *, block_seconds: int,
                    now: datetime) -> list[EvictionRecord]:
    """``history`` with ``record`` (replacing the cluster's older one) and expired blocks dropped."""
    def active(r: EvictionRecord) -> bool:
        return block_seconds == 0 or now < r.evicted_at + timedelta(seconds=block_seconds)

    kept = [r for r in history or () if r.cluster_name != record.cluster_name and active(r)]
    return [*kept, record]


def blocked_until(evicted_at: datetime, block_seconds: int) -> datetime | None:
    """When the evicted cluster is schedulable again for the workload (None: never)."""
    return None if block_seconds == 0 else evicted_at + timedelta(seconds=block_seconds)


# --------------------------------------------------------------------------- the decision


@dataclass(frozen=True, slots=True)
class Note:
    """Something worth a timeline entry: ``kind`` is unhealthy, paused, recovered, held or evicted."""

    cluster: str
    kind: str
    message: str


@dataclass(frozen=True, slots=True)
class Plan:
    """What one reconcile does to a binding."""

    observations: dict[str, Observation]
    evict: list[str] = field(default_factory=list)
    #: cluster → the labels its task preserves
    preserved: dict[str, dict[str, str]] = field(default_factory=dict)
    #: cluster → why state could not be extracted (its eviction waits for a retry)
    failed: dict[str, str] = field(default_factory=dict)
    #: cluster → unhealthy seconds counted when it was evicted
    unhealthy: dict[str, float] = field(default_factory=dict)
    requeue_after: float | None = None
    notes: list[Note] = field(default_factory=list)


def _seconds(value: float) -> str:
    return f"{value:g}s"


def _unhealthy_text(name: str, obs: Observation, settings: Settings, now: datetime, lead: str) -> Note:
    due = deadline(obs, settings)
    if due is None:
        return Note(name, "held", f"{lead}; no failover from it: the workload has never been Healthy there "
                                  "(preConditions.healthyState Healthy)")
    counted = f", {_seconds(obs.counted)} already counted" if obs.counted else ""
    armed = armed_at(obs, settings)
    delayed = (f", counting from preConditions.delaySeconds in {_seconds((armed - now).total_seconds())}"
               if armed is not None and armed > now else "")
    return Note(name, "unhealthy", f"{lead}: failover in {_seconds(max(0.0, (due - now).total_seconds()))} "
                                   f"unless it recovers (tolerationSeconds {_seconds(settings.toleration)}"
                                   f"{counted}{delayed})")


def announce(name: str, before: Observation | None, after: Observation, health: str | None,
             settings: Settings, now: datetime) -> tuple[Observation, list[Note]]:
    """Timeline notes for one cluster's step ``before`` → ``after`` (and ``after`` marked announced).

    An Unhealthy episode is announced once it has lasted :data:`ANNOUNCE_AFTER` — a
    rollout's pods starting is not worth an entry; from then on its pause (Unknown), its
    resumption and its end (Healthy) are noted too."""
    if health == constants.HEALTHY:
        if before is None or not before.announced:
            return after, []
        return after, [Note(name, "recovered", f"Healthy again in {name}: unhealthy clock reset")]
    if not after.announced:
        since = after.unhealthy_since
        if since is None or now < since + timedelta(seconds=ANNOUNCE_AFTER):
            return after, []
        lead = f"Unhealthy in {name} for {_seconds((now - since).total_seconds())}"
        return replace(after, announced=True), [_unhealthy_text(name, after, settings, now, lead)]
    was_running = before is not None and before.unhealthy_since is not None
    if was_running and after.unhealthy_since is None:
        text = (f"health {health or 'Unknown'} in {name}: unhealthy clock paused at "
                f"{_seconds(after.counted)} of {_seconds(settings.toleration)}")
        return after, [Note(name, "paused", text)]
    if not was_running and after.unhealthy_since is not None:
        return after, [_unhealthy_text(name, after, settings, now, f"Unhealthy again in {name}")]
    return after, []


def _announcement(obs: Observation) -> datetime | None:
    """When an Unhealthy episode not yet on the timeline is due to be announced."""
    if obs.announced or obs.unhealthy_since is None:
        return None
    return obs.unhealthy_since + timedelta(seconds=ANNOUNCE_AFTER)


def ineligible(spec: ResourceBindingSpec, *, has_health_rule: bool, namespaced: bool) -> str | None:
    """Why application failover does not watch this binding (None: it does).

    Unlike Karmada, a binding without collected status is watched: a status that went
    missing reads as Unknown for every cluster, which pauses the clocks instead of
    dropping them."""
    if spec.failover is None or spec.failover.application is None:
        return "application failover is not configured"
    if not has_health_rule:
        return (f"application failover can never fire for {spec.resource.api_version} {spec.resource.kind}: "
                "the kind has no health rule, so it always counts as Healthy; add a "
                "ResourceInterpreterCustomization with healthInterpretation for it")
    if namespaced and not spec.propagate_deps:
        return "application failover needs propagateDeps: true"
    return None


def decide(spec: ResourceBindingSpec, status: ResourceBindingStatus, annotations: Mapping[str, str],
           now: datetime) -> Plan:
    """Advance every target cluster's clock to ``now`` and pick the clusters to evict."""
    app = spec.failover.application if spec.failover is not None else None
    if app is None:
        return Plan(observations={})
    settings = Settings.of(app)
    before = decode(annotations)
    evicting = {t.from_cluster for t in spec.graceful_eviction_tasks or ()}
    health = {i.cluster_name: i.health for i in status.aggregated_status or ()}
    plan = Plan(observations={})
    waits: list[float] = []
    for name in (t.name for t in spec.clusters or ()):
        if name in evicting:
            continue
        after = observe(before.get(name), health.get(name), settings, now)
        if after is None:
            continue
        after, notes = announce(name, before.get(name), after, health.get(name), settings, now)
        plan.notes.extend(notes)
        due = deadline(after, settings)
        held = spec.suspension is not None and bool(spec.suspension.dispatching)
        if due is None or now < due or held:  # a suspended dispatch holds the eviction
            plan.observations[name] = after
            waits.extend((moment - now).total_seconds() for moment in (due, _announcement(after))
                         if moment and moment > now)  # a held, passed deadline waits for the resume
            continue
        try:
            plan.preserved[name] = state.preserved_for(spec, status, name, ran_healthy=after.healthy_seen)
        except state.ExtractionError as exc:
            plan.failed[name] = str(exc)
            plan.observations[name] = after
            continue
        plan.evict.append(name)
        plan.unhealthy[name] = unhealthy_seconds(after, settings, now)
    return replace(plan, requeue_after=min(waits) if waits else None)


def apply_plan(spec: ResourceBindingSpec, plan: Plan, *, producer: str, now: datetime) -> ResourceBindingSpec:
    """``spec`` with the planned evictions: tasks appended, targets removed, history recorded."""
    app = spec.failover.application if spec.failover is not None else None
    if app is None or not plan.evict:
        return spec
    before = [t.name for t in spec.clusters or ()]
    rules = app.state_preservation.rules if app.state_preservation is not None else []
    history = list(spec.eviction_history or ())
    out = spec
    for name in plan.evict:
        options = task_options(app, producer=producer, now=now, preserved=plan.preserved.get(name) or None,
                               clusters_before=before if rules else None)
        out = evictions.graceful_evict_cluster(out, name, options)
        history = record_eviction(history, EvictionRecord(
            cluster_name=name, evicted_at=now, reason=constants.EVICTION_REASON_APPLICATION_FAILURE,
            producer=producer), block_seconds=app.block_seconds(), now=now)
    return out.model_copy(update={"eviction_history": history})


def annotations_with(annotations: Mapping[str, str],
                     observations: Mapping[str, Observation]) -> dict[str, str]:
    """``annotations`` carrying ``observations`` (the annotation dropped when there are none)."""
    out = {k: v for k, v in annotations.items() if k != OBSERVATIONS_ANNOTATION}
    value = encode(observations)
    if value is not None:
        out[OBSERVATIONS_ANNOTATION] = value
    return out


def eviction_message(cluster: str, mode: str, seconds: float) -> str:
    """The timeline text of an eviction: ``evicted from member1 (ApplicationFailure, Gracefully) …``."""
    return (f"evicted from {cluster} ({constants.EVICTION_REASON_APPLICATION_FAILURE}, {mode}) after "
            f"{_seconds(seconds)} unhealthy")


def blocked_message(cluster: str, evicted_at: datetime, block_seconds: int) -> str:
    until = blocked_until(evicted_at, block_seconds)
    if until is None:
        return f"{cluster} blocked for this workload for good (blockPredecessorSeconds 0)"
    return (f"{cluster} blocked for this workload until {format_time(until)} "
            f"(blockPredecessorSeconds {block_seconds})")


__all__ = [
    "ANNOUNCE_AFTER", "OBSERVATIONS_ANNOTATION", "Note", "Observation", "Plan", "Settings",
    "annotations_with", "announce", "apply_plan", "armed_at", "blocked_message", "blocked_until", "deadline",
    "decide", "decode", "encode", "eviction_message", "ineligible", "observe", "record_eviction",
    "task_options", "unhealthy_seconds",
]
