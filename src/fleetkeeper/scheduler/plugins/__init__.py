"""The in-tree plugins, in the explicit order they run.

Order only matters for the reason a cluster failing several filters is reported with:
the first failing filter names it. The order goes from "not a candidate at all" to
"a candidate, but not now": affinity, API, topology, taints, eviction. Karmada runs its
plugins in Go map order (random per process); an explicit list makes reasons stable.

:func:`enabled` applies the ``--plugins`` selection with Karmada's semantics: ``*``
anywhere enables every plugin, a name enables that plugin, ``-name`` disables it (only
once something is enabled); the result keeps registry order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from fleetkeeper.scheduler.framework import Plugin
from fleetkeeper.scheduler.plugins import (
    api_enablement,
    cluster_affinity,
    cluster_eviction,
    cluster_locality,
    spread_constraint,
    taint_toleration,
)

#: name → factory, in run order
REGISTRY: dict[str, Callable[[], Plugin]] = {
    cluster_affinity.NAME: cluster_affinity.new,
    api_enablement.NAME: api_enablement.new,
    spread_constraint.NAME: spread_constraint.new,
    taint_toleration.NAME: taint_toleration.new,
    cluster_eviction.NAME: cluster_eviction.new,
    cluster_locality.NAME: cluster_locality.new,
}


def enabled(selection: Sequence[str] = ("*",)) -> list[str]:
    """The plugin names a ``--plugins`` selection enables, in registry order."""
    chosen: set[str] = set(REGISTRY) if "*" in selection else set()
    for item in selection:
        if item in REGISTRY:
            chosen.add(item)
        elif item.startswith("-") and chosen:
            chosen.discard(item.lstrip("-"))
    return [name for name in REGISTRY if name in chosen]


def new_plugins(selection: Sequence[str] = ("*",)) -> list[Plugin]:
    """Fresh instances of the enabled plugins, in registry order."""
    return [REGISTRY[name]() for name in enabled(selection)]


__all__ = ["REGISTRY", "enabled", "new_plugins"]
