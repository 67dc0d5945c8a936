"""Why a scheduling run failed, as the condition on the binding will say it::

    ScheduleError             plain failure        → SchedulerError (retried with backoff)
    ├── UnschedulableError    not enough capacity  → Unschedulable (retried when clusters change)
    └── FitError              no cluster passed    → NoClusterFit (retried when clusters change)
                              the filters          (in :mod:`~fleetkeeper.scheduler.framework`)

(the reasons of the ``Scheduled=False`` condition each one leaves on the binding).

Karmada wraps errors with prefixes as they travel up ("failed to assign replicas:
failed to scale up: …") and still finds the unschedulable kind inside; :meth:`wrap`
does the same by keeping the class while prefixing the message.
"""

from __future__ import annotations

from typing import Self

from fleetkeeper.errors import FleetkeeperError


class ScheduleError(FleetkeeperError):
    """A scheduling run failed; the message is what the binding's condition says."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message

    def wrap(self, prefix: str) -> Self:
        """The same kind of error with ``prefix: `` in front of the message."""
        wrapped = type(self).__new__(type(self))
        ScheduleError.__init__(wrapped, f"{prefix}: {self.message}")
        wrapped.__dict__.update({k: v for k, v in self.__dict__.items() if k != "message"})
        return wrapped


class UnschedulableError(ScheduleError):
    """The clusters that passed the filters cannot hold the replicas."""


__all__ = ["ScheduleError", "UnschedulableError"]
