"""What a terminating Namespace says about its deletion: Kubernetes' five deletion conditions.

While the namespace cleanup empties a Namespace it reports, as kube-controller-manager
does, why the Namespace is still there — so ``kubectl describe namespace`` answers "why
is it stuck in Terminating?" with the same words as on any Kubernetes cluster:

* ``NamespaceContentRemaining`` — ``Some resources are remaining: works.work.karmada.io has
  1 resource instances`` (``<plural>.<group>``, the core group as ``pods.``);
* ``NamespaceFinalizersRemaining`` — ``Some content in the namespace has finalizers
  remaining: karmada.io/execution-controller in 1 resource instances``;
* ``NamespaceDeletionContentFailure`` — the deletes that failed, with their errors;
* ``NamespaceDeletionDiscoveryFailure`` and ``NamespaceDeletionGroupVersionParsingFailure``
  — always ``False``: the kinds come from the scheme, there is nothing to discover.

Each condition keeps its ``lastTransitionTime`` while its status stays, and the five come
in Kubernetes' order. Pure functions; the cleanup compares and writes.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from fleetkeeper.api.base import format_time

DISCOVERY_FAILURE = "NamespaceDeletionDiscoveryFailure"
PARSING_FAILURE = "NamespaceDeletionGroupVersionParsingFailure"
CONTENT_FAILURE = "NamespaceDeletionContentFailure"
CONTENT_REMAINING = "NamespaceContentRemaining"
FINALIZERS_REMAINING = "NamespaceFinalizersRemaining"

#: (type, reason, message) when all is well, in the order Kubernetes writes them
_OKAY: tuple[tuple[str, str, str], ...] = (
    (DISCOVERY_FAILURE, "ResourcesDiscovered", "All resources successfully discovered"),
    (PARSING_FAILURE, "ParsedGroupVersions", "All legacy kube types successfully parsed"),
    (CONTENT_FAILURE, "ContentDeleted", "All content successfully deleted, may be waiting on finalization"),
    (CONTENT_REMAINING, "ContentRemoved", "All content successfully removed"),
    (FINALIZERS_REMAINING, "ContentHasNoFinalizers", "All content-preserving finalizers finished"),
)


@dataclass
class Content:
    """What one pass over a terminating namespace left: objects still there by resource
    (``<plural>.<group>``), their finalizers, and the deletes that failed."""

    remaining: Counter[str] = field(default_factory=Counter)
    finalizers: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)

    def left(self, resource: str, finalizers: list[str] | None) -> None:
        """One object of ``resource`` is still there, held by ``finalizers``."""
        self.remaining[resource] += 1
        for finalizer in finalizers or ():
            self.finalizers[finalizer] += 1

    @property
    def total(self) -> int:
        return sum(self.remaining.values())


def resource_name(plural: str, group: str) -> str:
    """How Kubernetes names a resource in these messages: ``deployments.apps``, ``pods.``."""
    return f"{plural}.{group}"


def _problems(content: Content) -> dict[str, tuple[str, str]]:
    """The conditions that are ``True`` now: type → (reason, message)."""
    out: dict[str, tuple[str, str]] = {}
    if content.failures:
        out[CONTENT_FAILURE] = ("ContentDeletionFailed",
                                f"Failed to delete all resource types, {len(content.failures)} remaining: "
                                + ", ".join(content.failures))
    resources = sorted(f"{name} has {count} resource instances"
                       for name, count in content.remaining.items() if count)
    if resources:
        out[CONTENT_REMAINING] = ("SomeResourcesRemain",
                                  "Some resources are remaining: " + ", ".join(resources))
    held = sorted(f"{name} in {count} resource instances"
                  for name, count in content.finalizers.items() if count)
    if held:
        out[FINALIZERS_REMAINING] = (
            "SomeFinalizersRemain",
            "Some content in the namespace has finalizers remaining: " + ", ".join(held))
    return out


def deletion_conditions(current: list[dict[str, Any]] | None, content: Content,
                        now: datetime) -> list[dict[str, Any]]:
    """The Namespace's conditions after a pass that left ``content``: the five deletion
    conditions (any other condition is kept, after them)."""
    problems = _problems(content)
    before = {c.get("type"): c for c in current or ()}
    stamp = format_time(now)
    out: list[dict[str, Any]] = []
    for type_, okay_reason, okay_message in _OKAY:
        status = "True" if type_ in problems else "False"
        reason, message = problems.get(type_, (okay_reason, okay_message))
        old = before.get(type_)
        since = old.get("lastTransitionTime") if old is not None and old.get("status") == status else None
        out.append({"type": type_, "status": status, "lastTransitionTime": since or stamp,
                    "reason": reason, "message": message})
    ours = {type_ for type_, _, _ in _OKAY}
    out.extend(c for c in current or () if c.get("type") not in ours)
    return out


__all__ = ["CONTENT_FAILURE", "CONTENT_REMAINING", "DISCOVERY_FAILURE", "FINALIZERS_REMAINING",
           "PARSING_FAILURE", "Content", "deletion_conditions", "resource_name"]
