"""``fleetkeeper bench readiness``: how long a full failover-readiness pass takes, on this machine.

The scheduler benchmark's synthetic fleet (:mod:`fleetkeeper.scheduler.bench`: clusters in
a handful of regions with capacity summaries, bindings from a few dozen policies of every
kind), every cluster Ready and every binding placed first by the scheduler on the healthy
fleet — that setup is not measured. Then one full pass
(:func:`~fleetkeeper.readiness.assess.full_pass`): the loss of every cluster assessed, every
binding's ``FailoverReady`` decided, as the controller does one domain at a time. No store,
no I/O; the clock read here is ``time.perf_counter`` (this measures the machine).

Returns ``seconds`` (the pass), ``bindings_per_second``, ``classes`` (of equivalent bindings,
which share one scheduling decision per domain), ``bindings`` (placed), ``clusters`` and
``at_risk`` (bindings whose condition is False).
"""

from __future__ import annotations

import gc
import random
import time

from fleetkeeper.api import conditions, constants
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.meta import Condition
from fleetkeeper.api.work import Binding
from fleetkeeper.clock import VIRTUAL_EPOCH
from fleetkeeper.controllers.default_policy import default_taint_policy
from fleetkeeper.options import Options
from fleetkeeper.readiness.assess import full_pass
from fleetkeeper.readiness.whatif import Fleet, applied
from fleetkeeper.scheduler import bench as scheduler_bench
from fleetkeeper.scheduler.core import Scheduler
from fleetkeeper.scheduler.snapshot import snapshot_of


def _ready(cluster: Cluster) -> Cluster:
    ready = Condition(type=constants.COND_READY, status="True", reason=constants.REASON_CLUSTER_READY)
    status = cluster.status.model_copy(update={
        "conditions": conditions.set_condition(cluster.status.conditions, ready, VIRTUAL_EPOCH)})
    return cluster.model_copy(update={"status": status})


def setup(*, clusters: int, bindings: int, seed: int) -> Fleet:
    """The fleet of the scheduler benchmark, Ready, with every binding the scheduler can place placed."""
    rng = random.Random(seed)
    members = [_ready(c) for c in scheduler_bench.fleet(clusters, rng)]
    pool = scheduler_bench.placements(members, rng)
    names = [c.name for c in members]
    snapshot, scheduler = snapshot_of(members), Scheduler()
    placed: list[Binding] = []
    for i in range(bindings):
        rb = scheduler_bench.workload(i, pool, names, rng)
        rb.spec.clusters = None
        outcome = scheduler.schedule_binding(rb.spec, rb.status, snapshot, VIRTUAL_EPOCH)
        if outcome.error is None and outcome.clusters:
            placed.append(applied(rb, outcome.clusters))
    return Fleet(members, placed, [default_taint_policy()],
                 threshold=Options().eviction_circuit_breaker_threshold)


def bench_readiness(*, clusters: int = 100, bindings: int = 10_000, seed: int = 0) -> dict[str, object]:
    """One full readiness pass over a synthetic fleet; figures as a dict."""
    fleet = setup(clusters=clusters, bindings=bindings, seed=seed)
    gc.collect()
    gc.freeze()  # the input is built; the collector need not walk it during the pass
    try:
        started = time.perf_counter()
        result = full_pass(fleet, "cluster", VIRTUAL_EPOCH)
        seconds = time.perf_counter() - started
    finally:
        gc.unfreeze()
    placed = len(result.conditions)
    return {
        "benchmark": "readiness",
        "clusters": clusters,
        "bindings": placed,
        "seconds": round(seconds, 3),
        "bindings_per_second": round(placed / seconds, 1) if seconds else None,
        "classes": result.classes,
        "at_risk": sum(c.status == "False" for c in result.conditions.values()),
        "seed": seed,
    }


__all__ = ["bench_readiness", "setup"]
