"""The default ClusterRoles and binding, created and reconciled as kube-apiserver's bootstrap policy.

Before the API server answers its first request it makes sure these exist:

* ``cluster-admin`` (everything, every non-resource URL), bound to the group
  ``system:masters`` — the admin's token is in that group;
* ``admin``, ``edit`` and ``view``: aggregated ClusterRoles (``rbac.authorization.k8s.io/
  aggregate-to-admin``, ``-edit``, ``-view``); ``edit`` aggregates into ``admin`` and
  ``view`` into ``edit``, as in Kubernetes;
* ``system:aggregate-to-admin``/``-edit``/``-view``: Kubernetes' rules for the built-in
  kinds this server serves (``edit`` may read Secrets and create ServiceAccount tokens,
  ``view`` may not read Secrets);
* ``karmada-edit``/``karmada-view``: Karmada's, for its namespaced kinds (policies,
  bindings, Works, FederatedHPAs, MultiClusterIngresses, ServiceExports);
* ``fleetkeeper-view``: the failover timeline (``timelineentries.fleetkeeper.io``) for ``view``;
* ``system:fleetkeeper:agent``, bound to the group ``system:fleetkeeper:agents``: what every Pull
  agent may do wherever it is — register a Cluster, create a Lease, record Events — which the
  admission checks of :mod:`fleetkeeper.apiserver.confine` narrow to its own (as Kubernetes'
  ``system:node`` and NodeRestriction); ``system:fleetkeeper:agent-execution``: the Works of an
  execution namespace, bound there per agent (:mod:`fleetkeeper.apiserver.agent_rbac`).

Cluster-scoped kinds — Clusters, ClusterPropagationPolicies, ClusterTaintPolicies, Remedies —
are in none of them but ``cluster-admin``: the platform team's.

An object that exists and carries ``rbac.authorization.kubernetes.io/autoupdate: "true"``
(or none) gets back the rules, subjects and labels it lacks; other changes are kept. With
``autoupdate: "false"`` it is left alone. Replicas doing this at once agree: a create that
loses the race, or an update that meets a newer version, is left to the winner.
"""

from __future__ import annotations

import contextlib
import copy
from typing import Any

from fleetkeeper import errors
from fleetkeeper.api.scheme import GroupKind, Scheme
from fleetkeeper.apiserver.admit import admit_object
from fleetkeeper.clock import Clock
from fleetkeeper.store.interface import StoreProtocol

API_VERSION = "rbac.authorization.k8s.io/v1"
AUTOUPDATE = "rbac.authorization.kubernetes.io/autoupdate"
AGGREGATE = "rbac.authorization.k8s.io/aggregate-to-"
BOOTSTRAPPING = {"kubernetes.io/bootstrapping": "rbac-defaults"}
READ = ["get", "list", "watch"]
WRITE = ["create", "delete", "deletecollection", "patch", "update"]
ALL = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]


def _rule(verbs: list[str], group: str, *resources: str) -> dict[str, Any]:
    return {"apiGroups": [group], "resources": list(resources), "verbs": verbs}


def _role(name: str, rules: list[dict[str, Any]], *, into: tuple[str, ...] = (),
          aggregates: str | None = None) -> dict[str, Any]:
    labels = {**BOOTSTRAPPING, **{AGGREGATE + target: "true" for target in into}}
    role: dict[str, Any] = {"apiVersion": API_VERSION, "kind": "ClusterRole",
                            "metadata": {"name": name, "labels": labels, "annotations": {AUTOUPDATE: "true"}},
                            "rules": rules}
    if aggregates is not None:
        selector = {"matchLabels": {AGGREGATE + aggregates: "true"}}
        role["aggregationRule"] = {"clusterRoleSelectors": [selector]}
    return role


_KARMADA = (
    ("autoscaling.karmada.io", ("cronfederatedhpas", "cronfederatedhpas/status", "federatedhpas",
                                "federatedhpas/status")),
    ("multicluster.x-k8s.io", ("serviceexports", "serviceexports/status", "serviceimports",
                               "serviceimports/status")),
    ("networking.karmada.io", ("multiclusteringresses", "multiclusteringresses/status",
                               "multiclusterservices", "multiclusterservices/status")),
    ("policy.karmada.io", ("overridepolicies", "propagationpolicies")),
    ("work.karmada.io", ("resourcebindings", "resourcebindings/status", "works", "works/status")),
)

_VIEW = [
    _rule(READ, "", "configmaps", "endpoints", "persistentvolumeclaims", "persistentvolumeclaims/status",
          "pods", "replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts", "services",
          "services/status", "bindings", "events", "limitranges", "namespaces/status", "pods/log",
          "pods/status", "replicationcontrollers/status", "resourcequotas", "resourcequotas/status",
          "namespaces"),
    _rule(READ, "apps", "controllerrevisions", "daemonsets", "daemonsets/status", "deployments",
          "deployments/scale", "deployments/status", "replicasets", "replicasets/scale", "replicasets/status",
          "statefulsets", "statefulsets/scale", "statefulsets/status"),
    _rule(READ, "autoscaling", "horizontalpodautoscalers", "horizontalpodautoscalers/status"),
    _rule(READ, "batch", "cronjobs", "cronjobs/status", "jobs", "jobs/status"),
    _rule(READ, "policy", "poddisruptionbudgets", "poddisruptionbudgets/status"),
    _rule(READ, "networking.k8s.io", "ingresses", "ingresses/status", "networkpolicies"),
    _rule(READ, "discovery.k8s.io", "endpointslices"),
]
_EDIT = [
    _rule(READ, "", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy", "secrets",
          "services/proxy"),
    _rule(["impersonate"], "", "serviceaccounts"),
    _rule(WRITE, "", "pods", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy"),
    _rule(["create"], "", "pods/eviction"),
    _rule(WRITE, "", "configmaps", "events", "persistentvolumeclaims", "replicationcontrollers",
          "replicationcontrollers/scale", "secrets", "serviceaccounts", "services", "services/proxy"),
    _rule(["create"], "", "serviceaccounts/token"),
    _rule(WRITE, "apps", "daemonsets", "deployments", "deployments/rollback", "deployments/scale",
          "replicasets", "replicasets/scale", "statefulsets", "statefulsets/scale"),
    _rule(WRITE, "autoscaling", "horizontalpodautoscalers"),
    _rule(WRITE, "batch", "cronjobs", "jobs"),
    _rule(WRITE, "policy", "poddisruptionbudgets"),
    _rule(WRITE, "networking.k8s.io", "ingresses", "networkpolicies"),
    _rule(ALL, "coordination.k8s.io", "leases"),
]
_ADMIN = [
    _rule(["create"], "authorization.k8s.io", "localsubjectaccessreviews"),
    _rule(ALL, "rbac.authorization.k8s.io", "rolebindings", "roles"),
]

CLUSTER_ROLES: tuple[dict[str, Any], ...] = (
    _role("cluster-admin", [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                            {"nonResourceURLs": ["*"], "verbs": ["*"]}]),
    _role("admin", [], aggregates="admin"),
    _role("edit", [], into=("admin",), aggregates="edit"),
    _role("view", [], into=("admin", "edit"), aggregates="view"),
    _role("system:aggregate-to-admin", _ADMIN, into=("admin",)),
    _role("system:aggregate-to-edit", _EDIT, into=("edit",)),
    _role("system:aggregate-to-view", _VIEW, into=("view",)),
    _role("karmada-view", [_rule(READ, group, *resources) for group, resources in _KARMADA], into=("view",)),
    _role("karmada-edit", [_rule(WRITE, group, *resources) for group, resources in _KARMADA], into=("edit",)),
    _role("fleetkeeper-view", [_rule(READ, "fleetkeeper.io", "timelineentries")], into=("view",)),
)
AGENT_ROLE, AGENT_GROUP = "system:fleetkeeper:agent", "system:fleetkeeper:agents"
AGENT_EXECUTION_ROLE = "system:fleetkeeper:agent-execution"
AGENT_ROLES: tuple[dict[str, Any], ...] = (
    _role(AGENT_ROLE, [_rule(["create"], "cluster.karmada.io", "clusters"),
                       _rule(["create"], "coordination.k8s.io", "leases"),
                       _rule(["create", "patch", "update"], "", "events"),
                       _rule(["create", "patch", "update"], "events.k8s.io", "events"),
                       _rule(["create"], "fleetkeeper.io", "timelineentries")]),
    _role(AGENT_EXECUTION_ROLE, [_rule(["*"], "work.karmada.io", "works", "works/status")]),
)


def binding(kind: str, name: str, role: tuple[str, str], subject: tuple[str, str], *, namespace: str = "",
            labels: dict[str, str] | None = None) -> dict[str, Any]:
    """A RoleBinding (``namespace`` set) or ClusterRoleBinding of ``role`` (kind, name) to one
    ``subject`` (kind ``User`` or ``Group``, name)."""
    meta: dict[str, Any] = {"name": name, "labels": {**BOOTSTRAPPING, **(labels or {})},
                            "annotations": {AUTOUPDATE: "true"}}
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": API_VERSION, "kind": kind, "metadata": meta,
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role[0], "name": role[1]},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": subject[0], "name": subject[1]}]}


CLUSTER_ROLE_BINDINGS: tuple[dict[str, Any], ...] = (
    binding("ClusterRoleBinding", "cluster-admin", ("ClusterRole", "cluster-admin"),
            ("Group", "system:masters")),
    binding("ClusterRoleBinding", AGENT_ROLE, ("ClusterRole", AGENT_ROLE), ("Group", AGENT_GROUP)),
)


def _merged(found: dict[str, Any], wanted: dict[str, Any]) -> dict[str, Any] | None:
    """``found`` with what it lacks of ``wanted`` (rules, subjects, labels); None when it lacks nothing
    or says ``autoupdate: "false"``."""
    meta = found.setdefault("metadata", {})
    if (meta.get("annotations") or {}).get(AUTOUPDATE) == "false":
        return None
    changed = False
    for key in ("rules", "subjects"):
        raw = found.get(key)
        have: list[Any] = raw if isinstance(raw, list) else []
        missing = [item for item in wanted.get(key, []) if item not in have]
        if missing:
            found[key], changed = [*have, *missing], True
    if "aggregationRule" in wanted and found.get("aggregationRule") != wanted["aggregationRule"]:
        found["aggregationRule"], changed = wanted["aggregationRule"], True
    labels = meta.get("labels") if isinstance(meta.get("labels"), dict) else {}
    if any(labels.get(k) != v for k, v in wanted["metadata"]["labels"].items()):
        meta["labels"], changed = {**labels, **wanted["metadata"]["labels"]}, True
    return found if changed else None


async def reconcile(store: StoreProtocol, scheme: Scheme, wanted: dict[str, Any], *,
                    clock: Clock) -> dict[str, Any] | None:
    """Create ``wanted`` (an RBAC object) when absent, give back what it lacks when ``autoupdate``;
    return what this call wrote (None when nothing)."""
    gk = GroupKind("rbac.authorization.k8s.io", wanted["kind"])
    info = scheme.by_group_kind(gk)
    assert info is not None, f"the scheme has no {gk.kind}"
    meta = wanted["metadata"]
    try:
        found = await store.get(gk, str(meta.get("namespace") or ""), meta["name"])
    except errors.NotFound:
        admitted, _ = admit_object(info, copy.deepcopy(wanted), None, operation="CREATE", now=clock.now(),
                                   user=None)
        with contextlib.suppress(errors.AlreadyExists):
            return await store.create(admitted)
        return None
    merged = _merged(copy.deepcopy(found), wanted)
    if merged is not None:
        admitted, _ = admit_object(info, merged, found, operation="UPDATE", now=clock.now(), user=None)
        with contextlib.suppress(errors.Conflict, errors.NotFound):
            return await store.update(admitted)
    return None


async def reconcile_defaults(store: StoreProtocol, scheme: Scheme, *, clock: Clock) -> None:
    """Create each default object when absent, give back what an ``autoupdate`` one lacks."""
    for wanted in (*CLUSTER_ROLES, *AGENT_ROLES, *CLUSTER_ROLE_BINDINGS):
        await reconcile(store, scheme, wanted, clock=clock)


__all__ = ["AGENT_EXECUTION_ROLE", "AGENT_GROUP", "AGENT_ROLE", "AGENT_ROLES", "CLUSTER_ROLES",
           "CLUSTER_ROLE_BINDINGS", "binding", "reconcile", "reconcile_defaults"]
