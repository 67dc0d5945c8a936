"""The Pull agent's heartbeat: renew the cluster's Lease in the control plane.

A Pull cluster is reached by its agent, not by the control plane, so the control
plane cannot probe it; it listens instead. The agent renews the Lease
``karmada-cluster/<cluster>`` every ``cluster_lease_duration ×
cluster_lease_renew_interval_fraction`` seconds (40 s × 0.25 = 10 s): holder = the
cluster name, ``leaseDurationSeconds`` = the lease duration, ``renewTime`` = now, and
an owner reference to the Cluster (retried on every renewal until it is set), so the
Lease goes with the Cluster. The cluster controller's heartbeat monitor reads a newer
``renewTime`` as "the agent is alive"; when renewals stop for the grace period the
cluster becomes ``Ready=Unknown``.

Karmada starts the loop lazily, once the agent first saw its cluster Ready; this
renewer starts with the agent, which only makes a freshly started agent count as alive
a little sooner (its status controller still decides Ready). A renewal that fails
(Conflict, the control plane unreachable) is logged and tried again at the next tick;
the loop never dies of it. While the Cluster object does not exist there is nothing to
renew for, and the renewer waits.

Its :data:`SPEC` runs the renewer in Pull agents only (``Scope(agent_cluster=NAME)``).
"""

from __future__ import annotations

import math
from datetime import datetime

import structlog

from fleetkeeper import errors
from fleetkeeper.api import constants
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.coordination import Lease, LeaseSpec
from fleetkeeper.api.meta import ObjectMeta, OwnerReference
from fleetkeeper.client.interface import Client
from fleetkeeper.clock import Clock
from fleetkeeper.options import Options
from fleetkeeper.runtime.spec import ControllerSpec, Deps, Runs

_log = structlog.get_logger("fleetkeeper.agent.lease")


def owner_reference(cluster: Cluster) -> OwnerReference:
    """The Lease's reference to its Cluster."""
    return OwnerReference(api_version=cluster.api_version, kind=cluster.kind, name=cluster.name,
                          uid=cluster.metadata.uid or "")


def renewed(lease: Lease | None, cluster: Cluster, *, duration: float, now: datetime) -> Lease:
    """The Lease after one renewal by ``cluster``'s agent at ``now`` (pure)."""
    seconds = max(1, math.ceil(duration))
    owners = [owner_reference(cluster)] if cluster.metadata.uid else None
    if lease is None:
        meta = ObjectMeta(name=cluster.name, namespace=constants.LEASE_NAMESPACE, owner_references=owners)
        spec = LeaseSpec(holder_identity=cluster.name, lease_duration_seconds=seconds, renew_time=now)
        return Lease(metadata=meta, spec=spec)
    out = lease.deep_copy()
    out.spec.holder_identity = cluster.name
    out.spec.lease_duration_seconds = seconds
    out.spec.renew_time = now
    if owners and not any(ref.uid == cluster.metadata.uid for ref in out.metadata.owner_references or ()):
        out.metadata.owner_references = [*(out.metadata.owner_references or ()), *owners]
    return out


class LeaseRenewer:
    """Renews one cluster's Lease on a fixed interval (a runnable)."""

    needs_leader_election = False

    def __init__(self, client: Client, clock: Clock, cluster: str, options: Options) -> None:
        self._client = client
        self._clock = clock
        self.cluster = cluster
        self.name = f"cluster-lease-{cluster}"
        self._duration = options.cluster_lease_duration
        self.interval = options.cluster_lease_duration * options.cluster_lease_renew_interval_fraction
        #: renewals written (for observers and tests)
        self.renewals = 0

    async def renew(self) -> bool:
        """One renewal; whether the Lease was written."""
        try:
            cluster = await self._client.get(Cluster, self.cluster)
        except errors.NotFound:
            return False
        try:
            current: Lease | None = await self._client.get(Lease, self.cluster, constants.LEASE_NAMESPACE)
        except errors.NotFound:
            current = None
        lease = renewed(current, cluster, duration=self._duration, now=self._clock.now())
        if current is None:
            await self._client.create(lease)
        else:
            await self._client.update(lease)
        self.renewals += 1
        return True

    async def run(self) -> None:
        while True:
            try:
                await self.renew()
            except Exception as exc:  # whatever went wrong, the next interval tries again
                _log.warning("renewing the cluster lease failed; trying again next interval",
                             cluster=self.cluster, error=str(exc))
            await self._clock.sleep(self.interval)


def _new(deps: Deps) -> LeaseRenewer | None:
    ctx = deps.ctx
    cluster = ctx.scope.agent_cluster  # an agent's scope always names its cluster
    return LeaseRenewer(ctx.client, ctx.clock, cluster, ctx.options) if cluster is not None else None


#: renews the agent's cluster Lease (Pull agents only)
SPEC = ControllerSpec("cluster-lease", runnable=_new, kind=Lease, runs=Runs.AGENT, leader_elected=False)


__all__ = ["SPEC", "LeaseRenewer", "owner_reference", "renewed"]
