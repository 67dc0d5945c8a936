"""``fleetkeeper bench apiserver --rbac``: what RBAC evaluation adds to a request, with many bindings stored.

A memory store gets ``bindings`` RoleBindings — ServiceAccount ``deployer`` of namespace
``team-N`` bound to ``edit`` in ``team-N`` — plus the default ClusterRoles, and the API
server's :class:`~fleetkeeper.apiserver.authz.Authorizer` follows it as it does when
serving. Then the authorization step of a request (:func:`~fleetkeeper.apiserver.auth.authorize`,
what every resource request goes through, denial included) is timed for:

* ``first`` — each account's first request (its rules are gathered from the index);
* ``again`` — requests by accounts seen before (the per-caller answer is cached);
* ``denied`` — requests outside the account's namespace (a ``403`` is built).

The target is a p99 under 1 ms in every phase. Time is measured with the injected clock's
``monotonic()``; figures depend on the machine, so quote them with it.
"""

from __future__ import annotations

import gc
from typing import Any

from fleetkeeper import errors
from fleetkeeper.api.scheme import SCHEME
from fleetkeeper.apiserver.auth import Attributes, User, authorize
from fleetkeeper.apiserver.authz import Authorizer
from fleetkeeper.apiserver.bench import percentile
from fleetkeeper.clock import Clock
from fleetkeeper.store import open_store

TARGET_P99_MS = 1.0


def _binding(i: int) -> dict[str, Any]:
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": "deployer", "namespace": f"team-{i}"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "edit"},
            "subjects": [{"kind": "ServiceAccount", "name": "deployer", "namespace": f"team-{i}"}]}


def _user(i: int) -> User:
    return User(f"system:serviceaccount:team-{i}:deployer",
                ("system:serviceaccounts", f"system:serviceaccounts:team-{i}", "system:authenticated"))


def _stats(samples: list[float]) -> dict[str, float]:
    return {"count": len(samples), "p50_ms": round(percentile(samples, 50) * 1000, 4),
            "p99_ms": round(percentile(samples, 99) * 1000, 4), "max_ms": round(max(samples) * 1000, 4)}


async def bench_rbac(*, bindings: int = 1000, requests: int = 5000, clock: Clock) -> dict[str, object]:
    """Time the authorization of requests with ``bindings`` RoleBindings stored (see the module notes)."""
    bindings = max(1, min(bindings, 100_000))
    requests = max(10, min(requests, 100_000))
    store = open_store("memory://", clock=clock)
    authz = Authorizer(store, scheme=SCHEME, clock=clock)
    try:
        async with store.batch():
            for i in range(bindings):
                await store.create(_binding(i))
        await authz.ensure()
        index = authz.index

        def timed(user: User, namespace: str, *, allowed: bool) -> float:
            attributes = Attributes(verb="create", group="apps", resource="deployments", namespace=namespace,
                                    name="web")
            before = clock.monotonic()
            try:
                authorize(user, attributes, index)
            except errors.Forbidden:
                if allowed:
                    raise
            else:
                if not allowed:
                    raise RuntimeError(f"{user.name} was allowed in {namespace}")
            return clock.monotonic() - before

        gc.collect()  # the seeding's garbage is not the requests' cost
        first = [timed(_user(i), f"team-{i}", allowed=True) for i in range(min(bindings, requests))]
        again = [timed(_user(i % bindings), f"team-{i % bindings}", allowed=True) for i in range(requests)]
        denied = [timed(_user(i % bindings), f"team-{(i + 1) % bindings}", allowed=bindings == 1)
                  for i in range(requests)]
    finally:
        await authz.stop()
        await store.close()
    phases = {"first": _stats(first), "again": _stats(again), "denied": _stats(denied)}
    worst = max(phase["p99_ms"] for phase in phases.values())
    return {"benchmark": "apiserver-rbac", "bindings_stored": index.binding_count, **phases,
            "target_p99_ms": TARGET_P99_MS, "meets_target": worst < TARGET_P99_MS}


__all__ = ["TARGET_P99_MS", "bench_rbac"]
