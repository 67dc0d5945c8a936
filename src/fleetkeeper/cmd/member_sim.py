"""``fleetkeeper member-sim``: one simulated member cluster behind a real Kubernetes API.

Serves a :class:`~fleetkeeper.members.simulated.SimulatedCluster` (on real time) over
HTTPS with the plane's own API server, Kubernetes' kinds only (:mod:`~fleetkeeper.cmd.member_api`),
so the control plane — or kubectl, or any client — reaches it the way it reaches a real
cluster: through a kubeconfig and the ``kubernetes`` member backend::

    fleetkeeper member-sim --port 6443 --name member1 --nodes 3
    kubectl --kubeconfig ~/.local/state/fleetkeeper/member-sim/member1/kubeconfig get nodes

Files, all in ``--tls-dir`` (default ``<state dir>/member-sim/<name>``): the CA and
serving certificate (made on first start, reused after), the bearer token
(``--token-file``, default ``token``: read when it exists, else a new one is written,
mode 0600) and the kubeconfig (``--kubeconfig``, default ``kubeconfig``), written once
the server accepts connections. Then one line is printed::

    fleetkeeper member-sim: member1 serving on https://127.0.0.1:6443 (admin https://127.0.0.1:41234), …

The *admin* address (``--admin-port``, default any free port) takes fault injection
(:mod:`~fleetkeeper.cmd.member_admin`) while the member's own address, a relay
(:mod:`~fleetkeeper.cmd.member_wire`), refuses or swallows connections — ``POST /admin/state``
``{"state": "down"|"blackhole"|"unhealthy"|"up"}``, ``POST /admin/nodes``
``{"count": N}``, ``POST /admin/compact`` (resuming watches get 410) — with the same
token. The cluster lives in memory: a restart comes back empty. Ctrl-C or SIGTERM
stops it.

Like a real cluster it has only ``default``, ``kube-system``, ``kube-public`` and
``kube-node-lease`` at first, and refuses an object of any other namespace until that
namespace is created (the control plane's namespace sync creates the ones it propagates).
"""

from __future__ import annotations

import asyncio
import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer
import uvicorn

from fleetkeeper.apiserver.certs import TLSFiles, ensure_certificates
from fleetkeeper.apiserver.kubeconfig import write_kubeconfig
from fleetkeeper.apiserver.serve import bind
from fleetkeeper.cli import paths
from fleetkeeper.clock import SystemClock
from fleetkeeper.cmd import components as parts
from fleetkeeper.cmd.member_admin import AdminApi, MemberSite
from fleetkeeper.cmd.member_api import member_app
from fleetkeeper.cmd.member_wire import FrontDoor
from fleetkeeper.members.simulated import SimulatedCluster

#: bound on the 10 ms polls waiting for the server to start (30 s)
STARTUP_POLLS = 3000


@dataclass(frozen=True)
class Setup:
    """What one member-sim run serves, and where its files go."""

    name: str
    host: str
    port: int
    admin_port: int
    nodes: int
    pod_startup: float
    kubernetes_version: str
    tls: TLSFiles
    token: str
    kubeconfig: Path


def _url(host: str, port: int) -> str:
    return f"https://[{host}]:{port}" if ":" in host else f"https://{host}:{port}"


def read_or_create_token(path: Path) -> str:
    """The token in ``path``, or a new one written there (mode 0600)."""
    if path.exists():
        token = path.read_text().strip()
        if not token:
            parts.fail(f"--token-file {path}: the file is empty", 2)
        return token
    token = secrets.token_urlsafe(32)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(token + "\n")
    return token


async def serve(setup: Setup) -> None:
    """Serve the member until SIGINT/SIGTERM (see the module notes)."""
    cluster = SimulatedCluster(setup.name, clock=SystemClock(), nodes=setup.nodes,
                               pod_startup=setup.pod_startup, kubernetes_version=setup.kubernetes_version,
                               create_namespaces=False)
    inner, admin = bind("127.0.0.1", 0), bind(setup.host, setup.admin_port)
    door = FrontDoor(setup.host, setup.port, inner.getsockname()[:2])
    member = member_app(cluster, token=setup.token)
    app = MemberSite(member.app, AdminApi(cluster, member.store, token=setup.token, door=door),
                     admin_port=admin.getsockname()[1])
    server = uvicorn.Server(uvicorn.Config(
        app, lifespan="off", access_log=False, log_level="warning", ssl_certfile=str(setup.tls.cert),
        ssl_keyfile=str(setup.tls.key), timeout_graceful_shutdown=5, server_header=False))
    stop = asyncio.Event()
    with parts.stop_on_signals(stop):
        task = asyncio.get_running_loop().create_task(server.serve(sockets=[inner, admin]), name="member-api")
        try:
            if await parts.step(_started(server), watch=[task], stop=stop):
                await door.start()
                url = _url(setup.host, door.port)
                write_kubeconfig(setup.kubeconfig, url, setup.tls.ca_pem(), setup.token, name=setup.name,
                                 user=f"{setup.name}-admin")
                admin_url = _url(setup.host, admin.getsockname()[1])
                typer.echo(f"fleetkeeper member-sim: {setup.name} serving on {url} (admin {admin_url}), "
                           f"kubeconfig {setup.kubeconfig}")
                await parts.step(stop.wait(), watch=[task], stop=stop)
        finally:
            await door.close()
            await member.close()
            await cluster.close()
            server.should_exit = True
            done, _ = await asyncio.wait([task], timeout=10)
            problems = [] if done else await parts.cancel(task)
    if task.done() and not task.cancelled() and task.exception() is not None:
        raise RuntimeError("the member's API server failed") from task.exception()
    if problems:
        raise problems[0]
    typer.echo(f"fleetkeeper member-sim: {setup.name} stopped")


async def _started(server: uvicorn.Server) -> None:
    for _ in range(STARTUP_POLLS):
        if server.started:
            return
        await asyncio.sleep(0.01)
    raise TimeoutError("the member's API server did not start within 30s")


def member_sim(
    port: Annotated[int, typer.Option(help="port of the member's Kubernetes API (0: any free port)")],
    host: Annotated[str, typer.Option(help="address to listen on")] = "127.0.0.1",
    name: Annotated[str, typer.Option(help="the cluster's name (node names and the kubeconfig context)")]
    = "member1",
    nodes: Annotated[int, typer.Option(help="number of (Ready) nodes", min=0)] = 3,
    tls_dir: Annotated[Path | None, typer.Option(
        help="where the CA, certificate, token and kubeconfig live [default: <state dir>/member-sim/NAME]",
        show_default=False)] = None,
    token_file: Annotated[Path | None, typer.Option(
        help="bearer token file: read if it exists, else created [default: TLS_DIR/token]",
        show_default=False)] = None,
    kubeconfig: Annotated[Path | None, typer.Option(
        help="where to write the kubeconfig [default: TLS_DIR/kubeconfig]", show_default=False)] = None,
    admin_port: Annotated[int, typer.Option(
        help="port of the admin (fault injection) API (0: any free port)")] = 0,
    pod_startup: Annotated[float, typer.Option(help="seconds from a pod's placement to Ready", min=0)] = 2.0,
    kubernetes_version: Annotated[str, typer.Option(help="the version the cluster reports")] = "v1.31.0",
    log_level: parts.LogLevel = "warning",
    log_format: parts.LogFormat = "text",
) -> None:
    """Serve one simulated member cluster as a Kubernetes API over HTTPS."""
    parts.configure_logs(log_level, SystemClock(), log_format)
    if not 0 <= port <= 65535 or not 0 <= admin_port <= 65535:
        parts.fail("--port and --admin-port must be between 0 and 65535", 2)
    if not kubernetes_version.startswith("v"):
        parts.fail(f"--kubernetes-version {kubernetes_version!r}: expected a version like v1.31.0", 2)
    directory = tls_dir or paths.default_state_dir() / "member-sim" / name
    try:
        tls = ensure_certificates(directory / "pki", clock=SystemClock(), hosts=(host,))
        token = read_or_create_token(token_file or directory / "token")
    except (OSError, ValueError) as exc:
        parts.fail(f"--tls-dir {directory}: {exc}", 2)
    setup = Setup(name, host, port, admin_port, nodes, pod_startup, kubernetes_version, tls, token,
                  kubeconfig or directory / "kubeconfig")
    try:
        asyncio.run(serve(setup))
    except OSError as exc:
        parts.fail(f"cannot serve on {host}:{port} (admin port {admin_port}): {exc}", 1)


if __name__ == "__main__":
    typer.run(member_sim)


__all__ = ["Setup", "member_sim", "read_or_create_token", "serve"]
