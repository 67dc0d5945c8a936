"""Permanent ids on propagation policies (what Karmada's policy webhook does on create).

Karmada's mutating webhook labels every PropagationPolicy with
``propagationpolicy.karmada.io/permanent-id`` (ClusterPropagationPolicy:
``clusterpropagationpolicy.karmada.io/permanent-id``) and its validating webhook keeps
the label from changing. Our admission is pure and cannot see the store, so this small
controller adds the label after the fact. The value is derived from the policy's uid
(:func:`~fleetkeeper.controllers.detector_rules.policy_id`), which is also what the
detector uses for a policy that has no label yet — so the claim the detector records
and the label written here always agree, whichever lands first. An id already present
is never changed.
"""

from __future__ import annotations

import contextlib

from fleetkeeper import errors
from fleetkeeper.api.policy import ClusterPropagationPolicy, PropagationPolicy
from fleetkeeper.controllers import detector_rules as rules
from fleetkeeper.controllers.writes import write
from fleetkeeper.runtime.context import Context
from fleetkeeper.runtime.informer import Informer
from fleetkeeper.runtime.reconcile import Request, Result
from fleetkeeper.runtime.spec import ControllerSpec, Deps, Watch

CONTROLLER_NAME = "policy-permanent-id"


def id_label(policy: rules.Policy) -> str:
    return rules.CLAIM_LABELS[0] if isinstance(policy, PropagationPolicy) else rules.CLAIM_LABELS[1]


def labelled(policy: rules.Policy) -> rules.Policy | None:
    """``policy`` with its permanent-id label, or None when it has one already."""
    key = id_label(policy)
    if policy.labels().get(key):
        return None
    meta = policy.metadata.model_copy(update={"labels": {**policy.labels(), key: rules.policy_id(policy)}})
    return policy.model_copy(update={"metadata": meta})


class PolicyIds:
    """Labels one policy (either kind) with its permanent id."""

    def __init__(self, ctx: Context, pps: Informer[PropagationPolicy],
                 cpps: Informer[ClusterPropagationPolicy]) -> None:
        self._ctx = ctx
        self._pps = pps
        self._cpps = cpps

    async def reconcile(self, request: Request) -> Result:
        policy: rules.Policy | None = (self._pps.get(str(request)) if request.namespace
                                       else self._cpps.get(request.name))
        if policy is None or policy.metadata.deletion_timestamp is not None:
            return Result()
        with contextlib.suppress(errors.NotFound):
            await write(self._ctx.client, policy, labelled)
        return Result()


def _unlabelled(old: rules.Policy | None, new: rules.Policy | None) -> bool:
    return new is not None and not new.labels().get(id_label(new))


def _new(deps: Deps) -> PolicyIds:
    return PolicyIds(deps.ctx, deps.informers.informer_for(PropagationPolicy),
                     deps.informers.informer_for(ClusterPropagationPolicy))


#: watches PropagationPolicies and ClusterPropagationPolicies; writes their permanent-id label
SPEC = ControllerSpec(
    CONTROLLER_NAME, reconciler=_new, kind=PropagationPolicy,
    watches=(Watch(PropagationPolicy, predicate=_unlabelled),
             Watch(ClusterPropagationPolicy, predicate=_unlabelled)),
)


__all__ = ["CONTROLLER_NAME", "SPEC", "PolicyIds", "labelled"]
