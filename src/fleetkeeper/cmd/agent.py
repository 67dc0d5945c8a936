"""``fleetkeeper agent``: the Pull agent of one member cluster, over the network.

A Pull cluster is one the control plane does not reach: an agent running next to the
member does the cluster's share of the work — Karmada's karmada-agent. It is the very
same :class:`~fleetkeeper.cmd.app.ControlPlane` the simulator runs in-process for Pull
clusters, scoped to one cluster (``Scope(agent_cluster=NAME)``: cluster status, the
heartbeat Lease, execution and work status), talking to the control plane through the
REST client over HTTPS with its own token::

    fleetkeeper token create-agent edge1                # writes STATE_DIR/agent-edge1.kubeconfig
    fleetkeeper agent --kubeconfig ~/.local/state/fleetkeeper/agent-edge1.kubeconfig \\
        --cluster-name edge1 --member simulated://edge1

(``fleetkeeper up --pull-agent edge1`` does the first step, and registers the cluster, at
start.) On start the agent registers its Cluster in Pull mode when it is absent, then
renews ``karmada-cluster/NAME`` every ``--lease-duration`` × 0.25, probes the member and
reports the cluster's status, and applies the Works of ``karmada-es-NAME``. When it stops
(or dies) the heartbeats stop, and after ``--cluster-monitor-grace-period`` the control
plane marks the cluster ``Ready=Unknown`` and fails its workloads over.

**Least privilege.** An agent token may register, read and update only its own Cluster
(as a Pull cluster that tells the plane nowhere to call: no endpoint, secret or proxy)
and write its status, use its Lease and the Works of its execution namespace, and record
Events and failover timeline entries about its Cluster and those Works; the API server
refuses the rest. The agent therefore asks for exactly that: :class:`AgentClient` narrows
the list/watch of Clusters to ``metadata.name=NAME`` and of Works to ``karmada-es-NAME``,
and keeps to itself the records the plane would refuse (about a member's copy, say). When
the cluster is not registered yet the agent registers it in Pull mode, as Karmada's agent does.

``fleetkeeper token create-agent NAME`` mints (or shows) the agent token through the
running plane's API — a Secret in ``karmada-system`` (:mod:`fleetkeeper.apiserver.identity`),
so every replica accepts it at once — and writes the agent's kubeconfig next to the admin
one; ``fleetkeeper token revoke NAME`` deletes that Secret, and every replica refuses the
token from then on.
"""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Annotated, Any, TypeVar

import structlog
import typer

from fleetkeeper import errors
from fleetkeeper.api import constants
from fleetkeeper.api.builtin import Secret
from fleetkeeper.api.cluster import Cluster, ClusterSpec
from fleetkeeper.api.core import Event
from fleetkeeper.api.meta import ObjectMeta, Resource, Unstructured
from fleetkeeper.api.timeline import TimelineEntry
from fleetkeeper.api.work import Work
from fleetkeeper.apiserver import confine, identity, write_kubeconfig
from fleetkeeper.apiserver.auth import new_token
from fleetkeeper.cli import connect, paths
from fleetkeeper.cli.clusters import cluster_name_problem
from fleetkeeper.cli.options import with_options
from fleetkeeper.client.interface import Client, ObjectList, PatchType, WatchEvent
from fleetkeeper.client.rest import RestClient, read_kubeconfig
from fleetkeeper.clock import Clock, SystemClock
from fleetkeeper.cmd import components as parts
from fleetkeeper.cmd.usertoken import create_user
from fleetkeeper.members import Member, open_member
from fleetkeeper.options import Options, parse_duration
from fleetkeeper.runtime.context import Scope

T = TypeVar("T", bound=Resource)
_log = structlog.get_logger("fleetkeeper.agent")
#: first wait between attempts to reach the control plane at start (doubles up to the max)
RETRY_FIRST, RETRY_MAX = 0.5, 10.0
#: Options that mean something to an agent (the rest belong to the control plane)
AGENT_FIELDS = ("cluster_status_update_frequency", "cluster_success_threshold", "cluster_failure_threshold",
                "cluster_probe_timeout", "cluster_lease_renew_interval_fraction", "concurrent_syncs",
                "rate_limiter_base_delay", "rate_limiter_max_delay", "rate_limiter_qps",
                "rate_limiter_bucket_size")


class AgentClient:
    """A client limited to what one cluster's agent may see (see the module notes)."""

    def __init__(self, inner: Client, cluster: str) -> None:
        self._inner = inner
        self.cluster = cluster

    def _narrow(self, model: type[Resource], namespace: str | None,
                field_selector: str | None) -> tuple[str | None, str | None]:
        if issubclass(model, Cluster) and not field_selector:
            return namespace, f"metadata.name={self.cluster}"
        if issubclass(model, Work) and namespace is None:
            return constants.execution_namespace(self.cluster), field_selector
        return namespace, field_selector

    async def get(self, model: type[T], name: str, namespace: str = "") -> T:
        return await self._inner.get(model, name, namespace)

    async def list(self, model: type[T], namespace: str | None = None, *, label_selector: str | None = None,
                   field_selector: str | None = None) -> ObjectList[T]:
        namespace, field_selector = self._narrow(model, namespace, field_selector)
        return await self._inner.list(model, namespace, label_selector=label_selector,
                                      field_selector=field_selector)

    def watch(self, model: type[T], namespace: str | None = None, *, resource_version: str | None = None,
              label_selector: str | None = None, field_selector: str | None = None
              ) -> AsyncIterator[WatchEvent[T]]:
        namespace, field_selector = self._narrow(model, namespace, field_selector)
        return self._inner.watch(model, namespace, resource_version=resource_version,
                                 label_selector=label_selector, field_selector=field_selector)

    async def create(self, obj: T) -> T:
        if not self._may_record(obj):
            _log.debug("record kept local: an agent records only about its own Cluster and Works",
                       kind=obj.kind, name=obj.name)
            return obj
        return await self._inner.create(obj)

    def _may_record(self, obj: Resource) -> bool:
        """False for what the control plane refuses from an agent: Events and timeline entries
        about anything but this cluster and its Works."""
        records = isinstance(obj, Event | TimelineEntry)
        return not records or confine.record_allowed(self.cluster, obj.to_dict())

    async def update(self, obj: T) -> T:
        return await self._inner.update(obj)

    async def update_status(self, obj: T) -> T:
        return await self._inner.update_status(obj)

    async def finalize(self, obj: T) -> T:
        return await self._inner.finalize(obj)

    async def patch(self, model: type[T], name: str, namespace: str = "", *,
                    patch: dict[str, Any] | builtins.list[Any], patch_type: PatchType = "merge",
                    subresource: str | None = None) -> T:
        return await self._inner.patch(model, name, namespace, patch=patch, patch_type=patch_type,
                                       subresource=subresource)

    async def delete(self, model: type[T], name: str, namespace: str = "", *,
                     resource_version: str | None = None) -> None:
        await self._inner.delete(model, name, namespace, resource_version=resource_version)


class OneMember:
    """The member pool of an agent: its one member, whatever the Cluster's endpoint says."""

    def __init__(self, cluster: str, member: Member) -> None:
        self.cluster = cluster
        self._member = member

    def member(self, cluster_name: str, api_endpoint: str | None = None) -> Member:
        if cluster_name != self.cluster:
            raise errors.MemberUnreachable(
                f"this agent serves cluster {self.cluster!r}, not {cluster_name!r}")
        return self._member


# --------------------------------------------------------------------------- registration


async def register(client: Client, name: str) -> str:
    """Make sure cluster ``name`` exists in Pull mode; say what was done."""
    try:
        cluster = await client.get(Cluster, name)
    except errors.NotFound:
        fresh = Cluster(metadata=ObjectMeta(name=name), spec=ClusterSpec(sync_mode="Pull"))
        try:
            await client.create(fresh)
        except errors.Forbidden:
            parts.fail(f"cluster {name!r} is not registered and this agent's token may not register it; "
                       f"register it first: fleetkeeper join {name} --sync-mode Pull")
        except errors.Invalid as exc:
            parts.fail(f"--cluster-name {name}: {exc.message}", 2)
        return f"registered cluster {name} (Pull)"
    if cluster.spec.sync_mode != "Pull":
        parts.fail(f"cluster {name!r} is registered in {cluster.spec.sync_mode} mode; an agent serves Pull "
                   f"clusters only (fleetkeeper unjoin {name}, then join it with --sync-mode Pull)")
    return f"cluster {name} is registered (Pull)"


async def register_with_retries(client: Client, name: str, *, clock: Clock,
                                stop: asyncio.Event, server: str) -> str | None:
    """:func:`register`, retried while the control plane is unreachable; None if stopped."""
    delay = RETRY_FIRST
    while not stop.is_set():
        try:
            return await register(client, name)
        except errors.Unauthorized as exc:
            parts.fail(f"the control plane at {server} refused this agent's token: {exc.message}")
        except errors.Forbidden as exc:
            parts.fail(f"the control plane at {server} refused access to cluster {name!r}: {exc.message} "
                       f"(is --cluster-name the cluster this kubeconfig was made for?)")
        except errors.InternalError as exc:
            typer.echo(f"  waiting for the control plane at {server}: {exc.message}", err=True)
        waiter = asyncio.ensure_future(stop.wait())
        sleeper = asyncio.ensure_future(clock.sleep(delay))
        await asyncio.wait([waiter, sleeper], return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        sleeper.cancel()
        delay = min(delay * 2, RETRY_MAX)
    return None


# --------------------------------------------------------------------------- the command


async def run_agent(kubeconfig: Path, name: str, member_url: str, options: Options) -> None:
    """Register, then run the agent's controllers until SIGINT/SIGTERM."""
    from fleetkeeper.cmd.app import ControlPlane

    clock = SystemClock()
    try:
        member = open_member(member_url, clock=clock)
    except ValueError as exc:
        parts.fail(f"--member {member_url}: {exc}", 2)
    try:
        server = read_kubeconfig(kubeconfig).server
        rest = RestClient.from_kubeconfig(kubeconfig, clock=clock, field_manager=f"fleetkeeper-agent-{name}")
    except (ValueError, KeyError, OSError) as exc:
        parts.fail(f"--kubeconfig {kubeconfig}: {exc}", 2)
    stop = asyncio.Event()
    with parts.stop_on_signals(stop):
        try:
            done = await register_with_retries(rest, name, clock=clock, stop=stop, server=server)
            if done is None:
                return
            typer.echo(f"  {done}")
            plane = ControlPlane(store=None, client_override=AgentClient(rest, name), clock=clock,
                                 members=OneMember(name, member), options=options,
                                 scope=Scope(agent_cluster=name), identity=f"agent-{name}")
            task = asyncio.get_running_loop().create_task(plane.run(), name=f"agent-{name}")
            try:
                if await parts.step(plane.wait_started(), watch=[task], stop=stop):
                    renew = options.cluster_lease_duration * options.cluster_lease_renew_interval_fraction
                    typer.echo(f"  running: lease karmada-cluster/{name} renewed every {renew:g}s, "
                               f"Works of {constants.execution_namespace(name)} applied to {member_url} "
                               "(Ctrl-C stops)")
                    await parts.step(stop.wait(), watch=[task], stop=stop)
            finally:
                problems = await parts.cancel(task)
            if problems:
                raise problems[0]
        finally:
            await rest.aclose()
            await member.close()
    typer.echo(f"agent for {name} stopped")


@with_options(only=AGENT_FIELDS)
def agent(
    kubeconfig: Annotated[Path, typer.Option(help="the agent's kubeconfig (fleetkeeper token create-agent)",
                                             show_default=False)],
    cluster_name: Annotated[str, typer.Option(help="the member cluster this agent serves",
                                              show_default=False)],
    member: Annotated[str, typer.Option(help="how to reach the member: simulated://NAME, or a real cluster: "
                                        "kube://CONTEXT (of $KUBECONFIG or ~/.kube/config)",
                                        show_default=False)],
    lease_duration: Annotated[str, typer.Option(
        help="heartbeat Lease duration; renewed every duration × 0.25")] = "40s",
    log_level: Annotated[str, typer.Option(help="debug, info, warning or error (stderr)")] = "warning",
    log_format: parts.LogFormat = "text",
    *,
    options: Options,
) -> None:
    """Run the Pull agent of one member cluster: heartbeat, status and Works, over HTTPS."""

    try:
        duration = parse_duration(lease_duration)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--lease-duration") from None
    if duration < 1:
        raise typer.BadParameter("must be at least 1s", param_hint="--lease-duration")
    if not kubeconfig.is_file():
        raise typer.BadParameter(f"{kubeconfig}: no such file", param_hint="--kubeconfig")
    parts.configure_logs(log_level, SystemClock(), log_format)
    typer.echo(f"fleetkeeper agent for cluster {cluster_name}")
    asyncio.run(run_agent(kubeconfig, cluster_name, member, options.replace(cluster_lease_duration=duration)))


# --------------------------------------------------------------------------- tokens

token_app = typer.Typer(help="Credentials for Pull agents (create-agent, revoke) and people (create-user).",
                        no_args_is_help=True)
token_app.command("create-user")(create_user)


StateDirOption = Annotated[Path | None, typer.Option(
    help="the state directory of `fleetkeeper up`: its admin kubeconfig reaches the plane, the agent's is "
         "written there [default: $XDG_STATE_HOME/fleetkeeper or ~/.local/state/fleetkeeper]",
    show_default=False)]


def _admin_kubeconfig(directory: Path) -> Path:
    admin = directory / paths.KUBECONFIG_FILE
    if not admin.is_file():
        parts.fail(f"{directory} holds no control plane (no {paths.KUBECONFIG_FILE}): start `fleetkeeper up` "
                   "there first, or pass --state-dir", 2)
    return admin


async def _agent_token(session: connect.Session, name: str, *, rotate: bool) -> str:
    """The token in the Secret of ``name``'s agent, created (or replaced) through the API."""
    secret_name = identity.agent_secret_name(name)
    fresh = Secret.from_dict(identity.agent_token_secret(name, new_token()))
    try:
        return _token_of(await session.client.create(fresh))
    except errors.AlreadyExists:
        current = await session.client.get(Secret, secret_name, identity.NAMESPACE)
    if not rotate:
        return _token_of(current)
    fresh.metadata = current.metadata
    return _token_of(await session.client.update(fresh))


def _token_of(secret: Unstructured) -> str:
    token = identity.secret_value(secret.to_dict(), "token")
    if not token:
        raise connect.Failed(f"secret {identity.NAMESPACE}/{secret.name} holds no token")
    return token.decode()


@token_app.command("create-agent")
def create_agent(
    name: Annotated[str, typer.Argument(help="the Pull cluster the agent serves", show_default=False)],
    state_dir: StateDirOption = None,
    rotate: Annotated[bool, typer.Option(help="issue a new token (the old one stops working)")] = False,
) -> None:
    """Mint the token of NAME's Pull agent and write STATE_DIR/agent-NAME.kubeconfig."""
    directory = (state_dir or paths.default_state_dir()).expanduser()
    admin = _admin_kubeconfig(directory)
    problem = cluster_name_problem(name)
    if problem:
        raise typer.BadParameter(f"{name!r}: {problem}", param_hint="NAME")

    async def mint(session: connect.Session) -> str:
        return await _agent_token(session, name, rotate=rotate)

    token = connect.run(admin, mint)
    creds = read_kubeconfig(admin)
    if creds.ca_pem is None:
        parts.fail(f"{admin}: the cluster has no certificate-authority-data", 2)
    plane = identity.plane_name(creds.ca_pem)
    path = write_kubeconfig(directory / paths.agent_kubeconfig_name(name), creds.server, creds.ca_pem, token,
                            name=plane, namespace=constants.LEASE_NAMESPACE, user=f"{plane}-agent-{name}")
    typer.echo(f"agent kubeconfig for {name}: {path}")
    typer.echo(f"run the agent with:\n  fleetkeeper agent --kubeconfig {path} --cluster-name {name} "
               f"--member simulated://{name}")


@token_app.command("revoke")
def revoke(
    name: Annotated[str, typer.Argument(help="the Pull cluster whose agent token to revoke",
                                        show_default=False)],
    state_dir: StateDirOption = None,
) -> None:
    """Revoke NAME's agent token on every replica at once and delete STATE_DIR/agent-NAME.kubeconfig.
    `fleetkeeper unjoin NAME` revokes it too."""
    directory = (state_dir or paths.default_state_dir()).expanduser()
    admin = _admin_kubeconfig(directory)

    async def delete(session: connect.Session) -> None:
        try:
            await session.client.delete(Secret, identity.agent_secret_name(name), identity.NAMESPACE)
        except errors.NotFound:
            raise connect.Failed(f"no agent token for cluster {name!r}") from None

    connect.run(admin, delete)
    (directory / paths.agent_kubeconfig_name(name)).unlink(missing_ok=True)
    typer.echo(f"agent token of {name} revoked")


__all__ = ["AgentClient", "OneMember", "agent", "create_agent", "register", "revoke", "run_agent",
           "token_app"]
