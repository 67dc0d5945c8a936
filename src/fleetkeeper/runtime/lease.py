"""Leader-election rules over a Lease: pure functions of the lease spec and ``now``.

Kept apart from the elector's I/O so they are table-tested (docs/architecture.md, Package layering: decisions
are pure functions over API values plus ``now``). The record is the
``coordination.k8s.io/v1`` Lease spec, with client-go's meaning:

* a lease is **free** when nobody holds it (empty ``holderIdentity``, e.g. after a
  release) or when it has **expired**: ``renewTime + leaseDurationSeconds < now``;
* a candidate may take a free lease, and the holder may always renew its own;
* taking a lease from someone else (or from nobody) sets ``acquireTime`` and counts a
  ``leaseTransitions``; renewing one's own moves only ``renewTime``;
* releasing keeps the transition count, clears the holder, and shortens the lease to
  one second so a standby need not wait out a full term.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from fleetkeeper.api.coordination import LeaseSpec


def is_free(spec: LeaseSpec, now: datetime) -> bool:
    """Nobody holds the lease, or the holder's term ran out."""
    if not spec.holder_identity:
        return True
    if spec.renew_time is None or spec.lease_duration_seconds is None:
        return True
    return spec.renew_time + timedelta(seconds=spec.lease_duration_seconds) < now


def can_take(spec: LeaseSpec, identity: str, now: datetime) -> bool:
    """Whether ``identity`` may acquire (or renew) the lease at ``now``."""
    return spec.holder_identity == identity or is_free(spec, now)


def claimed(spec: LeaseSpec | None, identity: str, *, lease_duration: float, now: datetime) -> LeaseSpec:
    """The spec after ``identity`` acquires or renews the lease at ``now``."""
    seconds = max(1, math.ceil(lease_duration))
    if spec is None:
        return LeaseSpec(holder_identity=identity, lease_duration_seconds=seconds,
                         acquire_time=now, renew_time=now, lease_transitions=0)
    if spec.holder_identity == identity:
        return spec.model_copy(update={
            "lease_duration_seconds": seconds, "renew_time": now,
            "acquire_time": spec.acquire_time or now,
        })
    return spec.model_copy(update={
        "holder_identity": identity, "lease_duration_seconds": seconds, "acquire_time": now,
        "renew_time": now, "lease_transitions": (spec.lease_transitions or 0) + 1,
    })


def released(spec: LeaseSpec, *, now: datetime) -> LeaseSpec:
    """The spec after the holder gives the lease up at ``now``."""
    return spec.model_copy(update={
        "holder_identity": "", "lease_duration_seconds": 1, "acquire_time": now, "renew_time": now,
    })


__all__ = ["can_take", "claimed", "is_free", "released"]
