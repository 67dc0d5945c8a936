"""Status conditions: read and set them with ``meta.SetStatusCondition`` semantics.

Every controller that writes a condition goes through :func:`set_condition`, so the
``lastTransitionTime`` of a condition moves only when its status really changes — the
property the failover thresholds and the timeline rely on. Functions are pure: they
return new lists and never mutate their inputs; the caller compares and writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from fleetkeeper.api.meta import Condition


def get_condition(conditions: Sequence[Condition] | None, type_: str) -> Condition | None:
    """The condition of ``type_``, or ``None``."""
    for cond in conditions or ():
        if cond.type == type_:
            return cond
    return None


def is_condition_true(conditions: Sequence[Condition] | None, type_: str) -> bool:
    """Whether the condition of ``type_`` exists with status ``True``."""
    cond = get_condition(conditions, type_)
    return cond is not None and cond.status == "True"


def set_condition(conditions: Sequence[Condition] | None, new: Condition, now: datetime) -> list[Condition]:
    """``conditions`` with ``new`` set, as a new list.

    * absent type: appended; ``lastTransitionTime`` defaults to ``now``;
    * status changed: status replaced, ``lastTransitionTime`` = the supplied one or ``now``;
    * status unchanged: the old ``lastTransitionTime`` is kept;
    * ``reason``, ``message`` and ``observedGeneration`` are always replaced.
    """
    out = list(conditions or ())
    for i, old in enumerate(out):
        if old.type != new.type:
            continue
        changed = old.status != new.status
        transition = (new.last_transition_time or now) if changed else old.last_transition_time
        out[i] = old.model_copy(update={
            "status": new.status,
            "reason": new.reason,
            "message": new.message,
            "observed_generation": new.observed_generation,
            "last_transition_time": transition,
        })
        return out
    out.append(new if new.last_transition_time else new.model_copy(update={"last_transition_time": now}))
    return out


def remove_condition(conditions: Sequence[Condition] | None, type_: str) -> list[Condition]:
    """``conditions`` without the condition of ``type_``."""
    return [c for c in conditions or () if c.type != type_]


__all__ = ["get_condition", "is_condition_true", "remove_condition", "set_condition"]
