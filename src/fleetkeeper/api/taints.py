"""Taints and tolerations: identity and the "tolerates" rule.

Two taints are the same taint when key and effect are equal (the value is ignored);
two tolerations are the same when key, effect, operator and value are equal. A
toleration tolerates a taint when its effect (empty = any) and key (empty = any) agree
and, for ``Equal`` (or empty), the values are equal; ``Exists`` tolerates any value.
The comparison operators ``Lt``/``Gt`` never tolerate (Karmada disables them), nor does
any other operator. Pure functions used by the scheduler, the taint manager, the
cluster controllers and admission.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from fleetkeeper.api.core import Taint, Toleration
from fleetkeeper.api.taintpolicy import PolicyTaint

AnyTaint = Taint | PolicyTaint


def same_taint(a: AnyTaint, b: AnyTaint) -> bool:
    """Taint identity: equal ``key`` and ``effect``."""
    return a.key == b.key and a.effect == b.effect


def taint_exists(taints: Iterable[AnyTaint] | None, taint: AnyTaint) -> bool:
    """Whether a taint with the same key and effect is in ``taints``."""
    return any(same_taint(t, taint) for t in taints or ())


def same_toleration(a: Toleration, b: Toleration) -> bool:
    """Toleration identity: key, effect, operator and value (``tolerationSeconds`` ignored)."""
    return (a.key or "", a.effect or "", a.operator or "", a.value or "") == (
        b.key or "", b.effect or "", b.operator or "", b.value or "")


def tolerates(toleration: Toleration, taint: AnyTaint) -> bool:
    """Whether ``toleration`` tolerates ``taint``."""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    operator = toleration.operator or "Equal"
    if operator == "Equal":
        return (toleration.value or "") == (taint.value or "")
    return operator == "Exists"


def tolerations_tolerate_taint(tolerations: Iterable[Toleration] | None, taint: AnyTaint) -> bool:
    """Whether any of ``tolerations`` tolerates ``taint``."""
    return any(tolerates(t, taint) for t in tolerations or ())


def untolerated_taints(taints: Iterable[AnyTaint] | None, tolerations: Sequence[Toleration] | None,
                       *, effects: Iterable[str] | None = None) -> list[AnyTaint]:
    """The taints (of ``effects``, all when ``None``) no toleration tolerates, in order."""
    wanted = None if effects is None else frozenset(effects)
    return [t for t in taints or ()
            if (wanted is None or t.effect in wanted) and not tolerations_tolerate_taint(tolerations, t)]


__all__ = [
    "AnyTaint", "same_taint", "same_toleration", "taint_exists", "tolerates", "tolerations_tolerate_taint",
    "untolerated_taints",
]
