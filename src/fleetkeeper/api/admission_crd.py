"""Admission of CustomResourceDefinitions: kube-apiserver's defaults and checks (``apiextensions.k8s.io/v1``).

Defaults: ``spec.names.singular`` is the lowercase kind, ``spec.names.listKind`` is
``<Kind>List``, ``spec.conversion`` is ``{strategy: None}``. A new CRD starts with an empty
status that records only its storage version in ``storedVersions``; the API server that
serves it fills in the accepted names and the ``NamesAccepted``/``Established`` conditions
(:func:`fleetkeeper.api.crd.desired_status`).

Checks, each naming the field as Kubernetes does:

* ``metadata.name`` is ``<spec.names.plural>.<spec.group>``;
* ``spec.group`` is a DNS subdomain with at least one dot; ``spec.names.plural``,
  ``singular``, ``kind`` and ``listKind`` (lowercased), each short name and category are
  DNS-1035 labels, and ``listKind`` differs from ``kind``;
* ``spec.scope`` is ``Namespaced`` or ``Cluster`` and never changes;
* ``spec.versions`` has at least one version, unique DNS-1035 names, ``served`` and
  ``storage`` booleans, exactly one storage version, an object ``schema.openAPIV3Schema``;
  a ``scale`` subresource has ``specReplicasPath`` under ``.spec`` and ``statusReplicasPath``
  under ``.status``; printer columns have a name, a known type and a JSONPath;
* every version in ``status.storedVersions`` stays in ``spec.versions``;
* the kind is not one fleetkeeper serves on its own (``Deployment.apps``,
  ``PropagationPolicy.policy.karmada.io`` …): such a CRD is refused, naming
  ``spec.names.kind`` (or ``spec.names.plural``) and the group.
"""

from __future__ import annotations

from typing import Any

from fleetkeeper.api import crd, validation
from fleetkeeper.api.admission_builtin import dns1035_label
from fleetkeeper.api.jsonpath_parse import JSONPathError, parse
from fleetkeeper.api.meta import Unstructured
from fleetkeeper.api.validation import FieldErrors


def admit_crd(obj: Unstructured, old: Unstructured | None, creating: bool, errs: FieldErrors) -> None:
    """Default then check ``obj`` (a copy, changed in place); ``old`` is the stored CRD on update."""
    fields = obj.model_extra
    assert fields is not None
    spec = fields.get("spec")
    if not isinstance(spec, dict):
        errs.required("spec")
        return
    names = spec.get("names")
    if not isinstance(names, dict):
        errs.required("spec.names")
        names = {}
    _default(spec, names)
    group = _string(spec, "group", "spec.group", errs)
    plural = _string(names, "plural", "spec.names.plural", errs)
    kind = _string(names, "kind", "spec.names.kind", errs)
    if group:
        _check_group(group, errs)
    if group and plural and obj.name and obj.name != f"{plural}.{group}":
        errs.invalid("metadata.name", obj.name, 'must be spec.names.plural+"."+spec.group')
    _check_names(names, errs)
    if group and kind and plural:
        conflict = crd.CUSTOM_KINDS.builtin_conflict(group, kind, plural)
        if conflict is not None:
            path, value = ("spec.names.kind", kind) if conflict.reason == "KindConflict" \
                else ("spec.names.plural", plural)
            errs.invalid(path, value, f"{conflict.message} (spec.group {group!r})")
    _check_scope(spec, old, errs)
    storage = _check_versions(spec.get("versions"), errs)
    if creating:
        fields["status"] = {"acceptedNames": {"plural": "", "kind": ""},
                            "storedVersions": [storage] if storage else []}
    elif old is not None:
        _check_stored_versions(spec.get("versions"), old, errs)


def _default(spec: dict[str, Any], names: dict[str, Any]) -> None:
    kind = names.get("kind")
    if isinstance(kind, str) and kind:
        names.setdefault("singular", kind.lower())
        names.setdefault("listKind", f"{kind}List")
    if not isinstance(spec.get("conversion"), dict):
        spec["conversion"] = {"strategy": "None"}


def _string(section: dict[str, Any], key: str, path: str, errs: FieldErrors) -> str:
    value = section.get(key)
    if value in (None, ""):
        errs.required(path)
        return ""
    if not isinstance(value, str):
        errs.invalid(path, str(value), "must be a string")
        return ""
    return value


def _check_group(group: str, errs: FieldErrors) -> None:
    errs.invalid_all("spec.group", group, validation.dns1123_subdomain(group))
    if "." not in group:
        errs.invalid("spec.group", group, "should be a domain with at least one dot")


def _check_names(names: dict[str, Any], errs: FieldErrors) -> None:
    for key in ("plural", "singular", "kind", "listKind"):
        value = names.get(key)
        if isinstance(value, str) and value:
            lowered = value.lower() if key in ("kind", "listKind") else value
            errs.invalid_all(f"spec.names.{key}", value, dns1035_label(lowered))
    if names.get("kind") and names.get("kind") == names.get("listKind"):
        errs.invalid("spec.names.listKind", str(names["listKind"]), "kind and listKind may not be the same")
    for key in ("shortNames", "categories"):
        values = names.get(key)
        if values is None:
            continue
        if not isinstance(values, list):
            errs.invalid(f"spec.names.{key}", "", "must be a list of strings")
            continue
        for index, value in enumerate(values):
            errs.invalid_all(f"spec.names.{key}[{index}]", str(value), dns1035_label(str(value)))


def _check_scope(spec: dict[str, Any], old: Unstructured | None, errs: FieldErrors) -> None:
    scope = spec.get("scope")
    if scope in (None, ""):
        errs.required("spec.scope")
    elif scope not in crd.SCOPES:
        errs.not_supported("spec.scope", scope, crd.SCOPES)
    elif old is not None:
        old_scope = (old.field("spec") or {}).get("scope")
        if old_scope in crd.SCOPES and old_scope != scope:
            errs.invalid("spec.scope", scope, "field is immutable")


def _check_versions(versions: Any, errs: FieldErrors) -> str:
    """Check ``spec.versions``; the storage version's name ("" when there is not exactly one)."""
    if not isinstance(versions, list) or not versions:
        errs.required("spec.versions", "must have at least one version")
        return ""
    seen: set[str] = set()
    storage: list[str] = []
    for index, version in enumerate(versions):
        path = f"spec.versions[{index}]"
        if not isinstance(version, dict):
            errs.invalid(path, "", "must be an object")
            continue
        name = _string(version, "name", f"{path}.name", errs)
        if name:
            errs.invalid_all(f"{path}.name", name, dns1035_label(name))
            if name in seen:
                errs.duplicate(f"{path}.name", repr(name))
            seen.add(name)
        for flag in ("served", "storage"):
            if not isinstance(version.get(flag), bool):
                errs.required(f"{path}.{flag}", "must be true or false")
        if version.get("storage") is True:
            storage.append(name)
        _check_schema(version.get("schema"), path, errs)
        _check_subresources(version.get("subresources"), path, errs)
        _check_columns(version.get("additionalPrinterColumns"), path, errs)
    if len(storage) != 1:
        errs.invalid("spec.versions", f"{len(storage)} storage versions",
                     "must have exactly one version marked as storage version")
        return ""
    return storage[0]


def _check_schema(schema: Any, path: str, errs: FieldErrors) -> None:
    root = schema.get("openAPIV3Schema") if isinstance(schema, dict) else None
    if not isinstance(root, dict):
        errs.required(f"{path}.schema.openAPIV3Schema", "schemas are required")
    elif root.get("type") != "object":
        errs.invalid(f"{path}.schema.openAPIV3Schema.type", str(root.get("type") or ""),
                     "must be object at the root")


def _check_subresources(subresources: Any, path: str, errs: FieldErrors) -> None:
    if subresources is None:
        return
    if not isinstance(subresources, dict):
        errs.invalid(f"{path}.subresources", "", "must be an object")
        return
    scale = subresources.get("scale")
    if "scale" not in subresources:
        return
    if not isinstance(scale, dict):
        errs.invalid(f"{path}.subresources.scale", "", "must be an object")
        return
    where = f"{path}.subresources.scale"
    for key, roots in (("specReplicasPath", (".spec.",)), ("statusReplicasPath", (".status.",)),
                       ("labelSelectorPath", (".spec.", ".status."))):
        value = scale.get(key)
        if value in (None, ""):
            if key != "labelSelectorPath":
                errs.required(f"{where}.{key}")
        elif not isinstance(value, str) or not value.startswith(roots):
            under = " or ".join(r.rstrip(".") for r in roots)
            errs.invalid(f"{where}.{key}", str(value), f"should be a json path under {under}")


def _check_columns(columns: Any, path: str, errs: FieldErrors) -> None:
    if columns is None:
        return
    if not isinstance(columns, list):
        errs.invalid(f"{path}.additionalPrinterColumns", "", "must be a list")
        return
    for index, column in enumerate(columns):
        where = f"{path}.additionalPrinterColumns[{index}]"
        if not isinstance(column, dict):
            errs.invalid(where, "", "must be an object")
            continue
        _string(column, "name", f"{where}.name", errs)
        kind = column.get("type")
        if kind in (None, ""):
            errs.required(f"{where}.type")
        elif kind not in crd.COLUMN_TYPES:
            errs.not_supported(f"{where}.type", kind, crd.COLUMN_TYPES)
        json_path = _string(column, "jsonPath", f"{where}.jsonPath", errs)
        if json_path:
            try:
                parse("{" + json_path + "}")
            except JSONPathError as exc:
                errs.invalid(f"{where}.jsonPath", json_path, f"must be a simple json path: {exc}")
        priority = column.get("priority")
        bad = isinstance(priority, bool) or not isinstance(priority, int) or priority < 0
        if priority is not None and bad:
            errs.invalid(f"{where}.priority", str(priority), "must be a non-negative integer")


def _check_stored_versions(versions: Any, old: Unstructured, errs: FieldErrors) -> None:
    listed = versions if isinstance(versions, list) else []
    names = {v.get("name") for v in listed if isinstance(v, dict)}
    stored = (old.field("status") or {}).get("storedVersions") or []
    for index, name in enumerate(stored):
        if name not in names:
            errs.invalid(f"status.storedVersions[{index}]", str(name), "must appear in spec.versions")


__all__ = ["admit_crd"]
