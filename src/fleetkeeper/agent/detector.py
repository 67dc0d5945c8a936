"""The service-name-resolution detector: is DNS inside a member cluster working?

Karmada's example agent, shipped as a DaemonSet: one :class:`Detector`
per node of a member. Each one, every ``detect_period``, resolves ``kubernetes.default``
the way a Pod does (search list, then the cluster DNS), passes the result through the
threshold state machine of :mod:`~fleetkeeper.agent.detector_rules` and stores the
verdict on its node. One instance per member is elected leader with a Lease **in the
member** (``kube-system/cluster-problem-detector-coredns-detector``); the leader
aggregates the nodes' verdicts and writes the Cluster condition
``ServiceDomainNameResolutionReady`` in the control plane — only when every Ready node
has a fresh verdict, and ``False`` only when all of them fail (one node's broken
resolver is not a broken cluster). The remedy controller takes it from there.

**Seams.** The resolver asks one question per name through an :data:`Ask` function:
:func:`over_udp` sends DNS messages to a real server (dnspython builds and reads them);
a simulated member on virtual time answers from its name table in-process instead
(``ClusterDNS.ask``) — same names, same search list, same failures, but no socket,
whose delivery time would leak into virtual time, and none of the message encoding that
would make a ten-minute story cost seconds. Nodes and the Lease are reached through
:mod:`~fleetkeeper.agent.detector_member` (a Kubernetes API client, or the Member
protocol).

:class:`NodeDaemons` plays the DaemonSet for one member: one detector per node, started
and stopped as nodes come and go.

While its member's API cannot be reached, a detector says so once, then once a minute
with the count of rounds held back (:mod:`~fleetkeeper.runtime.throttle`), not every period.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Protocol

import dns.asyncquery
import dns.exception
import dns.message
import dns.rcode
import dns.rdatatype
import dns.resolver
import structlog

from fleetkeeper import errors
from fleetkeeper.agent import detector_rules as rules
from fleetkeeper.agent.detector_member import MemberLeases, MemberNodes, NodeAccess
from fleetkeeper.api import constants
from fleetkeeper.api import timeline as tl
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.meta import Condition
from fleetkeeper.client.interface import Client
from fleetkeeper.clock import Clock
from fleetkeeper.controllers import writes
from fleetkeeper.controllers.cluster_status_rules import ready_text
from fleetkeeper.members.interface import Member
from fleetkeeper.runtime.leaderelection import LeaderElectionConfig, LeaderElector, LeaseClient
from fleetkeeper.runtime.recorder import Recorder, Sink
from fleetkeeper.runtime.throttle import LogThrottle

COMPONENT = "service-name-resolution-detector"
#: how many of its writes a detector remembers (for observers and tests)
WRITES_KEPT = 100
_log = structlog.get_logger("fleetkeeper.agent.detector")
READ_FAILED = "could not read the nodes' verdicts"


# ------------------------------------------------------------------------------ resolving
class LookupFailed(Exception):
    """A name did not resolve (the message says why, like a resolver's error)."""


#: one A question for one fully qualified name → (response code, whether an A record came back)
Ask = Callable[[str], Awaitable[tuple[str, bool]]]
Exchange = Callable[[dns.message.Message], Awaitable[dns.message.Message]]


class ServiceNameResolver:
    """Resolves a service name like a Pod's resolver: search list first, A records."""

    def __init__(self, ask: Ask, *, search: Sequence[str] = rules.POD_SEARCH,
                 ndots: int = rules.POD_NDOTS) -> None:
        self._ask = ask
        self.search = tuple(search)
        self.ndots = ndots

    async def lookup(self, host: str) -> None:
        """Return when ``host`` has an A record; raise :class:`LookupFailed` otherwise."""
        for name in rules.search_names(host, self.search, self.ndots):
            try:
                rcode, found = await self._ask(name)
            except (dns.exception.DNSException, OSError) as exc:
                raise LookupFailed(f"lookup {host}: {exc or type(exc).__name__}") from None
            if rcode == "NOERROR" and found:
                return
            if rcode not in ("NOERROR", "NXDOMAIN"):
                raise LookupFailed(f"lookup {host}: the cluster DNS answered {rcode}")
        raise LookupFailed(f"lookup {host}: no such host")


def over_dns(exchange: Exchange) -> Ask:
    """Ask with DNS messages: dnspython builds the query and reads the response."""

    async def ask(name: str) -> tuple[str, bool]:
        response = await exchange(dns.message.make_query(name, dns.rdatatype.A))
        found = any(rrset.rdtype == dns.rdatatype.A for rrset in response.answer)
        return dns.rcode.to_text(response.rcode()), found

    return ask


def udp_exchange(address: str, port: int = 53, *, timeout: float = 2.0) -> Exchange:
    """Send a query to the DNS server at ``address:port`` over UDP."""

    async def exchange(query: dns.message.Message) -> dns.message.Message:
        return await dns.asyncquery.udp(query, address, port=port, timeout=timeout)

    return exchange


def over_udp(address: str, port: int = 53, *, timeout: float = 2.0) -> Ask:
    """Ask the DNS server at ``address:port`` with messages over UDP."""
    return over_dns(udp_exchange(address, port, timeout=timeout))


def system_resolver(path: str = "/etc/resolv.conf", *, timeout: float = 2.0) -> ServiceNameResolver:
    """The resolver of this host (a Pod: the cluster DNS and its search list)."""
    conf = dns.resolver.Resolver(filename=path)
    nameserver = str(conf.nameservers[0])
    search = [name.to_text().rstrip(".") for name in conf.search]
    return ServiceNameResolver(over_udp(nameserver, conf.port, timeout=timeout), search=search,
                               ndots=conf.ndots or rules.POD_NDOTS)


# ------------------------------------------------------------------------------ the detector
@dataclass(frozen=True)
class DetectorConfig:
    """One detector's settings (Karmada's flags and defaults)."""

    cluster: str
    host: str = ""
    detect_period: float = 5.0
    success_threshold: float = 30.0
    failure_threshold: float = 30.0
    stale_threshold: float = 60.0
    #: how often the leader aggregates the nodes' verdicts
    aggregate_period: float = 1.0
    leader_elect: bool = True
    lease_name: str = "cluster-problem-detector-coredns-detector"
    lease_namespace: str = "kube-system"
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0

    def for_host(self, host: str) -> DetectorConfig:
        return replace(self, host=host)


@dataclass(frozen=True)
class Write:
    """One Cluster condition written by a detector (for observers and tests)."""

    at: datetime
    identity: str
    condition: Condition


class Resolver(Protocol):
    async def lookup(self, host: str) -> None: ...


class Detector:
    """One instance (one DaemonSet Pod): detects for its node, aggregates while leading."""

    needs_leader_election = False

    def __init__(self, config: DetectorConfig, *, resolver: Resolver, nodes: NodeAccess,
                 leases: LeaseClient | None, karmada: Client, clock: Clock) -> None:
        if not config.host:
            raise ValueError("a detector needs the name of its node (host)")
        self.config = config
        self.name = f"{COMPONENT}-{config.host}"
        self._resolver = resolver
        self._nodes = nodes
        self._karmada = karmada
        self._clock = clock
        self._recorder = Recorder(Sink(karmada), clock, COMPONENT)
        self._thresholds = rules.Thresholds(config.success_threshold, config.failure_threshold)
        self._state: rules.ThresholdState | None = None
        #: the latest Cluster condition writes of this instance
        self.writes: deque[Write] = deque(maxlen=WRITES_KEPT)
        self.elector: LeaderElector | None = None
        if config.leader_elect and leases is not None:
            self.elector = LeaderElector(leases, LeaderElectionConfig(
                config.lease_name, config.host, namespace=config.lease_namespace,
                lease_duration=config.lease_duration, renew_deadline=config.renew_deadline,
                retry_period=config.retry_period, record_events=False), clock=clock)
        self._log = _log.bind(cluster=config.cluster, host=config.host)
        self._quiet = LogThrottle(clock)

    async def run(self) -> None:
        """Detect every period and, while leading (always, without election), aggregate."""
        async with asyncio.TaskGroup() as group:
            group.create_task(self._every(self.config.detect_period, self.detect))
            if self.elector is None:
                group.create_task(self._aggregating())
            else:
                group.create_task(self.elector.run(self._aggregating))

    async def _aggregating(self) -> None:
        await self._every(self.config.aggregate_period, self.aggregate)

    async def _every(self, period: float, step: Callable[[], Awaitable[object]]) -> None:
        while True:
            try:
                await step()
            except Exception as exc:  # one failed round must not end the loop: the next one retries
                self._log.warning("detector round failed", step=step.__name__, error=repr(exc))
            await self._clock.sleep(period)

    async def detect(self) -> rules.NodeVerdict | None:
        """One detection round for this node; the stored verdict, or None when skipped."""
        now = self._clock.now()
        try:
            await self._resolver.lookup(rules.HOST)
            error = None
        except LookupFailed as exc:
            error = str(exc)
        try:
            node = await self._nodes.report(self.config.host)
        except (errors.FleetkeeperError, OSError) as exc:
            self._failed(constants.EVENT_LOAD_COREDNS_CONDITION_FAILED, exc)
            return None
        self._quiet.forget(constants.EVENT_LOAD_COREDNS_CONDITION_FAILED)
        if node is None:
            return None
        verdict, self._state = rules.adjusted(self._state, node.verdict, rules.observed(error), now,
                                              self._thresholds)
        new = rules.stored(node.verdict, verdict, now)
        try:
            await self._nodes.store(node, new)
        except (errors.FleetkeeperError, OSError) as exc:
            self._failed(constants.EVENT_STORE_COREDNS_CONDITION_FAILED, exc)
            return None
        self._quiet.forget(constants.EVENT_STORE_COREDNS_CONDITION_FAILED)
        return new

    def _failed(self, event: str, exc: Exception) -> None:
        """A member call failed: said once, then once a minute (see the module notes)."""
        held = self._quiet.admit(event, type(exc).__name__)
        if held is None:
            return
        if held:
            self._log.info(event, error=repr(exc), suppressed=held)
        else:
            self._log.info(event, error=repr(exc))

    async def aggregate(self) -> Condition | None:
        """One aggregation round; the Cluster condition written, or None when nothing was."""
        try:
            reports = await self._nodes.reports()
        except (errors.FleetkeeperError, OSError) as exc:
            self._failed(READ_FAILED, exc)
            return None
        self._quiet.forget(READ_FAILED)
        wanted = rules.aggregate(reports, self._clock.now(), self.config.stale_threshold)
        if wanted is None:
            return None
        try:
            cluster = await self._karmada.get(Cluster, self.config.cluster)
        except errors.NotFound:
            return None
        if cluster.metadata.deletion_timestamp is not None:
            return None
        return await self._write(cluster, wanted)

    async def _write(self, cluster: Cluster, wanted: Condition) -> Condition | None:
        def change(current: Cluster) -> Cluster | None:
            status = rules.desired_cluster_status(current.status, wanted, self._clock.now())
            return None if status == current.status else current.model_copy(update={"status": status})

        before = _condition(cluster)
        written = await writes.write(self._karmada, cluster, change, subresource="status")
        if written is None:
            return None
        after = _condition(written)
        assert after is not None
        self.writes.append(Write(self._clock.now(), self.config.host, after))
        if rules.worth_recording(before, after):
            await self._recorder.timeline(written, tl.CONDITION_CHANGED, ready_text(after),
                                          reason=after.reason)
        return after


def _condition(cluster: Cluster) -> Condition | None:
    return next((c for c in cluster.status.conditions or () if c.type == rules.CONDITION), None)


class NodeDaemons:
    """The detector DaemonSet of one member: a :class:`Detector` per node, kept in step
    with the member's nodes (checked every detect period)."""

    needs_leader_election = False

    def __init__(self, config: DetectorConfig, *, member: Member, resolver: Resolver, karmada: Client,
                 clock: Clock) -> None:
        self.config = config
        self.name = f"{COMPONENT}-daemonset-{config.cluster}"
        self._member = member
        self._resolver = resolver
        self._karmada = karmada
        self._clock = clock
        self._nodes = MemberNodes(member)
        #: the running detectors by node name
        self.detectors: dict[str, Detector] = {}

    async def run(self) -> None:
        tasks: dict[str, asyncio.Task[None]] = {}
        try:
            async with asyncio.TaskGroup() as group:
                while True:
                    await self._converge(group, tasks)
                    await self._clock.sleep(self.config.detect_period)
        finally:
            self.detectors.clear()

    async def _converge(self, group: asyncio.TaskGroup, tasks: dict[str, asyncio.Task[None]]) -> None:
        try:
            names = sorted(report.name for report in await self._nodes.reports())
        except (errors.FleetkeeperError, OSError):
            return  # the member does not answer: the pods keep running as they are
        for gone in [name for name in tasks if name not in names]:
            tasks.pop(gone).cancel()
            self.detectors.pop(gone, None)
        for name in names:
            if name in tasks:
                continue
            detector = Detector(self.config.for_host(name), resolver=self._resolver, nodes=self._nodes,
                                leases=MemberLeases(self._member, name), karmada=self._karmada,
                                clock=self._clock)
            self.detectors[name] = detector
            tasks[name] = group.create_task(detector.run(), name=detector.name)


__all__ = [
    "COMPONENT", "Ask", "Detector", "DetectorConfig", "Exchange", "LookupFailed", "NodeDaemons", "Resolver",
    "ServiceNameResolver", "Write", "over_dns", "over_udp", "system_resolver", "udp_exchange",
]
