"""Native AggregateStatus for Job and CronJob (spec B.2.4).

A Job split over clusters is one job to its owner:

* a template that already has a true ``Complete`` or ``Failed`` condition is finished and never
  changes again;
* ``active``, ``succeeded`` and ``failed`` are sums over the members;
* ``Failed`` (reason ``JobFailed``) is added when any member failed, naming those clusters in item
  order; ``Complete`` (reason ``Completed``) when every item completed, plus ``SuccessCriteriaMet``
  when every item met its success criteria; the conditions are stamped with ``now``;
* ``startTime`` stays the template's, or becomes the earliest member start once every item has
  started; ``completionTime`` is the latest, once every item has completed.

A CronJob's status concatenates the members' ``active`` lists and keeps the latest schedule and
success times. ``now`` is passed in: these rules never read a clock themselves.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fleetkeeper.interpreter import fields
from fleetkeeper.interpreter.native.aggregate import Items, member_statuses, replace_status

Obj = dict[str, Any]


def _finished(status: Obj) -> str:
    """``Complete`` or ``Failed`` when the status has that condition set to True, else ``""``."""
    for condition in fields.get_list(status, "conditions"):
        if isinstance(condition, dict) and condition.get("type") in ("Complete", "Failed") \
                and condition.get("status") == "True":
            return str(condition["type"])
    return ""


def _condition(kind: str, reason: str, message: str, now: datetime) -> Obj:
    stamp = fields.format_time(now)
    return {"type": kind, "status": "True", "lastProbeTime": stamp, "lastTransitionTime": stamp,
            "reason": reason, "message": message}


def _time(value: object) -> datetime | None:
    return fields.parse_time(value) if isinstance(value, str) and value else None


def _stamps(items: Items, name: str) -> list[tuple[datetime, str]]:
    """The members' ``name`` timestamps that are set, parsed, with their original text."""
    out = []
    for _, status in member_statuses(items):
        when = _time(status.get(name))
        if when is not None:
            out.append((when, str(status[name])))
    return out


def _job_conditions(items: Items, now: datetime) -> list[Obj]:
    failed = [cluster for cluster, status in member_statuses(items) if _finished(status) == "Failed"]
    complete = sum(1 for _, status in member_statuses(items) if _finished(status) == "Complete")
    criteria = sum(1 for _, status in member_statuses(items) if any(
        isinstance(c, dict) and c.get("type") == "SuccessCriteriaMet" and c.get("status") == "True"
        for c in fields.get_list(status, "conditions")))
    total = len(items or [])
    conditions = []
    if failed:
        conditions.append(_condition("Failed", "JobFailed",
                                     f"Job executed failed in member clusters {','.join(failed)}", now))
    if complete == total and complete > 0:
        conditions.append(_condition("Complete", "Completed", "Job completed", now))
        if criteria == total:
            conditions.append(_condition("SuccessCriteriaMet", "CompletionsReached",
                                         "All member clusters have met success criteria", now))
    return conditions


def _job_times(obj: Obj, items: Items) -> Obj:
    total = len(items or [])
    out: Obj = {}
    current = fields.get(obj, "status", "startTime")
    started = _stamps(items, "startTime")
    if current:
        out["startTime"] = current
    elif started and len(started) == total:
        out["startTime"] = min(started)[1]
    ended = _stamps(items, "completionTime")
    if ended and len(ended) == total:
        out["completionTime"] = max(ended)[1]
    return out


def aggregate_job(obj: Obj, items: Items, now: datetime) -> Obj:
    """Aggregate a Job's member statuses (see the module notes)."""
    if _finished(fields.get_map(obj, "status")):
        return obj
    new: Obj = {}
    conditions = _job_conditions(items, now)
    if conditions:
        new["conditions"] = conditions
    new.update(_job_times(obj, items))
    for name in ("active", "succeeded", "failed"):
        total = sum(fields.get_int(status, name) for _, status in member_statuses(items))
        if total:
            new[name] = total
    return replace_status(obj, new)


def aggregate_cron_job(obj: Obj, items: Items) -> Obj:
    """Aggregate a CronJob's member statuses."""
    active: list[Any] = []
    for _, status in member_statuses(items):
        active.extend(fields.deep(fields.get_list(status, "active")))
    new: Obj = {}
    for name in ("lastScheduleTime", "lastSuccessfulTime"):
        stamps = _stamps(items, name)
        if stamps:
            new[name] = max(stamps, key=lambda stamp: stamp[0])[1]
    if active:
        new["active"] = active
    old = fields.get_map(obj, "status")
    merged = {k: v for k, v in old.items() if k not in ("active", "lastScheduleTime", "lastSuccessfulTime")}
    return replace_status(obj, {**merged, **new})
