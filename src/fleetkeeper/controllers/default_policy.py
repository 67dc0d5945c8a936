"""The default ClusterTaintPolicy: failover on by default, visible and editable.

Karmada ships cluster failover switched off: a cluster going NotReady only gets
NoSchedule taints, and nothing moves until an operator writes a ClusterTaintPolicy
that adds a NoExecute taint. fleetkeeper exists for failover, so it installs that
policy itself (docs/architecture.md, Failover safety) — as an ordinary object anyone can read
(``kubectl get clustertaintpolicies``), edit or delete, not as hidden behaviour:

* name ``fleetkeeper-default-not-ready``, all clusters;
* add ``cluster.karmada.io/not-ready:NoExecute`` when ``Ready`` is not ``True`` (False
  or Unknown — a condition that is absent matches nothing, so a cluster that was
  never probed is not tainted);
* remove it when ``Ready`` is ``True``.

The safety nets that make this default safe live elsewhere: the failure threshold
(cluster-status), the partition circuit breaker (taint-manager) and the "never
homeless" invariant (graceful-eviction).

:class:`Installer` creates the policy once, when the control plane starts and the
policy does not exist; an existing policy (edited or not) is left as it is. To turn the
default off for good, set ``default_cluster_taint_policy`` to false (a deleted policy
comes back at the next start otherwise).
"""

from __future__ import annotations

import structlog

from fleetkeeper import errors
from fleetkeeper.api import constants
from fleetkeeper.api.meta import ObjectMeta
from fleetkeeper.api.taintpolicy import (
    ClusterTaintPolicy,
    ClusterTaintPolicySpec,
    MatchCondition,
    PolicyTaint,
)
from fleetkeeper.options import Options
from fleetkeeper.runtime.backoff import Backoff
from fleetkeeper.runtime.context import Context
from fleetkeeper.runtime.spec import ControllerSpec, Deps, Runs

NAME = "fleetkeeper-default-not-ready"
MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
DESCRIPTION_ANNOTATION = "fleetkeeper.io/description"
DESCRIPTION = ("Installed by fleetkeeper (option default_cluster_taint_policy): workloads leave a cluster "
               "whose Ready condition is not True. Edit it to change when failover starts, or set the "
               "option to false and delete it to turn cluster failover off.")

_log = structlog.get_logger("fleetkeeper.default_policy")


def default_taint_policy() -> ClusterTaintPolicy:
    """The default policy: NoExecute ``not-ready`` while Ready≠True, removed when Ready=True."""
    return ClusterTaintPolicy(
        metadata=ObjectMeta(name=NAME, labels={MANAGED_BY_LABEL: "fleetkeeper"},
                            annotations={DESCRIPTION_ANNOTATION: DESCRIPTION}),
        spec=ClusterTaintPolicySpec(
            add_on_conditions=[MatchCondition(condition_type=constants.COND_READY, operator="NotIn",
                                              status_values=["True"])],
            remove_on_conditions=[MatchCondition(condition_type=constants.COND_READY, operator="In",
                                                 status_values=["True"])],
            taints=[PolicyTaint(key=constants.TAINT_CLUSTER_NOT_READY, effect="NoExecute")],
        ),
    )


class Installer:
    """Creates the default policy if it does not exist, then finishes (a runnable)."""

    needs_leader_election = True
    name = "default-cluster-taint-policy"

    def __init__(self, ctx: Context) -> None:
        self._ctx = ctx
        self._backoff = Backoff(clock=ctx.clock)

    async def install(self) -> bool:
        """Create the policy unless it exists; whether it was created now."""
        client = self._ctx.client
        try:
            await client.get(ClusterTaintPolicy, NAME)
            return False
        except errors.NotFound:
            pass
        try:
            await client.create(default_taint_policy())
        except errors.AlreadyExists:
            return False
        _log.info("installed the default ClusterTaintPolicy", name=NAME)
        return True

    async def run(self) -> None:
        while True:
            try:
                await self.install()
                return
            except errors.FleetkeeperError as exc:
                _log.warning("installing the default ClusterTaintPolicy failed; retrying", error=str(exc))
            await self._ctx.clock.sleep(self._backoff.next())


def _wanted(options: Options) -> bool:
    return options.default_cluster_taint_policy


def _new(deps: Deps) -> Installer:
    return Installer(deps.ctx)


#: installs the default policy once (control plane, when the option is on)
SPEC = ControllerSpec(Installer.name, runnable=_new, kind=ClusterTaintPolicy, runs=Runs.PLANE,
                      enabled=_wanted)


__all__ = ["NAME", "SPEC", "Installer", "default_taint_policy"]
