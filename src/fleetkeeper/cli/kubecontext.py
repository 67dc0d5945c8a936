"""kubectl's ``--context`` for every command that connects to a control plane.

Commands that reach the plane take :data:`KubeconfigOption` and connect through
:func:`fleetkeeper.cli.connect.run`. Rather than each declaring ``--context`` too, the root
command gives it to them when it loads one (:func:`add_context_flag`): the flag's value is
kept for the command being run and :func:`chosen` hands it to ``run``, which picks that
context from the kubeconfig files it merged. This module stays light (no client, no API
models), since the root command imports it.
"""

from __future__ import annotations

from contextvars import ContextVar
from pathlib import Path
from typing import Annotated, Any

import typer
import typer.main

#: the help of ``--kubeconfig``: :func:`add_context_flag` recognises the commands that connect by it
KUBECONFIG_HELP = ("kubeconfig file [default: $KUBECONFIG, else the one `fleetkeeper up` writes and "
                   "~/.kube/config]")
KubeconfigOption = Annotated[Path | None, typer.Option("--kubeconfig", help=KUBECONFIG_HELP,
                                                      show_default=False)]
#: the ``--context`` of the command being run (set by the flag's callback, read by :func:`chosen`)
_CONTEXT: ContextVar[str | None] = ContextVar("kubeconfig_context", default=None)


def _remember_context(value: str | None) -> str | None:
    _CONTEXT.set(value)
    return value


def _context_flag() -> Any:
    """A fresh ``--context`` option (a click parameter, built by typer from a declaration)."""
    probe = typer.Typer()

    @probe.command()
    def declared(context: Annotated[str | None, typer.Option(
            "--context", metavar="NAME", expose_value=False, callback=_remember_context, show_default=False,
            help="the kubeconfig context to use [default: its current context]")] = None) -> None: ...

    return typer.main.get_command(probe).params[0]


def add_context_flag(command: Any) -> None:
    """Give ``command`` (and a group's sub-commands) kubectl's ``--context`` when it connects
    through :func:`fleetkeeper.cli.connect.run` (it takes :data:`KubeconfigOption`) and has no
    ``--context`` of its own."""
    for each in [command, *getattr(command, "commands", {}).values()]:
        params = {param.name: param for param in each.params}
        kubeconfig = params.get("kubeconfig")
        ours = kubeconfig is not None and getattr(kubeconfig, "help", "") == KUBECONFIG_HELP
        if ours and "context" not in params:
            each.params.append(_context_flag())


def chosen() -> str | None:
    """The ``--context`` of the command being run (None: the kubeconfig's current context)."""
    return _CONTEXT.get()


__all__ = ["KUBECONFIG_HELP", "KubeconfigOption", "add_context_flag", "chosen"]
