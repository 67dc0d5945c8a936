"""A simulated member's Kubernetes API: the plane's API server over the member's store.

:func:`member_app` serves a :class:`~fleetkeeper.members.simulated.SimulatedCluster` with
:func:`fleetkeeper.apiserver.member_app.build_member_app` over its
:class:`~fleetkeeper.members.simulated.api_store.ClusterStore`: Kubernetes' kinds, watch with
``410 Gone`` past the member's history, server-side apply, kubectl's tables, field selectors,
discovery and OpenAPI as the plane serves them; the member's pods' logs told by
:class:`~fleetkeeper.members.simulated.containers.SimulatedContainers` (they run no
processes: exec and attach say so); its version; and health endpoints that fail while a fault
makes the member unhealthy. ``fleetkeeper member-sim`` serves it over HTTPS
(:mod:`~fleetkeeper.cmd.member_sim`); the plane's cluster proxy calls it in-process
(:mod:`~fleetkeeper.cmd.member_proxy`).
"""

from __future__ import annotations

from dataclasses import dataclass

from fleetkeeper.apiserver.app import ApiServerApp
from fleetkeeper.apiserver.health import Check
from fleetkeeper.apiserver.member import MemberApi
from fleetkeeper.apiserver.member_app import build_member_app
from fleetkeeper.apiserver.state import ServerState
from fleetkeeper.members.simulated.api_store import ClusterStore
from fleetkeeper.members.simulated.cluster import SimulatedCluster
from fleetkeeper.members.simulated.containers import SimulatedContainers
from fleetkeeper.members.simulated.faults import ApiState


@dataclass(frozen=True)
class MemberHealth:
    """Fails while a fault makes the member unhealthy (``/readyz``, ``/healthz``, ``/livez``)."""

    cluster: SimulatedCluster

    async def __call__(self, state: ServerState) -> str | None:
        if self.cluster.state is ApiState.UNHEALTHY:
            return f"member cluster {self.cluster.name!r} is unhealthy"
        return None


@dataclass(frozen=True)
class MemberServing:
    """A member's API server and the store it serves."""

    app: ApiServerApp
    store: ClusterStore

    async def close(self) -> None:
        """End open watches and streams, then the store's watches (the cluster keeps running)."""
        self.app.close()
        await self.store.close()


def member_app(cluster: SimulatedCluster, *, token: str | None) -> MemberServing:
    """The member's API server (``token=None``: every caller is its admin, in-process only)."""
    store = ClusterStore(cluster)
    member = MemberApi(SimulatedContainers(), kubernetes_version=cluster.kubernetes_version,
                       health=(Check("member", MemberHealth(cluster)),))
    return MemberServing(build_member_app(store, member, clock=cluster.clock, token=token), store)


__all__ = ["MemberHealth", "MemberServing", "member_app"]
