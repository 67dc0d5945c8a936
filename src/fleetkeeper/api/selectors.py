"""Kubernetes label and field selectors: parsing and matching.

Label selectors come in two shapes and both end up as the same value, a tuple of
:class:`Requirement` (all must hold):

* the string form of ``?labelSelector=`` and ``kubectl -l``:
  ``a=b,c!=d,e in (x,y),f notin (z),g,!h`` (``==`` is ``=``; ``k>3``/``k<3`` compare
  integers, as Kubernetes allows);
* a :class:`~fleetkeeper.api.meta.LabelSelector` model (``matchLabels`` plus
  ``matchExpressions`` with In/NotIn/Exists/DoesNotExist).

Matching follows ``k8s.io/apimachinery/pkg/labels``: ``!=`` and ``notin`` also match
objects that lack the label; ``in``/``=`` need it. An empty selector matches everything.

Field selectors (``?fieldSelector=metadata.name=x,spec.foo!=bar``) support ``=``,
``==`` and ``!=`` over dotted paths into the wire dict; a missing field compares as the
empty string, booleans as ``true``/``false``. Values may escape ``\\,``, ``\\=``, ``\\!``
and ``\\\\`` as Kubernetes' ``fields.EscapeValue`` does.

Everything here is pure; parse errors raise :class:`fleetkeeper.errors.BadRequest`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from fleetkeeper import errors
from fleetkeeper.api.meta import LabelSelector

Operator = Literal["=", "!=", "in", "notin", "exists", "!", "gt", "lt"]


@dataclass(frozen=True, slots=True)
class Requirement:
    """One label requirement: ``key <operator> values``."""

    key: str
    operator: Operator
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op == "exists":
            return self.key in labels
        if op == "!":
            return self.key not in labels
        value = labels.get(self.key)
        if op in ("=", "in"):
            return value is not None and value in self.values
        if op in ("!=", "notin"):
            return value is None or value not in self.values
        return _compare_int(value, next(iter(self.values)), greater=op == "gt")


#: All requirements must hold; the empty tuple matches everything.
LabelRequirements = tuple[Requirement, ...]


@dataclass(frozen=True, slots=True)
class FieldRequirement:
    """One field requirement: ``path`` (dotted) equals / differs from ``value``."""

    path: str
    value: str
    equal: bool = True

    def matches(self, obj: Mapping[str, Any]) -> bool:
        return (field_value(obj, self.path) == self.value) == self.equal


FieldRequirements = tuple[FieldRequirement, ...]


def _compare_int(value: str | None, bound: str, *, greater: bool) -> bool:
    if value is None:
        return False
    try:
        have, want = int(value), int(bound)
    except ValueError:
        return False
    return have > want if greater else have < want


# --------------------------------------------------------------------------- validation

_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
_DNS1123_SUBDOMAIN = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_KEY_RE = re.compile(rf"^(({_DNS1123_SUBDOMAIN})/)?{_NAME}$")
_VALUE_RE = re.compile(rf"^({_NAME})?$")


def _check_key(key: str) -> None:
    prefix, _, _ = key.rpartition("/")
    if not _KEY_RE.match(key) or len(prefix) > 253:
        raise errors.BadRequest(f"invalid label key {key!r}: must be a qualified name "
                                "(optional DNS prefix and '/', then up to 63 alphanumerics, '-', '_', '.')")


def _check_value(value: str) -> None:
    if not _VALUE_RE.match(value):
        raise errors.BadRequest(f"invalid label value {value!r}: must be empty or up to 63 alphanumerics, "
                                "'-', '_', '.', starting and ending with an alphanumeric")


# --------------------------------------------------------------------------- label parsing

_TOKEN_RE = re.compile(r"\s*(?:(?P<op>==|!=|=|\(|\)|,|!|>|<)|(?P<word>[^\s=!(),<>]+))")


def _tokenize(text: str) -> list[str]:
    tokens: list[str] = []
    end = len(text.rstrip())
    pos = 0
    while pos < end:
        match = _TOKEN_RE.match(text, pos)
        if match is None:  # pragma: no cover - the pattern accepts every non-space character
            raise errors.BadRequest(f"unable to parse label selector {text!r} at position {pos}")
        tokens.append(match.group("op") or match.group("word") or "")
        pos = match.end()
    return tokens


class _LabelParser:
    """Recursive-descent parser over tokens of the string form (one requirement at a time)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokenize(text)
        self.pos = 0

    def error(self, what: str) -> errors.BadRequest:
        return errors.BadRequest(f"unable to parse label selector {self.text!r}: {what}")

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> str:
        token = self.peek()
        if token is None:
            raise self.error("unexpected end")
        self.pos += 1
        return token

    def word(self, what: str) -> str:
        token = self.take()
        if token in ("==", "!=", "=", "(", ")", ",", "!", ">", "<"):
            raise self.error(f"expected {what}, found {token!r}")
        return token

    def parse(self) -> LabelRequirements:
        reqs: list[Requirement] = []
        while self.peek() is not None:
            reqs.append(self.requirement())
            if self.peek() is not None and self.take() != ",":
                raise self.error("expected ',' between requirements")
            if self.peek() is None and self.tokens and self.tokens[-1] == ",":
                raise self.error("trailing ','")
        return tuple(reqs)

    def requirement(self) -> Requirement:
        if self.peek() == "!":
            self.take()
            key = self.word("a label key")
            _check_key(key)
            return Requirement(key, "!")
        key = self.word("a label key")
        _check_key(key)
        op = self.peek()
        if op is None or op == ",":
            return Requirement(key, "exists")
        self.take()
        if op in ("=", "==", "!="):
            value = self._single_value()
            return Requirement(key, "!=" if op == "!=" else "=", frozenset((value,)))
        if op in (">", "<"):
            bound = self.word("an integer")
            if not re.fullmatch(r"-?\d+", bound):
                raise self.error(f"{bound!r} is not an integer")
            return Requirement(key, "gt" if op == ">" else "lt", frozenset((bound,)))
        if op in ("in", "notin"):
            return Requirement(key, "in" if op == "in" else "notin", self._value_set())
        raise self.error(f"unknown operator {op!r} after {key!r}")

    def _single_value(self) -> str:
        token = self.peek()
        if token is None or token == ",":
            return ""  # ``a=`` selects the empty value, as Kubernetes does
        value = self.word("a label value")
        _check_value(value)
        return value

    def _value_set(self) -> frozenset[str]:
        if self.take() != "(":
            raise self.error("expected '(' after in/notin")
        if self.peek() == ")":
            raise self.error("the value set of in/notin must not be empty")
        values: list[str] = []
        while True:
            token = self.peek()
            if token in (",", ")"):
                values.append("")  # empty member, e.g. ``in (a,)``
            else:
                value = self.word("a label value")
                _check_value(value)
                values.append(value)
            sep = self.take()
            if sep == ")":
                break
            if sep != ",":
                raise self.error(f"expected ',' or ')' in value set, found {sep!r}")
        return frozenset(values)


def parse_label_selector(text: str) -> LabelRequirements:
    """Parse the string form of a label selector (raises ``errors.BadRequest``)."""
    if not text.strip():
        return ()
    return _LabelParser(text).parse()


def requirements_match(reqs: LabelRequirements, labels: Mapping[str, str]) -> bool:
    """Whether every requirement holds for ``labels``."""
    return all(req.matches(labels) for req in reqs)


def selector_requirements(selector: LabelSelector) -> LabelRequirements:
    """Convert a ``LabelSelector`` model (raises ``errors.BadRequest`` when it is invalid)."""
    reqs: list[Requirement] = []
    for key, value in sorted((selector.match_labels or {}).items()):
        _check_key(key)
        _check_value(value)
        reqs.append(Requirement(key, "=", frozenset((value,))))
    for expr in selector.match_expressions or []:
        _check_key(expr.key)
        values = list(expr.values or [])
        if expr.operator in ("In", "NotIn"):
            if not values:
                raise errors.BadRequest(f"matchExpressions {expr.key!r}: {expr.operator} needs values")
            for value in values:
                _check_value(value)
            reqs.append(Requirement(expr.key, "in" if expr.operator == "In" else "notin", frozenset(values)))
        else:
            if values:
                raise errors.BadRequest(f"matchExpressions {expr.key!r}: {expr.operator} takes no values")
            reqs.append(Requirement(expr.key, "exists" if expr.operator == "Exists" else "!"))
    return tuple(reqs)


def label_selector_matches(selector: LabelSelector | None, labels: Mapping[str, str]) -> bool:
    """Whether ``labels`` match ``selector``: ``None`` or empty matches all, invalid matches none."""
    if selector is None:
        return True
    try:
        reqs = selector_requirements(selector)
    except errors.BadRequest:
        return False
    return requirements_match(reqs, labels)


def format_label_requirements(reqs: LabelRequirements) -> str:
    """Render requirements back to the string form (stable order of values)."""
    parts: list[str] = []
    for req in reqs:
        values = sorted(req.values)
        if req.operator == "exists":
            parts.append(req.key)
        elif req.operator == "!":
            parts.append(f"!{req.key}")
        elif req.operator in ("=", "!="):
            parts.append(f"{req.key}{req.operator}{values[0]}")
        elif req.operator in ("gt", "lt"):
            parts.append(f"{req.key}{'>' if req.operator == 'gt' else '<'}{values[0]}")
        else:
            parts.append(f"{req.key} {req.operator} ({','.join(values)})")
    return ",".join(parts)


# --------------------------------------------------------------------------- field selectors


def _split_unescaped(text: str, sep: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            current.append(text[i:i + 2])
            i += 2
            continue
        if ch == sep:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
        i += 1
    parts.append("".join(current))
    return parts


def _unescape(value: str, text: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(value):
        ch = value[i]
        if ch == "\\":
            if i + 1 >= len(value) or value[i + 1] not in "\\,=!":
                raise errors.BadRequest(f"invalid field selector {text!r}: bad escape in {value!r}")
            out.append(value[i + 1])
            i += 2
            continue
        if ch in ",=!":
            raise errors.BadRequest(f"invalid field selector {text!r}: unescaped {ch!r} in value {value!r}")
        out.append(ch)
        i += 1
    return "".join(out)


def _parse_field_term(term: str, text: str) -> FieldRequirement:
    for op in ("!=", "==", "="):
        idx = _find_unescaped(term, op)
        if idx >= 0:
            path = term[:idx].strip()
            if not path or not re.fullmatch(r"[A-Za-z0-9_\-]+(\.[A-Za-z0-9_\-/]+)*", path):
                raise errors.BadRequest(f"invalid field selector {text!r}: bad field path {path!r}")
            value = _unescape(term[idx + len(op):].strip(), text)
            return FieldRequirement(path, value, equal=op != "!=")
    raise errors.BadRequest(
        f"invalid field selector {text!r}: {term!r} is not 'field=value' or 'field!=value'"
    )


def _find_unescaped(term: str, op: str) -> int:
    i = 0
    while i < len(term):
        if term[i] == "\\":
            i += 2
            continue
        if term.startswith(op, i):
            return i
        i += 1
    return -1


def parse_field_selector(text: str) -> FieldRequirements:
    """Parse ``path=value,path!=value`` (``==`` too); raises ``errors.BadRequest``."""
    if not text.strip():
        return ()
    return tuple(_parse_field_term(term, text) for term in _split_unescaped(text, ","))


def field_value(obj: Mapping[str, Any], path: str) -> str:
    """The value at a dotted path rendered as a selector compares it (missing → ``""``)."""
    node: Any = obj
    for part in path.split("."):
        if not isinstance(node, Mapping):
            return ""
        node = node.get(part)
        if node is None:
            return ""
    if isinstance(node, bool):
        return "true" if node else "false"
    if isinstance(node, (str, int, float)):
        return str(node)
    return ""


def field_selector_matches(reqs: FieldRequirements, obj: Mapping[str, Any]) -> bool:
    """Whether every field requirement holds for the wire dict ``obj``."""
    return all(req.matches(obj) for req in reqs)


__all__ = [
    "FieldRequirement", "FieldRequirements", "LabelRequirements", "Operator", "Requirement",
    "field_selector_matches", "field_value", "format_label_requirements", "label_selector_matches",
    "parse_field_selector", "parse_label_selector", "requirements_match", "selector_requirements",
]
