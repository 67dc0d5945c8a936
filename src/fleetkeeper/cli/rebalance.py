"""``fleetkeeper rebalance KIND/NAME… [-n NS]``: schedule workloads afresh, e.g. back
onto a cluster that recovered.

A failover never moves a workload back on its own. This command creates a
WorkloadRebalancer (``apps.karmada.io/v1alpha1``) listing the workloads, waits until it
has finished (``--wait``, the default, at most ``--timeout``) and prints each workload's
result: ``Successful`` (its binding was scheduled afresh) or ``Failed`` (it has no
binding). ``--ttl`` lets the rebalancer delete itself that long after it finished.

Workloads are named as kubectl names them: ``deploy/nginx``, ``deployment.apps/nginx``,
``statefulset/db``. Namespaced ones are looked for in ``-n`` (default: the kubeconfig's
namespace).
"""

from __future__ import annotations

from typing import Annotated

import typer

from fleetkeeper.api.apps import ObjectReference, WorkloadRebalancer, WorkloadRebalancerSpec
from fleetkeeper.api.meta import ObjectMeta
from fleetkeeper.cli import connect, kinds


def workloads(names: list[str]) -> list[ObjectReference]:
    """``KIND/NAME`` arguments → references (namespaced ones with ``namespace=""``, to be filled in)."""
    out = []
    for value in names:
        kind, sep, name = value.partition("/")
        if not sep or not kind or not name or "/" in name:
            raise typer.BadParameter(f"expected KIND/NAME (e.g. deploy/nginx), got {value!r}",
                                     param_hint="WORKLOAD")
        try:
            info = kinds.resolve(kind)
        except kinds.UnknownKind as exc:
            raise typer.BadParameter(str(exc), param_hint="WORKLOAD") from None
        out.append(ObjectReference(api_version=info.api_version, kind=info.kind, name=name,
                                   namespace="" if info.namespaced else None))
    return out


def rebalance(
    workload: Annotated[list[str], typer.Argument(help="workloads as KIND/NAME, e.g. deploy/nginx",
                                                  show_default=False)],
    namespace: Annotated[str | None, typer.Option(
        "--namespace", "-n", help="namespace of the workloads [default: the kubeconfig's]",
        show_default=False)] = None,
    ttl: Annotated[str | None, typer.Option(
        help="delete the rebalancer this long after it finished (e.g. 10m)", show_default=False)] = None,
    wait: Annotated[bool, typer.Option(help="wait for the result and print it")] = True,
    timeout: Annotated[str, typer.Option(help="how long --wait waits")] = "60s",
    kubeconfig: connect.KubeconfigOption = None,
) -> None:
    """Schedule workloads afresh, e.g. back onto a cluster that recovered."""
    ttl_seconds = None if ttl is None else connect.duration(ttl, "--ttl")
    limit = connect.duration(timeout, "--timeout")
    parsed = workloads(workload)

    async def action(session: connect.Session) -> list[str]:
        where = namespace or session.namespace
        refs = [r if r.namespace is None else r.model_copy(update={"namespace": where}) for r in parsed]
        created = await session.client.create(WorkloadRebalancer(
            metadata=ObjectMeta(generate_name="rebalance-"),
            spec=WorkloadRebalancerSpec(workloads=refs, ttl_seconds_after_finished=(
                None if ttl_seconds is None else int(ttl_seconds)))))
        lines = [f"workloadrebalancer.apps.karmada.io/{created.name} created"]
        if not wait:
            return lines

        async def finished() -> WorkloadRebalancer | None:
            current = await session.client.get(WorkloadRebalancer, created.name)
            return current if current.status.finish_time is not None else None

        done = await connect.poll(session, finished, limit, f"workloadrebalancer/{created.name} has not "
                                  f"finished after {limit:g}s (is a control plane running?)")
        for item in done.status.observed_workloads or []:
            ref = item.workload
            scope = f" -n {ref.namespace}" if ref.namespace else ""
            reason = f" ({item.reason})" if item.reason else ""
            lines.append(f"  {ref.kind.lower()}/{ref.name}{scope}: {item.result}{reason}")
        return lines

    for line in connect.run(kubeconfig, action):
        typer.echo(line)


__all__ = ["rebalance", "workloads"]
