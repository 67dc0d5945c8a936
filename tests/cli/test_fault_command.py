"""``fleetkeeper fault``'s command side against a real API server: a drill on a member that is
not simulated is refused with nothing written, and undoing a drill removes its annotation.

The member side (what the annotations do to a simulated member) is in
``tests/members/test_fault_annotations.py``; a whole drill on ``fleetkeeper up`` in
``tests/e2e/test_up.py``.
"""

from __future__ import annotations

import asyncio

from fleetkeeper.api.cluster import Cluster

from .test_commands import Cli, cli  # noqa: F401  (the module's server)

REAL = """apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: real1}
spec: {syncMode: Push, apiEndpoint: "kube://kind-real1"}
"""


def drills(plane: Cli, name: str) -> dict[str, str]:
    async def read() -> dict[str, str]:
        async with plane.client() as client:
            return (await client.get(Cluster, name)).annotations()

    return {k: v for k, v in asyncio.run(read()).items() if k.startswith("faults.fleetkeeper.io/")}


def test_a_drill_on_a_member_that_is_not_simulated_is_refused_writing_nothing(cli: Cli) -> None:  # noqa: F811
    cli.ok("apply", "-f", cli.write("real.yaml", REAL))
    for args in (["clusterDown", "real1"], ["setNodes", "real1", "--nodes", "1"],
                 ["crashWorkload", "real1", "deployment/web"]):
        refused = cli.run("fault", *args)
        assert refused.exit_code == 1, refused.output
        assert "cluster/real1 is not a simulated member (apiEndpoint kube://kind-real1)" in refused.stderr
        assert "nothing was written" in refused.stderr
    assert drills(cli, "real1") == {}


def test_undoing_a_drill_removes_its_annotation(cli: Cli) -> None:  # noqa: F811
    if cli.run("get", "cluster", "sim1").exit_code != 0:
        cli.ok("join", "sim1", "--member", "simulated://sim1")
    assert "(annotated faults.fleetkeeper.io/api=down)" in cli.ok("fault", "clusterDown", "sim1")
    cli.ok("fault", "dnsDown", "sim1")
    cli.ok("fault", "crashWorkload", "sim1", "deployment/web")
    cli.ok("fault", "crashWorkload", "sim1", "deployment/api")
    assert set(drills(cli, "sim1")) == {"faults.fleetkeeper.io/api", "faults.fleetkeeper.io/dns",
                                             "faults.fleetkeeper.io/crashed-workloads"}
    assert cli.ok("fault", "clusterUp", "sim1").strip() == (
        "cluster/sim1 clusterUp (removed faults.fleetkeeper.io/api)")
    cli.ok("fault", "dnsUp", "sim1")
    cli.ok("fault", "healWorkload", "sim1", "deployment/web")
    assert list(drills(cli, "sim1")) == ["faults.fleetkeeper.io/crashed-workloads"], "api stays healed"
    cli.ok("fault", "healWorkload", "sim1", "deployment/api")
    assert drills(cli, "sim1") == {}
