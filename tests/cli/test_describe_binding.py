"""``fleetkeeper describe binding`` of bindings that are not simply scheduled: one whose
dispatching is suspended names the suspension, and a dependency's binding (attached by
``propagateDeps``) says which bindings it follows and where it goes with them."""

from __future__ import annotations

import asyncio
from typing import Any

from fleetkeeper.api.work import ResourceBinding

from .test_commands import Cli, cli  # noqa: F401  (the module's server)

SUSPENDED = """\
apiVersion: work.karmada.io/v1alpha2
kind: ResourceBinding
metadata: {name: held-deployment, namespace: default}
spec:
  resource: {apiVersion: apps/v1, kind: Deployment, namespace: default, name: held}
  replicas: 2
  clusters: [{name: m1, replicas: 1}, {name: m2, replicas: 1}]
  placement: {clusterAffinity: {clusterNames: [m1, m2]}}
  suspension: {dispatchingOnClusters: {clusterNames: [m2]}}
"""
DEPENDENCY = """\
apiVersion: work.karmada.io/v1alpha2
kind: ResourceBinding
metadata: {name: settings-configmap, namespace: default}
spec:
  resource: {apiVersion: v1, kind: ConfigMap, namespace: default, name: settings}
  requiredBy:
  - {namespace: default, name: web-deployment, clusters: [{name: m1, replicas: 1}, {name: m3, replicas: 2}]}
  - {namespace: default, name: api-deployment, clusters: [{name: m3, replicas: 1}]}
"""


def fields(out: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in out.splitlines():
        key, sep, value = line.partition(":")
        if sep and key and not key.startswith(" ") and key not in found:
            found[key] = value.strip()
    return found


def report(plane: Cli, name: str, status: dict[str, Any]) -> None:
    async def write() -> None:
        async with plane.client() as client:
            rb = await client.get(ResourceBinding, name, "default")
            rb.status = rb.status.model_validate(status)
            await client.update_status(rb)

    asyncio.run(write())


def test_a_suspended_binding_names_its_suspension(cli: Cli) -> None:  # noqa: F811
    cli.ok("apply", "-f", cli.write("held.yaml", SUSPENDED))
    report(cli, "held-deployment", {
        "conditions": [{"type": "FullyApplied", "status": "False", "reason": "FullyAppliedFailed",
                        "message": "Failed to apply all works, see status.aggregatedStatus for details",
                        "lastTransitionTime": "2026-01-01T10:00:00Z"}],
        "aggregatedStatus": [{"clusterName": "m1", "applied": True, "health": "Healthy"},
                             {"clusterName": "m2", "applied": False, "health": "Unknown"}]})
    out = cli.ok("describe", "binding", "default/held-deployment")
    shown = fields(out)
    assert shown["Suspended"].startswith("dispatching to m2 (spec.suspension: ")
    assert "FullyApplied is False" in shown["Suspended"]
    assert shown["Health"] == "m1:Healthy,m2:Unknown (dispatching suspended)"
    copies = {line.split()[0]: line for line in out.split("Copies:")[1].split("Conditions:")[0].splitlines()
              if line.startswith("m")}
    assert copies["m2"].rstrip().endswith("dispatching suspended")
    assert not copies["m1"].rstrip().endswith("dispatching suspended"), "m1 is not held"


def test_a_dependency_binding_says_what_it_follows_and_where_it_goes(cli: Cli) -> None:  # noqa: F811
    cli.ok("apply", "-f", cli.write("dependency.yaml", DEPENDENCY))
    shown = fields(cli.ok("describe", "binding", "default/settings-configmap"))
    assert shown["Placement"] == ("follows default/web-deployment, default/api-deployment "
                                  "(a dependency goes where the bindings it follows go)")
    assert shown["Scheduled"] == ("m1,m3 (with default/web-deployment, default/api-deployment; "
                                  "a dependency is not scheduled itself)")
    assert "Suspended" not in shown
