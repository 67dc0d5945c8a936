"""What the control plane would refuse, judged from a scenario file alone.

A run never starts on a file the control plane would refuse: each cluster's Cluster
object goes through the control plane's admission (its problems named by the scenario's
own field, ``spec.clusters[0].taints[0].effect``), ``nodeResources`` are quantities, and
every manifest of ``resources`` and of ``apply`` actions is decoded and admitted as a
create, exactly as the control plane would. Each refusal raises
:class:`~fleetkeeper.errors.ScenarioError` (exit code 2). Refusals that depend on what is
stored when an action runs remain failed steps of the run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fleetkeeper import errors
from fleetkeeper.api import admission
from fleetkeeper.api.quantity import parse_quantity
from fleetkeeper.api.scheme import SCHEME
from fleetkeeper.clock import VIRTUAL_EPOCH
from fleetkeeper.errors import ScenarioError

if TYPE_CHECKING:
    from fleetkeeper.simulation.scenario import ClusterDef

#: what a simulated node has unless the scenario says otherwise
DEFAULT_NODE_RESOURCES = {"cpu": "8", "memory": "32Gi", "pods": "110"}
#: where a field of the joining Cluster object comes from in a scenario cluster
_CLUSTER_FIELDS = (
    ("metadata.name", "name"),
    ("metadata.labels", "labels"),
    ("spec.syncMode", "syncMode"),
    ("spec.provider", "provider"),
    ("spec.region", "region"),
    ("spec.zones[0]", "zone"),
    ("spec.taints", "taints"),
)


def node_resources(given: dict[str, Any], where: str) -> dict[str, str]:
    """A node's resources: the defaults, overridden by ``given`` (non-negative quantities)."""
    out = dict(DEFAULT_NODE_RESOURCES)
    for key, value in given.items():
        if isinstance(value, bool):
            raise ScenarioError(f"{where}.{key}", f"must be a quantity such as 8, 500m or 32Gi: {value!r}")
        try:
            amount = parse_quantity(value)
        except ValueError as exc:
            raise ScenarioError(f"{where}.{key}", str(exc)) from None
        if amount < 0:
            raise ScenarioError(f"{where}.{key}", f"must not be negative, got {value!r}")
        out[str(key)] = str(value)
    return out


def cluster_manifest(c: ClusterDef) -> dict[str, Any]:
    """The Cluster object a scenario cluster joins with."""
    spec: dict[str, Any] = {"syncMode": c.sync_mode, "apiEndpoint": f"simulated://{c.name}"}
    if c.provider:
        spec["provider"] = c.provider
    if c.region:
        spec["region"] = c.region
    if c.zone:
        spec["zones"] = [c.zone]
    if c.taints:
        spec["taints"] = c.taints
    meta: dict[str, Any] = {"name": c.name}
    if c.labels:
        meta["labels"] = dict(c.labels)
    return {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": meta, "spec": spec}


def check_cluster(c: ClusterDef, where: str) -> None:
    """Refuse a cluster whose Cluster object the control plane would refuse, naming our field."""
    try:
        _admit(cluster_manifest(c))
    except errors.ApiError as exc:
        found = [(_cluster_field(cause.field, where), cause.message) for cause in exc.causes]
        if not found:
            raise ScenarioError(where, exc.message) from None
        (first, message), rest = found[0], found[1:]
        raise ScenarioError(first, "; ".join([message, *(f"{f}: {m}" for f, m in rest)])) from None


def check_manifest(m: dict[str, Any], where: str) -> None:
    """Refuse a manifest the control plane would refuse on its own (decoding and admission)."""
    try:
        _admit(m)
    except errors.ApiError as exc:
        message = exc.message
        anonymous = f"{exc.kind} is invalid: "  # decoding errors do not name the object
        if exc.kind and exc.name is None and message.startswith(anonymous):
            message = f'{exc.kind} "{m["metadata"]["name"]}" is invalid: {message[len(anonymous):]}'
        raise ScenarioError(where, message) from None


def _cluster_field(api_field: str, where: str) -> str:
    for theirs, ours in _CLUSTER_FIELDS:
        if api_field == theirs or api_field.startswith((f"{theirs}.", f"{theirs}[")):
            return f"{where}.{ours}{api_field[len(theirs):]}"
    return where


def _admit(manifest: dict[str, Any]) -> None:
    """Decode ``manifest`` and run it through admission as a create (raises ``errors.ApiError``)."""
    obj = SCHEME.model_for(manifest["apiVersion"], manifest["kind"]).from_dict(manifest)
    admission.admit(obj, None, operation="CREATE", now=VIRTUAL_EPOCH)


__all__ = ["DEFAULT_NODE_RESOURCES", "check_cluster", "check_manifest", "cluster_manifest", "node_resources"]
