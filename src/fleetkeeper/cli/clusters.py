"""Member clusters from the command line: join, unjoin, cordon, uncordon, taint.

``join NAME --member URL`` registers a Cluster: Push mode (the default) with
``apiEndpoint: URL`` — the control plane then probes it and applies its Works — or
``--sync-mode Pull`` for a cluster whose agent (``fleetkeeper agent``) does that.
``unjoin NAME`` deletes it and, by default, waits until the cluster controller has
cleaned up its execution namespace and released it.

``cordon NAME`` keeps new workloads off a cluster without touching what runs there:
it adds the taint ``cluster.karmada.io/unschedulable:NoSchedule``, as ``karmadactl
cordon`` does; ``uncordon`` removes it. ``taint NAME key[=value]:Effect`` adds a taint
(effects ``NoSchedule`` and ``NoExecute`` — the only ones a Cluster takes) and
``key[:Effect]-`` removes one; ``taint clusters NAME… key=value:Effect`` is the same in
karmadactl's words. As in ``kubectl taint``, adding a key/effect the cluster already has
needs ``--overwrite``, and the messages and the result (``tainted``, ``untainted``,
``modified``) are kubectl's. A NoExecute taint makes the control plane evict workloads
that do not tolerate it — the same failover a failing cluster gets.

Taint edits are read-modify-write with the object's resourceVersion, retried on a
conflict, so a controller writing taints at the same moment (cluster controller,
taint policies) is never overwritten. Each edit goes on the failover timeline (reason
``Manual``), so ``describe`` can tell a hand-made taint from a controller's. The pure
parts — parsing taint arguments and applying the edits — are in :mod:`fleetkeeper.cli.taints`.
"""

from __future__ import annotations

import base64
import contextlib
import secrets
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit

import typer

from fleetkeeper import errors
from fleetkeeper.api import constants, validation
from fleetkeeper.api import timeline as tl
from fleetkeeper.api.builtin import Secret
from fleetkeeper.api.cluster import Cluster, ClusterSpec, LocalSecretReference
from fleetkeeper.api.core import Namespace
from fleetkeeper.api.meta import ObjectMeta
from fleetkeeper.cli import connect
from fleetkeeper.cli.apply import wait_gone
from fleetkeeper.cli.taints import (
    CLUSTER_TYPES,
    EFFECTS,
    TaintEdit,
    edit_taints,
    parse_taint,
    parse_taint_args,
    taint_operation,
)
from fleetkeeper.client.rest import read_kubeconfig

UNSCHEDULABLE = constants.TAINT_CLUSTER_UNSCHEDULABLE
WRITE_ATTEMPTS = 5


# --------------------------------------------------------------------------- pure rules


def cluster_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a cluster (DNS-1123 label, at most 48 characters), or None."""
    if len(name) > constants.CLUSTER_NAME_MAX_LENGTH:
        return f"must be no more than {constants.CLUSTER_NAME_MAX_LENGTH} characters"
    problems = validation.dns1123_label(name) if name else ["must not be empty"]
    return "; ".join(problems) or None


# --------------------------------------------------------------------------- writes


async def update_taints(session: connect.Session, name: str, edits: list[TaintEdit], *,
                        overwrite: bool) -> list[str]:
    """Apply ``edits`` to cluster ``name`` with optimistic concurrency; what changed."""
    for _ in range(WRITE_ATTEMPTS):
        cluster = await session.client.get(Cluster, name)
        try:
            taints, changes = edit_taints(list(cluster.spec.taints or []), edits, overwrite=overwrite,
                                          cluster=name)
        except ValueError as exc:
            raise connect.Failed(str(exc)) from None
        if not changes:
            return []
        cluster.spec.taints = taints or None
        try:
            written = await session.client.update(cluster)
        except errors.Conflict:
            continue
        await record(session, written, changes)
        return changes
    raise connect.Failed(f"cluster {name!r} kept changing; tried {WRITE_ATTEMPTS} times, try again")


async def record(session: connect.Session, cluster: Cluster, changes: list[str]) -> None:
    """Put taint edits made by hand on the failover timeline (best effort: a refusal is ignored)."""
    now = session.clock.now()
    subject = tl.Subject(api_version=cluster.api_version, kind=cluster.kind, name=cluster.name)
    for index, change in enumerate(changes):
        verb, _, taint = change.partition(" ")
        action = tl.TAINT_ADDED if verb == "added" else tl.TAINT_REMOVED
        entry = tl.TimelineEntry(
            metadata=ObjectMeta(name=f"tl.{int(now.timestamp() * 1_000_000):x}{secrets.token_hex(3)}{index}"),
            time=now, subject=subject, action=action, reason="Manual",
            message=f"taint {taint} {verb} by hand (fleetkeeper CLI)", component=connect.FIELD_MANAGER)
        try:
            await session.client.create(entry)
        except errors.ApiError:
            return


def _taint_command(name: str, edits: list[TaintEdit], kubeconfig: connect.KubeconfigOption, *, done: str,
                   already: str, overwrite: bool = False) -> None:
    async def action(session: connect.Session) -> None:
        changes = await update_taints(session, name, edits, overwrite=overwrite)
        summary = f"{done} ({', '.join(changes)})" if changes else already
        typer.echo(f"cluster/{name} {summary}")

    connect.run(kubeconfig, action)


# --------------------------------------------------------------------------- commands

NameArg = Annotated[str, typer.Argument(help="cluster name", show_default=False)]


def member_secret(name: str, path: Path, context: str | None) -> tuple[str, dict[str, Any]]:
    """The API endpoint of a real member and the Secret manifest holding its credentials
    (Karmada's keys ``token`` and ``caBundle``), read from its kubeconfig."""
    try:
        creds = read_kubeconfig(path, context=context)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise typer.BadParameter(f"{path}: cannot use it: {exc}", param_hint="--cluster-kubeconfig") from None
    if not creds.server.startswith("https://"):
        raise typer.BadParameter(f"{path}: the member's server must be https://, got {creds.server!r}",
                                 param_hint="--cluster-kubeconfig")
    if not creds.token:
        raise typer.BadParameter(f"{path}: the context has no bearer token (client certificates are not "
                                 "supported yet)", param_hint="--cluster-kubeconfig")
    data = {"token": base64.b64encode(creds.token.encode()).decode()}
    if creds.ca_pem:
        data["caBundle"] = base64.b64encode(creds.ca_pem).decode()
    secret = {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
              "metadata": {"name": name, "namespace": constants.LEASE_NAMESPACE}, "data": data,
              "insecure": creds.insecure}
    return creds.server, secret


async def _store_secret(session: connect.Session, secret: dict[str, Any]) -> None:
    """Create or replace the member's Secret, creating its namespace first if it is missing
    (as ``karmadactl join`` does)."""
    obj = Secret.from_dict(secret)
    with contextlib.suppress(errors.AlreadyExists):
        await session.client.create(Namespace(metadata=ObjectMeta(name=obj.namespace)))
    try:
        await session.client.create(obj)
    except errors.AlreadyExists:
        current = await session.client.get(Secret, obj.name, obj.namespace)
        obj.metadata = current.metadata
        await session.client.update(obj)


def join(
    name: NameArg,
    member: Annotated[str | None, typer.Option(
        help="how to reach the member: simulated://NAME (required for Push)", show_default=False)] = None,
    sync_mode: Annotated[str, typer.Option(
        help="Push (the control plane reaches the member) or Pull (an agent does)")] = "Push",
    region: Annotated[str | None, typer.Option(help="region, for spread constraints",
                                               show_default=False)] = None,
    zone: Annotated[str | None, typer.Option(help="zone", show_default=False)] = None,
    provider: Annotated[str | None, typer.Option(help="provider", show_default=False)] = None,
    cluster_kubeconfig: Annotated[Path | None, typer.Option(
        help="a real member: its kubeconfig (server, CA and token are stored as the cluster's Secret)",
        show_default=False)] = None,
    cluster_context: Annotated[str | None, typer.Option(
        help="the context of --cluster-kubeconfig [default: its current one]", show_default=False)] = None,
    kubeconfig: connect.KubeconfigOption = None,
) -> None:
    """Register a member cluster with the control plane."""
    problem = cluster_name_problem(name)
    if problem:
        raise typer.BadParameter(f"{name!r}: {problem}", param_hint="NAME")
    if sync_mode not in ("Push", "Pull"):
        raise typer.BadParameter(f"must be Push or Pull, got {sync_mode!r}", param_hint="--sync-mode")
    secret = None
    if cluster_kubeconfig is not None:
        if member is not None:
            raise typer.BadParameter("give either --member or --cluster-kubeconfig", param_hint="--member")
        member, secret = member_secret(name, cluster_kubeconfig, cluster_context)
    if member is None and sync_mode == "Push":
        raise typer.BadParameter("a Push cluster needs the URL the control plane reaches it at "
                                 "(e.g. simulated://NAME) or its --cluster-kubeconfig", param_hint="--member")
    if member is not None:
        parts = urlsplit(member)
        if not parts.scheme or not (parts.netloc or parts.path.strip("/")):
            raise typer.BadParameter(f"{member!r}: expected a URL such as simulated://{name}",
                                     param_hint="--member")
    spec = ClusterSpec.from_dict({"syncMode": sync_mode, "apiEndpoint": member, "region": region,
                                  "zones": [zone] if zone else None, "provider": provider})
    if secret is not None:
        spec.secret_ref = LocalSecretReference(namespace=constants.LEASE_NAMESPACE, name=name)
        spec.insecure_skip_tls_verification = bool(secret.pop("insecure"))

    async def action(session: connect.Session) -> None:
        try:
            if secret is not None:
                await _store_secret(session, secret)
            await session.client.create(Cluster(metadata=ObjectMeta(name=name), spec=spec))
        except errors.AlreadyExists:
            raise connect.Failed(f"cluster {name!r} is already joined (fleetkeeper unjoin {name} first "
                                 "to join it again)") from None
        typer.echo(f"cluster/{name} joined ({sync_mode}{', ' + member if member else ''})")
        if sync_mode == "Pull":
            typer.echo(f"start its agent: fleetkeeper token create-agent {name}, then fleetkeeper agent "
                       f"--kubeconfig STATE_DIR/agent-{name}.kubeconfig --cluster-name {name} "
                       f"--member simulated://{name}")

    connect.run(kubeconfig, action)


def unjoin(
    name: NameArg,
    wait: Annotated[bool, typer.Option(help="wait until the cluster is gone")] = True,
    timeout: Annotated[str, typer.Option(help="how long --wait waits")] = "2m",
    kubeconfig: connect.KubeconfigOption = None,
) -> None:
    """Remove a member cluster (its Works are cleaned up first)."""
    limit = connect.duration(timeout, "--timeout")

    async def action(session: connect.Session) -> None:
        await session.client.delete(Cluster, name)
        if wait:
            await wait_gone(session, Cluster, name, "", limit)
            typer.echo(f"cluster/{name} unjoined")
        else:
            typer.echo(f"cluster/{name} unjoining (the cluster controller cleans up, then removes it)")

    connect.run(kubeconfig, action)


def cordon(name: NameArg, kubeconfig: connect.KubeconfigOption = None) -> None:
    """Keep new workloads off a cluster (taint cluster.karmada.io/unschedulable:NoSchedule)."""
    _taint_command(name, [TaintEdit(UNSCHEDULABLE, "NoSchedule")], kubeconfig, done="cordoned",
                   already="already cordoned", overwrite=True)


def uncordon(name: NameArg, kubeconfig: connect.KubeconfigOption = None) -> None:
    """Let new workloads onto a cordoned cluster again."""

    async def action(session: connect.Session) -> None:
        cluster = await session.client.get(Cluster, name)
        if not any(t.key == UNSCHEDULABLE and t.effect == "NoSchedule" for t in cluster.spec.taints or []):
            typer.echo(f"cluster/{name} is not cordoned")
            return
        await update_taints(session, name, [TaintEdit(UNSCHEDULABLE, "NoSchedule", remove=True)],
                            overwrite=False)
        typer.echo(f"cluster/{name} uncordoned")

    connect.run(kubeconfig, action)


def taint(
    name: Annotated[str, typer.Argument(help="cluster name, or: clusters NAME… (karmadactl's form)",
                                        show_default=False)],
    taints: Annotated[list[str], typer.Argument(help="key[=value]:NoSchedule|NoExecute to add, "
                                                     "key[:Effect]- to remove", show_default=False)],
    overwrite: Annotated[bool, typer.Option(help="change the value of an existing taint")] = False,
    kubeconfig: connect.KubeconfigOption = None,
) -> None:
    """Add or remove taints on a cluster (NoExecute evicts workloads that do not tolerate it)."""
    try:
        names, edits = parse_taint_args([name, *taints])
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="TAINTS") from None
    word = taint_operation(edits, overwrite=overwrite)

    async def action(session: connect.Session) -> None:
        for cluster in names:
            await update_taints(session, cluster, edits, overwrite=overwrite)
            typer.echo(f"cluster/{cluster} {word}")

    connect.run(kubeconfig, action)


__all__ = [
    "CLUSTER_TYPES", "EFFECTS", "UNSCHEDULABLE", "TaintEdit", "cluster_name_problem", "cordon", "edit_taints",
    "join", "parse_taint", "parse_taint_args", "taint", "taint_operation", "uncordon", "unjoin",
    "update_taints",
]
