"""What a Pull agent may write, judged on the object itself.

RBAC says which verbs an agent may use on which kinds, namespaces and names (the ClusterRole
``system:fleetkeeper:agent`` and the agent's own grants, :mod:`fleetkeeper.apiserver.agent_rbac`).
What RBAC cannot express is checked here, on the admitted object (and the stored one), on
every write path — create, update, every patch type and apply alike — as Kubernetes'
NodeRestriction admission plugin does for a kubelet:

* **it creates only its own Cluster and Lease.** RBAC grants ``create`` on every name (a
  create names no object when it is authorized), so the name is checked here: the Cluster
  named after the agent's cluster, the Lease of that name in ``karmada-cluster``;
* **its Events live in ``default`` or its execution namespace** (the role lets it record
  Events wherever it is bound);
* **its Cluster stays a Pull cluster that the plane never calls.** An agent may register
  and update only its own Cluster, only with ``syncMode: Pull``, and may never set or
  change a field that makes the control plane reach out with credentials (``apiEndpoint``,
  ``secretRef``, ``impersonatorSecretRef``, ``insecureSkipTLSVerification``, ``proxyURL``,
  ``proxyHeader``), nor what the plane owns (``taints``, finalizers, owner references).
  Otherwise a stolen agent token could point the plane at a listener of its own with
  another cluster's Secret, and so receive that cluster's credentials at every probe;
* **its status writes are for a Pull cluster** (an agent's token never reports for a Push
  cluster the plane probes itself);
* **its Events are about its own Cluster and Works** (``involvedObject``/``regarding`` and
  ``related``), before and after the write, so an agent can neither forge records about
  other objects nor rewrite the plane's;
* **its timeline entries are about its own Cluster and Works** (``subject``): what it saw of
  its cluster (``Ready=False (…)``) goes on the failover timeline beside the plane's
  decisions; it may only create them, never change or delete one.

Every refusal is ``403 Forbidden`` naming the field and the rule; the admin and the
plane's own controllers are not concerned.
"""

from __future__ import annotations

from typing import Any

from fleetkeeper import errors
from fleetkeeper.api.scheme import ResourceInfo
from fleetkeeper.apiserver.auth import EVENT_NAMESPACE, EXECUTION_NAMESPACE_PREFIX, LEASE_NAMESPACE, User

CLUSTER_GROUP = "cluster.karmada.io"
WORK_GROUP = "work.karmada.io"
#: Cluster fields that tell the control plane where and how to call out
CALL_OUT_FIELDS = ("apiEndpoint", "secretRef", "impersonatorSecretRef", "insecureSkipTLSVerification",
                   "proxyURL", "proxyHeader")
#: what the control plane owns on a Cluster
PLANE_FIELDS = (("spec", "taints"), ("metadata", "finalizers"), ("metadata", "ownerReferences"))
_UNSET: tuple[Any, ...] = (None, False, "", [], {})


def check_write(user: User | None, info: ResourceInfo, new: dict[str, Any], old: dict[str, Any] | None, *,
                subresource: str | None = None) -> None:
    """Raise ``Forbidden`` if ``user`` — when a Pull agent — may not write ``new`` over ``old``."""
    if user is None or user.cluster is None:
        return
    if info.group == CLUSTER_GROUP and info.plural == "clusters":
        _own_name(user.cluster, new, kind="Cluster", what="registers and updates only its own Cluster")
        _check_cluster(user.cluster, new, old, subresource)
    elif info.group == "coordination.k8s.io" and info.plural == "leases":
        _own_name(user.cluster, new, kind="Lease", what=f"holds only its own Lease in {LEASE_NAMESPACE}",
                  namespaces=(LEASE_NAMESPACE,))
    elif info.group == "fleetkeeper.io" and info.plural == "timelineentries":
        _check_entry(user.cluster, new)
    elif info.plural == "events" and info.group in ("", "events.k8s.io"):
        namespaces = (EVENT_NAMESPACE, EXECUTION_NAMESPACE_PREFIX + user.cluster)
        if str(_get(new, "metadata", "namespace") or "") not in namespaces:
            rule = "records Events only in " + " and ".join(namespaces)
            raise _forbid(user.cluster, "metadata.namespace", rule, kind="Event",
                          name=str(_get(new, "metadata", "name") or ""))
        for event in (new, old):
            if event is not None:
                _check_event(user.cluster, event)


def _forbid(user_cluster: str, field: str, rule: str, *, kind: str, name: str) -> errors.Forbidden:
    return errors.Forbidden(f'{kind} "{name}" is forbidden: {field}: the pull agent of cluster '
                            f'{user_cluster!r} {rule}', kind=kind.lower() + "s", name=name or None)


def _own_name(cluster: str, obj: dict[str, Any], *, kind: str, what: str,
              namespaces: tuple[str, ...] = ("",)) -> None:
    name = str(_get(obj, "metadata", "name") or "")
    if name != cluster:
        raise _forbid(cluster, "metadata.name", what, kind=kind, name=name)
    if str(_get(obj, "metadata", "namespace") or "") not in namespaces:
        raise _forbid(cluster, "metadata.namespace", what, kind=kind, name=name)


def _get(obj: dict[str, Any] | None, *path: str) -> Any:
    node: Any = obj
    for key in path:
        node = node.get(key) if isinstance(node, dict) else None
    return node


def _same(a: Any, b: Any) -> bool:
    return a == b or (a in _UNSET and b in _UNSET)


def _check_cluster(cluster: str, new: dict[str, Any], old: dict[str, Any] | None,
                   subresource: str | None) -> None:
    name = str(_get(new, "metadata", "name") or "")
    if subresource is not None:
        if _get(old, "spec", "syncMode") != "Pull":
            raise _forbid(cluster, "spec.syncMode", "reports the status of a Pull cluster only",
                          kind="Cluster", name=name)
        return
    if _get(new, "spec", "syncMode") != "Pull":
        raise _forbid(cluster, "spec.syncMode", 'registers its cluster as "Pull" only',
                      kind="Cluster", name=name)
    if old is not None and _get(old, "spec", "syncMode") != "Pull":
        raise _forbid(cluster, "spec.syncMode", "may not take over a cluster registered in Push mode",
                      kind="Cluster", name=name)
    for field in CALL_OUT_FIELDS:
        if not _same(_get(new, "spec", field), _get(old, "spec", field)):
            raise _forbid(cluster, f"spec.{field}", "may not set or change where the control plane calls out "
                          "(only the admin may)", kind="Cluster", name=name)
    for path in PLANE_FIELDS:
        if not _same(_get(new, *path), _get(old, *path)):
            raise _forbid(cluster, ".".join(path), "may not set or change what the control plane owns",
                          kind="Cluster", name=name)


def _subject_ok(cluster: str, ref: Any) -> bool:
    if not isinstance(ref, dict):
        return False
    group = str(ref.get("apiVersion") or "").rpartition("/")[0]
    kind, name, namespace = ref.get("kind"), ref.get("name"), ref.get("namespace") or ""
    if kind == "Cluster" and group == CLUSTER_GROUP:
        return name == cluster and not namespace
    if kind == "Work" and group == WORK_GROUP:
        return namespace == EXECUTION_NAMESPACE_PREFIX + cluster
    return False


def record_allowed(cluster: str, record: dict[str, Any]) -> bool:
    """Whether the pull agent of ``cluster`` may record ``record``, an Event or a timeline entry
    (its wire form)."""
    check = _check_entry if record.get("kind") == "TimelineEntry" else _check_event
    try:
        check(cluster, record)
    except errors.Forbidden:
        return False
    return True


def _check_entry(cluster: str, entry: dict[str, Any]) -> None:
    if not _subject_ok(cluster, entry.get("subject")):
        raise _forbid(cluster, "subject", f"records timeline entries only about its Cluster {cluster!r} and "
                      f"the Works in {EXECUTION_NAMESPACE_PREFIX}{cluster}", kind="TimelineEntry",
                      name=str(_get(entry, "metadata", "name") or ""))


def _check_event(cluster: str, event: dict[str, Any]) -> None:
    name = str(_get(event, "metadata", "name") or "")
    rule = (f"records Events only about its Cluster {cluster!r} and the Works in "
            f"{EXECUTION_NAMESPACE_PREFIX}{cluster}")
    main = "regarding" if "regarding" in event else "involvedObject"
    if not _subject_ok(cluster, event.get(main)):
        raise _forbid(cluster, main, rule, kind="Event", name=name)
    related = event.get("related")
    if related is not None and not _subject_ok(cluster, related):
        raise _forbid(cluster, "related", rule, kind="Event", name=name)


__all__ = ["CALL_OUT_FIELDS", "PLANE_FIELDS", "check_write", "record_allowed"]
