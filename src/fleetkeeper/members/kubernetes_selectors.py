"""Label selectors, from the string the Member protocol takes to lightkube's operators.

The Member protocol passes label selectors as strings (``tier=web,env in (a,b)``), as
the Kubernetes API does; lightkube builds the query parameter from ``(key, operator)``
pairs. Parsing the string with fleetkeeper's own parser first means a malformed
selector fails the same way on every backend (``errors.BadRequest``) and before any
request is sent.
"""

from __future__ import annotations

from typing import Any

from lightkube import operators

from fleetkeeper.api.selectors import Requirement, parse_label_selector


def _operator(requirement: Requirement) -> operators.Operator[Any]:
    values = sorted(requirement.values)
    op = requirement.operator
    if op == "=":
        return operators.equal(values[0])
    if op == "!=":
        return operators.not_equal(values[0])
    if op == "in":
        return operators.in_(values)
    if op == "notin":
        return operators.not_in(values)
    if op == "exists":
        return operators.exists()
    if op == "!":
        return operators.not_exists()
    return operators.BinaryOperator(op, ">" if op == "gt" else "<", values[0])


def label_pairs(selector: str | None) -> Any:
    """lightkube's ``labels=`` for a selector string (None: no selector).

    A list of pairs rather than a dict, so one key may carry two requirements
    (``a!=x,a!=y``); lightkube accepts both, though its annotation names only the dict.
    """
    requirements = parse_label_selector(selector or "")
    if not requirements:
        return None
    return [(requirement.key, _operator(requirement)) for requirement in requirements]


__all__ = ["label_pairs"]
