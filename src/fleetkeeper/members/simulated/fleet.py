"""``SimulatedFleet``: the simulated member clusters of one run, by name.

A scenario (or a dev setup) builds its clusters here, and the control plane reaches the
same objects through ``open_member("simulated://NAME", clock=clock)``. The link between
the two is the clock: :meth:`SimulatedFleet.for_clock` returns the one fleet shared by
everything running on a clock (held weakly, so it goes away with the clock). A fleet
made with the constructor is private to whoever holds it.

``open`` of a name the fleet does not know creates that cluster with default shape,
so registering ``simulated://dev1`` against a fresh fleet just works.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from typing import Any, ClassVar

from fleetkeeper import errors
from fleetkeeper.clock import Clock
from fleetkeeper.members.simulated.cluster import SimulatedCluster


class SimulatedFleet:
    """Several simulated clusters on one clock, by name."""

    _shared: ClassVar[weakref.WeakKeyDictionary[Clock, SimulatedFleet]] = weakref.WeakKeyDictionary()

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self._clusters: dict[str, SimulatedCluster] = {}

    @classmethod
    def for_clock(cls, clock: Clock) -> SimulatedFleet:
        """The fleet shared by everything that runs on ``clock``."""
        fleet = cls._shared.get(clock)
        if fleet is None:
            fleet = cls._shared[clock] = cls(clock)
        return fleet

    def add(self, name: str, **options: Any) -> SimulatedCluster:
        """Create a cluster (options as :class:`SimulatedCluster`); ``ValueError`` if the name is taken."""
        if name in self._clusters:
            raise ValueError(f"the fleet already has a cluster named {name!r}")
        cluster = self._clusters[name] = SimulatedCluster(name, clock=self.clock, **options)
        return cluster

    def open(self, name: str, **options: Any) -> SimulatedCluster:
        """The cluster named ``name``, created with ``options`` if it does not exist yet."""
        cluster = self._clusters.get(name)
        return cluster if cluster is not None else self.add(name, **options)

    def remove(self, name: str) -> SimulatedCluster:
        """Forget a cluster (``KeyError`` if unknown)."""
        return self._clusters.pop(name)

    def member(self, cluster_name: str, api_endpoint: str | None = None) -> SimulatedCluster:
        """The fleet as a :class:`~fleetkeeper.members.interface.MemberPool`: a cluster it
        does not hold is unreachable (no client can be built for it)."""
        if cluster_name not in self._clusters:
            raise errors.MemberUnreachable(f"no simulated cluster named {cluster_name!r}")
        return self._clusters[cluster_name]

    def __getitem__(self, name: str) -> SimulatedCluster:
        try:
            return self._clusters[name]
        except KeyError:
            known = ", ".join(sorted(self._clusters))
            raise KeyError(f"no simulated cluster named {name!r} (have: {known})") from None

    def __contains__(self, name: object) -> bool:
        return name in self._clusters

    def __iter__(self) -> Iterator[SimulatedCluster]:
        """Clusters in name order."""
        return iter([self._clusters[name] for name in sorted(self._clusters)])

    def __len__(self) -> int:
        return len(self._clusters)

    def names(self) -> list[str]:
        """Cluster names, sorted."""
        return sorted(self._clusters)


__all__ = ["SimulatedFleet"]
