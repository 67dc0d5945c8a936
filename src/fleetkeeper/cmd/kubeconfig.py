"""``fleetkeeper kubeconfig``: a kubeconfig for the plane, for any replica or a load balancer.

Replicas sharing a store share one identity (:mod:`fleetkeeper.apiserver.identity`), so
one kubeconfig reaches them all: this command reads the plane's CA and admin token from
their Secrets, through the API with the admin kubeconfig it is given (any replica's), and
prints a kubeconfig with one context per ``--server`` (default: the server it asked). The
names default to ``fleetkeeper-`` and the first hex digits of the CA's fingerprint — the
same for every replica of a plane, different for another plane, so kubeconfigs of two
planes merge (``KUBECONFIG=a:b kubectl config view --flatten``) without one hiding the
other; ``--context-name`` picks another. A server whose host the serving certificate does
not cover is printed all the same, with a warning saying which ``--tls-san`` it needs.

``--cluster NAME`` prints a kubeconfig for the member cluster NAME instead: its server is
the plane's cluster proxy for that member (``…/apis/cluster.karmada.io/v1alpha1/clusters/NAME/proxy``),
so kubectl reads and writes the member with the plane's CA and admin token, as Karmada's
``karmadactl`` does through the aggregated API server.

The output holds the admin token: redirect it to a file only you can read
(``(umask 077; fleetkeeper kubeconfig > plane.kubeconfig)``).
"""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated
from urllib.parse import urlsplit

import typer
import yaml

from fleetkeeper import errors
from fleetkeeper.api.builtin import Secret
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.apiserver import identity
from fleetkeeper.apiserver.certs import certificate_hosts
from fleetkeeper.apiserver.kubeconfig import plane_kubeconfig
from fleetkeeper.cli import connect

#: at most this many ``--server`` flags
MAX_SERVERS = 16
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,99}")
MEMBER = re.compile(r"[a-z0-9]([-a-z0-9.]{0,61}[a-z0-9])?")
PROXY = "/apis/cluster.karmada.io/v1alpha1/clusters/{}/proxy"


def _check_context_name(value: str | None) -> str | None:
    if value is not None and not NAME.fullmatch(value):
        raise typer.BadParameter(f"{value[:120]!r}: must be 1-100 letters, digits, '.', '_', '@' or '-', "
                                 "starting with a letter or digit")
    return value


#: ``--context-name`` of ``up`` and ``apiserver``: the names in the kubeconfig they write
ContextName = Annotated[str | None, typer.Option(
    metavar="NAME", help="name of the admin kubeconfig's context and cluster; its user is NAME-admin "
    "[default: fleetkeeper-<the CA's fingerprint>]", show_default=False, callback=_check_context_name)]


def server_problem(url: str) -> str | None:
    """Why ``url`` cannot be a kubeconfig's server (None when it can)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        return str(exc)
    if parts.scheme != "https" or not parts.hostname:
        return "must be https://HOST[:PORT] (the API server serves HTTPS only)"
    if parts.path not in ("", "/") or parts.query or parts.fragment or parts.username:
        return "must be https://HOST[:PORT], without a path, query or user"
    return None if port is None or port > 0 else "the port must be 1-65535"


def _covered(host: str, names: list[str]) -> bool:
    try:
        host = str(ipaddress.ip_address(host))
    except ValueError:
        host = host.lower()
    return host in names


async def _plane(session: connect.Session) -> tuple[bytes, bytes, str]:
    """The CA certificate, the serving certificate and the admin token, from their Secrets."""
    found: list[bytes] = []
    for name, key in ((identity.CA_SECRET, "tls.crt"), (identity.SERVING_SECRET, "tls.crt"),
                      (identity.ADMIN_SECRET, "token")):
        try:
            obj = await session.client.get(Secret, name, identity.NAMESPACE)
        except errors.NotFound:
            raise connect.Failed(f"secret {identity.NAMESPACE}/{name} not found: is this a fleetkeeper plane "
                                 "(`fleetkeeper up` or `fleetkeeper apiserver`)?") from None
        value = identity.secret_value(obj.to_dict(), key)
        if not value:
            raise connect.Failed(f"secret {identity.NAMESPACE}/{name} holds no {key}")
        found.append(value)
    return found[0], found[1], found[2].decode()


async def _member(session: connect.Session, name: str) -> None:
    """Fail unless ``name`` is a Push member the plane can proxy to."""
    try:
        found = await session.client.get(Cluster, name)
    except errors.NotFound:
        raise connect.Failed(f'cluster "{name}" not found (fleetkeeper get clusters lists them)') from None
    if found.spec.sync_mode == "Pull":
        raise connect.Failed(f'cluster "{name}" is in Pull mode: the plane does not reach its API (its agent '
                             "does), so it cannot proxy to it")


def kubeconfig(
    server: Annotated[list[str] | None, typer.Option(
        "--server", metavar="URL", help="a replica's or a load balancer's https://HOST:PORT (repeatable: one "
        "context each) [default: the server of --kubeconfig]", show_default=False)] = None,
    context_name: Annotated[str | None, typer.Option(
        metavar="NAME", help="name of the context and cluster (NAME-1 … for several servers), the user is "
        "NAME-admin [default: fleetkeeper-<the CA's fingerprint>]", show_default=False,
        callback=_check_context_name)] = None,
    cluster: Annotated[str | None, typer.Option(
        "--cluster", metavar="NAME", help="a member cluster: the kubeconfig reaches it through the plane's "
        "cluster proxy [default name: <the plane's>-NAME]", show_default=False)] = None,
    kubeconfig: connect.KubeconfigOption = None,
) -> None:
    """Print a kubeconfig for the plane (any replica, or a load balancer in front), or for one member."""
    if cluster is not None and not MEMBER.fullmatch(cluster):
        raise typer.BadParameter(f"{cluster[:120]!r}: not a cluster name (lowercase letters, digits, '-' "
                                 "and '.', at most 63)", param_hint="--cluster")
    servers = list(dict.fromkeys(server or []))
    if len(servers) > MAX_SERVERS:
        raise typer.BadParameter(f"at most {MAX_SERVERS} servers", param_hint="--server")
    for url in servers:
        problem = server_problem(url)
        if problem:
            raise typer.BadParameter(f"{url!r}: {problem}", param_hint="--server")

    async def read(session: connect.Session) -> tuple[bytes, bytes, str, str]:
        if cluster is not None:
            await _member(session, cluster)
        return (*await _plane(session), session.server)

    ca, serving, token, asked = connect.run(kubeconfig, read)
    servers = servers or [asked]
    covered = certificate_hosts(serving)
    for url in servers:
        host = urlsplit(url).hostname or ""
        if not _covered(host, covered):
            typer.echo(f"warning: the serving certificate does not cover {host}: start the replicas with "
                       f"--tls-san {host}, or clients will refuse {url}", err=True)
    name = context_name or identity.plane_name(ca) + (f"-{cluster}" if cluster else "")
    if cluster is not None:
        servers = [url.rstrip("/") + PROXY.format(cluster) for url in servers]
    doc = plane_kubeconfig(servers, ca, token, name=name)
    typer.echo(yaml.safe_dump(doc, sort_keys=False), nl=False)


__all__ = ["ContextName", "kubeconfig", "server_problem"]
