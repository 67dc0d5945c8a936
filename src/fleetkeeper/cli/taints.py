"""The pure rules of ``fleetkeeper taint``: its arguments and its edits, in kubectl's words.

``taint NAME SPEC…`` and karmadactl's ``taint clusters NAME… SPEC…`` (or ``cluster/NAME``);
a SPEC is ``key[=value]:Effect`` to add, ``key[:Effect]-`` to remove. As in ``kubectl
taint``: adding a key/effect that is there needs ``--overwrite``; removing one that is not
is an error; a command may not add and remove the same taint; the result is ``tainted``,
``untainted`` or ``modified``. A Cluster takes the effects NoSchedule and NoExecute only.
"""

from __future__ import annotations

from dataclasses import dataclass

from fleetkeeper.api import validation
from fleetkeeper.api.core import Taint

EFFECTS = ("NoSchedule", "NoExecute")
#: the resource types karmadactl's ``taint clusters NAME`` form names
CLUSTER_TYPES = ("cluster", "clusters", "cluster.cluster.karmada.io", "clusters.cluster.karmada.io")


@dataclass(frozen=True)
class TaintEdit:
    """Add (or overwrite) a taint, or remove taints by key (and effect, when given)."""

    key: str
    effect: str | None
    value: str | None = None
    remove: bool = False


def parse_taint(spec: str) -> TaintEdit:
    """``key[=value]:Effect`` (add) or ``key[:Effect]-`` (remove); ``ValueError`` in kubectl's words."""
    remove = spec.endswith("-")
    body = spec[:-1] if remove else spec
    parts = body.split(":")
    if len(parts) > 2:
        raise ValueError(f"invalid taint spec: {spec}")
    effect = parts[1] if len(parts) == 2 else ""
    if len(parts) == 2 and effect not in EFFECTS:
        raise ValueError(f"invalid taint effect: {effect}, unsupported taint effect "
                         "(a Cluster takes NoSchedule or NoExecute)")
    pair = parts[0].split("=") if len(parts) == 2 else [parts[0]]
    if len(pair) > 2:
        raise ValueError(f"invalid taint spec: {spec}")
    key, value = pair[0], (pair[1] if len(pair) == 2 else "")
    problems = validation.label_value(value) if value else []
    problems = problems or validation.qualified_name(key)
    if problems:
        raise ValueError(f"invalid taint spec: {spec}, {'; '.join(problems)}")
    if remove:
        return TaintEdit(key, effect or None, remove=True)
    if not effect:
        raise ValueError(f"invalid taint spec: {spec}, an effect is required (key[=value]:NoSchedule "
                         "or :NoExecute)")
    return TaintEdit(key, effect, value or None)


def parse_taint_args(args: list[str]) -> tuple[list[str], list[TaintEdit]]:
    """The cluster names and the edits of ``taint``'s arguments: ``NAME SPEC…`` or karmadactl's
    ``clusters NAME… SPEC…`` (``cluster/NAME`` too); ``ValueError`` in kubectl's words."""
    resources: list[str] = []
    specs: list[str] = []
    for arg in args:
        if "=" in arg or ":" in arg or arg.endswith("-"):
            specs.append(arg)
        elif specs:
            raise ValueError(f"all resources must be specified before taint changes: {arg}")
        else:
            resources.append(arg)
    if not specs:
        raise ValueError("at least one taint update is required")
    kind, slash, named = resources[0].partition("/") if resources else ("", "", "")
    if slash and kind.lower() in CLUSTER_TYPES and named and len(resources) == 1:
        resources = [kind, named]
    if len(resources) > 1 and resources[0].lower() not in CLUSTER_TYPES:
        raise ValueError(f'invalid resource type {resources[0]}, only ["cluster" "clusters"] are supported')
    names = resources[1:] if len(resources) > 1 else resources
    edits = [parse_taint(spec) for spec in specs]
    _check_edits(edits)
    return names, edits


def _check_edits(edits: list[TaintEdit]) -> None:
    """kubectl's refusals of a command's taints: the same key/effect added twice, or added and removed."""
    added = [e for e in edits if not e.remove]
    for index, edit in enumerate(added):
        if any((e.key, e.effect) == (edit.key, edit.effect) for e in added[:index]):
            raise ValueError(f"duplicated taints with the same key and effect: {_shown(edit)}")
    conflicts = [f'{{"{r.key}":"{r.effect or ""}"}}' for a in added for r in edits
                 if r.remove and r.key == a.key and r.effect in (None, a.effect)]
    if conflicts:
        raise ValueError("can not both modify and remove the following taint(s) in the same command: "
                         + ", ".join(conflicts))


def _shown(edit: TaintEdit) -> str:
    """A taint as kubectl prints it: ``key``, ``key:Effect`` or ``key=value:Effect``."""
    value = f"={edit.value}" if edit.value and not edit.remove else ""
    return f"{edit.key}{value}:{edit.effect}" if edit.effect else f"{edit.key}{value}"


def taint_operation(edits: list[TaintEdit], *, overwrite: bool) -> str:
    """kubectl's word for a taint command: ``modified``, ``tainted`` or ``untainted``."""
    adds = any(not e.remove for e in edits)
    if overwrite or (adds and any(e.remove for e in edits)):
        return "modified"
    return "tainted" if adds else "untainted"


def edit_taints(taints: list[Taint], edits: list[TaintEdit], *, overwrite: bool,
                cluster: str = "") -> tuple[list[Taint], list[str]]:
    """The taints after ``edits`` and what changed; ``ValueError`` for a refused edit (kubectl's words)."""
    if not overwrite:
        existing = [e.key for e in edits if not e.remove
                    for x in taints if (x.key, x.effect) == (e.key, e.effect)]
        if existing:
            raise ValueError(f"cluster {cluster} already has {','.join(existing)} taint(s) with same "
                             "effect(s) and --overwrite is false")
    out = list(taints)
    changes: list[str] = []
    missing: list[str] = []
    for edit in edits:
        matching = [x for x in out if x.key == edit.key and (edit.effect is None or x.effect == edit.effect)]
        if edit.remove:
            if not matching:
                missing.append(f'taint "{_shown(edit)}" not found')
            out = [x for x in out if x not in matching]
            changes.extend([f"removed {_shown(edit)}"] if matching else [])
            continue
        if matching and (matching[0].value or None) == edit.value:
            continue
        out = [x for x in out if x not in matching]
        out.append(Taint.from_dict({"key": edit.key, "value": edit.value, "effect": edit.effect}))
        changes.append(f"added {_shown(edit)}")
    if missing:
        raise ValueError(missing[0] if len(missing) == 1 else f"[{', '.join(missing)}]")
    return out, changes


__all__ = ["CLUSTER_TYPES", "EFFECTS", "TaintEdit", "edit_taints", "parse_taint", "parse_taint_args",
           "taint_operation"]
