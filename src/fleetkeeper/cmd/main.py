"""The ``fleetkeeper`` command: the root of the CLI and the only wiring place.

Sub-commands that only talk to the control plane live in :mod:`fleetkeeper.cli`;
this module registers them and adds the commands that assemble parts (benchmarks,
the demo, the simulator), because only this layer may pick backends by URL.

**Start-up cost.** Importing every command would import the whole product (API
models, the apiserver, the simulator, DNS and HTTP clients): over a second before
anything runs. Commands are therefore registered by name — ``module:attribute`` plus
the one-line help the root ``--help`` lists — and a command's module is imported only
when that command runs or prints its own help. The help lines here are checked
against the commands' own docstrings by the test suite, so they cannot drift.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

import typer
import typer.main
from typer.core import TyperCommand, TyperGroup


@dataclass(frozen=True)
class Lazy:
    """A command (a function, or a ``typer.Typer`` of sub-commands) imported on first use."""

    target: str
    help: str

    def load(self) -> Any:
        module, _, attribute = self.target.partition(":")
        return getattr(importlib.import_module(module), attribute)


#: every command in the order ``--help`` lists them
COMMANDS: dict[str, Lazy] = {
    "bench": Lazy("fleetkeeper.cmd.bench:app", "Benchmarks (JSON output; figures depend on the machine)."),
    "simulate": Lazy("fleetkeeper.cmd.simulate:simulate",
                     "Run a failover story in virtual time and check its expectations."),
    "demo": Lazy("fleetkeeper.cmd.demo:demo",
                 "Watch a cluster fail and its workload move, on three simulated clusters."),
    "interpret": Lazy("fleetkeeper.cli.interpret:interpret",
                      "Validate a customization, or run one of its rules on sample objects."),
    "schedule": Lazy("fleetkeeper.cli.schedule:schedule",
                     "Print where the scheduler would place a binding, without a control plane."),
    # the control plane, together or apart, and its Pull agents
    "up": Lazy("fleetkeeper.cmd.up:up",
               "Run the control plane here: API server, controllers, scheduler and simulated members."),
    "apiserver": Lazy("fleetkeeper.cmd.up:apiserver",
                      "Serve the Kubernetes API alone (no controllers): HTTPS, tokens, admin kubeconfig."),
    "controller-manager": Lazy(
        "fleetkeeper.cmd.components:controller_manager",
        "Run every controller (not the scheduler) against a shared store or an API server."),
    "scheduler": Lazy("fleetkeeper.cmd.components:scheduler",
                      "Run the scheduler alone against a shared store or an API server."),
    "agent": Lazy("fleetkeeper.cmd.agent:agent",
                  "Run the Pull agent of one member cluster: heartbeat, status and Works, over HTTPS."),
    "token": Lazy("fleetkeeper.cmd.agent:token_app", "Credentials for Pull agents: create-agent, revoke."),
    "member-sim": Lazy("fleetkeeper.cmd.member_sim:member_sim",
                       "Serve one simulated member cluster as a Kubernetes API over HTTPS."),
    # the traffic loop: the DNS detector of member clusters, the load balancer, fault drills
    "detector": Lazy(
        "fleetkeeper.cmd.detector:detector",
        "Detect service name resolution in a member cluster (run one per node, like a DaemonSet)."),
    "traffic": Lazy("fleetkeeper.cmd.traffic:traffic",
                    "Load-balance MultiClusterIngress traffic over the member clusters."),
    "fault": Lazy("fleetkeeper.cmd.fault:fault",
                  "Inject a fault into a simulated member cluster of a running `fleetkeeper up`."),
    # day-to-day commands over the REST client
    "get": Lazy("fleetkeeper.cli.get:get", "List objects of a kind, or show one, from the control plane."),
    "describe": Lazy("fleetkeeper.cli.describe:describe",
                     "Explain a binding or a cluster: its state, and the failover timeline that led there."),
    "apply": Lazy("fleetkeeper.cli.apply:apply",
                  "Create or update objects from YAML files (server-side apply)."),
    "delete": Lazy("fleetkeeper.cli.apply:delete", "Delete one object."),
    "join": Lazy("fleetkeeper.cli.clusters:join", "Register a member cluster with the control plane."),
    "unjoin": Lazy("fleetkeeper.cli.clusters:unjoin",
                   "Remove a member cluster (its Works are cleaned up first)."),
    "cordon": Lazy("fleetkeeper.cli.clusters:cordon",
                   "Keep new workloads off a cluster (taint cluster.karmada.io/unschedulable:NoSchedule)."),
    "uncordon": Lazy("fleetkeeper.cli.clusters:uncordon", "Let new workloads onto a cordoned cluster again."),
    "taint": Lazy("fleetkeeper.cli.clusters:taint",
                  "Add or remove taints on a cluster (NoExecute evicts workloads that do not tolerate it)."),
    "suspend": Lazy("fleetkeeper.cli.suspend:suspend",
                    "Suspend dispatching of a policy's workloads, to every cluster or some."),
    "resume": Lazy("fleetkeeper.cli.suspend:resume",
                   "Resume dispatching of a policy's workloads, to every cluster or some."),
    "rebalance": Lazy("fleetkeeper.cli.rebalance:rebalance",
                      "Schedule workloads afresh, e.g. back onto a cluster that recovered."),
}


def load_command(name: str) -> Any:
    """The (click) command ``name`` runs, its module imported now."""
    target = COMMANDS[name].load()
    if isinstance(target, typer.Typer):
        group = typer.main.get_group(target)
        group.name = name
        return group
    single = typer.Typer(pretty_exceptions_enable=False, add_completion=False)
    single.command(name)(target)
    command = typer.main.get_command(single)
    command.name = name
    return command


class LazyGroup(TyperGroup):
    """The root group: :data:`COMMANDS` are imported when run, listed from their help lines."""

    _listing = False

    # contexts, commands and formatters are typer's own click types (annotated Any: typer
    # vendors click, and its classes are not public)
    def list_commands(self, ctx: Any) -> list[str]:
        return [*COMMANDS, *(name for name in super().list_commands(ctx) if name not in COMMANDS)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in COMMANDS or cmd_name in self.commands:
            return super().get_command(ctx, cmd_name)
        if self._listing:  # the root --help: the line is enough, the module stays unloaded
            return TyperCommand(cmd_name, help=COMMANDS[cmd_name].help, short_help=COMMANDS[cmd_name].help)
        command = load_command(cmd_name)
        self.commands[cmd_name] = command
        return command

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False


app = typer.Typer(
    name="fleetkeeper",
    help="Multi-cluster failover control plane for Kubernetes, compatible with Karmada's API.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    cls=LazyGroup,
)


@app.callback()
def root() -> None:
    """Multi-cluster failover control plane for Kubernetes, compatible with Karmada's API."""


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
