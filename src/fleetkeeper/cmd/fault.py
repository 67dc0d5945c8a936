"""``fleetkeeper fault``: inject a fault into a simulated member of a running control plane.

``fleetkeeper up`` runs its simulated members in its own process, so a drill needs a
way in. It is the API, like everything else: the command records the wanted fault as
an annotation on the Cluster object (a merge patch through the API server, with the
admin kubeconfig, so it is authenticated like any write and reaches only the server
the kubeconfig names)::

    fleetkeeper fault dnsDown member1      # faults.fleetkeeper.io/dns: down
    fleetkeeper fault dnsUp member1        # faults.fleetkeeper.io/dns: up

and the simulated member's add-ons (:mod:`fleetkeeper.cmd.detector`) apply it whenever
the Cluster changes — level-triggered: the annotation says what the member's DNS is.
While the annotation is absent the member is left alone, so scenario actions
(``dnsDown``/``dnsUp`` in a scenario file) and annotations never fight. Action names
are the scenario actions'. A member that is not simulated ignores the annotation.
"""

from __future__ import annotations

from typing import Annotated

import typer

from fleetkeeper.api.cluster import Cluster
from fleetkeeper.cli import connect
from fleetkeeper.members.simulated import SimulatedCluster

DNS_ANNOTATION = "faults.fleetkeeper.io/dns"
#: action → the annotation value it sets
ACTIONS = {"dnsDown": "down", "dnsUp": "up"}


def apply_faults(cluster: Cluster, member: SimulatedCluster) -> None:
    """Make ``member`` match the faults annotated on ``cluster`` (absent: leave it alone)."""
    dns = cluster.annotations().get(DNS_ANNOTATION)
    if dns == "down" and member.dns_ok:
        member.dns_down()
    elif dns == "up" and not member.dns_ok:
        member.dns_up()


def fault(
    action: Annotated[str, typer.Argument(help="dnsDown or dnsUp (as in scenarios)", show_default=False)],
    cluster: Annotated[str, typer.Argument(help="the member cluster", show_default=False)],
    kubeconfig: connect.KubeconfigOption = None,
) -> None:
    """Inject a fault into a simulated member cluster of a running `fleetkeeper up`."""
    value = ACTIONS.get(action)
    if value is None:
        raise typer.BadParameter(f"unknown action {action!r} (known: {', '.join(ACTIONS)})",
                                 param_hint="ACTION")

    async def act(session: connect.Session) -> None:
        patch = {"metadata": {"annotations": {DNS_ANNOTATION: value}}}
        await session.client.patch(Cluster, cluster, patch=patch, patch_type="merge")

    connect.run(kubeconfig, act)
    typer.echo(f"cluster/{cluster} {action} (annotated {DNS_ANNOTATION}={value})")


__all__ = ["ACTIONS", "DNS_ANNOTATION", "apply_faults", "fault"]
