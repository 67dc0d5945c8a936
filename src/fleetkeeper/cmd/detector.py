"""``fleetkeeper detector``, and what simulated members run beside their API.

**The command** is one instance of the service-name-resolution detector
(:mod:`fleetkeeper.agent.detector`), meant to run on every node of a member cluster as
a DaemonSet, like Karmada's example agent: it resolves ``kubernetes.default`` through
the host's resolver (``/etc/resolv.conf``, or ``--nameserver``), keeps its node's verdict
as a Node condition through the member's API (``--kubeconfig``), competes for the
Lease ``kube-system/<name>-coredns-detector`` in the member, and, while leading, writes
the Cluster condition through the control plane's API (``--karmada-kubeconfig``).
Flags are the proposal's (``--detect-period``, ``--detect-success-threshold``,
``--detect-failure-threshold``) with Karmada's spellings (``--coredns-…``) as aliases.

**Simulated members** have no Pods, so the control plane runs what a real member would
run for them: its :data:`SPEC` (a part of the control plane like a controller's) runs
:class:`SimulatedMemberAddons`, which, for every served Cluster whose member is simulated,
runs

* the member's cluster DNS (:mod:`fleetkeeper.members.simulated.dns`) and its detector
  DaemonSet (:class:`~fleetkeeper.agent.detector.NodeDaemons`, one detector per node);
* in real time only, its cloud load balancers
  (:mod:`fleetkeeper.members.simulated.http`: each LoadBalancer Service served over HTTP
  on loopback);
* the faults annotated on the Cluster (:mod:`fleetkeeper.cmd.fault`).

On a :class:`~fleetkeeper.clock.VirtualClock` the detectors ask the member's DNS
in-process (a socket would make virtual time depend on the kernel's timing, see the
DNS module); in real time they send DNS messages (dnspython) to its UDP server on
loopback. Timings come from the control-plane options ``detect_period``,
``detect_success_threshold``, ``detect_failure_threshold`` and ``detect_stale_threshold``
when present (flags of ``fleetkeeper up``, scenario ``settings``), else Karmada's defaults.
"""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from typing import Annotated, Any

import typer

from fleetkeeper import errors
from fleetkeeper.agent import detector as agent
from fleetkeeper.agent.detector_member import ApiNodes
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.cli import connect
from fleetkeeper.client.rest import RestClient
from fleetkeeper.clock import SystemClock, VirtualClock
from fleetkeeper.cmd import components as parts
from fleetkeeper.cmd import fault
from fleetkeeper.members.simulated import SimulatedCluster
from fleetkeeper.members.simulated.dns import ClusterDNS, DNSServer
from fleetkeeper.members.simulated.http import ServiceEndpoints
from fleetkeeper.options import Options
from fleetkeeper.runtime.context import Context
from fleetkeeper.runtime.handler import FuncHandler
from fleetkeeper.runtime.informer import Informer
from fleetkeeper.runtime.spec import ControllerSpec, Deps, Runs


def config_from_options(options: Options, cluster: str) -> agent.DetectorConfig:
    """Detector timings for ``cluster`` from the control-plane options (defaults otherwise).

    The leaders aggregate twice per detect period rather than every second: every round
    of detections is still seen within half a period, at a fraction of the cost (it
    matters on virtual time, where every timer of every simulated node runs).
    """
    period = options.detect_period
    return agent.DetectorConfig(
        cluster=cluster,
        detect_period=period,
        aggregate_period=period / 2,
        success_threshold=options.detect_success_threshold,
        failure_threshold=options.detect_failure_threshold,
        stale_threshold=options.detect_stale_threshold,
    )


# --------------------------------------------------------------------------- simulated members
class SimulatedMemberAddons:
    """Runs DNS, detectors and load balancers for the simulated members (a runnable)."""

    needs_leader_election = False
    name = "simulated-member-addons"

    def __init__(self, ctx: Context, clusters: Informer[Cluster]) -> None:
        self._ctx = ctx
        self._clusters = clusters
        self._wake = asyncio.Event()
        self._realtime = not isinstance(ctx.clock, VirtualClock)
        #: per cluster: the member and the task running its add-ons
        self.running: dict[str, tuple[SimulatedCluster, asyncio.Task[None]]] = {}
        #: the detector DaemonSet of each member (for observers and tests)
        self.daemons: dict[str, agent.NodeDaemons] = {}
        clusters.add_handler(FuncHandler(lambda old, new: self._wake.set()))

    async def run(self) -> None:
        try:
            async with asyncio.TaskGroup() as group:
                while True:
                    self._wake.clear()
                    self._converge(group)
                    await self._wake.wait()
        finally:
            self.running.clear()

    def _converge(self, group: asyncio.TaskGroup) -> None:
        wanted: dict[str, tuple[Cluster, SimulatedCluster]] = {}
        for cluster in self._clusters.list():
            member = self._simulated(cluster)
            if member is not None and cluster.metadata.deletion_timestamp is None:
                wanted[cluster.name] = (cluster, member)
        for name, (member, task) in list(self.running.items()):
            if name in wanted and wanted[name][1] is member:
                continue
            del self.running[name]
            task.cancel()
            self.daemons.pop(name, None)
        for name, (cluster, member) in sorted(wanted.items()):
            fault.apply_faults(cluster, member)
            if name not in self.running:
                self.running[name] = (member, group.create_task(self._addons(member), name=f"addons-{name}"))

    def _simulated(self, cluster: Cluster) -> SimulatedCluster | None:
        if not self._ctx.scope.serves(cluster):
            return None
        try:
            member = self._ctx.members.member(cluster.name, cluster.spec.api_endpoint)
        except (errors.MemberError, ValueError):
            return None
        return member if isinstance(member, SimulatedCluster) else None

    async def _addons(self, member: SimulatedCluster) -> None:
        dns = ClusterDNS(member)
        config = config_from_options(self._ctx.options, member.name)
        async with asyncio.TaskGroup() as group:
            if self._realtime:
                server = DNSServer(dns)
                host, port = await server.start()
                resolver = agent.ServiceNameResolver(agent.over_udp(host, port))
                group.create_task(server.run())
                group.create_task(ServiceEndpoints(member).run())
            else:
                resolver = agent.ServiceNameResolver(dns.ask)
            daemons = self.daemons[member.name] = agent.NodeDaemons(
                config, member=member, resolver=resolver, karmada=self._ctx.client, clock=self._ctx.clock)
            group.create_task(daemons.run())


def _new(deps: Deps) -> SimulatedMemberAddons:
    return SimulatedMemberAddons(deps.ctx, deps.informers.informer_for(Cluster))


#: runs the add-ons of the simulated members this instance serves
SPEC = ControllerSpec(SimulatedMemberAddons.name, runnable=_new, kind=Cluster, runs=Runs.PLANE,
                      leader_elected=False)


# --------------------------------------------------------------------------- the command
_REQUIRED: dict[str, Any] = {"show_default": False}
_RESOLV_CONF = Path("/etc/resolv.conf")

def _resolver(nameserver: str | None, resolv_conf: Path) -> agent.ServiceNameResolver:
    if nameserver is None:
        return agent.system_resolver(str(resolv_conf))
    host, _, port = nameserver.rpartition(":") if nameserver.count(":") == 1 else (nameserver, "", "53")
    return agent.ServiceNameResolver(agent.over_udp(host, int(port)))


async def _run_detector(config: agent.DetectorConfig, resolver: agent.ServiceNameResolver, *,
                        member_kubeconfig: Path, karmada_kubeconfig: Path,
                        karmada_context: str | None) -> None:
    clock = SystemClock()
    member = RestClient.from_kubeconfig(member_kubeconfig, field_manager=agent.COMPONENT, clock=clock)
    karmada = RestClient.from_kubeconfig(karmada_kubeconfig, context=karmada_context,
                                         field_manager=agent.COMPONENT, clock=clock)
    detector = agent.Detector(config, resolver=resolver, nodes=ApiNodes(member), leases=member,
                              karmada=karmada, clock=clock)
    stop = asyncio.Event()
    try:
        with parts.stop_on_signals(stop):
            task = asyncio.get_running_loop().create_task(detector.run())
            await parts.step(stop.wait(), watch=[task], stop=stop)
            await parts.cancel(task)
    finally:
        await member.aclose()
        await karmada.aclose()


def detector(
    karmada_kubeconfig: Annotated[Path, typer.Option(help="kubeconfig of the control plane", **_REQUIRED)],
    cluster_name: Annotated[str, typer.Option(help="the Cluster object to update", **_REQUIRED)],
    kubeconfig: Annotated[Path, typer.Option(help="kubeconfig of this member's API", **_REQUIRED)],
    karmada_context: Annotated[str | None, typer.Option(help="context in --karmada-kubeconfig")] = None,
    host_name: Annotated[str | None, typer.Option(
        help="this node's name, the lock identity [default: the host name]", show_default=False)] = None,
    nameserver: Annotated[str | None, typer.Option(
        help="ask this DNS server (ADDRESS[:PORT]), not the host's resolver", show_default=False)] = None,
    resolv_conf: Annotated[Path, typer.Option(help="the host's resolver configuration")] = _RESOLV_CONF,
    detect_period: Annotated[str, typer.Option("--detect-period", "--coredns-detect-period")] = "5s",
    success_threshold: Annotated[str, typer.Option("--detect-success-threshold",
                                                   "--coredns-success-threshold")] = "30s",
    failure_threshold: Annotated[str, typer.Option("--detect-failure-threshold",
                                                   "--coredns-failure-threshold")] = "30s",
    stale_threshold: Annotated[str, typer.Option("--detect-stale-threshold",
                                                 "--coredns-stale-threshold")] = "1m",
    leader_elect: Annotated[bool, typer.Option(help="elect one reporting instance per member")] = True,
    leader_elect_lease_duration: Annotated[str, typer.Option()] = "15s",
    leader_elect_renew_deadline: Annotated[str, typer.Option()] = "10s",
    leader_elect_retry_period: Annotated[str, typer.Option()] = "2s",
    leader_elect_resource_name: Annotated[str, typer.Option()] = "cluster-problem-detector",
    leader_elect_resource_namespace: Annotated[str, typer.Option()] = "kube-system",
    log_level: Annotated[str, typer.Option(help="debug, info, warning or error (stderr)")] = "info",
    log_format: parts.LogFormat = "text",
) -> None:
    """Detect service name resolution in a member cluster (run one per node, like a DaemonSet)."""
    parts.configure_logs(log_level, SystemClock(), log_format)
    config = agent.DetectorConfig(
        cluster=cluster_name, host=host_name or socket.gethostname(),
        detect_period=connect.duration(detect_period, "--detect-period"),
        success_threshold=connect.duration(success_threshold, "--detect-success-threshold"),
        failure_threshold=connect.duration(failure_threshold, "--detect-failure-threshold"),
        stale_threshold=connect.duration(stale_threshold, "--detect-stale-threshold"),
        leader_elect=leader_elect, lease_name=f"{leader_elect_resource_name}-coredns-detector",
        lease_namespace=leader_elect_resource_namespace,
        lease_duration=connect.duration(leader_elect_lease_duration, "--leader-elect-lease-duration"),
        renew_deadline=connect.duration(leader_elect_renew_deadline, "--leader-elect-renew-deadline"),
        retry_period=connect.duration(leader_elect_retry_period, "--leader-elect-retry-period"),
    )
    try:
        resolver = _resolver(nameserver, resolv_conf)
    except (OSError, ValueError) as exc:
        raise typer.BadParameter(str(exc), param_hint="--nameserver/--resolv-conf") from None
    typer.echo(f"fleetkeeper detector: cluster {config.cluster}, node {config.host}")
    asyncio.run(_run_detector(config, resolver, member_kubeconfig=kubeconfig,
                              karmada_kubeconfig=karmada_kubeconfig, karmada_context=karmada_context))


__all__ = ["SPEC", "SimulatedMemberAddons", "config_from_options", "detector"]
