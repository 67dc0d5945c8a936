"""Dotted paths into objects, as scenario expectations write them.

``spec.clusters``, ``status.conditions[type=Ready].status``,
``spec.gracefulEvictionTasks[0].fromCluster``, ``metadata.labels.app``:
``[N]`` indexes a list, ``[key=value]`` selects the first list item whose ``key``
equals ``value`` (compared as text). A map key containing dots can be written in
quotes inside brackets: ``metadata.labels["app.kubernetes.io/name"]`` (extension).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Key:
    name: str


@dataclass(frozen=True, slots=True)
class Index:
    index: int


@dataclass(frozen=True, slots=True)
class Select:
    key: str
    value: str


Segment = Key | Index | Select


def parse_path(path: str) -> list[Segment]:
    """Split a path into segments; ValueError says what is wrong."""
    segments: list[Segment] = []
    i, n = 0, len(path)
    token = ""
    while i < n:
        ch = path[i]
        if ch == ".":
            if token:
                segments.append(Key(token))
                token = ""
            elif i == 0 or path[i - 1] != "]" or i == n - 1:
                raise ValueError(f"empty segment in path {path!r}")
            i += 1
        elif ch == "[":
            if token:
                segments.append(Key(token))
                token = ""
            end = path.find("]", i)
            if end < 0:
                raise ValueError(f"unclosed '[' in path {path!r}")
            segments.append(_bracket(path[i + 1 : end], path))
            i = end + 1
        else:
            token += ch
            i += 1
    if token:
        segments.append(Key(token))
    if not segments:
        raise ValueError("path is empty")
    return segments


def _bracket(inner: str, path: str) -> Segment:
    inner = inner.strip()
    if len(inner) >= 2 and inner[0] == inner[-1] and inner[0] in "\"'":
        return Key(inner[1:-1])
    if "=" in inner:
        key, _, value = inner.partition("=")
        if not key:
            raise ValueError(f"selector without a key in path {path!r}")
        return Select(key.strip(), value.strip().strip("\"'"))
    try:
        return Index(int(inner))
    except ValueError:
        raise ValueError(f'expected [N], [key=value] or ["key"] in path {path!r}, got [{inner}]') from None


_MISSING = object()


def resolve(obj: Any, path: str | list[Segment]) -> tuple[bool, Any]:
    """``(found, value)`` of ``path`` in ``obj``."""
    segments = parse_path(path) if isinstance(path, str) else path
    cur: Any = obj
    for seg in segments:
        cur = _step(cur, seg)
        if cur is _MISSING:
            return False, None
    return True, cur


def _step(cur: Any, seg: Segment) -> Any:
    if isinstance(seg, Key):
        if isinstance(cur, dict) and seg.name in cur:
            return cur[seg.name]
        return _MISSING
    if isinstance(seg, Index):
        if isinstance(cur, list) and -len(cur) <= seg.index < len(cur):
            return cur[seg.index]
        return _MISSING
    if isinstance(cur, list):
        for item in cur:
            if isinstance(item, dict) and seg.key in item and _text(item[seg.key]) == seg.value:
                return item
    return _MISSING


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


__all__ = ["Index", "Key", "Segment", "Select", "parse_path", "resolve"]
