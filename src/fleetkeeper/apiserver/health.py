"""``/healthz``, ``/livez`` and ``/readyz`` as kube-apiserver answers them.

Each endpoint runs a list of named checks: ``ping`` (the server answers), ``etcd`` (the
store answers a read within :data:`STORE_TIMEOUT`) and, for ``/readyz`` only,
``shutdown`` (the server is not shutting down) and whatever the serving process adds
(``fleetkeeper up`` adds ``control-plane``: the rest of the plane is up, as kube-apiserver's
post-start hooks are). The answer is kube-apiserver's:

* all pass → ``200 ok``; with ``?verbose`` one line per check and a verdict::

      [+]ping ok
      [+]etcd ok
      [+]shutdown ok
      readyz check passed

* one fails → ``500`` with the same list, the failing check ``[-]shutdown failed: reason
  withheld``, and ``readyz check failed``;
* ``?exclude=etcd`` (repeatable) skips a check (``[+]etcd excluded: ok``); a name no check
  has is reported as a warning line;
* ``/readyz/etcd`` runs that one check: ``ok``, or ``500`` ``internal server error: …``.

They answer anyone, as kube-apiserver's ``system:public-info-viewer`` allows
(:data:`~fleetkeeper.apiserver.auth.PUBLIC_PATHS`); a check's reason is only given to the
per-check path, where kube-apiserver gives it too. The query is bounded like every
other, and at most :data:`MAX_EXCLUDES` names of :data:`MAX_NAME` characters are read.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from starlette.datastructures import QueryParams
from starlette.responses import PlainTextResponse, Response

from fleetkeeper import errors
from fleetkeeper.api.scheme import GroupKind
from fleetkeeper.apiserver.state import ServerState

#: how long the ``etcd`` check waits for the store (seconds)
STORE_TIMEOUT = 2.0
MAX_EXCLUDES = 16
MAX_NAME = 64
NAMESPACE = GroupKind("", "Namespace")


@dataclass(frozen=True)
class Check:
    """One named check: ``None`` when it passes, else why not."""

    name: str
    run: Callable[[ServerState], Awaitable[str | None]]


async def _ping(state: ServerState) -> str | None:
    return None


async def _store(state: ServerState) -> str | None:
    try:
        async with asyncio.timeout(STORE_TIMEOUT):
            await state.store.get(NAMESPACE, "", "default")
    except errors.NotFound:
        return None
    except TimeoutError:
        return f"the store did not answer within {STORE_TIMEOUT:g}s"
    except errors.FleetkeeperError as exc:
        return f"the store failed: {exc}"
    return None


async def _shutdown(state: ServerState) -> str | None:
    return "the server is shutting down" if state.closing.is_set() else None


PING, ETCD, SHUTDOWN = Check("ping", _ping), Check("etcd", _store), Check("shutdown", _shutdown)
#: each endpoint's checks, in the order they are listed
CHECKS: dict[str, tuple[Check, ...]] = {"healthz": (PING, ETCD), "livez": (PING, ETCD),
                                        "readyz": (PING, ETCD, SHUTDOWN)}


async def root(state: ServerState, endpoint: str, query: QueryParams, *, extra: Sequence[Check] = ()
               ) -> Response:
    """``/<endpoint>``: every check, then the ``extra`` ones (see the module notes)."""
    excluded = {name[:MAX_NAME] for name in query.getlist("exclude")[:MAX_EXCLUDES]}
    lines: list[str] = []
    failed = False
    for check in (*CHECKS[endpoint], *extra):
        if check.name in excluded:
            excluded.discard(check.name)
            lines.append(f"[+]{check.name} excluded: ok")
            continue
        if await check.run(state) is None:
            lines.append(f"[+]{check.name} ok")
        else:
            failed = True
            lines.append(f"[-]{check.name} failed: reason withheld")
    if excluded:
        names = _quoted(sorted(excluded))
        lines.append(f"warn: some health checks cannot be excluded: no matches for {names}")
    if failed:
        return _text("\n".join([*lines, f"{endpoint} check failed"]) + "\n", 500)
    if "verbose" not in query:
        return _text("ok", 200)
    return _text("\n".join([*lines, f"{endpoint} check passed"]) + "\n", 200)


async def single(state: ServerState, endpoint: str, name: str, *, extra: Sequence[Check] = ()) -> Response:
    """``/<endpoint>/<name>``: one check; a name the endpoint has no check for is 404."""
    found = next((check for check in (*CHECKS[endpoint], *extra) if check.name == name), None)
    if found is None:
        raise errors.NotFound("the server could not find the requested resource")
    reason = await found.run(state)
    if reason is not None:
        return _text(f"internal server error: {reason}\n", 500)
    return _text("ok", 200)


def _quoted(names: Sequence[str]) -> str:
    return "[" + " ".join(f'"{name}"' for name in names) + "]"


def _text(body: str, code: int) -> Response:
    return PlainTextResponse(body, status_code=code, headers={"X-Content-Type-Options": "nosniff"})


__all__ = ["CHECKS", "MAX_EXCLUDES", "STORE_TIMEOUT", "Check", "root", "single"]
