"""The Member protocol: how the control plane reaches one member cluster.

Two implementations: ``simulated`` (an in-process, KWOK-like cluster model on the
injected Clock, with fault injection) and ``kubernetes`` (a real cluster through
lightkube). Objects are wire dicts. Unreachable members raise
``errors.MemberUnreachable`` (connection refused) or ``errors.MemberTimeout`` (no
answer within the bound) from every call.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeVar

from fleetkeeper import errors

T = TypeVar("T")

FIELD_MANAGER = "fleetkeeper"


@dataclass(frozen=True, slots=True)
class ObjectRef:
    api_version: str
    kind: str
    namespace: str
    name: str


@dataclass(frozen=True, slots=True)
class MemberEvent:
    """A change of an object in the member (used for status read-back)."""

    type: Literal["ADDED", "MODIFIED", "DELETED"]
    object: dict[str, Any]


@dataclass(slots=True)
class ClusterSummary:
    """What the cluster-status controller collects (wire-shaped pieces of Cluster.status)."""

    kubernetes_version: str
    #: [{"groupVersion": "apps/v1", "resources": [{"name": "deployments", "kind": "Deployment"}]}]
    api_enablements: list[dict[str, Any]] = field(default_factory=list)
    #: {"totalNum": 3, "readyNum": 3}
    node_summary: dict[str, int] = field(default_factory=dict)
    #: {"allocatable": {...}, "allocating": {...}, "allocated": {...}}
    resource_summary: dict[str, Any] = field(default_factory=dict)


class Member(Protocol):
    """One member cluster."""

    @property
    def name(self) -> str: ...

    async def apply(self, manifest: dict[str, Any], *, field_manager: str = FIELD_MANAGER,
                    force: bool = True) -> dict[str, Any]:
        """Create or update with server-side-apply semantics; returns the live object."""
        ...

    async def get(self, ref: ObjectRef) -> dict[str, Any] | None:
        """The live object, or None when absent."""
        ...

    async def delete(self, ref: ObjectRef) -> bool:
        """Delete; True when something was deleted."""
        ...

    async def list(self, api_version: str, kind: str, namespace: str | None = None, *,
                   label_selector: str | None = None) -> list[dict[str, Any]]: ...

    def watch(self, api_version: str, kind: str, *, label_selector: str | None = None
              ) -> AsyncIterator[MemberEvent]:
        """Changes of objects of a kind (starting with ADDED for what exists)."""
        ...

    async def probe(self, path: str) -> int:
        """GET a health endpoint (``/readyz``, ``/healthz``); returns the HTTP status code."""
        ...

    async def summary(self) -> ClusterSummary: ...

    async def close(self) -> None: ...


class MemberPool(Protocol):
    """Finds the Member behind a Cluster object.

    The control plane builds Push members from ``spec.apiEndpoint`` (``simulated://…``,
    ``kube://…``, ``https://…`` with the Secret named by ``spec.secretRef``); a
    simulation hands out its in-process clusters by name.
    """

    def member(self, cluster_name: str, api_endpoint: str | None = None) -> Member:
        """The Member for a cluster; raises ``errors.MemberError`` when no client can be built."""
        ...


async def bounded(call: Awaitable[T], seconds: float, cluster: str) -> T:
    """Await a member call for at most ``seconds``; a timeout is ``errors.MemberTimeout``.

    Every call to a member goes through this, so a black-holed member costs its caller one
    timeout and stalls nobody else. It uses ``asyncio.timeout`` rather than ``wait_for``,
    whose Python 3.11 version loses the caller's cancellation when the call completes in
    the same loop iteration (a control plane would then never stop).
    """
    try:
        async with asyncio.timeout(seconds):
            return await call
    except TimeoutError:
        raise errors.MemberTimeout(f"member cluster {cluster!r}: no answer within {seconds:g}s") from None
