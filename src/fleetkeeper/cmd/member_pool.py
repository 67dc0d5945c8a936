"""How a control plane reaches its Push member clusters.

Real clusters (an ``https://`` ``spec.apiEndpoint``) through the kubernetes backend, with
the credentials of the Secret the Cluster's ``spec.secretRef`` names; anything else
through :class:`MemberUrls`, which opens the member each Cluster's ``spec.apiEndpoint``
names (``simulated://NAME`` gives the in-process simulated cluster NAME, created on first
use, so ``fleetkeeper join NAME --member simulated://NAME`` works against a running
control plane).
"""

from __future__ import annotations

from fleetkeeper import errors
from fleetkeeper.api.builtin import Secret
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.client.interface import Client
from fleetkeeper.clock import Clock
from fleetkeeper.members import Member, open_member
from fleetkeeper.members.interface import MemberPool
from fleetkeeper.members.kubernetes import Credentials
from fleetkeeper.members.kubernetes_pool import KubernetesMembers, credentials_from_secret


class MemberUrls:
    """A member pool that opens each cluster's ``spec.apiEndpoint`` (see the module docstring)."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._open: dict[tuple[str, str], Member] = {}

    def member(self, cluster_name: str, api_endpoint: str | None = None) -> Member:
        if not api_endpoint:
            raise errors.MemberUnreachable(f"cluster {cluster_name!r} has no spec.apiEndpoint")
        key = (cluster_name, api_endpoint)
        found = self._open.get(key)
        if found is None:
            try:
                found = self._open[key] = open_member(api_endpoint, clock=self._clock)
            except ValueError as exc:
                raise errors.MemberUnreachable(f"cluster {cluster_name!r}: {exc}") from None
        return found


class ClusterCredentials:
    """Reads a Push cluster's credentials from the Secret its ``spec.secretRef`` names
    (keys ``token`` and ``caBundle``, as Karmada stores them), through the control plane's
    own client — bound once the plane exists (:func:`member_pool`)."""

    def __init__(self) -> None:
        self.client: Client | None = None

    async def __call__(self, name: str) -> Credentials:
        if self.client is None:
            raise errors.MemberUnreachable(f"cluster {name!r}: the control plane is not ready yet")
        cluster = await self.client.get(Cluster, name)
        ref = cluster.spec.secret_ref
        if ref is None:
            raise errors.MemberUnreachable(f"cluster {name!r} has an https:// apiEndpoint but no secretRef")
        try:
            secret = await self.client.get(Secret, ref.name, ref.namespace)
        except errors.NotFound:
            raise errors.MemberUnreachable(
                f"cluster {name!r}: its secretRef {ref.namespace}/{ref.name} does not exist") from None
        try:
            insecure = bool(cluster.spec.insecure_skip_tls_verification)
            return credentials_from_secret(secret.to_dict(), insecure_skip_tls_verify=insecure)
        except ValueError as exc:
            where = f"{ref.namespace}/{ref.name}"
            raise errors.MemberUnreachable(f"cluster {name!r}: secret {where}: {exc}") from None


def member_pool(clock: Clock) -> tuple[MemberPool, ClusterCredentials]:
    """The members of a control plane: ``https://`` endpoints with ``secretRef`` credentials
    (real clusters), else the endpoint URL (``simulated://``, ``kube://``). Bind the returned
    credentials reader to the plane's client once it exists."""
    credentials = ClusterCredentials()
    return KubernetesMembers(credentials, clock=clock, fallback=MemberUrls(clock)), credentials


__all__ = ["ClusterCredentials", "MemberUrls", "member_pool"]
