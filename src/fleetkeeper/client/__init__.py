"""How controllers, the scheduler, agents and the CLI talk to the control plane.

The protocols live in :mod:`fleetkeeper.client.interface` (re-exported here); the
implementations are imported by the wiring code only, by module:
:mod:`fleetkeeper.client.local` (in-process, onto a Store) and ``client.rest`` (HTTPS).
This package deliberately does not import them, so that depending on the protocols
never pulls the store into a controller's import graph (docs/architecture.md, Package layering).
"""

from __future__ import annotations

from fleetkeeper.client.interface import (
    Client,
    ObjectList,
    PatchType,
    Reader,
    StatusWriter,
    Watcher,
    WatchEvent,
    WatchEventType,
    Writer,
    batch,
)

__all__ = [
    "Client", "ObjectList", "PatchType", "Reader", "StatusWriter", "WatchEvent", "WatchEventType", "Watcher",
    "Writer", "batch",
]
