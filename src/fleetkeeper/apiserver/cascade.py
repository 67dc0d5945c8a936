"""What a DELETE's ``propagationPolicy`` does to a resource template's binding.

In Karmada a ResourceBinding (or ClusterResourceBinding) is a dependent of its resource
template: the detector sets the template as its controlling owner (``blockOwnerDeletion``),
and Kubernetes' garbage collector removes the binding — and with it the Works and the
members' copies — when the template goes. fleetkeeper has no general garbage collector;
the detector deletes the binding of a template that is gone, *if the template still owns
it*. The three policies then behave as in Kubernetes:

* ``Background`` (the default): the template goes at once, the binding after it;
* ``Orphan`` (``kubectl delete --cascade=orphan``, or ``orphanDependents: true``): the
  ownerReference to the template is removed from its bindings first, so they stay —
  and so do their Works and what runs in the members, as Karmada leaves them when the
  garbage collector orphans a binding;
* ``Foreground`` (``--cascade=foreground``): a template that owns a binding gets the
  ``foregroundDeletion`` finalizer and stays, deleting, until the detector has removed
  the binding; kubectl waits for that. A template that owns none is deleted at once.

Only bindings are dependents here: of other kinds' ownerReferences nothing is removed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fleetkeeper import errors
from fleetkeeper.api import constants
from fleetkeeper.api.scheme import GroupKind
from fleetkeeper.apiserver.state import ServerState

RB = GroupKind("work.karmada.io", "ResourceBinding")
CRB = GroupKind("work.karmada.io", "ClusterResourceBinding")
#: groups whose objects are never resource templates (they have no bindings)
_NOT_TEMPLATES = frozenset({"work.karmada.io", "policy.karmada.io", "cluster.karmada.io",
                            "config.karmada.io", "apps.karmada.io", "fleetkeeper.io",
                            "coordination.k8s.io", "events.k8s.io"})
#: how many times a write that lost a race is tried again
_RETRIES = 5


def policy_of(propagation_policy: str | None, orphan_dependents: bool | None) -> str:
    """The propagation policy a DELETE asks for (``orphanDependents`` is the older spelling)."""
    if propagation_policy:
        return propagation_policy
    return "Orphan" if orphan_dependents else "Background"


async def owned_bindings(state: ServerState, obj: dict[str, Any]) -> list[dict[str, Any]]:
    """The bindings ``obj`` owns (by uid), live from the store."""
    meta = obj.get("metadata") or {}
    uid, group = meta.get("uid"), str(obj.get("apiVersion") or "").rpartition("/")[0]
    if not uid or group in _NOT_TEMPLATES:
        return []
    namespace = meta.get("namespace")
    listed = await state.store.list(RB, namespace) if namespace else await state.store.list(CRB)
    return [b for b in listed.items if any(ref.get("uid") == uid for ref in _owners(b))]


async def orphan(state: ServerState, obj: dict[str, Any]) -> None:
    """Remove ``obj``'s ownerReference from every binding it owns."""
    uid = (obj.get("metadata") or {}).get("uid")
    for binding in await owned_bindings(state, obj):
        await _retry(state, binding, lambda b: _without_owner(b, uid))


async def hold_for_dependents(state: ServerState, obj: dict[str, Any]) -> bool:
    """Give ``obj`` the ``foregroundDeletion`` finalizer if it owns a binding; whether it did."""
    if not await owned_bindings(state, obj):
        return False
    await _retry(state, obj, _with_foreground)
    return True


def _owners(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return list((obj.get("metadata") or {}).get("ownerReferences") or ())


def _without_owner(binding: dict[str, Any], uid: str | None) -> dict[str, Any] | None:
    kept = [ref for ref in _owners(binding) if ref.get("uid") != uid]
    if len(kept) == len(_owners(binding)):
        return None
    if kept:
        binding["metadata"]["ownerReferences"] = kept
    else:
        binding["metadata"].pop("ownerReferences", None)
    return binding


def _with_foreground(obj: dict[str, Any]) -> dict[str, Any] | None:
    finalizers = list(obj["metadata"].get("finalizers") or ())
    if constants.FOREGROUND_DELETION_FINALIZER in finalizers:
        return None
    obj["metadata"]["finalizers"] = [*finalizers, constants.FOREGROUND_DELETION_FINALIZER]
    return obj


async def _retry(state: ServerState, obj: dict[str, Any],
                 change: Callable[[dict[str, Any]], dict[str, Any] | None]) -> None:
    """Apply ``change`` (stored object → object to write, or None) with optimistic concurrency."""
    meta = obj["metadata"]
    gk = GroupKind(str(obj.get("apiVersion") or "").rpartition("/")[0], str(obj.get("kind")))
    for _ in range(_RETRIES):
        try:
            current = await state.store.get(gk, meta.get("namespace") or "", meta["name"])
        except errors.NotFound:
            return
        wanted = change(current)
        if wanted is None:
            return
        try:
            await state.store.update(wanted)
            return
        except errors.Conflict:
            continue
    raise errors.Conflict(f"{gk.kind} {meta['name']} kept changing while its dependents were handled")


__all__ = ["CRB", "RB", "hold_for_dependents", "orphan", "owned_bindings", "policy_of"]
