"""Scenario files (docs/scenario-format.md): load and validate into plain values.

The format is a public contract: every error names the field (``spec.timeline[2].do[0]
.setNodes.nodes``) and the rule, and raises :class:`fleetkeeper.errors.ScenarioError`
(the CLI turns it into exit code 2). Nothing here runs anything.

What the control plane would refuse is judged from the file too
(:mod:`~fleetkeeper.simulation.admitted`): a run never starts on a file it would refuse.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from fleetkeeper.api import yamlload
from fleetkeeper.errors import ScenarioError
from fleetkeeper.options import Options, options_from_settings, parse_duration
from fleetkeeper.simulation import admitted, checks, paths

CLUSTER_ACTIONS = (
    "clusterDown",
    "clusterBlackhole",
    "clusterUp",
    "clusterUnhealthy",
    "agentDown",
    "agentUp",
    "dnsDown",
    "dnsUp",
)
WORKLOAD_ACTIONS = ("crashWorkload", "healWorkload")
ACTIONS = (*CLUSTER_ACTIONS, *WORKLOAD_ACTIONS, "setNodes", "apply", "delete", "patch", "setCondition")


@dataclass(frozen=True)
class ClusterDef:
    name: str
    sync_mode: str = "Push"
    labels: dict[str, str] = field(default_factory=dict)
    provider: str = ""
    region: str = ""
    zone: str = ""
    taints: list[dict[str, Any]] = field(default_factory=list)
    nodes: int = 3
    node_resources: dict[str, str] = field(
        default_factory=lambda: {"cpu": "8", "memory": "32Gi", "pods": "110"}
    )
    pod_startup: float = 2.0


@dataclass(frozen=True)
class ObjectRef:
    api_version: str
    kind: str
    name: str
    namespace: str = ""

    def __str__(self) -> str:
        where = f"{self.namespace}/{self.name}" if self.namespace else self.name
        return f"{self.kind}/{where}"


@dataclass(frozen=True)
class Action:
    name: str
    arg: Any
    where: str


@dataclass(frozen=True)
class Expectation:
    ref: ObjectRef
    check: str
    value: Any
    where: str
    member: str | None = None
    path: str | None = None


@dataclass(frozen=True)
class Step:
    at: float
    do: list[Action]
    expect: list[Expectation]
    where: str


@dataclass(frozen=True)
class Scenario:
    name: str
    seed: int
    options: Options
    clusters: list[ClusterDef]
    resources: list[dict[str, Any]]
    timeline: list[Step]


def load_file(path: str | Path) -> Scenario:
    """Read and validate a scenario file."""
    try:
        text = yamlload.text_of(Path(path).read_bytes())
    except OSError as exc:
        raise ScenarioError("", f"cannot read {path}: {exc.strerror}") from None
    except ValueError as exc:
        raise ScenarioError("", f"cannot read: {exc}") from None
    try:
        data = yamlload.load(text)
    except yaml.YAMLError as exc:
        raise ScenarioError("", f"not valid YAML: {exc}") from None
    return parse(data)


def parse(data: Any) -> Scenario:
    """Validate a loaded scenario document."""
    doc = _mapping(data, "")
    _expect_value(doc, "apiVersion", "fleetkeeper.io/v1alpha1", "")
    _expect_value(doc, "kind", "Scenario", "")
    meta = _mapping(doc.get("metadata", {}), "metadata")
    name = meta.get("name", "")
    if not isinstance(name, str) or not name:
        raise ScenarioError("metadata.name", "Required value: a non-empty name")
    spec = _mapping(doc.get("spec"), "spec")
    _no_unknown(spec, {"seed", "settings", "clusters", "resources", "timeline"}, "spec")
    seed = spec.get("seed", 0)
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise ScenarioError("spec.seed", f"must be an integer, got {seed!r}")
    try:
        options = options_from_settings(
            _mapping(spec.get("settings", {}), "spec.settings"), path="spec.settings"
        )
    except ValueError as exc:
        field_path, _, msg = str(exc).partition(": ")
        raise ScenarioError(field_path, msg) from None
    clusters = _clusters(spec.get("clusters", []))
    names = {c.name for c in clusters}
    resources = _resources(spec.get("resources", []))
    timeline = _timeline(spec.get("timeline", []), names)
    return Scenario(
        name=name, seed=seed, options=options, clusters=clusters, resources=resources, timeline=timeline
    )


# ---------------------------------------------------------------------------------- parts


def _clusters(raw: Any) -> list[ClusterDef]:
    items = _list(raw, "spec.clusters")
    out: list[ClusterDef] = []
    seen: set[str] = set()
    allowed = {
        "name",
        "syncMode",
        "labels",
        "provider",
        "region",
        "zone",
        "taints",
        "nodes",
        "nodeResources",
        "podStartup",
    }
    for i, item in enumerate(items):
        where = f"spec.clusters[{i}]"
        c = _mapping(item, where)
        _no_unknown(c, allowed, where)
        name = _string(c.get("name"), f"{where}.name")
        if name in seen:
            raise ScenarioError(f"{where}.name", f"duplicate cluster name {name!r}")
        seen.add(name)
        mode = c.get("syncMode", "Push")
        if mode not in ("Push", "Pull"):
            raise ScenarioError(f"{where}.syncMode", f"must be Push or Pull, got {mode!r}")
        nodes = c.get("nodes", 3)
        if not isinstance(nodes, int) or isinstance(nodes, bool) or nodes < 0:
            raise ScenarioError(f"{where}.nodes", f"must be a non-negative integer, got {nodes!r}")
        given = _mapping(c.get("nodeResources", {}), f"{where}.nodeResources")
        node_resources = admitted.node_resources(given, f"{where}.nodeResources")
        labels = _mapping(c.get("labels", {}), f"{where}.labels")
        taints = [
            _mapping(t, f"{where}.taints[{j}]")
            for j, t in enumerate(_list(c.get("taints", []), f"{where}.taints"))
        ]
        cluster = ClusterDef(
            name=name,
            sync_mode=mode,
            labels={str(k): str(v) for k, v in labels.items()},
            provider=str(c.get("provider", "")),
            region=str(c.get("region", "")),
            zone=str(c.get("zone", "")),
            taints=taints,
            nodes=nodes,
            node_resources=node_resources,
            pod_startup=_duration(c.get("podStartup", "2s"), f"{where}.podStartup"),
        )
        admitted.check_cluster(cluster, where)
        out.append(cluster)
    return out


def _resources(raw: Any) -> list[dict[str, Any]]:
    items = _list(raw, "spec.resources")
    for i, item in enumerate(items):
        _admitted_manifest(item, f"spec.resources[{i}]")
    return list(items)


def _manifest(item: Any, where: str) -> dict[str, Any]:
    m = _mapping(item, where)
    _string(m.get("apiVersion"), f"{where}.apiVersion")
    _string(m.get("kind"), f"{where}.kind")
    meta = _mapping(m.get("metadata"), f"{where}.metadata")
    _string(meta.get("name"), f"{where}.metadata.name")
    return m


def _admitted_manifest(item: Any, where: str) -> dict[str, Any]:
    """A manifest the control plane would accept on its own (decoding and admission)."""
    m = _manifest(item, where)
    admitted.check_manifest(m, where)
    return m


def _timeline(raw: Any, clusters: set[str]) -> list[Step]:
    steps: list[Step] = []
    last = 0.0
    for i, item in enumerate(_list(raw, "spec.timeline")):
        where = f"spec.timeline[{i}]"
        s = _mapping(item, where)
        _no_unknown(s, {"at", "do", "expect"}, where)
        if "at" not in s:
            raise ScenarioError(f"{where}.at", "Required value: when the step happens, e.g. 60s")
        at = _duration(s["at"], f"{where}.at")
        if at < last:
            raise ScenarioError(f"{where}.at", f"steps must be in non-decreasing order ({at:g}s < {last:g}s)")
        last = at
        if "do" not in s and "expect" not in s:
            raise ScenarioError(where, "a step needs `do`, `expect`, or both")
        do = [
            _action(a, f"{where}.do[{j}]", clusters)
            for j, a in enumerate(_list(s.get("do", []), f"{where}.do"))
        ]
        expect = [
            _expectation(e, f"{where}.expect[{j}]", clusters)
            for j, e in enumerate(_list(s.get("expect", []), f"{where}.expect"))
        ]
        steps.append(Step(at=at, do=do, expect=expect, where=where))
    return steps


def _action(raw: Any, where: str, clusters: set[str]) -> Action:
    a = _mapping(raw, where)
    if len(a) != 1:
        raise ScenarioError(where, f"an action is a mapping with exactly one of: {', '.join(ACTIONS)}")
    name, arg = next(iter(a.items()))
    at = f"{where}.{name}"
    if name in CLUSTER_ACTIONS:
        _cluster_name(arg, at, clusters)
    elif name in WORKLOAD_ACTIONS:
        w = _mapping(arg, at)
        _cluster_name(w.get("cluster"), f"{at}.cluster", clusters)
        for key in ("apiVersion", "kind", "name"):
            _string(w.get(key), f"{at}.{key}")
    elif name == "setNodes":
        w = _mapping(arg, at)
        _cluster_name(w.get("cluster"), f"{at}.cluster", clusters)
        n = w.get("nodes")
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise ScenarioError(f"{at}.nodes", f"must be a non-negative integer, got {n!r}")
    elif name == "apply":
        _admitted_manifest(arg, at)
    elif name in ("delete", "patch"):
        w = _mapping(arg, at)
        for key in ("apiVersion", "kind", "name"):
            _string(w.get(key), f"{at}.{key}")
        if name == "patch":
            _mapping(w.get("patch"), f"{at}.patch")
    elif name == "setCondition":
        w = _mapping(arg, at)
        _cluster_name(w.get("cluster"), f"{at}.cluster", clusters)
        _string(w.get("type"), f"{at}.type")
        status = w.get("status")
        if status not in ("True", "False", "Unknown"):
            raise ScenarioError(f"{at}.status", f"must be True, False or Unknown, got {status!r}")
        _string(w.get("reason"), f"{at}.reason")
    else:
        raise ScenarioError(where, f"unknown action {name!r} (known: {', '.join(ACTIONS)})")
    return Action(name=name, arg=arg, where=at)


def _expectation(raw: Any, where: str, clusters: set[str]) -> Expectation:
    e = _mapping(raw, where)
    _no_unknown(e, {"object", "member", "path", *checks.CHECKS}, where)
    obj = _mapping(e.get("object"), f"{where}.object")
    ref = ObjectRef(
        api_version=_string(obj.get("apiVersion"), f"{where}.object.apiVersion"),
        kind=_string(obj.get("kind"), f"{where}.object.kind"),
        name=_string(obj.get("name"), f"{where}.object.name"),
        namespace=str(obj.get("namespace") or ""),
    )
    member = e.get("member")
    if member is not None:
        _cluster_name(member, f"{where}.member", clusters)
    path = e.get("path")
    if path is not None:
        _string(path, f"{where}.path")
        try:
            paths.parse_path(path)
        except ValueError as exc:
            raise ScenarioError(f"{where}.path", str(exc)) from None
    present = [c for c in checks.CHECKS if c in e]
    if len(present) != 1:
        raise ScenarioError(
            where,
            f"exactly one check is needed, one of: {', '.join(checks.CHECKS)}"
            + (f" (found {', '.join(present)})" if present else ""),
        )
    check = present[0]
    value = e[check]
    if check in ("exists", "absent") and not isinstance(value, bool):
        raise ScenarioError(f"{where}.{check}", f"must be true or false, got {value!r}")
    if check == "count" and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
        raise ScenarioError(f"{where}.count", f"must be a non-negative integer, got {value!r}")
    if check == "equalsUnordered" and not isinstance(value, list):
        raise ScenarioError(f"{where}.equalsUnordered", "must be a list")
    return Expectation(ref=ref, check=check, value=value, where=where, member=member, path=path)


# ---------------------------------------------------------------------------------- helpers


def _mapping(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ScenarioError(where, f"must be a mapping, got {_type(value)}")
    return value


def _list(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ScenarioError(where, f"must be a list, got {_type(value)}")
    return value


def _string(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise ScenarioError(
            where,
            "Required value: a non-empty string"
            if value in (None, "")
            else f"must be a string, got {_type(value)}",
        )
    return value


def _duration(value: Any, where: str) -> float:
    try:
        return parse_duration(value)
    except ValueError as exc:
        raise ScenarioError(where, str(exc)) from None


def _cluster_name(value: Any, where: str, clusters: set[str]) -> str:
    name = _string(value, where)
    if name not in clusters:
        raise ScenarioError(
            where, f"unknown cluster {name!r} (declared: {', '.join(sorted(clusters)) or 'none'})"
        )
    return name


def _expect_value(doc: dict[str, Any], key: str, want: str, where: str) -> None:
    if doc.get(key) != want:
        raise ScenarioError(f"{where}{key}", f"must be {want!r}, got {doc.get(key)!r}")


def _no_unknown(m: dict[str, Any], allowed: set[str], where: str) -> None:
    for key in m:
        if key not in allowed:
            raise ScenarioError(f"{where}.{key}", f"unknown field (allowed: {', '.join(sorted(allowed))})")


def _type(value: Any) -> str:
    return {dict: "a mapping", list: "a list", str: "a string", type(None): "nothing"}.get(
        type(value), type(value).__name__
    )


__all__ = [
    "ACTIONS",
    "Action",
    "ClusterDef",
    "Expectation",
    "ObjectRef",
    "Scenario",
    "Step",
    "load_file",
    "parse",
]
