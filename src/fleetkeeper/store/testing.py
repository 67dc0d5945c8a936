"""The store conformance suite: a backend is done when it passes.

A backend's test module is a few lines::

    from fleetkeeper.store.testing import StoreConformance

    class TestSqliteStore(StoreConformance):
        durable = True

        def url(self, tmp_path):
            return f"sqlite://{tmp_path}/state.db"

The suite covers every semantic of :mod:`fleetkeeper.store.interface`: system metadata,
preconditions and conflicts (including many concurrent writers at one version),
generation, ``/status`` isolation, finalizer-held deletes, lists with selectors and
pages, batches, watches (resume from every revision, kind/namespace/selector filters,
retention and ``Gone``, fifty concurrent watchers, slow watchers), the stored-object
size limit on every write path, and for durable
backends a reopen and a writer killed with SIGKILL mid-stream. It needs pytest and
pytest-asyncio (``asyncio_mode = auto``); reads that must complete carry a hang guard,
never a speed assertion.
"""

from __future__ import annotations

from fleetkeeper.store._conformance_base import StoreFixtures, counting_uids, deployment, summary, take
from fleetkeeper.store._conformance_crud import (
    CreateGetConformance,
    DeleteConformance,
    DeterminismConformance,
    ListConformance,
    UpdateConformance,
)
from fleetkeeper.store._conformance_durability import DurabilityConformance
from fleetkeeper.store._conformance_limits import LimitsConformance
from fleetkeeper.store._conformance_watch import BatchConformance, WatchConformance


class StoreConformance(
    CreateGetConformance,
    UpdateConformance,
    DeleteConformance,
    ListConformance,
    DeterminismConformance,
    WatchConformance,
    BatchConformance,
    DurabilityConformance,
    LimitsConformance,
):
    """Subclass as ``Test<Backend>Store``, set ``durable`` and implement ``url(tmp_path)``."""


__all__ = ["StoreConformance", "StoreFixtures", "counting_uids", "deployment", "summary", "take"]
