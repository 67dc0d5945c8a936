"""``fleetkeeper up``: the whole control plane on this machine, in real time.

One process, one event loop, one store: the API server (HTTPS on ``127.0.0.1:PORT``),
every controller and the scheduler (:class:`~fleetkeeper.cmd.app.ControlPlane` over the
same store, through a local client), and ``--clusters N`` simulated member clusters
``member1..memberN`` joined in Push mode with ``apiEndpoint: simulated://memberK``.

**State.** Everything lives in the state directory (``--state-dir``, default a per-user
directory, see :mod:`fleetkeeper.cli.paths`): ``state.db`` (sqlite, unless ``--store``
says otherwise), ``pki/`` (the CA certificate and the serving certificate and key) and
``kubeconfig`` (admin, for kubectl and the fleetkeeper CLI). The plane's identity — CA,
serving certificate, admin token, one token per Pull agent — is kept in the store as
Secrets of ``karmada-system`` (:mod:`fleetkeeper.apiserver.identity`); the files are what
this start serves with and hands out. A second start reuses all of it, so a restart loses
nothing: objects stay in the store, controllers resume from it (informers list, then
watch), the certificates and tokens stay valid. An exclusive lock keeps two servers off
one directory.

**Members after a restart.** Simulated members live in memory and come back empty. No
special recovery is needed, and none is attempted: the execution controller re-applies
every Work it finds on its first list (it remembers what it applied only in memory), the
binding controller finds the Works it wants already there (Work names are deterministic,
so nothing is duplicated), and the status controllers read the new copies back.

**Readiness.** ``GET /readyz`` fails its ``control-plane`` check (``/readyz/control-plane``
says what it waits for) until the store is open, the informers have synced, the controllers
have a leader and the members have joined; then it answers 200. Progress lines go to stdout,
then the kubeconfig path and what to try next.

**Replicas.** Several ``up`` processes may share one ``--store etcd://…``, each with its
own state directory and port, and one identity: the first creates the CA, the serving
certificate and the admin token in the store, the others take them from there (widening
the serving certificate to their ``--advertise-address`` and ``--tls-san`` names), so any
replica's kubeconfig works against every replica, and an agent token issued or revoked
through one is so on all. Every replica serves the API; the controllers and the scheduler
run only on the holder of the Lease ``karmada-system/fleetkeeper-controller-manager``. A
replica that finds the lease held by another live replica is a *standby*: it is Ready once
it has seen that leader (it says so on stdout), keeps its caches warm, and starts its
controllers the moment it takes the lease over — when the leader releases it (a clean
stop) or lets it expire (a crash). Waiting for leadership instead would leave every
standby unready for good.

**Namespaces.** The namespaces a Karmada control plane has from the start — ``default``,
``kube-system``, ``kube-public``, ``kube-node-lease``, ``karmada-system`` and
``karmada-cluster`` — are created when missing (``kubectl get ns`` lists them), by ``up``
and by ``apiserver``. Objects in a namespace that does not exist are still accepted, as
before.

**Pull agents.** ``--pull-agent NAME`` (repeatable) registers cluster NAME in Pull mode,
mints its agent token and writes ``STATE_DIR/agent-NAME.kubeconfig`` for
``fleetkeeper agent``. ``fleetkeeper token create-agent NAME`` does the token part while
``up`` runs, through its API. Each start rewrites the agents'
kubeconfigs with its address (it changes with ``--port 0``).

**The API server alone.** ``fleetkeeper apiserver`` is this command's API server without
controllers or members — the first of the parts :mod:`fleetkeeper.cmd.components` runs
apart — over the same state directory layout.

**Stopping.** Ctrl-C or SIGTERM: the API server stops taking requests and ends open
watches, the controllers stop (the leader lease is released), the store is closed —
every acknowledged write is on disk — and the command exits 0.
"""

from __future__ import annotations

import asyncio
import hashlib
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import typer

from fleetkeeper import dashboard, errors
from fleetkeeper.api import constants
from fleetkeeper.api.cluster import Cluster, ClusterSpec
from fleetkeeper.api.core import Namespace
from fleetkeeper.api.meta import ObjectMeta
from fleetkeeper.apiserver import (
    build_app,
    serve,
)
from fleetkeeper.cli import paths
from fleetkeeper.cli.options import with_options
from fleetkeeper.client.interface import Client
from fleetkeeper.clock import Clock, SystemClock
from fleetkeeper.cmd import components as parts
from fleetkeeper.cmd.app import ControlPlane, freeze_startup_heap
from fleetkeeper.cmd.kube_proxy import KubeconfigMembers
from fleetkeeper.cmd.kubeconfig import ContextName
from fleetkeeper.cmd.member_pool import member_pool
from fleetkeeper.cmd.member_proxy import SimulatedMembers
from fleetkeeper.cmd.serving import GatedApp, ServerFiles, server_files, serving_hosts
from fleetkeeper.options import Options
from fleetkeeper.runtime.leaderelection import LeaderElector
from fleetkeeper.store import Store, open_store

MAX_CLUSTERS = 100


@dataclass
class Up:
    """What ``fleetkeeper up`` was asked to run."""

    state_dir: Path
    store_url: str
    host: str
    port: int
    clusters: int
    options: Options
    pull_agents: list[str] = field(default_factory=list)
    #: the address clients are given (kubeconfigs); empty: the listen address
    advertise: str = ""
    #: extra names and addresses the serving certificate must cover
    tls_sans: list[str] = field(default_factory=list)
    #: the name of the admin kubeconfig's context and cluster; empty: the plane's
    context_name: str = ""
    started: float = field(default_factory=time.monotonic)

    def say(self, what: str, detail: str) -> None:
        typer.echo(f"  {what:<12} {detail}")


# --------------------------------------------------------------------------- members and agents


def member_cluster(name: str) -> Cluster:
    """The Cluster a simulated Push member joins with."""
    return Cluster(metadata=ObjectMeta(name=name),
                   spec=ClusterSpec(sync_mode="Push", api_endpoint=f"simulated://{name}"))


async def ensure_namespaces(client: Client) -> list[str]:
    """Create the system namespaces (:data:`~fleetkeeper.api.constants.SYSTEM_NAMESPACES`) that are
    missing; the ones created now."""
    created = []
    for name in constants.SYSTEM_NAMESPACES:
        try:
            await client.create(Namespace(metadata=ObjectMeta(name=name)))
            created.append(name)
        except errors.AlreadyExists:
            pass
    return created


async def join_members(client: Client, count: int) -> tuple[list[str], list[str]]:
    """Join member1..memberN unless already joined; (joined now, already there)."""
    joined, present = [], []
    for index in range(1, count + 1):
        name = f"member{index}"
        try:
            await client.create(member_cluster(name))
            joined.append(name)
        except errors.AlreadyExists:
            present.append(name)
    return joined, present


async def register_pull_agents(run: Up, files: ServerFiles, client: Client, url: str) -> None:
    """Register each ``--pull-agent`` cluster (Pull) and mint its token; then (re)write the
    kubeconfig of every agent that has one, so it names this start's address."""
    for name in run.pull_agents:
        cluster = Cluster(metadata=ObjectMeta(name=name), spec=ClusterSpec(sync_mode="Pull"))
        try:
            await client.create(cluster)
        except errors.AlreadyExists:
            pass
        except errors.Invalid as exc:
            parts.fail(f"--pull-agent {name}: {exc.message}", 2)
        await files.tokens.issue(name)
    for name, token in sorted(files.tokens.agents.items()):
        path = run.state_dir / paths.agent_kubeconfig_name(name)
        if name in run.pull_agents or path.exists():
            files.write_agent_kubeconfig(name, url, token)
        if name in run.pull_agents:
            run.say("pull agent", f"{name}: fleetkeeper agent --kubeconfig {path} --cluster-name {name} "
                                  f"--member simulated://{name}")


def up_identity(state_dir: Path) -> str:
    """The controllers' leader-election identity: stable per host and state directory, so a
    restarted ``up`` takes its own lease back at once instead of waiting for it to expire."""
    digest = hashlib.blake2b(str(state_dir).encode(), digest_size=4).hexdigest()
    return f"{socket.gethostname()}_up_{digest}"


# --------------------------------------------------------------------------- running

#: how often startup looks at the elector while neither leading nor seeing a leader
ELECTION_POLL = 0.05


async def _lead_or_follow(elector: LeaderElector, clock: Clock) -> str | None:
    """Wait until the controllers have a leader: None once this replica leads, else the
    identity of the other replica seen holding the lease (this one is a standby)."""
    while not elector.is_leader:
        holder = elector.leader
        if holder and holder != elector.config.identity:
            return holder
        await clock.sleep(ELECTION_POLL)
    return None


async def _settle_leadership(run: Up, app: GatedApp, elector: LeaderElector | None, clock: Clock,
                             stop: asyncio.Event, tasks: list[asyncio.Task[Any]]) -> bool:
    """Wait until the controllers have a leader, here or in another replica, and say which
    (see the module notes on replicas); False if stopped meanwhile."""
    if elector is None:
        run.say("controllers", "running")
        return True
    app.pending = ("waiting for a leader of the controllers "
                   "(Lease karmada-system/fleetkeeper-controller-manager)")
    election = asyncio.get_running_loop().create_task(_lead_or_follow(elector, clock), name="lead-or-follow")
    if not await parts.step(election, watch=tasks, stop=stop):
        return False
    holder = election.result()
    run.say("controllers", "running (leader elected)" if holder is None else
            f"standby (the lease is held by {holder}; this replica takes over if it goes)")
    return True


async def _start(run: Up, files: ServerFiles, sock: Any, store: Store, clock: Clock,
                 stop: asyncio.Event, tasks: list[asyncio.Task[Any]]) -> ControlPlane | None:
    """Start the server and the control plane (appending their tasks); None if stopped meanwhile."""
    url = parts.advertised_url(sock, run.advertise or run.host)
    app = GatedApp(build_app(store, clock=clock, tokens=files.tokens).state)
    app.sites[dashboard.PREFIX] = dashboard.Site(
        app, clock=clock, threshold=run.options.eviction_circuit_breaker_threshold)
    app.proxy.transports += [SimulatedMembers(clock), KubeconfigMembers()]
    started = asyncio.Event()
    loop = asyncio.get_running_loop()
    tasks.append(loop.create_task(serve(app, sock=sock, tls=files.tls, stop=stop, started=started),
                                  name="apiserver"))
    if not await parts.step(started.wait(), watch=tasks, stop=stop):
        return None
    kubeconfig = files.write_admin_kubeconfig(url)
    run.say("apiserver", f"{url} (admin kubeconfig {kubeconfig})")
    run.say("dashboard", f"{url}{dashboard.PREFIX}/ (sign in with the kubeconfig's token: docs/dashboard.md)")
    app.pending = "controllers starting"
    members, credentials = member_pool(clock)
    try:
        plane = ControlPlane(store=store, clock=clock, members=members, options=run.options,
                             identity=up_identity(run.state_dir))
    except ValueError as exc:
        parts.fail(parts.options_error(exc), 2)
    credentials.client = plane.client
    plane.announce(server=url, store=run.store_url)
    tasks.append(loop.create_task(plane.run(), name="control-plane"))
    if not await parts.step(plane.wait_started(), watch=tasks, stop=stop):
        return None
    if not await _settle_leadership(run, app, plane.manager.elector, clock, stop, tasks):
        return None
    app.pending = "joining member clusters"
    await ensure_namespaces(plane.client)
    joined, present = await join_members(plane.client, run.clusters)
    shown = [f"{n} (joined)" for n in joined] + present
    run.say("members", (", ".join(shown) or "none") + " — simulated, Push")
    await register_pull_agents(run, files, plane.client, url)
    app.pending = ""
    return plane


async def _identity(run: Up, store: Store, clock: Clock) -> ServerFiles:
    """The plane's identity from the store (see :mod:`fleetkeeper.apiserver.identity`)."""
    advertise = run.advertise or ("127.0.0.1" if run.host in ("", "0.0.0.0") else run.host)
    files = await server_files(store, run.state_dir, hosts=serving_hosts(run.host, advertise, run.tls_sans),
                               clock=clock, name=run.context_name or None)
    run.say("pki", f"{files.tls.ca_cert.parent} (the plane's CA and certificate, kept in the store)")
    return files


def _next_steps(run: Up, kubeconfig: Path) -> None:
    elapsed = time.monotonic() - run.started
    typer.echo(f"\nReady in {elapsed:.1f}s. Next steps:\n")
    typer.echo(f"  export KUBECONFIG={kubeconfig}")
    typer.echo("  kubectl get clusters")
    typer.echo("  kubectl apply -f samples/nginx/             # in the repository: nginx and its policy")
    typer.echo("  fleetkeeper get bindings -A")
    typer.echo("  fleetkeeper describe binding default/NAME    # placement, health and the failover timeline")
    typer.echo(f"\nCtrl-C stops; the state stays in {run.state_dir} (the next `fleetkeeper up` resumes it).")


async def run_up(run: Up, sock: Any) -> None:
    """Run until SIGINT/SIGTERM, then stop everything cleanly (see the module notes)."""
    clock = SystemClock()
    stop = asyncio.Event()
    with parts.stop_on_signals(stop):
        try:
            store = open_store(run.store_url, clock=clock)
        except (ValueError, ImportError, OSError) as exc:
            parts.fail(f"--store {run.store_url}: {exc}", 2)
        run.say("store", f"{run.store_url} (revision {store.revision})")
        tasks: list[asyncio.Task[Any]] = []
        files: ServerFiles | None = None
        try:
            files = await _identity(run, store, clock)
            plane = await _start(run, files, sock, store, clock, stop, tasks)
            if plane is not None:
                _next_steps(run, files.kubeconfig)
                await parts.step(stop.wait(), watch=tasks, stop=stop)
        finally:
            typer.echo("\nstopping: API server, controllers, store …")
            stop.set()
            problems = await parts.cancel(*reversed(tasks))
            if files is not None:
                await files.tokens.stop()
            await store.close()
        if problems:
            raise problems[0]
    typer.echo(f"stopped; state kept in {run.state_dir}")


@with_options()
def up(
    state_dir: Annotated[Path | None, typer.Option(
        help="keep the store, PKI, tokens and kubeconfig here "
             "[default: $XDG_STATE_HOME/fleetkeeper or ~/.local/state/fleetkeeper]",
        show_default=False)] = None,
    port: Annotated[int, typer.Option(min=0, max=65535, help="HTTPS port of the API server (0: a free one)")]
    = parts.DEFAULT_PORT,
    host: Annotated[str, typer.Option(help="address the API server listens on")] = "127.0.0.1",
    clusters: Annotated[int, typer.Option(min=0, max=MAX_CLUSTERS,
                                          help="simulated member clusters member1..memberN to join")] = 3,
    store: Annotated[str | None, typer.Option(help="store URL [default: sqlite:///STATE_DIR/state.db]",
                                              show_default=False)] = None,
    pull_agent: Annotated[list[str] | None, typer.Option(
        "--pull-agent", metavar="NAME",
        help="register Pull cluster NAME and write STATE_DIR/agent-NAME.kubeconfig for `fleetkeeper agent` "
             "(repeatable)", show_default=False)] = None,
    advertise_address: parts.AdvertiseAddress = None,
    tls_san: parts.TlsSan = None,
    context_name: ContextName = None,
    log_level: Annotated[str, typer.Option(help="debug, info, warning or error (stderr)")] = "warning",
    log_format: parts.LogFormat = "text",
    *,
    options: Options,
) -> None:
    """Run the control plane here: API server, controllers, scheduler and simulated members."""
    clock = SystemClock()
    parts.configure_logs(log_level, clock, log_format)
    directory = (state_dir or paths.default_state_dir()).expanduser().absolute()
    run = Up(directory, parts.store_url_or_default(store, directory), host, port, clusters, options,
             list(dict.fromkeys(pull_agent or [])), advertise_address or "", list(tls_san or []),
             context_name or "")
    typer.echo(f"fleetkeeper up: state in {directory}")
    lock = parts.StateLock(directory)
    lock.acquire()
    try:
        sock = parts.bind_or_fail(host, port)
        asyncio.run(run_up(run, sock))
    finally:
        lock.release()


# --------------------------------------------------------------------------- the API server alone


def apiserver(
    store: Annotated[str | None, typer.Option(help="store URL [default: sqlite:///STATE_DIR/state.db]",
                                              show_default=False)] = None,
    state_dir: parts.StateDir = None,
    host: Annotated[str, typer.Option(help="address to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="HTTPS port (0: a free one)")]
    = parts.DEFAULT_PORT,
    advertise_address: parts.AdvertiseAddress = None,
    tls_san: parts.TlsSan = None,
    context_name: ContextName = None,
    log_level: parts.LogLevel = "warning",
    log_format: parts.LogFormat = "text",
) -> None:
    """Serve the Kubernetes API alone (no controllers): HTTPS, tokens, admin kubeconfig."""
    clock = SystemClock()
    parts.configure_logs(log_level, clock, log_format)
    directory = (state_dir or paths.default_state_dir()).expanduser().absolute()
    lock = parts.StateLock(directory)
    lock.acquire()
    try:
        sock = parts.bind_or_fail(host, port)
        advertise = advertise_address or ("127.0.0.1" if host in ("", "0.0.0.0") else host)
        url = parts.advertised_url(sock, advertise)
        store_url = parts.store_url_or_default(store, directory)
        hosts = serving_hosts(host, advertise, tls_san or [])
        asyncio.run(_serve_api(directory, sock, url, store_url, hosts=hosts, clock=clock, name=context_name))
    finally:
        lock.release()
    typer.echo("apiserver stopped")


async def _serve_api(directory: Path, sock: socket.socket, url: str, store_url: str, *,
                     hosts: list[str], clock: Clock, name: str | None = None) -> None:
    stop = asyncio.Event()
    with parts.stop_on_signals(stop):
        try:
            opened = open_store(store_url, clock=clock)
        except (ValueError, ImportError, OSError) as exc:
            parts.fail(f"--store {store_url}: {exc}", 2)
        files: ServerFiles | None = None
        try:
            files = await server_files(opened, directory, hosts=hosts, clock=clock, name=name)
            app = build_app(opened, clock=clock, tokens=files.tokens)
            app.proxy.transports.append(KubeconfigMembers())
            app.sites[dashboard.PREFIX] = dashboard.Site(
                app, clock=clock, threshold=Options().eviction_circuit_breaker_threshold)
            started = asyncio.Event()
            server = asyncio.get_running_loop().create_task(
                serve(app, sock=sock, tls=files.tls, stop=stop, started=started), name="apiserver")
            if await parts.step(started.wait(), watch=[server], stop=stop):
                kubeconfig = files.write_admin_kubeconfig(url)
                freeze_startup_heap()
                typer.echo(f"apiserver serving {url} (store {store_url}); admin kubeconfig {kubeconfig}")
            await server
        finally:
            if files is not None:
                await files.tokens.stop()
            await opened.close()


__all__ = ["Up", "apiserver", "ensure_namespaces", "join_members", "member_cluster",
           "run_up", "up"]
