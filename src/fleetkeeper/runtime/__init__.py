"""The controller runtime: keys in, reconciles out (docs/architecture.md, Package layering).

Data flows through one noun per module, as in controller-runtime::

    informer (list+watch cache) ──handler──▶ workqueue ──▶ controller workers ──▶ reconciler
          ▲ shared by cache.InformerFactory          ▲ ratelimit                    │
          └──────────────── client (local | rest) ◀─────────── writes ─────────────┘

    manager: caches → sync → plain runnables → (leaderelection) → controllers
    spec: what a controller module declares; the wiring layer installs it on a manager

A reconciler implements ``async def reconcile(self, request: Request) -> Result``;
everything else here exists so that it is called once per changed key, never twice
at once for one key, with backoff on failure, on virtual time in tests.
This package imports only ``api``, ``client``, ``members`` and ``interpreter`` (protocols),
``options``, ``clock`` and ``errors``.
"""

from fleetkeeper.runtime.backoff import Backoff
from fleetkeeper.runtime.cache import InformerFactory
from fleetkeeper.runtime.controller import Controller, Keys, Source, current_reconcile_id
from fleetkeeper.runtime.handler import (
    EnqueueMapped,
    EventHandler,
    FuncHandler,
    MapFunc,
    Predicate,
    generation_changed,
)
from fleetkeeper.runtime.indexer import Indexer, IndexFunc
from fleetkeeper.runtime.informer import Informer, ListWatcher
from fleetkeeper.runtime.leaderelection import LeaderElectionConfig, LeaderElector, LeaseClient
from fleetkeeper.runtime.manager import Manager, Runnable
from fleetkeeper.runtime.metrics import Metrics, NoMetrics, PrometheusMetrics
from fleetkeeper.runtime.ratelimit import (
    ItemExponential,
    MaxOf,
    RateLimiter,
    TokenBucket,
    default_rate_limiter,
)
from fleetkeeper.runtime.reconcile import FuncReconciler, Reconciler, Request, Result, TerminalError
from fleetkeeper.runtime.spec import ControllerSpec, Deps, Runs, Tier, Watch
from fleetkeeper.runtime.workqueue import ShutDown, Workqueue

__all__ = [
    "Backoff", "Controller", "ControllerSpec", "Deps", "EnqueueMapped", "EventHandler", "FuncHandler",
    "FuncReconciler", "IndexFunc", "Indexer", "Informer", "InformerFactory", "ItemExponential", "Keys",
    "LeaderElectionConfig", "LeaderElector", "LeaseClient", "ListWatcher", "Manager", "MapFunc", "MaxOf",
    "Metrics", "NoMetrics", "Predicate", "PrometheusMetrics", "RateLimiter", "Reconciler", "Request",
    "Result", "Runnable", "Runs", "ShutDown", "Source", "TerminalError", "Tier", "TokenBucket", "Watch",
    "Workqueue", "current_reconcile_id", "default_rate_limiter", "generation_changed",
]
