"""The ``fleetkeeper`` command: the root of the CLI and the only wiring place.

Sub-commands that only talk to the control plane live in :mod:`fleetkeeper.cli`;
this module registers them and adds the commands that assemble parts (benchmarks,
the demo, the simulator), because only this layer may pick backends by URL.
"""

from __future__ import annotations

import typer

from fleetkeeper.cli.interpret import interpret
from fleetkeeper.cli.schedule import schedule
from fleetkeeper.cmd import bench, demo, simulate

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
