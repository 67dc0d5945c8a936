"""The traffic-provider protocol: a load balancer that can be told the routing table.

A provider is a runnable (``run()`` serves until cancelled) that accepts a new
:class:`~fleetkeeper.traffic.routes.RouteTable` at any time through :meth:`apply`. The
table is the whole truth each time — providers compare it with what they already do
and change only the difference, so calling :meth:`apply` twice with one table is a
no-op. ``apply`` returns once the load balancer routes by the new table: a request sent
after that never reaches a backend the table blocks.
"""

from __future__ import annotations

from typing import Protocol

from fleetkeeper.traffic.routes import RouteTable


class Provider(Protocol):
    """A load balancer driven by route tables."""

    name: str

    async def run(self) -> None:
        """Serve until cancelled."""
        ...

    async def wait_ready(self) -> None:
        """Return once the provider accepts connections (after :meth:`run` started)."""
        ...

    async def apply(self, table: RouteTable) -> None:
        """Route by ``table`` from now on."""
        ...


__all__ = ["Provider"]
