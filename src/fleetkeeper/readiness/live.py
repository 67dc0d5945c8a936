"""The fleet a what-if reads, from a running control plane (any :class:`Client`).

One list per kind, read once: the clusters with their status, both kinds of binding and
the ClusterTaintPolicies. The circuit breaker's threshold is the plane's option, which
the API does not show: the caller passes the value the plane runs with. For a simulated
failure, :func:`read_resources` reads what the bindings were made from.
"""

from __future__ import annotations

from typing import Any

from fleetkeeper import errors
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.override import ClusterOverridePolicy, OverridePolicy
from fleetkeeper.api.policy import ClusterPropagationPolicy, PropagationPolicy
from fleetkeeper.api.scheme import SCHEME
from fleetkeeper.api.taintpolicy import ClusterTaintPolicy
from fleetkeeper.api.work import Binding, ClusterResourceBinding, ResourceBinding
from fleetkeeper.client.interface import Client
from fleetkeeper.readiness.whatif import Fleet


async def read_fleet(client: Client, *, threshold: float) -> Fleet:
    """The clusters, bindings and taint policies the plane holds now."""
    clusters = (await client.list(Cluster)).items
    bindings: list[Binding] = [*(await client.list(ResourceBinding)).items]
    bindings += (await client.list(ClusterResourceBinding)).items
    policies = (await client.list(ClusterTaintPolicy)).items
    return Fleet(clusters, bindings, policies, threshold=threshold)


async def read_resources(client: Client, fleet: Fleet) -> list[dict[str, Any]]:
    """What the fleet's bindings were made from, as it would be applied again: the namespaces of
    the templates (but ``default``), the propagation and override policies, and each binding's
    template (one gone meanwhile is left out)."""
    policies: list[dict[str, Any]] = []
    for kind in (ClusterPropagationPolicy, PropagationPolicy, ClusterOverridePolicy, OverridePolicy):
        policies += [p.to_dict() for p in (await client.list(kind)).items]
    templates: list[dict[str, Any]] = []
    for binding in fleet.bindings:
        ref = binding.spec.resource
        model = SCHEME.model_for(ref.api_version, ref.kind)
        try:
            found = await client.get(model, ref.name, ref.namespace or "")
        except errors.NotFound:
            continue
        templates.append(found.to_dict())
    namespaces = sorted({str(t["metadata"].get("namespace")) for t in templates
                         if t["metadata"].get("namespace") not in (None, "", "default")})
    spaces = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}} for ns in namespaces]
    return [*spaces, *policies, *templates]


__all__ = ["read_fleet", "read_resources"]
