"""The ``fleetkeeper`` command: the root of the CLI and the only wiring place.

Sub-commands that only talk to the control plane live in :mod:`fleetkeeper.cli`;
this module registers them and adds the commands that assemble parts (benchmarks,
the demo, the simulator), because only this layer may pick backends by URL.

**Start-up cost.** Importing every command would import the whole product (API
models, the apiserver, the simulator, DNS and HTTP clients): over a second before
anything runs. Commands are therefore registered by name — the module's importer, the
attribute, and the one-line help the root ``--help`` lists — and a command's module is
imported only when that command runs, prints its own help or completes its own flags. The help
lines here are checked against the commands' own docstrings by the test suite, so they cannot drift.

**Help as plain text.** Help is click's plain layout, not typer's rich tables: at 80 columns a
table cut long flag names (``--cluster-status-up…``) and read a ``[default: …]`` in a help text
as markup, dropping it. Options keep their groups (``rich_help_panel``) as sections, and a
group lists each command with its whole summary.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Annotated, Any

import typer
import typer.main
from typer.core import TyperCommand, TyperGroup


@dataclass(frozen=True)
class Lazy:
    """A command (a function, or a ``typer.Typer`` of sub-commands) imported on first use: the
    attribute ``name`` of the module ``module()`` imports."""

    module: Callable[[], ModuleType]
    name: str
    help: str

    def load(self) -> Any:
        return getattr(self.module(), self.name)


# one importer per module that holds commands: the import runs when a command of it is used
def _cmd_bench() -> ModuleType:
    from fleetkeeper.cmd import bench
    return bench


def _cmd_simulate() -> ModuleType:
    from fleetkeeper.cmd import simulate
    return simulate


def _cmd_demo() -> ModuleType:
    from fleetkeeper.cmd import demo
    return demo


def _cli_interpret() -> ModuleType:
    from fleetkeeper.cli import interpret
    return interpret


def _cli_schedule() -> ModuleType:
    from fleetkeeper.cli import schedule
    return schedule


def _cmd_whatif() -> ModuleType:
    from fleetkeeper.cmd import whatif
    return whatif


def _cmd_up() -> ModuleType:
    from fleetkeeper.cmd import up
    return up


def _cmd_components() -> ModuleType:
    from fleetkeeper.cmd import components
    return components


def _cmd_agent() -> ModuleType:
    from fleetkeeper.cmd import agent
    return agent


def _cmd_kubeconfig() -> ModuleType:
    from fleetkeeper.cmd import kubeconfig
    return kubeconfig


def _cmd_member_sim() -> ModuleType:
    from fleetkeeper.cmd import member_sim
    return member_sim


def _cmd_detector() -> ModuleType:
    from fleetkeeper.cmd import detector
    return detector


def _cmd_traffic() -> ModuleType:
    from fleetkeeper.cmd import traffic
    return traffic


def _cmd_fault() -> ModuleType:
    from fleetkeeper.cmd import fault
    return fault


def _cmd_status() -> ModuleType:
    from fleetkeeper.cmd import status
    return status


def _cli_get() -> ModuleType:
    from fleetkeeper.cli import get
    return get


def _cli_members() -> ModuleType:
    from fleetkeeper.cli import members
    return members


def _cli_describe() -> ModuleType:
    from fleetkeeper.cli import describe
    return describe


def _cli_apply() -> ModuleType:
    from fleetkeeper.cli import apply
    return apply


def _cli_clusters() -> ModuleType:
    from fleetkeeper.cli import clusters
    return clusters


def _cli_suspend() -> ModuleType:
    from fleetkeeper.cli import suspend
    return suspend


def _cli_rebalance() -> ModuleType:
    from fleetkeeper.cli import rebalance
    return rebalance


#: every command in the order ``--help`` lists them
COMMANDS: dict[str, Lazy] = {
    "bench": Lazy(_cmd_bench, "app", "Benchmarks (JSON output; figures depend on the machine)."),
    "simulate": Lazy(_cmd_simulate, "simulate",
                     "Run a failover story in virtual time and check its expectations."),
    "demo": Lazy(_cmd_demo, "demo",
                 "Watch a cluster fail and its workload move, on three simulated clusters."),
    "interpret": Lazy(_cli_interpret, "interpret",
                      "Validate a customization, or run one of its rules on sample objects."),
    "schedule": Lazy(_cli_schedule, "schedule",
                     "Print where the scheduler would place a binding, without a control plane."),
    "whatif": Lazy(_cmd_whatif, "whatif", "Say where every workload would go if these clusters failed now."),
    # the control plane, together or apart, and its Pull agents
    "up": Lazy(_cmd_up, "up",
               "Run the control plane here: API server, controllers, scheduler and simulated members."),
    "apiserver": Lazy(_cmd_up, "apiserver",
                      "Serve the Kubernetes API alone (no controllers): HTTPS, tokens, admin kubeconfig."),
    "controller-manager": Lazy(_cmd_components, "controller_manager",
        "Run every controller (not the scheduler) against a shared store or an API server."),
    "scheduler": Lazy(_cmd_components, "scheduler",
                      "Run the scheduler alone against a shared store or an API server."),
    "agent": Lazy(_cmd_agent, "agent",
                  "Run the Pull agent of one member cluster: heartbeat, status and Works, over HTTPS."),
    "token": Lazy(_cmd_agent, "token_app",
                  "Credentials for Pull agents (create-agent, revoke) and people (create-user)."),
    "kubeconfig": Lazy(_cmd_kubeconfig, "kubeconfig",
                       "Print a kubeconfig for the plane (any replica, or a load balancer in front), "
                       "or for one member."),
    "member-sim": Lazy(_cmd_member_sim, "member_sim",
                       "Serve one simulated member cluster as a Kubernetes API over HTTPS."),
    # the traffic loop: the DNS detector of member clusters, the load balancer, fault drills
    "detector": Lazy(_cmd_detector, "detector",
        "Detect service name resolution in a member cluster (run one per node, like a DaemonSet)."),
    "traffic": Lazy(_cmd_traffic, "traffic",
                    "Load-balance MultiClusterIngress traffic over the member clusters."),
    "fault": Lazy(_cmd_fault, "fault",
                  "Inject a fault into a simulated member cluster of a running `fleetkeeper up`."),
    # day-to-day commands over the REST client
    "status": Lazy(_cmd_status, "status",
                   "Show who leads the controllers, the replicas, the store and the members."),
    "get": Lazy(_cli_get, "get", "List objects of a kind, or show one, from the control plane."),
    "logs": Lazy(_cli_members, "logs",
                 "Print the log of a pod in a member cluster, through the plane's cluster proxy."),
    "top": Lazy(_cli_members, "top_app", "Resource use of the member clusters."),
    "describe": Lazy(_cli_describe, "describe",
                     "Explain a binding or a cluster: its state, and the failover timeline that led there."),
    "apply": Lazy(_cli_apply, "apply",
                  "Create or update objects from YAML files (server-side apply)."),
    "delete": Lazy(_cli_apply, "delete", "Delete one object."),
    "join": Lazy(_cli_clusters, "join", "Register a member cluster with the control plane."),
    "unjoin": Lazy(_cli_clusters, "unjoin",
                   "Remove a member cluster (its Works are cleaned up first)."),
    "cordon": Lazy(_cli_clusters, "cordon",
                   "Keep new workloads off a cluster (taint cluster.karmada.io/unschedulable:NoSchedule)."),
    "uncordon": Lazy(_cli_clusters, "uncordon", "Let new workloads onto a cordoned cluster again."),
    "taint": Lazy(_cli_clusters, "taint",
                  "Add or remove taints on a cluster (NoExecute evicts workloads that do not tolerate it)."),
    "suspend": Lazy(_cli_suspend, "suspend",
                    "Suspend dispatching of a policy's workloads, to every cluster or some."),
    "resume": Lazy(_cli_suspend, "resume",
                   "Resume dispatching of a policy's workloads, to every cluster or some."),
    "rebalance": Lazy(_cli_rebalance, "rebalance",
                      "Schedule workloads afresh, e.g. back onto a cluster that recovered."),
}


def summary(help_text: str | None) -> str:
    """A help text's first paragraph on one line: what a group lists for a command."""
    return " ".join((help_text or "").strip().split("\n\n", 1)[0].split())


def format_params(command: Any, ctx: Any, formatter: Any) -> None:
    """Arguments, then options, then each group of options (``rich_help_panel``) as a section."""
    sections: dict[str, list[tuple[str, str]]] = {"Arguments": [], "Options": []}
    for param in command.get_params(ctx):
        record = param.get_help_record(ctx)
        if record is None:
            continue
        title = ("Arguments" if param.param_type_name == "argument"
                 else getattr(param, "rich_help_panel", None) or "Options")
        sections.setdefault(title, []).append(record)
    for title, records in sections.items():
        if records:
            with formatter.section(title):
                formatter.write_dl(records)


class Command(TyperCommand):
    """A command whose plain help keeps its groups of options apart."""

    def format_options(self, ctx: Any, formatter: Any) -> None:
        format_params(self, ctx, formatter)


def plain(command: Any) -> Any:
    """``command`` and its sub-commands print plain help; a group lists whole summaries."""
    command.rich_markup_mode = None
    for sub in getattr(command, "commands", {}).values():
        sub.short_help = sub.short_help or summary(sub.help)
        plain(sub)
    return command


def load_command(name: str) -> Any:
    """The (click) command ``name`` runs, its module imported now."""
    from fleetkeeper.cli.kubecontext import add_context_flag

    target = COMMANDS[name].load()
    if isinstance(target, typer.Typer):
        group = plain(typer.main.get_group(target))
        group.name = name
        add_context_flag(group)
        return group
    single = typer.Typer(pretty_exceptions_enable=False, add_completion=False, rich_markup_mode=None)
    single.command(name, cls=Command)(target)
    command = typer.main.get_command(single)
    command.name = name
    add_context_flag(command)
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
            command = super().get_command(ctx, cmd_name)
            if command is not None:
                command.short_help = command.short_help or summary(command.help)
            return command
        if self._listing:  # the root --help or completion: the line is enough, the module stays unloaded
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

    def shell_complete(self, ctx: Any, incomplete: str) -> Any:
        self._listing = True
        try:
            return super().shell_complete(ctx, incomplete)
        finally:
            self._listing = False


app = typer.Typer(
    name="fleetkeeper",
    help="Multi-cluster failover control plane for Kubernetes, compatible with Karmada's API.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    rich_markup_mode=None,
    cls=LazyGroup,
)


def _print_version(value: bool) -> None:
    if value:
        from fleetkeeper import __version__

        typer.echo(__version__)
        raise typer.Exit()


@app.callback()
def root(
    version: Annotated[bool, typer.Option(
        "--version", callback=_print_version, is_eager=True, help="Print the version and exit.")] = False,
) -> None:
    """Multi-cluster failover control plane for Kubernetes, compatible with Karmada's API."""


@app.command()
def version() -> None:
    """Print the fleetkeeper version."""
    from fleetkeeper import __version__

    typer.echo(__version__)


#: the variable a shell's completion function sets when it asks ``fleetkeeper`` for completions
COMPLETE_VAR = "_FLEETKEEPER_COMPLETE"


SHELLS = ("bash", "zsh", "fish")


@app.command()
def completion(shell: Annotated[str, typer.Argument(metavar="SHELL", help="bash, zsh or fish")]) -> None:
    """Print the shell completion script for bash, zsh or fish.

    Load it into the running shell with one of these lines, or add the line to ~/.bashrc
    (~/.zshrc, after compinit) for every new shell:

    \b
      source <(fleetkeeper completion bash)
      source <(fleetkeeper completion zsh)
      fleetkeeper completion fish > ~/.config/fish/completions/fleetkeeper.fish
    """
    from typer._completion_shared import get_completion_script

    if shell not in SHELLS:
        raise typer.BadParameter(f"{shell!r} is not one of {', '.join(SHELLS)}", param_hint="SHELL")
    typer.echo(get_completion_script(prog_name="fleetkeeper", complete_var=COMPLETE_VAR, shell=shell))


def main() -> None:
    """Console-script entry point."""
    if COMPLETE_VAR in os.environ:  # a shell asks for completions: typer registers its shells first
        from typer._completion_classes import completion_init

        completion_init()
    app(prog_name="fleetkeeper", complete_var=COMPLETE_VAR)


if __name__ == "__main__":
    main()
