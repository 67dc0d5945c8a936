"""Naming a kind on the command line, as kubectl does.

``fleetkeeper get clusters``, ``get cluster``, ``get Cluster``, ``get rb``,
``get resourcebindings.work.karmada.io``, ``get deploy`` all name a kind by its plural,
singular, kind, short name or ``plural.group``, case-insensitively, from the scheme the
API server serves. Two friendly aliases: ``binding(s)`` for ResourceBindings and
``timeline`` for TimelineEntries. An unknown name is an error listing what exists.
"""

from __future__ import annotations

from fleetkeeper.api.scheme import SCHEME, ResourceInfo

ALIASES: dict[str, tuple[str, str]] = {
    "binding": ("work.karmada.io", "ResourceBinding"),
    "bindings": ("work.karmada.io", "ResourceBinding"),
    "timeline": ("fleetkeeper.io", "TimelineEntry"),
}


class UnknownKind(ValueError):
    """The name matches no served kind; the message lists the known plurals."""


def _names(info: ResourceInfo) -> set[str]:
    names = {info.plural, info.singular, info.kind.lower(), *info.short_names}
    if info.group:
        names |= {f"{info.plural}.{info.group}", f"{info.singular}.{info.group}"}
    return {n.lower() for n in names}


def resolve(name: str) -> ResourceInfo:
    """The kind ``name`` stands for (see the module notes)."""
    wanted = name.strip().lower()
    alias = ALIASES.get(wanted)
    for info in SCHEME.infos():
        if alias is not None and (info.group, info.kind) == alias:
            return info
        if alias is None and wanted in _names(info):
            return info
    known = ", ".join(sorted({i.plural for i in SCHEME.infos()}))
    raise UnknownKind(f"unknown kind {name!r}; known kinds: {known}")


__all__ = ["ALIASES", "UnknownKind", "resolve"]
