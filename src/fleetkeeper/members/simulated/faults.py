"""How a simulated cluster's API answers, and the gate every call passes.

The scenario actions of docs/scenario-format.md map onto one :class:`ApiState` plus two
independent flags:

* ``DOWN`` (``clusterDown``) — connection refused: every call raises
  ``errors.MemberUnreachable`` at once, so probes fail immediately;
* ``BLACKHOLE`` (``clusterBlackhole``) — requests vanish: every call waits on the clock
  and, after ``call_timeout`` seconds (if set), raises ``errors.MemberTimeout``. Callers
  normally bound their own wait (``asyncio.wait_for``) and see their timeout first. A
  call that entered the black hole stays lost even if the cluster comes back meanwhile,
  as a request dropped on the wire would;
* ``UNHEALTHY`` (``clusterUnhealthy``) — the API answers, ``/readyz`` and ``/healthz``
  return 500;
* ``UP`` (``clusterUp``) — normal.

``dns_ok`` (``dnsDown``/``dnsUp``) and ``agent_ok`` (``agentDown``/``agentUp``) are flags
that others read: the cluster model itself keeps running whatever they say.

Open watches break when the API goes down or into the black hole: the consumer's next
read fails the way a call would have at that moment (see ``watch.py``).
"""

from __future__ import annotations

import asyncio
import enum
from typing import NoReturn

from fleetkeeper import errors
from fleetkeeper.clock import Clock


class ApiState(enum.Enum):
    UP = "up"
    DOWN = "down"
    BLACKHOLE = "blackhole"
    UNHEALTHY = "unhealthy"


async def fail(state: ApiState, cluster: str, *, clock: Clock, call_timeout: float | None) -> NoReturn:
    """Fail one call the way ``state`` makes it fail (DOWN or BLACKHOLE)."""
    if state is ApiState.DOWN:
        raise errors.MemberUnreachable(f"member cluster {cluster!r}: connection refused")
    if call_timeout is None:
        await asyncio.get_running_loop().create_future()  # never resolves: the caller's bound ends it
    await clock.sleep(call_timeout or 0.0)
    raise errors.MemberTimeout(f"member cluster {cluster!r}: no answer within {call_timeout}s")


def refuses(state: ApiState) -> bool:
    """Whether calls fail in this state (the API is down or a black hole)."""
    return state in (ApiState.DOWN, ApiState.BLACKHOLE)


__all__ = ["ApiState", "fail", "refuses"]
