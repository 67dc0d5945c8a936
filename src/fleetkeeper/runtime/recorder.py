"""Recording what controllers decide: Kubernetes Events and the failover timeline.

Two audiences, one call site. ``event()`` writes a ``v1`` Event with Karmada's
reasons and messages (spec/failover.md §3.6) so ``kubectl describe`` reads as it does
against Karmada. ``timeline()`` writes a :class:`~fleetkeeper.api.tl.TimelineEntry`,
fleetkeeper's durable record of each failover decision with a human message
(``Ready=False (ClusterNotReachable)``, ``evicted from member1 (TaintUntolerated,
Gracefully)``).

Recording never fails the reconcile that records: a write error is logged and
dropped. Names are derived from the clock and a per-recorder counter (as Kubernetes
derives Event names from a timestamp), so a virtual-time run names them identically
every time.
"""

from __future__ import annotations

import hashlib
from typing import Literal, Protocol

import structlog

from fleetkeeper.api import core
from fleetkeeper.api import timeline as tl
from fleetkeeper.api.meta import ObjectMeta, Resource
from fleetkeeper.clock import Clock
from fleetkeeper.errors import FleetkeeperError

EventType = Literal["Normal", "Warning"]
_log = structlog.get_logger("fleetkeeper.recorder")


class _Creator(Protocol):
    async def create(self, obj: core.Event | tl.TimelineEntry) -> Resource: ...  # pragma: no cover


class Recorder:
    """Writes Events and timeline entries on behalf of one component."""

    def __init__(self, client: _Creator, clock: Clock, component: str) -> None:
        self._client = client
        self._clock = clock
        self.component = component
        self._seq = 0

    def _name(self, base: str, salt: str) -> str:
        self._seq += 1
        micros = int(self._clock.now().timestamp() * 1_000_000)
        digest = hashlib.blake2b(f"{self.component}|{salt}|{self._seq}".encode(), digest_size=4).hexdigest()
        return f"{base[:200]}.{micros:x}{digest}"

    async def event(self, obj: Resource, type_: EventType, reason: str, message: str) -> None:
        """Record a Kubernetes Event about ``obj``."""
        now = self._clock.now()
        namespace = obj.metadata.namespace or "default"
        event = core.Event(
            metadata=ObjectMeta(name=self._name(obj.name, reason + message), namespace=namespace),
            involved_object=core.ObjectReference(
                api_version=obj.api_version, kind=obj.kind, name=obj.name,
                namespace=obj.metadata.namespace, uid=obj.metadata.uid,
                resource_version=obj.metadata.resource_version,
            ),
            reason=reason, message=message, type=type_, count=1,
            first_timestamp=now, last_timestamp=now, event_time=now,
            source=core.EventSource(component=self.component), reporting_component=self.component,
        )
        await self._write(event)

    async def timeline(self, obj: Resource | tl.Subject, action: str, message: str, *,
                       reason: str = "") -> None:
        """Record one failover decision about ``obj`` on the timeline."""
        subject = obj if isinstance(obj, tl.Subject) else tl.Subject(
            api_version=obj.api_version, kind=obj.kind, name=obj.name, namespace=obj.metadata.namespace)
        entry = tl.TimelineEntry(
            metadata=ObjectMeta(name=self._name("tl", f"{subject.kind}/{subject.namespace}/{subject.name}"
                                                      f"|{action}|{message}")),
            time=self._clock.now(), subject=subject, action=action, reason=reason, message=message,
            component=self.component,
        )
        await self._write(entry)

    async def _write(self, obj: core.Event | tl.TimelineEntry) -> None:
        try:
            await self._client.create(obj)
        except FleetkeeperError as exc:
            _log.warning("record failed", kind=obj.kind, name=obj.name, error=str(exc))


__all__ = ["EventType", "Recorder"]
