"""Job controller: run pods to completion.

A Job pod becomes Ready after ``pod_startup`` and succeeds after running for the
cluster's ``job_run`` seconds — or for the value of the Job's annotation
``simulation.fleetkeeper.io/run-seconds``, so a scenario can give each Job its own
duration. The Job keeps ``min(parallelism, completions - succeeded)`` pods active
(``parallelism`` and ``completions`` default to 1; without ``completions`` the Job is
done once a pod succeeded and none is active). ``spec.suspend`` keeps no pod active.

A pod of a crashed workload (``crash_workload``) fails at startup when the template's
``restartPolicy`` is ``Never`` (the Job counts it in ``failed`` and makes a replacement,
until more than ``backoffLimit`` (default 6) failed: condition ``Failed``,
``BackoffLimitExceeded``); with ``OnFailure`` it crash-loops in place like any pod.

Status (``batch/v1``): ``startTime``, ``active``, ``succeeded``, ``failed`` (omitted when
zero), ``ready`` and ``terminating`` (present even when zero), ``uncountedTerminatedPods``,
``completionTime`` and the ``Complete`` / ``Failed`` conditions.
"""

from __future__ import annotations

from typing import Any

from fleetkeeper.members.simulated.controllers import (
    Runtime,
    conditions_of,
    omit_zero,
    pod_labels,
    scale,
    set_condition,
    spec_int,
    write_status,
)
from fleetkeeper.members.simulated.events import WARNING, involved
from fleetkeeper.members.simulated.objects import GroupKind, Obj
from fleetkeeper.members.simulated.pods import Pod

JOB = GroupKind("batch", "Job")
RUN_SECONDS_ANNOTATION = "simulation.fleetkeeper.io/run-seconds"
JOB_CONTROLLER = "job-controller"


def reconcile_job(runtime: Runtime, job: Obj) -> None:
    spec = job.get("spec") or {}
    meta = job["metadata"]
    status = dict(job.get("status") or {})
    conditions = conditions_of(job)
    pods = runtime.pods.owned_by(meta["uid"])
    active = [p for p in pods if not p.finished]
    succeeded = sum(1 for p in pods if p.phase == "Succeeded")
    failed = sum(1 for p in pods if p.phase == "Failed")
    now = runtime.now()
    finished = any(c["type"] in ("Complete", "Failed") and c["status"] == "True" for c in conditions)
    if not finished:
        completions = spec.get("completions")
        if failed > spec_int(spec, "backoffLimit", 6):
            active = scale(runtime, active, want=0, owner=job, component=JOB_CONTROLLER)
            set_condition(conditions, "Failed", status=True, reason="BackoffLimitExceeded",
                          message="Job has reached the specified backoff limit", now=now)
            runtime.events.record(involved(job), "BackoffLimitExceeded",
                                  "Job has reached the specified backoff limit", component=JOB_CONTROLLER,
                                  type=WARNING)
        elif succeeded >= (1 if completions is None else int(completions)) and (completions or not active):
            set_condition(conditions, "Complete", status=True, reason="CompletionsReached",
                          message="Reached expected number of succeeded pods", now=now)
            status["completionTime"] = now
            runtime.events.record(involved(job), "Completed", "Job completed", component=JOB_CONTROLLER)
        else:
            active = scale(runtime, active, want=_want_active(spec, succeeded, len(active)), owner=job,
                           component=JOB_CONTROLLER, create=lambda: _create(runtime, job))
    status.update({
        "startTime": status.get("startTime") or now, "active": len(active), "succeeded": succeeded,
        "failed": failed, "ready": sum(1 for p in active if p.ready), "terminating": 0,
        "uncountedTerminatedPods": {}, "conditions": conditions,
    })
    write_status(runtime, job, omit_zero(status, "active", "succeeded", "failed", "conditions"))


def _want_active(spec: dict[str, Any], succeeded: int, active: int) -> int:
    if spec.get("suspend"):
        return 0
    parallelism = spec_int(spec, "parallelism", 1)
    completions = spec.get("completions")
    if completions is None:  # a work queue: no new pods once one succeeded, the running ones finish
        return parallelism if succeeded == 0 else min(parallelism, active)
    return max(0, min(parallelism, int(completions) - succeeded))


def _create(runtime: Runtime, job: Obj) -> Pod:
    meta = job["metadata"]
    template = (job.get("spec") or {}).get("template") or {}
    uid, name = meta["uid"], meta["name"]
    labels = pod_labels(template, {
        "batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": name,
        "controller-uid": uid, "job-name": name,
    })
    run_for = float((meta.get("annotations") or {}).get(RUN_SECONDS_ANNOTATION, runtime.job_run))
    return runtime.create_pod(job, template, name=runtime.pod_name(name, meta["namespace"]), revision="",
                              labels=labels, run_for=run_for)


__all__ = ["JOB", "RUN_SECONDS_ANNOTATION", "reconcile_job"]
