"""The control plane's parts, run together (``fleetkeeper up``) or apart.

``fleetkeeper up`` runs the API server, the controller-manager and the scheduler in one
process and one event loop over one store. Bigger setups run them apart::

    fleetkeeper apiserver --store etcd://127.0.0.1:2379 --state-dir /srv/fk --port 6443   # see cmd/up.py
    fleetkeeper controller-manager --store etcd://127.0.0.1:2379        # or --kubeconfig FILE
    fleetkeeper scheduler --kubeconfig /srv/fk/kubeconfig                # or --store etcd://…

**How a split controller-manager or scheduler reaches the state.** Either straight onto
a *shared* store (``--store etcd://…``: a local client, like ``up``, but the store is
shared by every process), or through an API server (``--kubeconfig FILE``: the REST
client over HTTPS, the way a Pull agent talks). SQLite is embedded: exactly one
process may write it, the one serving the API (``up`` or ``apiserver``), so
``--store sqlite://…`` is refused for the other two with a message saying what to do
instead; ``memory://`` lives inside one process and is refused likewise. Replicas of a
component elect a leader (``--leader-elect``, on by default): the controller-manager
competes for the Lease ``karmada-system/fleetkeeper-controller-manager`` and the
scheduler, run apart, for ``karmada-system/fleetkeeper-scheduler``.

**Members** are reached through :func:`~fleetkeeper.cmd.member_pool.member_pool`.

The helpers every long-running command shares live here too: the state-directory
lock, signal handling and supervised startup steps.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import ipaddress
import os
import re
import signal
import socket
import uuid
from collections.abc import Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import Annotated, Any, NoReturn, Protocol

import typer

from fleetkeeper.api import admission
from fleetkeeper.apiserver import bind
from fleetkeeper.cli import paths
from fleetkeeper.cli.options import with_options
from fleetkeeper.client.interface import Client
from fleetkeeper.client.local import LocalClient
from fleetkeeper.client.rest import RestClient
from fleetkeeper.clock import Clock, SystemClock
from fleetkeeper.cmd import logs
from fleetkeeper.cmd.member_pool import member_pool
from fleetkeeper.options import Options
from fleetkeeper.runtime.leaderelection import LeaderElectionConfig, LeaderElector
from fleetkeeper.runtime.manager import Manager
from fleetkeeper.scheduler import controller as scheduler_controller

SCHEDULER_LEASE = "fleetkeeper-scheduler"
DEFAULT_PORT = 6443


# --------------------------------------------------------------------------- errors and identity


def fail(message: str, code: int = 1) -> NoReturn:
    """Print ``error: message`` on stderr and exit with ``code`` (2: bad input)."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def options_error(exc: ValueError) -> str:
    """Options that do not fit together (the leader-election timings), in terms of their flags."""
    text = str(exc)
    for name in ("retry_period", "renew_deadline", "lease_duration"):
        text = text.replace(name, "--leader-elect-" + name.replace("_", "-"))
    return text


def identity(role: str) -> str:
    """A leader-election identity unique to this process."""
    return f"{socket.gethostname()}_{role}_{uuid.uuid4().hex[:8]}"


# --------------------------------------------------------------------------- state directory


#: a state directory and what is in it are the owner's alone: it holds members' credentials
PRIVATE_DIR, PRIVATE_FILE = 0o700, 0o600


def make_private(directory: Path) -> None:
    """Make ``directory`` (created if missing) and everything below it private — folders 0700,
    files 0600, links left alone — and have this process create its files so from now on
    (umask 077: the store's database and its ``-wal``/``-shm`` files, keys, tokens)."""
    os.umask(0o077)
    directory.mkdir(mode=PRIVATE_DIR, parents=True, exist_ok=True)
    os.chmod(directory, PRIVATE_DIR)
    for root, folders, files in os.walk(directory):
        for name in folders:
            path = os.path.join(root, name)
            if not os.path.islink(path):
                os.chmod(path, PRIVATE_DIR)
        for name in files:
            path = os.path.join(root, name)
            if not os.path.islink(path):
                os.chmod(path, PRIVATE_FILE)


class StateLock:
    """An exclusive lock on a state directory, so two servers never share one; taking it makes
    the directory private (:func:`make_private`)."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / paths.LOCK_FILE
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock or exit with a message naming the holder."""
        make_private(self.path.parent)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 64).decode(errors="replace").strip() or "?"
            os.close(fd)
            fail(f"another fleetkeeper server (pid {holder}) is using the state directory "
                 f"{self.path.parent}; stop it first or pass a different --state-dir")
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def bind_or_fail(host: str, port: int) -> socket.socket:
    try:
        return bind(host, port)
    except OSError as exc:
        fail(f"cannot listen on {host}:{port}: {exc.strerror or exc} (is another API server running? "
             "pass --port PORT, or --port 0 for a free one)")


def advertised_url(sock: socket.socket, host: str) -> str:
    port = sock.getsockname()[1]
    shown = "127.0.0.1" if host in ("0.0.0.0", "") else ("::1" if host == "::" else host)
    return f"https://[{shown}]:{port}" if ":" in shown else f"https://{shown}:{port}"


def store_url_or_default(store: str | None, state_dir: Path) -> str:
    return store or f"sqlite:///{state_dir / paths.STORE_FILE}"


# --------------------------------------------------------------------------- running


@contextlib.contextmanager
def stop_on_signals(stop: asyncio.Event) -> Iterator[None]:
    """Set ``stop`` on SIGINT (Ctrl-C) and SIGTERM while inside the block."""
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        yield
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)


async def step(awaitable: Awaitable[Any], *, watch: Sequence[asyncio.Task[Any]], stop: asyncio.Event) -> bool:
    """Await a startup step: True once done, False if ``stop`` was set first; if a watched
    task ends meanwhile, raise what it died of."""
    work = asyncio.ensure_future(awaitable)
    stopper = asyncio.ensure_future(stop.wait())
    try:
        done, _ = await asyncio.wait([work, stopper, *watch], return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopper.cancel()
    if work in done:
        work.result()
        return True
    work.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await work
    for task in watch:
        if task in done:
            task.result()  # raises what the task died of
            raise RuntimeError(f"{task.get_name()} stopped unexpectedly")
    return False


async def cancel(*tasks: asyncio.Task[Any]) -> list[BaseException]:
    """Cancel ``tasks``, wait for them, and return the errors other than cancellation."""
    for task in tasks:
        task.cancel()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    return [r for r in results if isinstance(r, BaseException) and not isinstance(r, asyncio.CancelledError)]


def split_client(store: str | None, kubeconfig: Path | None, *, clock: Clock,
                 component: str) -> tuple[Client, Any]:
    """The client of a split component and what to close afterwards (see the module notes)."""
    if (store is None) == (kubeconfig is None):
        fail(f"{component}: pass exactly one of --store etcd://… (a shared store) or --kubeconfig FILE "
             "(an API server)", 2)
    if kubeconfig is not None:
        if not kubeconfig.is_file():
            fail(f"--kubeconfig {kubeconfig}: no such file", 2)
        try:
            rest = RestClient.from_kubeconfig(kubeconfig, clock=clock,
                                              field_manager=f"fleetkeeper-{component}")
        except (ValueError, KeyError, OSError) as exc:
            fail(f"--kubeconfig {kubeconfig}: {exc}", 2)
        return rest, rest
    assert store is not None
    scheme = store.partition("://")[0].lower()
    if scheme == "sqlite":
        fail(f"--store {store}: an embedded SQLite store is written by one process only (the one serving "
             "the API: `fleetkeeper up` or `fleetkeeper apiserver`); run the "
             f"{component} with --kubeconfig to go through that API server, or use a shared etcd:// store", 2)
    if scheme == "memory":
        fail(f"--store {store}: a memory:// store lives inside one process; use `fleetkeeper up`, "
             f"or run the {component} with --kubeconfig or a shared etcd:// store", 2)
    from fleetkeeper.store import open_store

    try:
        opened = open_store(store, clock=clock)
    except (ValueError, ImportError, OSError) as exc:
        fail(f"--store {store}: {exc}", 2)
    return LocalClient(opened, admission=admission.admit, clock=clock), opened


async def _close(resource: Any) -> None:
    closer = getattr(resource, "aclose", None) or getattr(resource, "close", None)
    if closer is not None:
        result = closer()
        if asyncio.iscoroutine(result):
            await result


class Component(Protocol):
    """What a split component runs: a manager or a control plane."""

    async def run(self) -> None: ...

    async def wait_started(self) -> None: ...


def _run_until_signal(build: Callable[[], tuple[Component, Any]], *, label: str) -> None:
    """Run the component ``build()`` returns (with what to close after) until SIGINT/SIGTERM."""

    async def main() -> None:
        stop = asyncio.Event()
        with stop_on_signals(stop):
            try:
                runnable, resource = build()
            except ValueError as exc:
                fail(options_error(exc), 2)
            task = asyncio.get_running_loop().create_task(runnable.run(), name=label)
            try:
                if await step(runnable.wait_started(), watch=[task], stop=stop):
                    typer.echo(f"{label} running (Ctrl-C stops)")
                await step(stop.wait(), watch=[task], stop=stop)
            finally:
                problems = await cancel(task)
                await _close(resource)
            if problems:
                raise problems[0]
        typer.echo(f"{label} stopped")

    asyncio.run(main())


# --------------------------------------------------------------------------- commands

StateDir = Annotated[Path | None, typer.Option(
    help="keep PKI, tokens, kubeconfig (and the default sqlite store) here "
         "[default: $XDG_STATE_HOME/fleetkeeper or ~/.local/state/fleetkeeper]", show_default=False)]
LogLevel = Annotated[str, typer.Option(help="debug, info, warning or error (stderr)")]
LogFormat = Annotated[str, typer.Option(help="text, or json: one JSON object per line (stderr)")]
#: at most this many ``--tls-san`` names
MAX_TLS_SANS = 32
_LABEL = re.compile(r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?")


def host_problem(value: str) -> str | None:
    """Why ``value`` cannot go into a serving certificate (None: an IP address or a DNS name)."""
    try:
        ipaddress.ip_address(value)
        return None
    except ValueError:
        pass
    labels = value.removeprefix("*.").split(".")
    if len(value) > 253 or not all(_LABEL.fullmatch(label) for label in labels):
        return ("must be an IP address or a DNS name (at most 253 characters, labels of letters, digits "
                "and '-')")
    return None


def _check_advertise(value: str | None) -> str | None:
    problem = host_problem(value) if value else None
    if value and problem:
        raise typer.BadParameter(f"{value[:80]!r}: {problem}")
    return value


def _check_tls_sans(values: list[str] | None) -> list[str] | None:
    if values and len(values) > MAX_TLS_SANS:
        raise typer.BadParameter(f"at most {MAX_TLS_SANS} names")
    for value in values or ():
        problem = host_problem(value)
        if problem:
            raise typer.BadParameter(f"{value[:80]!r}: {problem}")
    return values


AdvertiseAddress = Annotated[str | None, typer.Option(
    help="the address clients are given (kubeconfigs, the serving certificate) [default: --host, "
         "127.0.0.1 for 0.0.0.0]", show_default=False, callback=_check_advertise)]
TlsSan = Annotated[list[str] | None, typer.Option(
    "--tls-san", metavar="NAME", help="another name or address the serving certificate must cover, e.g. a "
    "load balancer's (repeatable)", show_default=False, callback=_check_tls_sans)]
SplitStore = Annotated[str | None, typer.Option(
    "--store", help="a shared store URL (etcd://host:port); sqlite:// and memory:// belong to one process",
    show_default=False)]
SplitKubeconfig = Annotated[Path | None, typer.Option(
    help="reach the API server with this kubeconfig instead of opening a store", show_default=False)]


def configure_logs(level: str, clock: Clock, log_format: str = "text") -> None:
    """Logs to stderr at ``level`` in ``log_format``; a bad value is a usage error naming its flag."""
    try:
        logs.configure(level=level, clock=clock, fmt=log_format)
    except ValueError as exc:
        flag = "--log-format" if log_format not in logs.FORMATS else "--log-level"
        raise typer.BadParameter(str(exc), param_hint=flag) from None


@with_options(exclude=("cluster_lease_duration", "cluster_lease_renew_interval_fraction"))
def controller_manager(
    store: SplitStore = None,
    kubeconfig: SplitKubeconfig = None,
    log_level: LogLevel = "warning",
    log_format: LogFormat = "text",
    *,
    options: Options,
) -> None:
    """Run every controller (not the scheduler) against a shared store or an API server."""
    from fleetkeeper.cmd.app import SPECS, ControlPlane

    clock = SystemClock()
    configure_logs(log_level, clock, log_format)

    def build() -> tuple[Component, Any]:
        client, resource = split_client(store, kubeconfig, clock=clock, component="controller-manager")
        members, credentials = member_pool(clock)
        plane = ControlPlane(store=None, client_override=client, clock=clock, members=members,
                             options=options, identity=identity("controller-manager"),
                             specs=tuple(spec for spec in SPECS if spec is not scheduler_controller.SPEC))
        credentials.client = plane.client
        return plane, resource

    _run_until_signal(build, label="controller-manager")


SCHEDULER_FIELDS = ("scheduler_name", "enable_empty_workload_propagation", "concurrent_syncs", "leader_elect",
                    "leader_elect_lease_duration", "leader_elect_renew_deadline", "leader_elect_retry_period")


@with_options(only=SCHEDULER_FIELDS)
def scheduler(
    store: SplitStore = None,
    kubeconfig: SplitKubeconfig = None,
    log_level: LogLevel = "warning",
    log_format: LogFormat = "text",
    *,
    options: Options,
) -> None:
    """Run the scheduler alone against a shared store or an API server."""
    clock = SystemClock()
    configure_logs(log_level, clock, log_format)

    def build() -> tuple[Component, Any]:
        client, resource = split_client(store, kubeconfig, clock=clock, component="scheduler")
        elector = None
        if options.leader_elect:
            config = LeaderElectionConfig(
                SCHEDULER_LEASE, identity("scheduler"), lease_duration=options.leader_elect_lease_duration,
                renew_deadline=options.leader_elect_renew_deadline,
                retry_period=options.leader_elect_retry_period)
            elector = LeaderElector(client, config, clock=clock)
        manager = Manager(client, clock=clock, elector=elector)
        manager.add(scheduler_controller.new_controller(
            client, manager.informers, clock=clock, scheduler_name=options.scheduler_name,
            workers=options.concurrent_syncs))
        return manager, resource

    _run_until_signal(build, label="scheduler")


__all__ = [
    "DEFAULT_PORT", "PRIVATE_DIR", "PRIVATE_FILE", "Component", "StateLock", "advertised_url", "bind_or_fail",
    "cancel", "configure_logs", "controller_manager", "fail", "identity", "make_private", "options_error",
    "scheduler", "step", "stop_on_signals", "store_url_or_default",
]
