"""``fleetkeeper traffic``: a load balancer in front of the fleet, following MultiClusterIngress.

Runs one traffic provider (:mod:`fleetkeeper.traffic`) against a control plane: it
watches MultiClusterIngresses, their Service bindings and the Service templates through
the API server (``--kubeconfig``, the ``fleetkeeper up`` one by default), and routes each
request to a cluster that holds a backend and is not in ``trafficBlockClusters``::

    fleetkeeper traffic --listen 127.0.0.1:8080                       # built-in proxy
    fleetkeeper traffic --listen 127.0.0.1:8080 --provider haproxy    # drives HAProxy

Once the load balancer accepts connections it prints one line,
``fleetkeeper traffic: routing on http://HOST:PORT (provider NAME)`` — with
``--listen HOST:0`` (built-in provider only) the port chosen is in it. Ctrl-C or SIGTERM
stops it (and the HAProxy it started).
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
from pathlib import Path
from typing import Annotated

import typer

from fleetkeeper.cli import connect, paths
from fleetkeeper.client.rest import RestClient
from fleetkeeper.clock import SystemClock
from fleetkeeper.cmd import components as parts
from fleetkeeper.runtime.manager import Manager
from fleetkeeper.traffic import sync
from fleetkeeper.traffic.builtin import BuiltinProxy
from fleetkeeper.traffic.haproxy import HAProxyProvider
from fleetkeeper.traffic.provider import Provider

PROVIDERS = ("builtin", "haproxy")
TEMP_PREFIX = "fleetkeeper-traffic-"


def _listen(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise typer.BadParameter(f"expected HOST:PORT, got {value!r}", param_hint="--listen")
    return host or "127.0.0.1", int(port)


def _provider(name: str, host: str, port: int, work_dir: Path | None, binary: str) -> Provider:
    if name == "builtin":
        return BuiltinProxy(host, port)
    assert work_dir is not None
    return HAProxyProvider(host, port, workdir=work_dir, binary=binary)


async def _serve(provider: Provider, client: RestClient, host: str, port: int) -> None:
    clock = SystemClock()
    manager = Manager(client, clock=clock)
    sync.setup(manager, provider)
    stop = asyncio.Event()
    with parts.stop_on_signals(stop):
        task = asyncio.get_running_loop().create_task(manager.run(), name="traffic")
        try:
            if await parts.step(provider.wait_ready(), watch=[task], stop=stop):
                shown = provider.address[1] if isinstance(provider, BuiltinProxy) else port
                typer.echo(f"fleetkeeper traffic: routing on http://{host}:{shown} "
                           f"(provider {provider.name})")
                await parts.step(stop.wait(), watch=[task], stop=stop)
        finally:
            problems = await parts.cancel(task)
            await client.aclose()
        if problems:
            raise problems[0]


def traffic(
    listen: Annotated[str, typer.Option(help="HOST:PORT to serve on (PORT 0: any free port, builtin only)")]
    = "127.0.0.1:8080",
    provider: Annotated[str, typer.Option(help="builtin (an asyncio reverse proxy) or haproxy")] = "builtin",
    kubeconfig: connect.KubeconfigOption = None,
    context: Annotated[str | None, typer.Option(help="context in the kubeconfig")] = None,
    work_dir: Annotated[Path | None, typer.Option(help="haproxy: where its configuration and socket live "
                                                       "[default: a temporary directory]",
                                                  show_default=False)] = None,
    haproxy_binary: Annotated[str, typer.Option(help="haproxy: the executable")] = "haproxy",
    log_level: Annotated[str, typer.Option(help="debug, info, warning or error (stderr)")] = "warning",
    log_format: parts.LogFormat = "text",
) -> None:
    """Load-balance MultiClusterIngress traffic over the member clusters."""
    parts.configure_logs(log_level, SystemClock(), log_format)
    if provider not in PROVIDERS:
        raise typer.BadParameter(f"expected one of {', '.join(PROVIDERS)}", param_hint="--provider")
    host, port = _listen(listen)
    if provider == "haproxy" and port == 0:
        raise typer.BadParameter("the haproxy provider needs a fixed port", param_hint="--listen")
    try:
        path = paths.resolve_kubeconfig(kubeconfig)
        client = RestClient.from_kubeconfig(path, context=context, field_manager="fleetkeeper-traffic")
    except (paths.NoKubeconfig, OSError, ValueError, KeyError) as exc:
        connect.die(f"kubeconfig: {exc}", 2)
    with contextlib.ExitStack() as stack:
        directory = work_dir
        if directory is None and provider == "haproxy":
            directory = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix=TEMP_PREFIX)))
        chosen = _provider(provider, host, port, directory, haproxy_binary)
        asyncio.run(_serve(chosen, client, host, port))


__all__ = ["PROVIDERS", "traffic"]
