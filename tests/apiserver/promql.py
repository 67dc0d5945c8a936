"""Enough of PromQL to check a dashboard or an alert against what ``/metrics`` serves.

:func:`read` tokenizes an expression, checks that its brackets balance, and returns the
metric names it selects, the label names each selector matches on, and the label names
of its ``by``/``without``/``on``/``ignoring``/``group_*`` clauses. Function names (an
identifier before ``(``), aggregation operators, keywords, strings, numbers, durations,
range and subquery brackets and Grafana's ``$variables`` are told apart from metric names.
An expression it cannot tokenize is a ``ValueError`` naming the place.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<string>"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|`[^`]*`)
  | (?P<range>\[[^\]\[]*\])
  | (?P<variable>\$\{?[A-Za-z_][A-Za-z0-9_]*(?::[A-Za-z]+)?\}?)
  | (?P<number>(?:\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)(?:ms|[smhdwy])*|0x[0-9a-fA-F]+|Inf|NaN)
  | (?P<ident>[A-Za-z_:][A-Za-z0-9_:]*)
  | (?P<op>==|!=|=~|!~|>=|<=|[-+*/%^<>=(){},@])
""", re.VERBOSE)
KEYWORDS = frozenset({"and", "or", "unless", "bool", "offset", "start", "end"})
GROUPING = frozenset({"by", "without", "on", "ignoring", "group_left", "group_right"})
#: aggregation operators, which may put their ``by`` clause before the ``(``
AGGREGATIONS = frozenset({"sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values",
                          "bottomk", "topk", "quantile", "limitk", "limit_ratio"})
CLOSE = {"(": ")", "{": "}"}


@dataclass
class Expression:
    """What one expression reads."""

    metrics: set[str] = field(default_factory=set)
    #: (metric, label) of every label matcher of a selector (metric "" for ``{__name__=…}``)
    matchers: set[tuple[str, str]] = field(default_factory=set)
    #: labels of the grouping and matching clauses
    grouping: set[str] = field(default_factory=set)


def tokens(text: str) -> list[tuple[str, str]]:
    """(kind, text) of every token but spaces."""
    out, at = [], 0
    while at < len(text):
        found = TOKEN.match(text, at)
        if found is None:
            raise ValueError(f"cannot read {text[at:at + 20]!r} at {at} of {text!r}")
        kind = found.lastgroup or ""
        if kind != "space":
            out.append((kind, found.group()))
        at = found.end()
    return out


def read(text: str) -> Expression:
    """The metrics and labels ``text`` names (see the module notes)."""
    found = Expression()
    items = tokens(text)
    stack: list[tuple[str, str]] = []  # (opening bracket, what it is: call/group/labels/matcher)
    selector = ""
    for index, (kind, value) in enumerate(items):
        following = items[index + 1][1] if index + 1 < len(items) else ""
        inside = stack[-1][1] if stack else ""
        if kind == "op" and value in CLOSE:
            role = "matcher" if value == "{" else ("labels" if _grouping_before(items, index) else "call")
            stack.append((value, role))
            if value == "{" and not (index and items[index - 1][0] == "ident"):
                selector = ""
            continue
        if kind == "op" and value in ("}", ")"):
            if not stack or CLOSE[stack[-1][0]] != value:
                raise ValueError(f"unbalanced {value!r} in {text!r}")
            stack.pop()
            continue
        if kind != "ident":
            continue
        if inside == "matcher":
            if following in ("=", "!=", "=~", "!~"):
                found.matchers.add((selector, value))
        elif inside == "labels":
            found.grouping.add(value)
        elif value in KEYWORDS or value in GROUPING or value in AGGREGATIONS or following == "(":
            continue
        else:
            found.metrics.add(value)
            selector = value
    if stack:
        raise ValueError(f"unclosed {stack[-1][0]!r} in {text!r}")
    return found


def _grouping_before(items: list[tuple[str, str]], index: int) -> bool:
    return index > 0 and items[index - 1][0] == "ident" and items[index - 1][1] in GROUPING


__all__ = ["Expression", "read", "tokens"]
