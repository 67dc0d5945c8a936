"""With failover readiness off, no binding keeps a ``FailoverReady`` condition from when it was on.

A plane that ran with ``failover_readiness`` and now runs without it would otherwise leave each
binding's last condition in place — a verdict about a fleet that has since changed, shown by
``kubectl get rb`` and ``describe`` as if current. So when readiness is off, the leading plane
sweeps the bindings once, after its caches have synced, and removes the condition from each
that has one; then it is done (nothing writes the condition while readiness is off). The
writes wait their turn behind failover work, like the readiness controller's own.
"""

from __future__ import annotations

import structlog

from fleetkeeper import errors
from fleetkeeper.api.work import Binding, ResourceBinding
from fleetkeeper.controllers.writes import write
from fleetkeeper.readiness.assess import CONDITION
from fleetkeeper.runtime.bindings import BindingInformers
from fleetkeeper.runtime.context import Context
from fleetkeeper.runtime.spec import ControllerSpec, Deps, Runs
from fleetkeeper.runtime.turns import OTHERS, Turns

NAME = "failover-readiness-cleanup"
_log = structlog.get_logger(NAME)


def _has_condition(binding: Binding) -> bool:
    return any(c.type == CONDITION for c in binding.status.conditions or ())


def _without(current: Binding) -> Binding | None:
    if not _has_condition(current):
        return None
    kept = [c for c in current.status.conditions or () if c.type != CONDITION]
    return current.model_copy(update={"status": current.status.model_copy(update={"conditions": kept})})


class Sweeper:
    """Removes every binding's ``FailoverReady`` condition once (a runnable; see the module notes)."""

    needs_leader_election = True
    name = NAME

    def __init__(self, ctx: Context, bindings: BindingInformers, turns: Turns) -> None:
        self._ctx, self._bindings, self._turns = ctx, bindings, turns
        #: how many conditions it removed
        self.removed = 0

    async def run(self) -> None:
        for informer in self._bindings.pair:
            await informer.wait_for_sync()
        for binding in self._bindings.list():
            if not _has_condition(binding):
                continue
            await self._turns.wait(OTHERS)
            try:
                if await write(self._ctx.client, binding, _without, subresource="status") is not None:
                    self.removed += 1
            except errors.NotFound:
                continue
            except errors.FleetkeeperError as exc:
                _log.warning("removing a FailoverReady condition failed", binding=binding.key,
                             error=str(exc))
        if self.removed:
            _log.info("failover readiness is off: removed the FailoverReady conditions it had written",
                      bindings=self.removed)


def _new(deps: Deps) -> Sweeper:
    return Sweeper(deps.ctx, BindingInformers(deps.informers), deps.turns)


#: removes the conditions failover readiness left behind (control plane, when it is off)
SPEC = ControllerSpec(NAME, runnable=_new, kind=ResourceBinding, runs=Runs.PLANE,
                      enabled=lambda options: not options.failover_readiness)


__all__ = ["NAME", "SPEC", "Sweeper"]
