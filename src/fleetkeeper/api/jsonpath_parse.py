"""The grammar of Kubernetes JSONPath templates: client-go's ``jsonpath.Parser``, ported.

Kept apart from evaluation (:mod:`fleetkeeper.api.jsonpath`) because it is the half that
must match client-go character by character: what parses, into which nodes, and the
error texts (``unrecognized character in action: U+0025 '%'``, ``unclosed action``…).
A template is a list of nodes — literal ``text`` and ``list`` actions — and an action
is a list of steps (``field``, ``array`` with slice parameters, ``union``, ``filter``,
``wildcard``, ``recursive``, literals, and the ``range``/``end`` identifiers).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any


class JSONPathError(ValueError):
    """A template that does not parse, or that cannot be evaluated against a document."""


@dataclass(frozen=True, slots=True)
class Param:
    """One slice parameter: ``known`` when written, ``derived`` for ``[n]`` (= ``[n:n+1]``)."""

    value: int = 0
    known: bool = False
    derived: bool = False


@dataclass(frozen=True, slots=True)
class Node:
    """One parse node: ``kind`` is text, field, array, union, filter, wildcard, recursive,
    int, float, bool, identifier or list; ``value`` holds what the kind needs."""

    kind: str
    value: Any = None


_DICT_KEY = re.compile(r"^'([^']*)'$")
_SLICE = re.compile(r"^(-?\d*)(:-?\d*)?(:-?\d*)?$")
_FILTER = re.compile(r"^([^!<>=]+)([!<>=~]+)(.+?)$")
_TERMINATORS = frozenset(" \t\r\n.,[]$@{}")
_UNESCAPES = {"n": "\n", "t": "\t", "r": "\r"}


class _Parser:
    """Recursive-descent twin of client-go's ``jsonpath.Parser`` (same grammar, same errors)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def parse(self) -> list[Node]:
        nodes: list[Node] = []
        while self.pos < len(self.text):
            start = self.text.find("{", self.pos)
            if start < 0:
                nodes.append(Node("text", self.text[self.pos:]))
                break
            if start > self.pos:
                nodes.append(Node("text", self.text[self.pos:start]))
            self.pos = start + 1
            nodes.append(Node("list", self._action(inside_braces=True)))
        return nodes

    def _action(self, *, inside_braces: bool) -> list[Node]:
        """Nodes up to the closing ``}`` (or to the end of a sub-expression)."""
        out: list[Node] = []
        text = self.text
        while True:
            if self.pos >= len(text):
                if inside_braces:
                    raise JSONPathError("unclosed action")
                return out
            ch = text[self.pos]
            if ch == "}" and inside_braces:
                self.pos += 1
                return out
            if text.startswith("[?(", self.pos):
                out.append(self._filter())
            elif text.startswith("..", self.pos):
                if out and out[-1].kind == "recursive":
                    raise JSONPathError("invalid multiple recursive descent")
                self.pos += 2
                out.append(Node("recursive"))
                if self.pos < len(text) and _alphanumeric(text[self.pos]):
                    out.append(self._field())
            elif ch in "\r\n":
                raise JSONPathError("unclosed action")
            elif ch in " @$":
                self.pos += 1
            elif ch == "[":
                out.extend(self._array())
            elif ch in "\"'":
                out.append(Node("text", self._quote(ch)))
            elif ch == ".":
                self.pos += 1
                out.append(self._field())
            elif ch in "+-" or ch.isdigit():
                out.append(self._number())
            elif _alphanumeric(ch):
                out.append(self._identifier())
            else:
                raise JSONPathError(f"unrecognized character in action: U+{ord(ch):04X} {ch!r}")

    def _scan(self) -> str:
        """Characters up to the next unescaped terminator."""
        start = self.pos
        while self.pos < len(self.text):
            ch = self.text[self.pos]
            if ch == "\\":
                self.pos += 2
                continue
            if ch in _TERMINATORS:
                break
            self.pos += 1
        return self.text[start:min(self.pos, len(self.text))]

    def _field(self) -> Node:
        value = self._scan()
        return Node("wildcard") if value == "*" else Node("field", value.replace("\\", ""))

    def _identifier(self) -> Node:
        value = self._scan()
        if value in ("true", "false"):
            return Node("bool", value == "true")
        return Node("identifier", value)

    def _number(self) -> Node:
        start = self.pos
        if self.text[self.pos] in "+-":
            self.pos += 1
        while self.pos < len(self.text) and (self.text[self.pos] == "." or self.text[self.pos].isdigit()):
            self.pos += 1
        value = self.text[start:self.pos]
        try:
            return Node("int", int(value))
        except ValueError:
            pass
        try:
            return Node("float", float(value))
        except ValueError:
            raise JSONPathError(f"cannot parse number {value}") from None

    def _quote(self, end: str) -> str:
        start = self.pos
        self.pos += 1
        while True:
            if self.pos >= len(self.text) or self.text[self.pos] == "\n":
                raise JSONPathError("unterminated quoted string")
            if self.text[self.pos] == end and self.text[self.pos - 1] != "\\":
                self.pos += 1
                break
            self.pos += 1
        body = self.text[start + 1:self.pos - 1]
        return re.sub(r"\\(.)", lambda m: _UNESCAPES.get(m.group(1), m.group(1)), body)

    def _array(self) -> list[Node]:
        end = self.text.find("]", self.pos)
        newline = self.text.find("\n", self.pos)
        if end < 0 or 0 <= newline < end:
            raise JSONPathError("unterminated array")
        inner = self.text[self.pos + 1:end]
        self.pos = end + 1
        return _array_nodes("*" if inner == "*" else inner)

    def _filter(self) -> Node:
        self.pos += 3
        start, quote, closed = self.pos, "", False
        while True:
            if self.pos >= len(self.text) or self.text[self.pos] == "\n":
                raise JSONPathError("unterminated filter")
            ch = self.text[self.pos]
            self.pos += 1
            if ch in "\"'":
                if not quote:
                    quote = ch
                elif ch == quote and self.text[self.pos - 2] != "\\":
                    closed = True
            elif ch == ")" and bool(quote) == closed:
                break
        if self.pos >= len(self.text) or self.text[self.pos] != "]":
            raise JSONPathError("unclosed array expect ]")
        expression = self.text[start:self.pos - 1]
        self.pos += 1
        match = _FILTER.match(expression)
        if match is None:
            return Node("filter", (_sub(expression), "exists", []))
        left, operator, right = match.groups()
        return Node("filter", (_sub(left), operator, _sub(right)))


def _alphanumeric(ch: str) -> bool:
    return ch == "_" or ch.isalpha() or ch.isdigit()


def _sub(text: str) -> list[Node]:
    """A sub-expression (filter side, union member, dict key) parsed as one action."""
    return _Parser(text)._action(inside_braces=False)


def _array_nodes(inner: str) -> list[Node]:
    text = ":" if inner == "*" else inner
    parts = text.split(",")
    if len(parts) > 1:
        return [Node("union", [_sub("[" + part.strip() + "]") for part in parts])]
    key = _DICT_KEY.match(text)
    if key is not None:
        return _sub("." + key.group(1))
    match = _SLICE.match(text)
    if match is None:
        raise JSONPathError(f"invalid array index {text}")
    raw = list(match.groups())
    params: list[Param] = []
    for i, part in enumerate(raw):
        if part:
            number = part[1:] if i > 0 else part
            if i > 0 and number == "":
                params.append(Param())
            else:
                try:
                    params.append(Param(int(number), known=True))
                except ValueError:
                    raise JSONPathError(f"array index {number} is not a number") from None
        elif i == 1:
            params.append(Param(params[0].value + 1, known=True, derived=True))
        else:
            params.append(Param())
    return [Node("array", tuple(params))]


@functools.lru_cache(maxsize=256)
def parse(template: str) -> tuple[Node, ...]:
    """Parse a JSONPath template (cached); :class:`JSONPathError` when it is invalid."""
    return tuple(_Parser(template).parse())


__all__ = ["JSONPathError", "Node", "Param", "parse"]
