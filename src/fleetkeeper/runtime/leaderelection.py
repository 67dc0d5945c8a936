"""Leader election on a ``coordination.k8s.io/v1`` Lease, through the client.

Several replicas of the control plane may run against one store; only the leader
runs controllers and the scheduler. Candidates compete for one Lease (by default in
``karmada-system``) with Karmada's (client-go's) timing: a 15 s lease, renewed every
2 s (``retry_period``), given up when it could not be renewed for 10 s
(``renew_deadline``). The rules about the lease record itself (free, expired, claim,
release) are pure functions in :mod:`fleetkeeper.runtime.lease`.

* **Campaign.** Every ``retry_period`` a candidate reads the Lease. When it is absent
  the candidate creates it; when it is free (no holder, or
  ``renewTime + leaseDurationSeconds < now``) it writes itself in as holder with the
  resourceVersion it read. Writes are optimistic: a ``Conflict`` (or ``AlreadyExists``)
  means another candidate won the race, and the loser simply tries again later.
* **Lead.** While leading, the leader renews every ``retry_period``. Each attempt is
  bounded by what is left of the renew deadline. When no renewal succeeded for
  ``renew_deadline`` seconds — or the Lease names another holder — leadership is lost
  at once: ``is_leader`` turns false, the leading work is cancelled, and the candidate
  campaigns again. Because ``renew_deadline < lease_duration``, a leader that cannot
  renew stops acting as leader before any other candidate can see the lease expire,
  so two leaders never act at the same instant (given one clock).
* **Stop.** Cancelling :meth:`LeaderElector.run` cancels the leading work and, with
  ``release_on_cancel`` (the default), releases the lease so a standby takes over on
  its next retry rather than after the full lease duration.

Work that must only run while leading is passed to ``run(while_leading)`` and is
cancelled the moment leadership is lost; callbacks report the transitions.

**Takeovers are visible**, as client-go makes them: each transition is one log line
(``became leader``; ``lost the lease`` with the reason, a warning; ``handed the lease
over`` on a clean stop), an Event on the Lease (reason ``LeaderElection``, ``<identity>
became leader`` / ``<identity> stopped leading``, written bounded by the retry period and
never in the way of the transition; ``record_events=False`` leaves them out), and the
gauge ``leader_election_master_status{name}`` (1 while leading, else 0) that ``/metrics``
serves. A lease that cannot be reached
(its API server, or a member, down) is said once, then once a minute of the injected
clock with the count of failures held back (:mod:`~fleetkeeper.runtime.throttle`), not at
every retry.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Protocol

import structlog
from prometheus_client import Gauge
from structlog.typing import FilteringBoundLogger

from fleetkeeper import errors
from fleetkeeper.api import core
from fleetkeeper.api.coordination import Lease
from fleetkeeper.api.meta import ObjectMeta
from fleetkeeper.client.interface import Reader, Writer
from fleetkeeper.clock import Clock
from fleetkeeper.runtime import lease as rules
from fleetkeeper.runtime.throttle import LogThrottle


@dataclass(frozen=True)
class LeaderElectionConfig:
    """Which lease to compete for, as whom, and with what timing (Karmada's defaults)."""

    name: str
    identity: str
    namespace: str = "karmada-system"
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    release_on_cancel: bool = True
    #: record each transition as an Event on the Lease (off where Events cannot be written, e.g.
    #: a lease kept in a member cluster through the Member protocol)
    record_events: bool = True

    def __post_init__(self) -> None:
        if not self.identity:
            raise ValueError("leader election needs a non-empty identity")
        if not 0 < self.retry_period < self.renew_deadline < self.lease_duration:
            raise ValueError(
                "need 0 < retry_period < renew_deadline < lease_duration, got "
                f"{self.retry_period} / {self.renew_deadline} / {self.lease_duration}"
            )


#: Kubernetes' gauge of leadership, by lease name
MASTER_STATUS = Gauge(
    "leader_election_master_status",
    "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates "
    "master. 'name' is the string used to identify the lease. Please make sure to group by name.", ["name"])
#: the throttle's topic of failed lease requests
LEASE_TOPIC = "lease"
#: the reason of the Events a transition records on the Lease (client-go's)
EVENT_REASON = "LeaderElection"
BECAME_LEADER, STOPPED_LEADING = "became leader", "stopped leading"
#: lease name → the electors of this process leading it (what the gauge says)
_LEADING: dict[str, set[int]] = {}


class LeaseClient(Reader, Writer, Protocol):
    """The part of a client leader election needs (get, create, update)."""


#: work to do only while leading; cancelled the moment leadership is lost
LeadingWork = Callable[[], Coroutine[Any, Any, None]]


class LeaderElector:
    """Campaigns for a Lease, renews it while leading, and reports the transitions."""

    def __init__(
        self,
        client: LeaseClient,
        config: LeaderElectionConfig,
        *,
        clock: Clock,
        on_started_leading: Callable[[], None] | None = None,
        on_stopped_leading: Callable[[], None] | None = None,
        on_new_leader: Callable[[str], None] | None = None,
        logger: FilteringBoundLogger | None = None,
    ) -> None:
        self.config = config
        self._client = client
        self._clock = clock
        self._on_started = on_started_leading
        self._on_stopped = on_stopped_leading
        self._on_new_leader = on_new_leader
        base: FilteringBoundLogger = logger if logger is not None else structlog.get_logger("fleetkeeper")
        self._log = base.bind(lease=f"{config.namespace}/{config.name}", identity=config.identity)
        self._leading = asyncio.Event()
        self._observed: str | None = None
        _LEADING.setdefault(config.name, set())
        MASTER_STATUS.labels(config.name).set(1 if _LEADING[config.name] else 0)
        #: which failed lease requests are said (see the module notes)
        self._quiet = LogThrottle(clock)

    @property
    def is_leader(self) -> bool:
        return self._leading.is_set()

    @property
    def leader(self) -> str | None:
        """The holder last seen on the lease (``None`` or ``""`` when nobody)."""
        return self._observed

    async def wait_for_leadership(self) -> None:
        """Return once this candidate leads."""
        await self._leading.wait()

    async def run(self, while_leading: LeadingWork | None = None) -> None:
        """Campaign and lead, again after every loss, until cancelled."""
        try:
            while True:
                await self._campaign()
                await self._lead(while_leading)
        finally:
            if self.config.release_on_cancel:
                await self._release()

    # ------------------------------------------------------------------ phases
    async def _campaign(self) -> None:
        while not await self._attempt(self.config.retry_period):
            await self._clock.sleep(self.config.retry_period)

    async def _lead(self, while_leading: LeadingWork | None) -> None:
        self._leading.set()
        self._report(True)
        self._log.info("became leader")
        if self._on_started is not None:
            self._on_started()
        try:
            async with asyncio.TaskGroup() as group:
                group.create_task(self._record(BECAME_LEADER))
                work = group.create_task(while_leading()) if while_leading is not None else None
                reason = await self._keep_renewing()
                self._leading.clear()  # not the leader from this instant on
                self._report(False)
                self._log.warning("lost the lease", reason=reason)
                if work is not None:
                    work.cancel()
        finally:
            self._leading.clear()
            self._report(False)
            if self._on_stopped is not None:
                self._on_stopped()
            await self._record(STOPPED_LEADING)

    async def _keep_renewing(self) -> str:
        """Renew every retry period; return why, when leadership is lost."""
        config = self.config
        last = self._clock.monotonic()
        while True:
            await self._clock.sleep(config.retry_period)
            remaining = last + config.renew_deadline - self._clock.monotonic()
            if remaining > 0 and await self._attempt(remaining):
                last = self._clock.monotonic()
                continue
            if self._observed not in (None, "", config.identity):
                return f"taken by {self._observed}"
            if self._clock.monotonic() - last >= config.renew_deadline:
                return f"not renewed within the renew deadline ({config.renew_deadline:g}s)"

    # ------------------------------------------------------------------ lease I/O
    async def _attempt(self, bound: float) -> bool:
        """One bounded try to acquire or renew; any failure is just ``False``."""
        try:
            async with asyncio.timeout(bound):
                answered = await self._try_acquire_or_renew()
        except TimeoutError:
            self._say_failed("lease request timed out", "timeout")
        except Exception as exc:  # a flaky client must not take the elector down
            self._say_failed("lease request failed", type(exc).__name__, error=repr(exc))
        else:
            self._quiet.forget(LEASE_TOPIC)
            return answered
        return False

    def _say_failed(self, event: str, kind: str, **fields: str) -> None:
        held = self._quiet.admit(LEASE_TOPIC, kind)
        if held is None:
            return
        if held:
            self._log.warning(event, suppressed=held, **fields)
        else:
            self._log.warning(event, **fields)

    async def _try_acquire_or_renew(self) -> bool:
        config = self.config
        now = self._clock.now()
        try:
            lease = await self._client.get(Lease, config.name, config.namespace)
        except errors.NotFound:
            spec = rules.claimed(None, config.identity, lease_duration=config.lease_duration, now=now)
            fresh = Lease(metadata=ObjectMeta(name=config.name, namespace=config.namespace), spec=spec)
            try:
                await self._client.create(fresh)
            except (errors.AlreadyExists, errors.Conflict):
                return False
            self._observe(config.identity)
            return True
        self._observe(lease.spec.holder_identity)
        if not rules.can_take(lease.spec, config.identity, now):
            return False
        spec = rules.claimed(lease.spec, config.identity, lease_duration=config.lease_duration, now=now)
        try:
            await self._client.update(lease.model_copy(update={"spec": spec}))
        except errors.Conflict:
            return False
        self._observe(config.identity)
        return True

    async def _release(self) -> None:
        """Give the lease up if we hold it (bounded; failures are only logged)."""
        config = self.config
        if self._observed != config.identity:
            return  # we never held it (or saw it taken): nothing to give up
        try:
            async with asyncio.timeout(config.retry_period):
                lease = await self._client.get(Lease, config.name, config.namespace)
                if lease.spec.holder_identity != config.identity:
                    return
                spec = rules.released(lease.spec, now=self._clock.now())
                await self._client.update(lease.model_copy(update={"spec": spec}))
                self._log.info("handed the lease over")
        except Exception as exc:
            self._log.warning("could not release the lease", error=repr(exc))

    def _report(self, leading: bool) -> None:
        """Set the gauge: 1 while any elector of this process leads the lease (several may
        compete for one lease in one process, e.g. a simulated member's node detectors)."""
        holders = _LEADING[self.config.name]
        if leading:
            holders.add(id(self))
        else:
            holders.discard(id(self))
        MASTER_STATUS.labels(self.config.name).set(1 if holders else 0)

    async def _record(self, what: str) -> None:
        """An Event on the Lease: ``<identity> <what>`` (bounded; a failure is only logged)."""
        config = self.config
        if not config.record_events:
            return
        now = self._clock.now()
        salt = hashlib.blake2b(f"{config.identity}|{what}".encode(), digest_size=3).hexdigest()
        try:
            async with asyncio.timeout(config.retry_period):
                lease = await self._client.get(Lease, config.name, config.namespace)
                event = core.Event(
                    metadata=ObjectMeta(name=f"{config.name}.{int(now.timestamp() * 1e6):x}{salt}",
                                        namespace=config.namespace),
                    involved_object=core.ObjectReference(
                        api_version=Lease.API_VERSION, kind=Lease.KIND, name=config.name,
                        namespace=config.namespace, uid=lease.metadata.uid,
                        resource_version=lease.metadata.resource_version),
                    reason=EVENT_REASON, message=f"{config.identity} {what}", type="Normal", count=1,
                    first_timestamp=now, last_timestamp=now, event_time=now,
                    source=core.EventSource(component=config.name),
                    reporting_component=config.name, reporting_instance=config.identity)
                await self._client.create(event)
        except Exception as exc:  # the record of a transition never holds the transition up
            self._log.warning("could not record the leader election event", transition=what, error=repr(exc))

    def _observe(self, holder: str | None) -> None:
        if holder == self._observed:
            return
        self._observed = holder
        if holder:
            self._log.info("observed a new leader", holder=holder)
            if self._on_new_leader is not None:
                self._on_new_leader(holder)


__all__ = ["BECAME_LEADER", "EVENT_REASON", "MASTER_STATUS", "STOPPED_LEADING", "LeaderElectionConfig",
           "LeaderElector", "LeaseClient"]
