"""What the scheduler and the kubelets of a simulated cluster do to a pod, on the clock.

* **place** — bind to a node (deleting preemption victims first) or queue as Pending;
  Pending pods are retried, most important first, whenever capacity is freed or added;
* **start** — ``pod_startup`` seconds after binding (a clock timer) the containers run
  and the pod is Ready; a Job pod then succeeds after its run time and frees its requests;
* **crash** — a pod of a crashed workload never gets Ready: it crash-loops (phase
  Running, container waiting in ``CrashLoopBackOff``, ``restartCount`` growing with
  Kubernetes' back-off: 10 s doubling up to 5 min), or fails at once when its
  ``restartPolicy`` is ``Never``; healing restarts its containers (Ready after another
  ``pod_startup``);
* **reschedule** — its node went away (or its spec changed): the pod starts over and is
  placed again.

Each step writes the Event Kubernetes' scheduler or kubelet writes for it (``podevents.py``).

Timers are ``loop.call_later`` handles on the running loop, so under a VirtualClock
they fire in virtual time and nothing runs between them: the cluster is idle (no task)
whenever no timer is due. Every callback ends by letting the controllers settle.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from fleetkeeper.clock import Clock, call_at_monotonic
from fleetkeeper.members.simulated import podevents
from fleetkeeper.members.simulated.events import EventLog
from fleetkeeper.members.simulated.pods import Pod
from fleetkeeper.members.simulated.scheduler import Node, Scheduler

CRASH_BACKOFF_START = 10.0
CRASH_BACKOFF_MAX = 300.0


class Host(Protocol):
    """The cluster, as the pod lifecycle calls back into it."""

    events: EventLog

    def now(self) -> str: ...

    def pod_changed(self, pod: Pod) -> None: ...

    def delete_pod(self, pod: Pod) -> None: ...

    def capacity_freed(self) -> None: ...

    def drain(self) -> None: ...


class PodLifecycle:
    """Placement, startup, crash loops and completion of the pods of one cluster."""

    def __init__(self, host: Host, scheduler: Scheduler, clock: Clock, *, pod_startup: float,
                 crashed: Callable[[Pod], bool]) -> None:
        self.host = host
        self.scheduler = scheduler
        self.clock = clock
        self.pod_startup = pod_startup
        self.crashed = crashed

    # -- placement ------------------------------------------------------------------------
    def place(self, pod: Pod) -> bool:
        """Bind ``pod`` somewhere, or queue it as Pending; True when bound."""
        placement = self.scheduler.find(pod)
        if placement is None:
            self.scheduler.queue(pod)
            podevents.failed_scheduling(self.host.events, pod)
            return False
        for victim in placement.victims:
            podevents.preempted(self.host.events, victim, by=pod, node=placement.node.name)
            self.host.delete_pod(victim)
        self.scheduler.bind(pod, placement.node)
        self._bound(pod, placement.node)
        return True

    def retry_pending(self) -> None:
        """Try every Pending pod again, most important first."""
        for pod in self.scheduler.pending_in_order():
            if pod.uid not in self.scheduler.pending:
                continue  # preempted or deleted while we went through the list
            message = pod.unschedulable
            if self.place(pod) or pod.unschedulable != message:
                self.host.pod_changed(pod)

    def reschedule(self, pod: Pod) -> None:
        """``pod`` starts over (its node is gone, or its spec changed): placed again, or Pending."""
        self.scheduler.release(pod)
        self._reset(pod)
        pod.node = None
        pod.ip = pod.host_ip = 0
        pod.scheduled_at = ""
        self.place(pod)

    def _bound(self, pod: Pod, node: Node) -> None:
        pod.scheduled_at = self.host.now()
        pod.phase = "Pending"
        podevents.scheduled(self.host.events, pod)
        self._after(pod, self.pod_startup, self._start)

    # -- containers -----------------------------------------------------------------------
    def restart(self, pod: Pod) -> None:
        """Restart the containers of a bound pod (healed, or its spec changed)."""
        if pod.node is None or pod.finished:
            return
        self._reset(pod)
        self._after(pod, self.pod_startup, self._start)

    def crash(self, pod: Pod) -> None:
        """A running pod's workload was crashed: it starts crash-looping now."""
        if pod.node is not None and pod.started_at and not pod.crashing and not pod.finished:
            self._crash_loop(pod)

    def _start(self, pod: Pod) -> None:
        podevents.started(self.host.events, pod)
        if self.crashed(pod):
            if pod.spec.get("restartPolicy") == "Never":
                pod.started_at = self.host.now()
                self._finish(pod, succeeded=False)
            else:
                self._crash_loop(pod)
            return
        pod.started_at = self.host.now()
        pod.phase = "Running"
        self._set_ready(pod, True)
        if pod.run_for is not None:
            self._after(pod, pod.run_for, lambda p: self._finish(p, succeeded=True))

    def _crash_loop(self, pod: Pod) -> None:
        pod.crashing = True
        pod.phase = "Running"
        pod.started_at = pod.started_at or self.host.now()
        self._set_ready(pod, False)
        self._exited(pod)

    def _exited(self, pod: Pod) -> None:
        """The container exited: restarted after the back-off (the restart is counted now)."""
        podevents.crashed(self.host.events, pod)
        pod.restarts += 1
        delay = min(CRASH_BACKOFF_MAX, CRASH_BACKOFF_START * 2 ** (pod.restarts - 1))
        self._after(pod, delay, self._restart_failed)

    def _restart_failed(self, pod: Pod) -> None:
        """The back-off is over: the container starts again, and exits again."""
        podevents.started(self.host.events, pod)
        self._exited(pod)

    def _finish(self, pod: Pod, *, succeeded: bool) -> None:
        pod.cancel_timer()
        pod.phase = "Succeeded" if succeeded else "Failed"
        pod.finished_at = self.host.now()
        self._set_ready(pod, False)
        self.scheduler.release(pod)
        self.host.capacity_freed()

    # -- helpers --------------------------------------------------------------------------
    def _reset(self, pod: Pod) -> None:
        pod.cancel_timer()
        pod.phase = "Pending"
        pod.started_at = ""
        pod.crashing = False
        self._set_ready(pod, False)

    def _set_ready(self, pod: Pod, ready: bool) -> None:
        if pod.ready != ready:
            pod.ready = ready
            pod.ready_changed_at = self.host.now()

    def _after(self, pod: Pod, delay: float, action: Callable[[Pod], None]) -> None:
        """Run ``action(pod)`` in ``delay`` seconds (replacing the pod's pending timer)."""
        pod.cancel_timer()

        def fire() -> None:
            pod.timer = None
            action(pod)
            self.host.pod_changed(pod)
            self.host.drain()

        pod.timer = call_at_monotonic(self.clock, self.clock.monotonic() + delay, fire)


__all__ = ["CRASH_BACKOFF_MAX", "CRASH_BACKOFF_START", "Host", "PodLifecycle"]
