"""Replicas seen: each control-plane replica renews a Lease of its own, so others can list it.

The controllers' Lease names only the leader; an operator also wants the standbys. Each
replica that campaigns for a lease therefore keeps a small presence record — a
``coordination.k8s.io/v1`` Lease in the same namespace (``karmada-system``), as kubelets
keep theirs in ``kube-node-lease`` — named ``fleetkeeper-replica-<digest of its
identity>`` (identities need not be valid object names), labelled with the lease it
competes for, holding its identity, its start time (``acquireTime``) and its last
renewal, and annotated with what it tells a reader: the API address it serves and its
store URL (credentials left out). It renews every third of its lease duration and
deletes the record when it stops cleanly; a replica that died leaves a record that
:func:`seen` calls expired once the duration ran out. ``fleetkeeper status`` lists them.

Every request is bounded by the renew period and a failure is only logged: the record
informs, it never holds a replica up.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import math
from collections.abc import Coroutine, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit

import structlog

from fleetkeeper import errors
from fleetkeeper.api.coordination import Lease, LeaseSpec
from fleetkeeper.api.meta import ObjectMeta
from fleetkeeper.client.interface import Reader, Writer
from fleetkeeper.clock import Clock

#: the label naming the lease a replica competes for
REPLICA_OF_LABEL = "fleetkeeper.io/replica-of"
SERVER_ANNOTATION = "fleetkeeper.io/server"
STORE_ANNOTATION = "fleetkeeper.io/store"
NAME_PREFIX = "fleetkeeper-replica-"

_log = structlog.get_logger("fleetkeeper.presence")


def public_url(url: str) -> str:
    """``url`` without the user and password it may carry (``etcd://u:p@host`` → ``etcd://host``)."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


def record_name(identity: str) -> str:
    """The name of the presence record of the replica ``identity``."""
    return NAME_PREFIX + hashlib.blake2b(identity.encode(), digest_size=5).hexdigest()


@dataclass(frozen=True)
class Replica:
    """One replica as its presence record tells it."""

    identity: str
    started: datetime | None
    renewed: datetime | None
    live: bool
    server: str
    store: str


def seen(lease: Lease, now: datetime) -> Replica:
    """What a presence record says at ``now`` (``live`` while its duration has not run out)."""
    spec, notes = lease.spec, lease.annotations()
    live = bool(spec.renew_time and spec.lease_duration_seconds
                and spec.renew_time + timedelta(seconds=spec.lease_duration_seconds) >= now)
    return Replica(identity=spec.holder_identity or lease.name, started=spec.acquire_time,
                   renewed=spec.renew_time, live=live, server=notes.get(SERVER_ANNOTATION, ""),
                   store=notes.get(STORE_ANNOTATION, ""))


class PresenceClient(Reader, Writer, Protocol):
    """The part of a client the record needs (get, create, update, delete)."""


class Presence:
    """Keeps this replica's presence record while it runs (see the module notes)."""

    needs_leader_election = False

    def __init__(self, client: PresenceClient, *, identity: str, of: str, namespace: str, duration: float,
                 clock: Clock, annotations: Mapping[str, str] | None = None) -> None:
        self._client = client
        self._clock = clock
        self._identity = identity
        self._duration = duration
        self._started = clock.now()
        self.name = record_name(identity)
        self.namespace = namespace
        self._meta = ObjectMeta(name=self.name, namespace=namespace, labels={REPLICA_OF_LABEL: of},
                                annotations=dict(annotations or {}) or None)

    async def run(self) -> None:
        """Renew every third of the duration until cancelled; then delete the record."""
        period = self._duration / 3
        try:
            while True:
                await self._bounded(self._renew(), period, "could not renew the presence record")
                await self._clock.sleep(period)
        finally:
            await self._bounded(self._withdraw(), period, "could not delete the presence record")

    async def _bounded(self, call: Coroutine[Any, Any, None], seconds: float, failure: str) -> None:
        try:
            async with asyncio.timeout(seconds):
                await call
        except Exception as exc:
            _log.warning(failure, identity=self._identity, error=repr(exc))

    async def _renew(self) -> None:
        spec = LeaseSpec(holder_identity=self._identity, acquire_time=self._started,
                         lease_duration_seconds=max(1, math.ceil(self._duration)),
                         renew_time=self._clock.now())
        client = self._client
        try:
            current = await client.get(Lease, self.name, self.namespace)
        except errors.NotFound:
            await client.create(Lease(metadata=self._meta, spec=spec))
            return
        meta = current.metadata.model_copy(update={"labels": self._meta.labels,
                                                   "annotations": self._meta.annotations})
        await client.update(current.model_copy(update={"metadata": meta, "spec": spec}))

    async def _withdraw(self) -> None:
        with contextlib.suppress(errors.NotFound):
            await self._client.delete(Lease, self.name, self.namespace)


__all__ = ["NAME_PREFIX", "REPLICA_OF_LABEL", "SERVER_ANNOTATION", "STORE_ANNOTATION", "Presence",
           "PresenceClient", "Replica", "public_url", "record_name", "seen"]
