"""OpenAPI v3 documents built from the pydantic API models.

kubectl reads ``/openapi/v3`` (an index of group-versions) and then one document per
group-version for two things:

* **validation** — ``kubectl apply``/``create`` validate by default. When the PATCH
  operation of a kind carries ``x-kubernetes-group-version-kind`` and a
  ``fieldValidation`` query parameter, kubectl delegates validation to the server
  (``?fieldValidation=Strict``), which our admission performs with field paths;
* **kubectl explain** — it finds the schema whose ``x-kubernetes-group-version-kind``
  names the kind and walks ``properties``/``$ref``/``allOf``.

Pydantic's JSON Schema is close to OpenAPI 3.0 but not equal, so :func:`_convert`
rewrites it: ``$defs`` → ``components/schemas`` (names prefixed Kubernetes-style,
``io.karmada.policy.v1alpha1.Placement``), ``Optional[X]`` (``anyOf`` with null) → ``X``,
``$ref`` with siblings → ``allOf: [$ref]``, free-form maps and ``Any`` →
``x-kubernetes-preserve-unknown-fields``, ``const`` → ``enum``, titles dropped. The
descriptions come from the models: a field's is the string literal under it, a type's its
class docstring. They are made plain sentences (:func:`plain_text` drops the reST markup),
and a field that has none says what its type's says; a type then keeps none of its own, as
``kubectl explain`` would print a field's description followed by its type's. Kubernetes'
own kinds (Deployment …) are described by Kubernetes' schemas
(:mod:`~fleetkeeper.apiserver.kubeschema`); another kind kept unstructured gets
``metadata`` plus preserved unknown fields.

Kinds a CustomResourceDefinition defines are described by the CRD's own
``openAPIV3Schema`` (``kubectl explain guestbook.spec`` walks it), with the typed
``metadata`` every kind has. As for Kubernetes' CRDs, no PATCH operation offers strategic
merge, so ``kubectl apply`` sends JSON merge patches for them.

``/openapi/v2`` serves the same schemas as one Swagger 2.0 document
(:mod:`~fleetkeeper.apiserver.openapi_v2`). Documents are built once per group-version
and cached with their hash (the index's ``?hash=``) until the scheme changes (a CRD was
added, changed or removed).
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

import orjson
from pydantic.json_schema import models_json_schema

from fleetkeeper.api.crd import definition
from fleetkeeper.api.jsoncopy import json_copy
from fleetkeeper.api.meta import Unstructured
from fleetkeeper.api.scheme import ResourceInfo, Scheme
from fleetkeeper.apiserver import openapi_v2
from fleetkeeper.apiserver.kubeschema import kind_schemas

_NO_REF = "#/$defs/"
_QUERY = [("dryRun", "string"), ("fieldManager", "string"), ("fieldValidation", "string")]
#: reST roles (``:class:`~a.b.C```, ``:attr:`x <a.b.x>```), literals (````x````) and emphasis
_ROLE = re.compile(r":[a-z]+:`~?(?:([^`<]*?)\s*<[^`>]*>|([^`]*))`")
_LITERAL = re.compile(r"``([^`]*)``|`([^`]*)`|\*\*([^*]*)\*\*")


def _role(match: re.Match[str]) -> str:
    text, target = match.group(1), match.group(2)
    if text is not None:
        return text
    return target.rsplit(".", 1)[-1] if "`~" in match.group(0) else target


def plain_text(text: str) -> str:
    """A docstring as plain sentences: reST roles and literals become their text (``:class:`~a.B```
    → ``B``), and the lines of a paragraph are joined."""
    text = _LITERAL.sub(lambda m: next(g for g in m.groups() if g is not None), _ROLE.sub(_role, text))
    paragraphs = [" ".join(line.strip() for line in block.splitlines()) for block in text.split("\n\n")]
    return "\n\n".join(p for p in paragraphs if p)


def schema_prefix(group: str, version: str) -> str:
    """``policy.karmada.io``/``v1alpha1`` → ``io.karmada.policy.v1alpha1.``."""
    if not group:
        return f"io.k8s.api.core.{version}."
    if "." not in group or group.endswith(".k8s.io"):
        return f"io.k8s.api.{group.split('.')[0]}.{version}."
    return ".".join(reversed(group.split("."))) + f".{version}."


def _convert(node: Any, prefix: str) -> Any:
    if isinstance(node, list):
        return [_convert(v, prefix) for v in node]
    if not isinstance(node, dict):
        return node
    if "anyOf" in node:
        options = [o for o in node["anyOf"] if o != {"type": "null"}]
        if len(options) == 1:
            merged = {k: v for k, v in node.items() if k != "anyOf"}
            merged.update(options[0])
            return _convert(merged, prefix)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("title",) or (key == "default" and value is None):
            continue
        if key == "$ref" and isinstance(value, str) and value.startswith(_NO_REF):
            out[key] = "#/components/schemas/" + prefix + value[len(_NO_REF):]
        elif key == "const":
            out["enum"] = [value]
        elif key == "description" and isinstance(value, str):
            out[key] = plain_text(value)
        elif key == "additionalProperties" and value is True:
            out["x-kubernetes-preserve-unknown-fields"] = True
        elif key == "additionalProperties" and value is False:
            continue
        elif key in ("properties", "$defs"):
            out[key] = {name: _convert(sub, prefix) for name, sub in value.items()}
        else:
            out[key] = _convert(value, prefix)
    if "$ref" in out and len(out) > 1:
        out["allOf"] = [{"$ref": out.pop("$ref")}]
    if not out or out == {"description": out.get("description")}:
        out["x-kubernetes-preserve-unknown-fields"] = True
    if "x-kubernetes-preserve-unknown-fields" in out and "type" not in out and "properties" in out:
        out["type"] = "object"
    return out


def _component_schemas(infos: list[ResourceInfo], prefix: str) -> dict[str, Any]:
    pairs = [(info.model, "validation") for info in infos]
    keys, top = models_json_schema(pairs, by_alias=True, ref_template=_NO_REF + "{model}")  # type: ignore[arg-type]
    schemas: dict[str, Any] = {}
    for name, schema in (top.get("$defs") or {}).items():
        schemas[prefix + name] = _convert(schema, prefix)
    for info in infos:
        ref = keys[(info.model, "validation")].get("$ref", "")
        schema = schemas.pop(prefix + ref[len(_NO_REF):])
        builtin = kind_schemas(info.group, info.version, info.kind) \
            if issubclass(info.model, Unstructured) and definition(info) is None else None
        if builtin is not None:
            schema = _builtin(*builtin, schemas)
        elif issubclass(info.model, Unstructured):
            schema["description"] = (f"{info.kind} ({info.api_version}), stored as given: fleetkeeper keeps "
                                     "the kinds it does not model unstructured.")
            schema["x-kubernetes-preserve-unknown-fields"] = True
            _declared(info, schema)
        schemas[prefix + info.kind] = schema
        schema["x-kubernetes-group-version-kind"] = [
            {"group": info.group, "version": info.version, "kind": info.kind}
        ]
        properties = schema.setdefault("properties", {})
        properties.setdefault("apiVersion", {"type": "string", "description": "APIVersion defines the "
                                             "versioned schema of this representation of an object."})
        properties.setdefault("kind", {"type": "string", "description": "Kind is a string value representing "
                                       "the REST resource this object represents."})
    _described_fields(schemas, prefix)
    kinds = {prefix + info.kind for info in infos}
    for name in top.get("$defs") or {}:  # each field now says it: kubectl explain would print both
        if prefix + name not in kinds and prefix + name in schemas:
            schemas[prefix + name].pop("description", None)
    return schemas


def _builtin(name: str, found: dict[str, Any], schemas: dict[str, Any]) -> dict[str, Any]:
    """A Kubernetes kind's schema and the types it refers to (the shared ones are not changed)."""
    for type_name, schema in found.items():
        schemas.setdefault(type_name, schema)
    root = dict(found[name])
    root["properties"] = dict(root.get("properties") or {})
    return root


def _described_fields(schemas: dict[str, Any], prefix: str) -> None:
    """A field of ours without a description of its own says what its type's says (what kubectl
    explain prints for it)."""
    refs = "#/components/schemas/"
    for name, schema in schemas.items():
        if not name.startswith(prefix):
            continue
        properties = schema.get("properties") or {}
        for field, sub in properties.items():
            if not isinstance(sub, dict) or "description" in sub:
                continue
            items = sub["items"] if isinstance(sub.get("items"), dict) else {}
            target = sub.get("$ref") or (sub.get("allOf") or [{}])[0].get("$ref") or items.get("$ref")
            described = schemas.get(str(target).removeprefix(refs), {}).get("description") if target else None
            if not described:
                continue
            described_sub = {k: v for k, v in sub.items() if k != "$ref"}
            if "$ref" in sub:  # kubectl explain reads a description beside a reference only under allOf
                described_sub["allOf"] = [{"$ref": target}]
            properties[field] = {**described_sub, "description": described}


def _declared(info: ResourceInfo, schema: dict[str, Any]) -> None:
    """Describe a CRD-defined kind by the CRD's ``openAPIV3Schema`` (``metadata`` stays the typed one)."""
    custom = definition(info)
    version = custom.version(info.version) if custom is not None else None
    if version is None or version.schema is None:
        return
    declared = json_copy(dict(version.schema))
    properties = schema.setdefault("properties", {})
    for name, sub in (declared.get("properties") or {}).items():
        if name != "metadata":
            properties[name] = sub
    schema["type"] = "object"
    if declared.get("description"):
        schema["description"] = declared["description"]
    if not declared.get("x-kubernetes-preserve-unknown-fields"):
        schema.pop("x-kubernetes-preserve-unknown-fields", None)
    required = [r for r in declared.get("required") or () if r != "metadata"]
    if required:
        schema["required"] = required


def _parameters(names: list[tuple[str, str]], path_params: list[str]) -> list[dict[str, Any]]:
    params = [{"name": p, "in": "path", "required": True, "schema": {"type": "string"}} for p in path_params]
    params += [{"name": n, "in": "query", "schema": {"type": t}} for n, t in names]
    return params


def _operation(info: ResourceInfo, action: str, ref: str, path_params: list[str],
               query: list[tuple[str, str]], body_types: tuple[str, ...] = ()) -> dict[str, Any]:
    gvk = {"group": info.group, "version": info.version, "kind": info.kind}
    op: dict[str, Any] = {
        "operationId": f"{action}{info.kind}",
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": gvk,
        "parameters": _parameters(query, path_params),
        "responses": {
            "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": ref}}}},
            "401": {"description": "Unauthorized"},
        },
    }
    if body_types:
        op["requestBody"] = {"required": True,
                             "content": {t: {"schema": {"$ref": ref}} for t in body_types}}
    return op


_PATCH_TYPES = ("application/json-patch+json", "application/merge-patch+json", "application/apply-patch+yaml")


def _paths(info: ResourceInfo, ref: str) -> dict[str, Any]:
    root = f"/apis/{info.group}/{info.version}" if info.group else f"/api/{info.version}"
    scope = f"{root}/namespaces/{{namespace}}/{info.plural}" if info.namespaced else f"{root}/{info.plural}"
    base_params = ["namespace"] if info.namespaced else []
    list_q = [("labelSelector", "string"), ("fieldSelector", "string"), ("watch", "boolean"),
              ("resourceVersion", "string"), ("limit", "integer"), ("continue", "string")]
    item_params = [*base_params, "name"]
    patch_q = [*_QUERY, ("force", "boolean")]
    item = {
        "get": _operation(info, "get", ref, item_params, []),
        "put": _operation(info, "put", ref, item_params, _QUERY, ("application/json",)),
        "patch": _operation(info, "patch", ref, item_params, patch_q, _PATCH_TYPES),
        "delete": _operation(info, "delete", ref, item_params, [("dryRun", "string")]),
    }
    paths: dict[str, Any] = {
        scope: {"get": _operation(info, "list", ref, base_params, list_q),
                "post": _operation(info, "post", ref, base_params, _QUERY, ("application/json",)),
                "delete": _operation(info, "deletecollection", ref, base_params, list_q)},
        f"{scope}/{{name}}": item,
    }
    if info.has_status:
        paths[f"{scope}/{{name}}/status"] = {
            "get": _operation(info, "get", ref, item_params, []),
            "put": _operation(info, "put", ref, item_params, _QUERY, ("application/json",)),
            "patch": _operation(info, "patch", ref, item_params, patch_q, _PATCH_TYPES),
        }
    if info.namespaced:
        paths[f"{root}/{info.plural}"] = {"get": _operation(info, "list", ref, [], list_q)}
    return paths


class OpenAPI:
    """The ``/openapi/v3`` index and per-group-version documents of one scheme."""

    def __init__(self, scheme: Scheme) -> None:
        self._scheme = scheme
        self._generation = -1
        self._by_gv: dict[tuple[str, str], list[ResourceInfo]] = {}
        self._docs: dict[tuple[str, str], tuple[bytes, str]] = {}
        self._v2: tuple[bytes, bytes, str] | None = None

    @property
    def _infos(self) -> dict[tuple[str, str], list[ResourceInfo]]:
        """The served kinds by group-version (the cached documents are dropped when the scheme changed)."""
        if self._generation != self._scheme.generation:
            self._generation = self._scheme.generation
            self._by_gv = {}
            for info in self._scheme.infos():
                self._by_gv.setdefault((info.group, info.version), []).append(info)
            self._docs = {}
            self._v2 = None
        return self._by_gv

    @staticmethod
    def key(group: str, version: str) -> str:
        """The index key of a group-version (``apis/policy.karmada.io/v1alpha1``, ``api/v1``)."""
        return f"apis/{group}/{version}" if group else f"api/{version}"

    def document(self, group: str, version: str) -> tuple[bytes, str] | None:
        """The JSON document of a group-version and its hash (``None`` if not served)."""
        gv = (group, version)
        if gv not in self._infos:
            return None
        if gv not in self._docs:
            body = orjson.dumps(self._build(group, version), option=orjson.OPT_SORT_KEYS)
            self._docs[gv] = (body, hashlib.sha256(body).hexdigest()[:32].upper())
        return self._docs[gv]

    def v2(self) -> tuple[bytes, bytes, str]:
        """The Swagger 2.0 document of every served kind: JSON, protobuf, and its hash."""
        infos = self._infos  # drops a stale copy first
        if self._v2 is None:
            documents = []
            for group, version in sorted(infos):
                doc = self.document(group, version)
                assert doc is not None
                documents.append(orjson.loads(doc[0]))
            swagger = openapi_v2.swagger(documents, version="v1")
            body = orjson.dumps(swagger)
            self._v2 = (body, openapi_v2.encode(swagger), hashlib.sha256(body).hexdigest()[:32].upper())
        return self._v2

    def index(self) -> dict[str, Any]:
        paths = {}
        for group, version in sorted(self._infos):
            doc = self.document(group, version)
            assert doc is not None
            key = self.key(group, version)
            paths[key] = {"serverRelativeURL": f"/openapi/v3/{key}?hash={doc[1]}"}
        return {"paths": paths}

    def _build(self, group: str, version: str) -> dict[str, Any]:
        infos = sorted(self._infos[(group, version)], key=lambda i: i.plural)
        prefix = schema_prefix(group, version)
        schemas = _component_schemas(infos, prefix)
        paths: dict[str, Any] = {}
        for info in infos:
            paths.update(_paths(info, f"#/components/schemas/{prefix}{info.kind}"))
        title = f"{group or 'core'}/{version}"
        return {"openapi": "3.0.0", "info": {"title": f"fleetkeeper {title}", "version": version},
                "paths": paths, "components": {"schemas": schemas}}


__all__ = ["OpenAPI", "schema_prefix"]
