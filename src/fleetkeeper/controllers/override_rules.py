"""OverridePolicy and ClusterOverridePolicy: the per-cluster edits of a Work's manifest
(Karmada: ``pkg/util/overridemanager``), as pure functions over wire dicts.

**Which policies, in which order.** For one template and one target cluster, the
ClusterOverridePolicies apply first, then the OverridePolicies of the template's
namespace. Within each kind, a policy takes part when one of its ``resourceSelectors``
selects the template (no selectors: every template); the policies are ordered by how
specifically they select it — all, then by label, then by name — and then by name, so
the most specific policy is applied last and has the last word. Each policy contributes
the overriders of every rule whose ``targetCluster`` selects the cluster (no
``targetCluster``: every cluster); a policy without ``overrideRules`` is read through
its deprecated top-level ``targetCluster`` and ``overriders``.

**Overriders**, applied in Karmada's order — image, command, args, labels, annotations,
field, plaintext:

* ``imageOverrider`` edits the registry, repository or tag (or digest) of the images of
  a Pod, Deployment, ReplicaSet, DaemonSet, StatefulSet or Job (every container), or of
  the one image at ``predicate.path``;
* ``commandOverrider`` / ``argsOverrider`` append (``add``) or drop (``remove``) values of
  the named container's ``command`` / ``args``;
* ``labelsOverrider`` / ``annotationsOverrider`` add, replace or remove keys (replace and
  remove touch only keys that are there);
* ``fieldOverrider`` edits a string field holding JSON or YAML (a ConfigMap's data, say)
  with JSON-patch operations on the document it holds;
* ``plaintext`` is a JSON patch of the manifest.

A patch that cannot apply (a missing path, a field that is not a string …) is an
:class:`OverrideError` naming the policy: the Work is not written, and the binding
controller reports it and retries.

What was applied is recorded on the Work, in Karmada's annotations
``policy.karmada.io/applied-cluster-overrides`` and ``policy.karmada.io/applied-overrides``:
a JSON list of ``{policyName, overriders}`` sorted by policy name.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from fleetkeeper import errors
from fleetkeeper.api import constants
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.matching import ImplicitPriority, cluster_matches, resource_selectors_priority
from fleetkeeper.api.override import (
    ClusterOverridePolicy,
    CommandArgsOverrider,
    FieldOverrider,
    ImageOverrider,
    LabelAnnotationOverrider,
    OverridePolicy,
    Overriders,
)
from fleetkeeper.api.patch import apply_json_patch, pointer_get

Obj = dict[str, Any]
Policy = OverridePolicy | ClusterOverridePolicy

#: kinds whose containers the image, command and args overriders edit → path of their pod spec
POD_SPEC_PATHS: dict[str, tuple[str, ...]] = {
    "Pod": ("spec",),
    **{kind: ("spec", "template", "spec")
       for kind in ("Deployment", "ReplicaSet", "DaemonSet", "StatefulSet", "Job")},
}
_TAG = re.compile(r"[\w][\w.-]{0,127}")
_DIGEST = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}")


class OverrideError(errors.FleetkeeperError):
    """An override that cannot be applied to a manifest (``policy``: the policy whose
    overriders failed, when known)."""

    def __init__(self, message: str, *, policy: str | None = None) -> None:
        super().__init__(message)
        self.policy = policy


@dataclass(frozen=True, slots=True)
class Matched:
    """The overriders one policy contributes for one cluster."""

    policy: str
    overriders: Overriders


# --------------------------------------------------------------------------- which policies


def matching(policies: Iterable[Policy], template: Obj, cluster: Cluster) -> list[Matched]:
    """The overriders of ``policies`` for ``template`` in ``cluster``, in the order they apply."""
    ranked: list[tuple[ImplicitPriority, str, Policy]] = []
    for policy in policies:
        selectors = policy.spec.resource_selectors
        if not selectors:
            ranked.append((ImplicitPriority.MATCH_ALL, policy.name, policy))
            continue
        priority = resource_selectors_priority(selectors, template)
        if priority > ImplicitPriority.MISMATCH:
            ranked.append((priority, policy.name, policy))
    ranked.sort(key=lambda item: (item[0], item[1]))
    out: list[Matched] = []
    for _, name, policy in ranked:
        spec = policy.spec
        rules = spec.override_rules or []
        pairs = [(r.target_cluster, r.overriders) for r in rules] or [(spec.target_cluster, spec.overriders)]
        out.extend(Matched(name, overriders) for affinity, overriders in pairs
                   if affinity is None or cluster_matches(affinity, cluster))
    return out


# --------------------------------------------------------------------------- applying


def apply(manifest: Obj, matched: Sequence[Matched]) -> Obj:
    """``manifest`` with every matched policy's overriders applied (a new dict)."""
    out = manifest
    for item in matched:
        try:
            out = apply_overriders(out, item.overriders)
        except (errors.ApiError, OverrideError) as exc:
            raise OverrideError(f"override policy {item.policy}: {exc}", policy=item.policy) from None
    return out


class Failed(errors.FleetkeeperError):
    """An override policy failed for one cluster: which (its :func:`policy_title`), where, and why."""

    def __init__(self, title: str, cluster: str, error: OverrideError) -> None:
        super().__init__(str(error))
        self.title = title
        self.cluster = cluster
        self.error = error


def apply_for(manifest: Obj, cluster_matched: Sequence[Matched], matched: Sequence[Matched],
              namespace: str | None, cluster: str) -> Obj:
    """:func:`apply` of the cluster-wide policies, then of the namespace's, for ``cluster``;
    a failure is :class:`Failed`, naming the policy as Karmada's events do."""
    for items, scope in ((cluster_matched, None), (matched, namespace)):
        try:
            manifest = apply(manifest, items)
        except OverrideError as exc:
            raise Failed(policy_title(exc.policy or "?", scope), cluster, exc) from None
    return manifest


def apply_overriders(manifest: Obj, overriders: Overriders) -> Obj:
    """One rule's overriders, in Karmada's order."""
    out = manifest
    for image in overriders.image_overrider or ():
        out = _patch(out, _image_patches(out, image))
    for target, commands in (("command", overriders.command_overrider), ("args", overriders.args_overrider)):
        for command in commands or ():
            out = _patch(out, _command_args_patches(out, target, command))
    for field, edits in (("labels", overriders.labels_overrider),
                         ("annotations", overriders.annotations_overrider)):
        for edit in edits or ():
            out = _label_annotation(out, field, edit)
    for field_overrider in overriders.field_overrider or ():
        out = _field(out, field_overrider)
    return _patch(out, [_operation(p.operator, p.path, p.value) for p in overriders.plaintext or ()])


def _patch(doc: Obj, operations: list[Obj]) -> Obj:
    if not operations:
        return doc
    patched = apply_json_patch(doc, operations)
    if not isinstance(patched, dict):
        raise OverrideError("the manifest is no longer an object after the patch")
    return patched


def _containers(manifest: Obj) -> tuple[str, list[Any]] | None:
    """The JSON pointer of the pod spec's containers and the containers, for the kinds that have them."""
    path = POD_SPEC_PATHS.get(str(manifest.get("kind")))
    if path is None:
        return None
    node: Any = manifest
    for key in path:
        node = node.get(key) if isinstance(node, dict) else None
    containers = node.get("containers") if isinstance(node, dict) else None
    if not isinstance(containers, list):
        return None
    return "/" + "/".join((*path, "containers")), containers


# --- image -------------------------------------------------------------------------------------


@dataclass(slots=True)
class ImageRef:
    """An image reference split as Karmada splits it: ``[host/]repository[:tag|@digest]``."""

    hostname: str
    repository: str
    tag: str = ""
    digest: str = ""

    @classmethod
    def parse(cls, image: str) -> ImageRef:
        if not image or image != image.strip() or " " in image:
            raise OverrideError(f"invalid image reference {image!r}")
        name, _, digest = image.partition("@")
        slash = name.rfind("/")
        colon = name.rfind(":")
        tag = ""
        if colon > slash:
            name, tag = name[:colon], name[colon + 1:]
        if not name or (tag and not _TAG.fullmatch(tag)) or (digest and not _DIGEST.fullmatch(digest)):
            raise OverrideError(f"invalid image reference {image!r}")
        first, sep, rest = name.partition("/")
        if sep and ("." in first or ":" in first or first == "localhost"):
            hostname, repository = first, rest
        else:
            hostname, repository = "", name
        return cls(hostname, repository, tag, "" if tag else digest)

    def __str__(self) -> str:
        full = f"{self.hostname}/{self.repository}" if self.hostname else self.repository
        if self.tag:
            return f"{full}:{self.tag}"
        return f"{full}@{self.digest}" if self.digest else full

    def set_tag_or_digest(self, value: str) -> None:
        if _TAG.fullmatch(value):
            self.tag, self.digest = value, ""
        elif _DIGEST.fullmatch(value):
            self.tag, self.digest = "", value


def override_image(image: str, overrider: ImageOverrider) -> str:
    """``image`` with one component added to, replaced or removed."""
    ref = ImageRef.parse(image)
    value, op = overrider.value or "", overrider.operator
    if overrider.component == "Registry":
        ref.hostname = ref.hostname + value if op == "add" else value if op == "replace" else ""
    elif overrider.component == "Repository":
        ref.repository = ref.repository + value if op == "add" else value if op == "replace" else ""
    elif op == "remove":
        if ref.tag:
            ref.tag = ""
        else:
            ref.digest = ""
    else:
        ref.set_tag_or_digest((ref.tag or ref.digest) + value if op == "add" else value)
    return str(ref)


def _image_patches(manifest: Obj, overrider: ImageOverrider) -> list[Obj]:
    if overrider.predicate is not None:
        path = overrider.predicate.path
        current = pointer_get(manifest, path)
        if not isinstance(current, str):
            raise OverrideError(f"imageOverrider: {path} is not an image (a string)")
        return [{"op": "replace", "path": path, "value": override_image(current, overrider)}]
    found = _containers(manifest)
    if found is None:
        return []
    prefix, containers = found
    return [{"op": "replace", "path": f"{prefix}/{index}/image",
             "value": override_image(str(container.get("image", "")), overrider)}
            for index, container in enumerate(containers) if isinstance(container, dict)]


# --- command and args --------------------------------------------------------------------------


def _command_args_patches(manifest: Obj, target: str, overrider: CommandArgsOverrider) -> list[Obj]:
    found = _containers(manifest)
    if found is None:
        return []
    prefix, containers = found
    values = list(overrider.value or ())
    patches = []
    for index, container in enumerate(containers):
        if not isinstance(container, dict) or container.get("name") != overrider.container_name:
            continue
        current = container.get(target)
        path = f"{prefix}/{index}/{target}"
        if current is None:
            added = values if overrider.operator == "add" else []
            patches.append({"op": "add", "path": path, "value": added})
            continue
        strings = [str(v) for v in current]
        new = ([*strings, *values] if overrider.operator == "add"
               else [v for v in strings if v not in set(values)])
        patches.append({"op": "replace", "path": path, "value": new})
    return patches


# --- labels and annotations --------------------------------------------------------------------


def _label_annotation(manifest: Obj, field: str, overrider: LabelAnnotationOverrider) -> Obj:
    meta = manifest.get("metadata") or {}
    current = meta.get(field)
    present = dict(current) if isinstance(current, dict) else None
    result = dict(present or {})
    for key, value in (overrider.value or {}).items():
        if overrider.operator == "add":
            result[key] = value
        elif present is not None and key in present:
            if overrider.operator == "replace":
                result[key] = value
            else:
                result.pop(key, None)
    if result == (present or {}) and (present is not None or not result):
        return manifest
    return {**manifest, "metadata": {**meta, field: result}}


# --- field -------------------------------------------------------------------------------------


def _yaml_text(document: Any) -> str:
    return yaml.safe_dump(document, sort_keys=True, default_flow_style=False)


def _json_text(document: Any) -> str:
    return json.dumps(document, separators=(",", ":"), sort_keys=True)


def _field(manifest: Obj, overrider: FieldOverrider) -> Obj:
    operations = overrider.yaml or overrider.json_
    if not operations:
        return manifest
    path = overrider.field_path
    text = pointer_get(manifest, path)
    if not isinstance(text, str):
        raise OverrideError(f"fieldOverrider: the value at {path} is not a string")
    language, load, dump = ("YAML", yaml.safe_load, _yaml_text) if overrider.yaml else \
        ("JSON", json.loads, _json_text)
    try:
        document = load(text)
    except (yaml.YAMLError, ValueError) as exc:
        raise OverrideError(f"fieldOverrider: the value at {path} is not {language}: {exc}") from None
    patched = apply_json_patch(document, [_operation(o.operator, o.sub_path, o.value) for o in operations])
    return _patch(manifest, [_operation("replace", path, dump(patched))])


def _operation(operator: str, path: str, value: Any) -> Obj:
    """One JSON-patch operation (``remove`` takes no value)."""
    return {"op": operator, "path": path, **({"value": value} if operator != "remove" else {})}


# --------------------------------------------------------------------------- the record


def policy_title(name: str, namespace: str | None) -> str:
    """How Karmada's events name a policy: ``cluster override policy(NAME)`` or
    ``override policy(NAMESPACE/NAME)``."""
    return f"override policy({namespace}/{name})" if namespace else f"cluster override policy({name})"


def applied_titles(cluster_matched: Sequence[Matched], matched: Sequence[Matched],
                   namespace: str | None) -> list[str]:
    """:func:`policy_title` of every policy applied for one cluster, in the order applied
    (a policy once per rule that matched, as Karmada reports them)."""
    return [*(policy_title(m.policy, None) for m in cluster_matched),
            *(policy_title(m.policy, namespace) for m in matched)]


def applied_annotation(matched: Sequence[Matched]) -> str | None:
    """The JSON a Work's applied-overrides annotation holds; None when nothing applied."""
    if not matched:
        return None
    items = sorted(matched, key=lambda m: m.policy)
    return json.dumps([{"policyName": m.policy, "overriders": m.overriders.to_dict()} for m in items],
                      separators=(",", ":"))


def applied_annotations(cluster_matched: Sequence[Matched], matched: Sequence[Matched]) -> dict[str, str]:
    """Both applied-overrides annotations of a Work (only those with something applied)."""
    out = {}
    for key, items in ((constants.APPLIED_CLUSTER_OVERRIDES_ANNOTATION, cluster_matched),
                       (constants.APPLIED_OVERRIDES_ANNOTATION, matched)):
        text = applied_annotation(items)
        if text is not None:
            out[key] = text
    return out


__all__ = [
    "POD_SPEC_PATHS", "Failed", "ImageRef", "Matched", "OverrideError", "applied_annotation",
    "applied_annotations", "applied_titles", "apply", "apply_for", "apply_overriders", "matching",
    "override_image", "policy_title",
]
