"""Nodes and pod placement: first fit by requests, priority preemption, Pending otherwise.

Placement is the simplest rule that behaves like kube-scheduler where a failover story
can see it: nodes are tried in name order and a pod goes on the first whose free
capacity (allocatable minus the requests of the pods bound there) covers its requests,
``pods`` included (one per pod). ``spec.nodeSelector`` must match the node's labels; a
DaemonSet pod is pinned to its node.

When nothing fits, a pod may **preempt** (unless its ``preemptionPolicy`` is ``Never``,
from the pod or its PriorityClass): on each node, pods of lower priority are
candidate victims (lowest priority first, newest first) until the pod fits; then victims
are reprieved, most important first, while it still fits. The node chosen is the one
whose most important victim is least important, then with the fewest victims, then the
first by name. The cluster deletes the victims (their controllers recreate them, and the
replacements queue as Pending like any pod).

Otherwise the pod stays Pending with kube-scheduler's message
(``0/3 nodes are available: 3 Insufficient cpu.``) and is retried, in priority order,
whenever capacity is freed or added. Running totals make the cluster's resource summary
O(nodes) instead of O(pods).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from fleetkeeper.members.simulated import quantity
from fleetkeeper.members.simulated.network import AddressPool
from fleetkeeper.members.simulated.pods import Pod

DEFAULT_NODE_RESOURCES: dict[str, str] = {"cpu": "8", "memory": "32Gi", "pods": "110"}


@dataclass(slots=True, eq=False)
class Node:
    name: str
    uid: str
    created: str
    allocatable: quantity.MilliList
    labels: dict[str, str]
    used: quantity.MilliList = field(default_factory=dict)
    #: active pods bound here, by pod uid
    pods: dict[str, Pod] = field(default_factory=dict)
    #: its InternalIP and the addresses of its pod range (None: it has no range)
    address: int = 0
    pool: AddressPool | None = None

    def free(self) -> quantity.MilliList:
        return {name: value - self.used.get(name, 0) for name, value in self.allocatable.items()}

    def fits(self, request: quantity.MilliList) -> bool:
        """Whether ``request`` fits in what is free (without building the free list)."""
        allocatable, used = self.allocatable, self.used
        return all(value <= 0 or value <= allocatable.get(name, 0) - used.get(name, 0)
                   for name, value in request.items())


@dataclass(frozen=True, slots=True)
class Placement:
    node: Node
    #: pods to delete first (empty unless the pod preempts)
    victims: list[Pod]


class Scheduler:
    """The nodes of one cluster and where pods run."""

    def __init__(self) -> None:
        self.nodes: list[Node] = []
        self._by_name: dict[str, Node] = {}
        self.pending: dict[str, Pod] = {}
        self.allocating: quantity.MilliList = {}
        #: how many bound pods have each priority (preemption is only tried when some are lower)
        self._bound_priorities: Counter[int] = Counter()
        #: per request signature, the first node index worth trying (see ``_first_fit``)
        self._fit_from: dict[tuple[tuple[str, int], ...], int] = {}

    # -- nodes ----------------------------------------------------------------------------
    def add_node(self, node: Node) -> None:
        self.nodes.append(node)
        self.nodes.sort(key=lambda n: n.name)
        self._by_name[node.name] = node
        self._fit_from.clear()

    def remove_node(self, name: str) -> list[Pod]:
        """Remove a node; its pods are unbound (and not queued) and returned, oldest first."""
        node = self._by_name.pop(name)
        self.nodes.remove(node)
        self._fit_from.clear()
        orphans = sorted(node.pods.values(), key=lambda p: p.seq)
        for pod in orphans:
            pod.node = None
            pod.ip = pod.host_ip = 0
            self._unbound(pod)
        node.pods.clear()
        return orphans

    def allocatable(self) -> quantity.MilliList:
        return quantity.sum_lists(n.allocatable for n in self.nodes)

    def allocated(self) -> quantity.MilliList:
        return quantity.sum_lists(n.used for n in self.nodes)

    # -- pods -----------------------------------------------------------------------------
    def find(self, pod: Pod) -> Placement | None:
        """Where ``pod`` can run (maybe by preempting); None, with ``pod.unschedulable`` set, if nowhere."""
        if pod.pinned_node is not None:
            pinned = self._by_name.get(pod.pinned_node)
            candidates = [pinned] if pinned is not None and self._selects(pod, pinned) else []
        elif pod.spec.get("nodeSelector"):
            candidates = [n for n in self.nodes if self._selects(pod, n)]
        else:
            return self._first_fit(pod) or self._unplaceable(pod, self.nodes)
        for node in candidates:
            if node.fits(pod.requests):
                return Placement(node, [])
        return self._unplaceable(pod, candidates)

    def _first_fit(self, pod: Pod) -> Placement | None:
        """First fit over every node, starting where this size of request last fitted.

        Between two releases usage only grows, so a node a request did not fit still does
        not: the scan resumes there. Any release, and any change of the node list, forgets.
        """
        signature = tuple(sorted(pod.requests.items()))
        start = self._fit_from.get(signature, 0)
        for index in range(start, len(self.nodes)):
            if self.nodes[index].fits(pod.requests):
                self._fit_from[signature] = index
                return Placement(self.nodes[index], [])
        self._fit_from[signature] = len(self.nodes)
        return None

    def _unplaceable(self, pod: Pod, candidates: list[Node]) -> Placement | None:
        """Preemption, or None with the reason set on the pod."""
        if pod.preempts and any(priority < pod.priority for priority in self._bound_priorities):
            placement = self._preemption(pod, candidates)
            if placement is not None:
                return placement
        pod.unschedulable = self._explain(pod)
        return None

    def _preemption(self, pod: Pod, candidates: list[Node]) -> Placement | None:
        best: tuple[tuple[int, int, int], Placement] | None = None
        for index, node in enumerate(candidates):
            victims = self._victims(pod, node)
            if victims is None:
                continue
            score = (max(v.priority for v in victims), len(victims), index)
            if best is None or score < best[0]:
                best = (score, Placement(node, victims))
        return None if best is None else best[1]

    def bind(self, pod: Pod, node: Node) -> None:
        if self.pending.pop(pod.uid, None) is not None:
            quantity.add_into(self.allocating, pod.requests, -1)
        pod.node = node.name
        pod.unschedulable = ""
        pod.host_ip = node.address
        pod.ip = node.pool.take() if node.pool is not None else 0
        node.pods[pod.uid] = pod
        quantity.add_into(node.used, pod.requests)
        self._bound_priorities[pod.priority] += 1

    def queue(self, pod: Pod) -> None:
        """``pod`` waits for capacity (it has no node)."""
        if pod.uid not in self.pending:
            self.pending[pod.uid] = pod
            quantity.add_into(self.allocating, pod.requests)

    def release(self, pod: Pod) -> None:
        """``pod`` stops using resources (finished or deleted); it keeps its node name and IP,
        which another pod may get from now on."""
        if self.pending.pop(pod.uid, None) is not None:
            quantity.add_into(self.allocating, pod.requests, -1)
        node = self.node(pod.node)
        if node is not None and node.pods.pop(pod.uid, None) is not None:
            quantity.add_into(node.used, pod.requests, -1)
            if node.pool is not None and pod.ip:
                node.pool.give(pod.ip)
            self._unbound(pod)
            self._fit_from.clear()

    def node(self, name: str | None) -> Node | None:
        return self._by_name.get(name) if name else None

    def pending_in_order(self) -> list[Pod]:
        """Pending pods, most important first, then oldest first."""
        return sorted(self.pending.values(), key=lambda p: (-p.priority, p.seq))

    # -- helpers --------------------------------------------------------------------------
    def _unbound(self, pod: Pod) -> None:
        self._bound_priorities[pod.priority] -= 1
        if not self._bound_priorities[pod.priority]:
            del self._bound_priorities[pod.priority]

    @staticmethod
    def _selects(pod: Pod, node: Node) -> bool:
        if pod.pinned_node is not None and pod.pinned_node != node.name:
            return False
        selector: dict[str, str] = pod.spec.get("nodeSelector") or {}
        return all(node.labels.get(k) == v for k, v in selector.items())

    @staticmethod
    def _victims(pod: Pod, node: Node) -> list[Pod] | None:
        lower = sorted((p for p in node.pods.values() if p.priority < pod.priority),
                       key=lambda p: (p.priority, -p.seq))
        free = node.free()
        chosen: list[Pod] = []
        for victim in lower:
            if quantity.fits(pod.requests, free):
                break
            quantity.add_into(free, victim.requests)
            chosen.append(victim)
        if not chosen or not quantity.fits(pod.requests, free):
            return None
        for victim in sorted(chosen, key=lambda p: (-p.priority, p.seq)):
            quantity.add_into(free, victim.requests, -1)
            if quantity.fits(pod.requests, free):
                chosen.remove(victim)
            else:
                quantity.add_into(free, victim.requests)
        return chosen

    def _explain(self, pod: Pod) -> str:
        if not self.nodes:
            return "no nodes available to schedule pods"
        reasons: Counter[str] = Counter()
        for node in self.nodes:
            if not self._selects(pod, node):
                reasons["node(s) didn't match Pod's node affinity/selector"] += 1
                continue
            free = node.free()
            short = sorted(n for n, v in pod.requests.items() if v > 0 and v > free.get(n, 0) and n != "pods")
            reasons[f"Insufficient {short[0]}" if short else "Too many pods"] += 1
        detail = ", ".join(f"{count} {reason}" for reason, count in sorted(reasons.items()))
        return f"0/{len(self.nodes)} nodes are available: {detail}."


__all__ = ["DEFAULT_NODE_RESOURCES", "Node", "Placement", "Scheduler"]
