"""The ``fleetkeeper`` command: the root of the CLI and the only wiring place.

Sub-commands that only talk to the control plane live in :mod:`fleetkeeper.cli`;
this module registers them and adds the commands that assemble parts (benchmarks,
the demo, the simulator), because only this layer may pick backends by URL.
"""

from __future__ import annotations

import typer

from fleetkeeper.cli import apply, clusters, describe, get, suspend
from fleetkeeper.cli.interpret import interpret
from fleetkeeper.cli.schedule import schedule
from fleetkeeper.cmd import (
    agent,
    bench,
    components,
    demo,
    detector,
    fault,
    member_sim,
    simulate,
    traffic,
    up,
)

app = typer.Typer(
    name="fleetkeeper",
    help="Multi-cluster failover control plane for Kubernetes, compatible with Karmada's API.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.add_typer(bench.app, name="bench")
app.command("simulate")(simulate.simulate)
app.command("demo")(demo.demo)
app.command("interpret")(interpret)
app.command("schedule")(schedule)
# the control plane, together or apart, and its Pull agents
app.command("up")(up.up)
app.command("apiserver")(up.apiserver)
app.command("controller-manager")(components.controller_manager)
app.command("scheduler")(components.scheduler)
app.command("agent")(agent.agent)
app.add_typer(agent.token_app, name="token")
app.command("member-sim")(member_sim.member_sim)
# the traffic loop: the DNS detector of member clusters, the load balancer, fault drills
app.command("detector")(detector.detector)
app.command("traffic")(traffic.traffic)
app.command("fault")(fault.fault)
# day-to-day commands over the REST client
app.command("get")(get.get)
app.command("describe")(describe.describe)
app.command("apply")(apply.apply)
app.command("delete")(apply.delete)
app.command("join")(clusters.join)
app.command("unjoin")(clusters.unjoin)
app.command("cordon")(clusters.cordon)
app.command("uncordon")(clusters.uncordon)
app.command("taint")(clusters.taint)
app.command("suspend")(suspend.suspend)
app.command("resume")(suspend.resume)


@app.command()
def version() -> None:
    """Print the fleetkeeper version."""
    from importlib.metadata import version as dist_version

    typer.echo(dist_version("fleetkeeper"))


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":
    main()
