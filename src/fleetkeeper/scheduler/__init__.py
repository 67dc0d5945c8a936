"""The scheduler: where each binding's replicas run (Karmada's scheduler, rule for rule).

The data flow, one module per step::

    snapshot      clusters parsed once per version into ClusterFacts, with a per-snapshot memo
      │
    framework     filter plugins (plugins/, explicit order) → Fit or FitError; score plugins
      │
    candidates    score + estimator capacity + overflow tier, in global order
      │
    spread        spread constraints pick clusters (by cluster, by region; selectGroups)
      │
    assignment    Duplicated / StaticWeight / DynamicWeight / Aggregated (webster, gosort)
      │
    core          Scheduler: the pipeline and the clusterAffinities fallback  → [(cluster, replicas)]

``triggers`` decides *whether* a binding is scheduled again and how an outcome reads as
the ``Scheduled`` condition; ``controller`` is the reconciler that reads bindings, runs
the core and writes results, conditions and events; ``bench`` measures the core.

The core is pure (values in, values out) and shared by the controller, the what-if CLI
(``fleetkeeper schedule``) and the benchmark. Import the controller from
:mod:`fleetkeeper.scheduler.controller`; it is kept out of this package's namespace so
the pure parts load without the runtime.
"""

from fleetkeeper.scheduler.core import Outcome, Scheduler
from fleetkeeper.scheduler.errors import ScheduleError, UnschedulableError
from fleetkeeper.scheduler.framework import BindingView, FilterPlugin, FitError, Result, ScorePlugin
from fleetkeeper.scheduler.plugins import REGISTRY, enabled, new_plugins
from fleetkeeper.scheduler.snapshot import ClusterFacts, Snapshot, SnapshotBuilder, snapshot_of

__all__ = [
    "REGISTRY",
    "BindingView",
    "ClusterFacts",
    "FilterPlugin",
    "FitError",
    "Outcome",
    "Result",
    "ScheduleError",
    "Scheduler",
    "ScorePlugin",
    "Snapshot",
    "SnapshotBuilder",
    "UnschedulableError",
    "enabled",
    "new_plugins",
    "snapshot_of",
]
