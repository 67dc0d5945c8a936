"""``KubernetesMembers``: the member pool of a control plane whose Push members are real clusters.

Karmada registers a Push cluster with ``spec.apiEndpoint`` and ``spec.secretRef``, a
Secret (in the control plane) holding ``token`` and ``caBundle``; the control plane
builds its client from those. :class:`KubernetesMembers` is that, as a
:class:`~fleetkeeper.members.interface.MemberPool`:

* an ``https://`` (or ``http://``) endpoint → a :class:`KubernetesMember` whose
  credentials come from the ``credentials`` callable, *asked on the member's first
  call* — ``member()`` is synchronous and never blocks, while reading a Secret is I/O —
  and asked again after the member answers 401 (a rotated token);
* a ``kube://…`` endpoint → the kubeconfig context it names (``open_member`` rules);
* anything else (``simulated://…``) → the ``fallback`` pool when there is one, else
  ``errors.MemberUnreachable`` (what the cluster-status controller reports as
  "failed to create a ClusterClient").

Members are kept per (cluster, endpoint): the connection pool and discovery cache of a
cluster live as long as its endpoint does; a changed endpoint gets a new member (the
old one is closed). :func:`credentials_from_secret` decodes a Karmada cluster Secret.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from fleetkeeper import errors
from fleetkeeper.clock import Clock
from fleetkeeper.members.interface import Member, MemberPool
from fleetkeeper.members.kubernetes import DEFAULT_TIMEOUT, Credentials, KubernetesMember

#: credentials of a cluster, by cluster name (reads the Secret named by its secretRef)
CredentialSource = Callable[[str], Awaitable[Credentials]]


def credentials_from_secret(secret: Mapping[str, Any], *, insecure_skip_tls_verify: bool = False
                            ) -> Credentials:
    """Credentials from a Secret's wire dict (``data`` base64, or ``stringData``): keys
    ``token`` and ``caBundle``; ``ValueError`` when a value is not base64."""
    data = secret.get("data") or {}
    plain = secret.get("stringData") or {}

    def value(key: str) -> bytes | None:
        if key in plain:
            return str(plain[key]).encode()
        if key not in data:
            return None
        try:
            return base64.b64decode(str(data[key]), validate=True)
        except binascii.Error:
            raise ValueError(f"secret key {key!r} is not base64") from None

    token = value("token")
    return Credentials(token=token.decode().strip() if token else None, ca_bundle=value("caBundle") or None,
                       insecure_skip_tls_verify=insecure_skip_tls_verify)


class KubernetesMembers:
    """Members reached over the network (see the module notes)."""

    def __init__(self, credentials: CredentialSource, *, clock: Clock, fallback: MemberPool | None = None,
                 timeout: float = DEFAULT_TIMEOUT) -> None:
        self._credentials = credentials
        self._clock = clock
        self._fallback = fallback
        self._timeout = timeout
        self._members: dict[str, tuple[str, KubernetesMember]] = {}

    def member(self, cluster_name: str, api_endpoint: str | None = None) -> Member:
        endpoint = api_endpoint or ""
        kept = self._members.get(cluster_name)
        if kept is not None and kept[0] == endpoint:
            return kept[1]
        if endpoint.startswith(("https://", "http://")):
            member = KubernetesMember.from_endpoint(cluster_name, endpoint, self._for(cluster_name),
                                                    clock=self._clock, timeout=self._timeout)
        elif endpoint.startswith("kube://"):
            try:
                member = KubernetesMember.from_url(endpoint, clock=self._clock)
            except ValueError as exc:
                raise errors.MemberUnreachable(f"cluster {cluster_name!r}: {exc}") from None
        elif self._fallback is not None:
            return self._fallback.member(cluster_name, api_endpoint)
        else:
            raise errors.MemberUnreachable(
                f"cluster {cluster_name!r}: apiEndpoint {endpoint!r} is not an https:// or kube:// URL")
        self._members[cluster_name] = (endpoint, member)
        if kept is not None:
            _close_later(kept[1])
        return member

    def _for(self, cluster_name: str) -> Callable[[], Awaitable[Credentials]]:
        async def fetch() -> Credentials:
            return await self._credentials(cluster_name)

        return fetch

    def forget(self, cluster_name: str) -> None:
        """Drop (and close) the member of a cluster that no longer exists."""
        kept = self._members.pop(cluster_name, None)
        if kept is not None:
            _close_later(kept[1])

    async def close(self) -> None:
        """Close every member's connections."""
        members, self._members = self._members, {}
        await asyncio.gather(*(member.close() for _, member in members.values()), return_exceptions=True)


_closing: set[asyncio.Task[None]] = set()


def _close_later(member: KubernetesMember) -> None:
    """Close a replaced member in the background (``member()`` is synchronous)."""
    try:
        task = asyncio.get_running_loop().create_task(member.close())
    except RuntimeError:
        return  # no loop: nothing was ever opened on it either
    _closing.add(task)
    task.add_done_callback(_closing.discard)


__all__ = ["CredentialSource", "KubernetesMembers", "credentials_from_secret"]
