"""Member clusters: one :class:`Member` protocol, picked by URL.

``open_member(url, clock=…)`` is how the rest of fleetkeeper reaches a member cluster:

* ``simulated://NAME`` — the cluster named NAME of the simulated fleet that shares the
  clock (:meth:`SimulatedFleet.for_clock`), created on first use. Query parameters
  shape a cluster created that way: ``nodes`` (count), ``podStartup`` (``2s``,
  ``500ms`` or seconds), ``kubernetesVersion``; they are ignored when the cluster exists;
* ``kube://CONTEXT`` — a real cluster: a context of the default kubeconfig (the first
  existing file of ``$KUBECONFIG``, else ``~/.kube/config``; ``kube://`` alone is its
  current context), or ``kube:///path/to/kubeconfig#CONTEXT`` — a context of that file
  (without ``#CONTEXT``: its current context). The kubeconfig is read at once, so a
  missing file or context is a ``ValueError`` here (see
  :mod:`fleetkeeper.members.kubernetes`);

any other scheme is a ``ValueError``. Backends are imported when first used, so an
optional dependency costs nothing unless its scheme is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit

from fleetkeeper.clock import Clock
from fleetkeeper.members.interface import FIELD_MANAGER, ClusterSummary, Member, MemberEvent, ObjectRef
from fleetkeeper.options import parse_duration

if TYPE_CHECKING:
    from fleetkeeper.members.simulated import SimulatedFleet

_SIMULATED_OPTIONS = {
    "nodes": "nodes", "podStartup": "pod_startup", "kubernetesVersion": "kubernetes_version",
}


def open_member(url: str, *, clock: Clock, fleet: SimulatedFleet | None = None) -> Member:
    """The member cluster a URL names (see the module notes)."""
    parts = urlsplit(url)
    if parts.scheme == "simulated":
        from fleetkeeper.members.simulated import SimulatedFleet

        name = parts.netloc or parts.path.lstrip("/")
        if not name:
            raise ValueError(f"member URL {url!r} names no cluster (expected simulated://NAME)")
        target = fleet if fleet is not None else SimulatedFleet.for_clock(clock)
        return target.open(name, **_simulated_options(url, parts.query))
    if parts.scheme == "kube":
        from fleetkeeper.members.kubernetes import KubernetesMember

        return KubernetesMember.from_url(url, clock=clock)
    raise ValueError(f"member URL {url!r}: unknown scheme {parts.scheme!r} (expected simulated:// or kube://)")


def _simulated_options(url: str, query: str) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for key, value in parse_qsl(query, keep_blank_values=True):
        if key not in _SIMULATED_OPTIONS:
            raise ValueError(f"member URL {url!r}: unknown parameter {key!r} "
                             f"(known: {', '.join(sorted(_SIMULATED_OPTIONS))})")
        if key == "nodes":
            options["nodes"] = int(value)
        elif key == "podStartup":
            seconds = value.replace(".", "", 1).isdigit()
            options["pod_startup"] = parse_duration(float(value) if seconds else value)
        else:
            options[_SIMULATED_OPTIONS[key]] = value
    return options


__all__ = ["FIELD_MANAGER", "ClusterSummary", "Member", "MemberEvent", "ObjectRef", "open_member"]
