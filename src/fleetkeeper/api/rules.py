"""One import for the pure API rules many controllers share.

The rules live by concept in :mod:`~fleetkeeper.api.conditions`,
:mod:`~fleetkeeper.api.taints` and :mod:`~fleetkeeper.api.matching`; this module
gathers their public functions so ``from fleetkeeper.api import rules`` then
``rules.set_condition(...)`` works too.
"""

from __future__ import annotations

from fleetkeeper.api.conditions import get_condition, is_condition_true, remove_condition, set_condition
from fleetkeeper.api.matching import (
    ImplicitPriority,
    cluster_fields,
    cluster_matches,
    node_requirement_matches,
    resource_selector_matches,
    resource_selector_priority,
    resource_selectors_priority,
)
from fleetkeeper.api.taints import (
    same_taint,
    same_toleration,
    taint_exists,
    tolerates,
    tolerations_tolerate_taint,
    untolerated_taints,
)

__all__ = [
    "ImplicitPriority", "cluster_fields", "cluster_matches", "get_condition", "is_condition_true",
    "node_requirement_matches", "remove_condition", "resource_selector_matches", "resource_selector_priority",
    "resource_selectors_priority", "same_taint", "same_toleration", "set_condition", "taint_exists",
    "tolerates", "tolerations_tolerate_taint", "untolerated_taints",
]
