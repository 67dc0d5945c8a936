"""How the CLI's commands reach the control plane, and how they fail.

Every command that talks to a control plane (``get``, ``describe``, ``apply``,
``delete``, ``join`` …) does so through the REST client, with the kubeconfig files chosen by
:func:`fleetkeeper.cli.paths.resolve_kubeconfigs` and the context its ``--context`` names
(:mod:`fleetkeeper.cli.kubecontext`), inside :func:`run`, which owns the
event loop and the client and turns failures into one line on stderr and an exit code:

* **2 — the input is wrong**: a bad flag or argument, an unreadable file, invalid YAML, no
  kubeconfig, or an object the API server rejects as invalid (``Invalid``, ``BadRequest``);
* **1 — the operation failed**: the API server is unreachable, the object does not exist,
  the caller may not do it, a conflict … — printed as kubectl prints them
  (``Error from server (NotFound): …``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn, TypeVar

import typer

from fleetkeeper import errors
from fleetkeeper.cli import kubecontext, paths
from fleetkeeper.client.rest import RestClient, read_kubeconfigs
from fleetkeeper.clock import Clock, SystemClock
from fleetkeeper.options import parse_duration

T = TypeVar("T")
FIELD_MANAGER = "fleetkeeper-cli"
#: how often a command that waits looks again
POLL_SECONDS = 0.5

KubeconfigOption = kubecontext.KubeconfigOption


class BadInput(Exception):
    """The user's input is wrong (exit 2); the message names the file, flag or field."""


class Failed(Exception):
    """The operation failed (exit 1); the message says why."""


@dataclass
class Session:
    """A connected CLI command: the client, the context's namespace and the server."""

    client: RestClient
    namespace: str
    server: str
    clock: Clock


def die(message: str, code: int) -> NoReturn:
    typer.echo(f"error: {message}" if not message.startswith("Error from server") else message, err=True)
    raise typer.Exit(code)


def server_error(exc: errors.ApiError) -> str:
    """kubectl's way of printing an API error."""
    return f"Error from server ({exc.reason}): {exc.message}"


def run(kubeconfig: Path | None, action: Callable[[Session], Awaitable[T]]) -> T:
    """Connect, run ``action``, and map failures to messages and exit codes (see the module notes)."""
    try:
        found = paths.resolve_kubeconfigs(kubeconfig)
        creds = read_kubeconfigs(found, context=kubecontext.chosen())
    except paths.NoKubeconfig as exc:
        die(str(exc), 2)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        die(f"kubeconfig {kubeconfig or '(default)'}: cannot use it: {exc}", 2)
    clock = SystemClock()

    async def main() -> T:
        client = RestClient(creds.server, token=creds.token, ca_pem=creds.ca_pem, insecure=creds.insecure,
                            field_manager=FIELD_MANAGER, clock=clock, timeout=30.0)
        try:
            return await action(Session(client, creds.namespace, creds.server, clock))
        finally:
            await client.aclose()

    try:
        return asyncio.run(main())
    except BadInput as exc:
        die(str(exc), 2)
    except Failed as exc:
        die(str(exc), 1)
    except (errors.Invalid, errors.BadRequest) as exc:
        die(server_error(exc), 2)
    except errors.InternalError as exc:
        hint = " (is `fleetkeeper up` running?)" if "cannot reach" in exc.message else ""
        die(f"{exc.message}{hint}", 1)
    except errors.ApiError as exc:
        die(server_error(exc), 1)


def duration(value: str, flag: str) -> float:
    """A duration flag (``250ms``, ``10s``, ``5m``) in seconds; a bad one is an error naming the flag."""
    try:
        return parse_duration(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint=flag) from None


async def poll(session: Session, probe: Callable[[], Awaitable[T | None]], limit: float, late: str) -> T:
    """Call ``probe`` every :data:`POLL_SECONDS` until it returns something; :class:`Failed`
    saying ``late`` after ``limit`` seconds."""
    start = session.clock.monotonic()
    while True:
        found = await probe()
        if found is not None:
            return found
        if session.clock.monotonic() - start >= limit:
            raise Failed(late)
        await session.clock.sleep(POLL_SECONDS)


__all__ = [
    "FIELD_MANAGER", "POLL_SECONDS", "BadInput", "Failed", "KubeconfigOption", "Session", "die", "duration",
    "poll", "run", "server_error",
]
