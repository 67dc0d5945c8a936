"""``fleetkeeper suspend|resume POLICY [--clusters a,b]``: pause and resume propagation.

A convenience over the policy's ``spec.suspension`` (Karmada's dispatch suspension):
changes to a template stop reaching the suspended clusters until they are resumed;
deletion is never held. Without ``--clusters`` the command suspends (or resumes)
dispatching to every cluster; with it, it edits the list of suspended clusters:

* ``suspend P --clusters a,b`` adds ``a`` and ``b`` to ``dispatchingOnClusters``;
* ``resume P --clusters a`` removes ``a`` (the last one removed resumes everything);
* ``resume P`` clears the suspension.

The rules are pure functions of the current ``suspension`` value (:func:`suspended`,
:func:`resumed`); the command writes the result with a JSON merge patch.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from fleetkeeper.api.meta import Resource
from fleetkeeper.api.policy import ClusterPropagationPolicy, PropagationPolicy
from fleetkeeper.cli import connect

Suspension = dict[str, Any] | None


def _listed(current: Suspension) -> list[str]:
    on = (current or {}).get("dispatchingOnClusters") or {}
    return list(on.get("clusterNames") or [])


def suspended(current: Suspension, clusters: list[str] | None) -> Suspension:
    """The suspension after suspending ``clusters`` (None: every cluster)."""
    if not clusters:
        return {"dispatching": True}
    if current and current.get("dispatching"):
        return {"dispatching": True}  # already suspended everywhere
    return {"dispatchingOnClusters": {"clusterNames": sorted({*_listed(current), *clusters})}}


def resumed(current: Suspension, clusters: list[str] | None) -> Suspension:
    """The suspension after resuming ``clusters`` (None: every cluster)."""
    if not clusters:
        return None
    if current and current.get("dispatching"):
        raise connect.BadInput(
            "dispatching is suspended for every cluster: resume all (no --clusters), or suspend "
            "only some clusters with `fleetkeeper suspend POLICY --clusters …` first")
    left = sorted(set(_listed(current)) - set(clusters))
    return {"dispatchingOnClusters": {"clusterNames": left}} if left else None


def _clusters(value: str | None) -> list[str] | None:
    if value is None:
        return None
    names = [n.strip() for n in value.split(",") if n.strip()]
    if not names:
        raise typer.BadParameter("expected cluster names separated by commas", param_hint="--clusters")
    return names


PolicyArg = Annotated[str, typer.Argument(help="PropagationPolicy name (or ClusterPropagationPolicy with -c)",
                                          show_default=False)]
ClustersOption = Annotated[str | None, typer.Option(
    "--clusters", help="comma-separated clusters (default: every cluster)", show_default=False)]
NamespaceOption = Annotated[str | None, typer.Option(
    "--namespace", "-n", help="the policy's namespace [default: the kubeconfig's]", show_default=False)]
ClusterWideOption = Annotated[bool, typer.Option(
    "--cluster-policy", "-c", help="the policy is a ClusterPropagationPolicy")]


def _change(policy: str, clusters: list[str] | None, namespace: str | None, cluster_wide: bool,
            kubeconfig: Any, *, resume: bool) -> None:
    model: type[Resource] = ClusterPropagationPolicy if cluster_wide else PropagationPolicy

    async def action(session: connect.Session) -> str:
        ns = "" if cluster_wide else (namespace or session.namespace)
        current = await session.client.get(model, policy, ns)
        before = current.to_dict().get("spec", {}).get("suspension")
        after = resumed(before, clusters) if resume else suspended(before, clusters)
        if after == before:
            return "unchanged"
        await session.client.patch(model, policy, ns, patch={"spec": {"suspension": after}},
                                   patch_type="merge")
        return "resumed" if resume else "suspended"

    outcome = connect.run(kubeconfig, action)
    where = ", ".join(clusters) if clusters else "every cluster"
    kind = "clusterpropagationpolicy" if cluster_wide else "propagationpolicy"
    typer.echo(f"{kind}/{policy} {outcome}" + ("" if outcome == "unchanged" else f" ({where})"))


def suspend(policy: PolicyArg, clusters: ClustersOption = None, namespace: NamespaceOption = None,
            cluster_policy: ClusterWideOption = False, kubeconfig: connect.KubeconfigOption = None) -> None:
    """Suspend dispatching of a policy's workloads, to every cluster or some."""
    _change(policy, _clusters(clusters), namespace, cluster_policy, kubeconfig, resume=False)


def resume(policy: PolicyArg, clusters: ClustersOption = None, namespace: NamespaceOption = None,
           cluster_policy: ClusterWideOption = False, kubeconfig: connect.KubeconfigOption = None) -> None:
    """Resume dispatching of a policy's workloads, to every cluster or some."""
    _change(policy, _clusters(clusters), namespace, cluster_policy, kubeconfig, resume=True)


__all__ = ["resume", "resumed", "suspend", "suspended"]
