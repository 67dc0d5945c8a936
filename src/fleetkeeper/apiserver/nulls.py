"""Fields set to ``null`` in a written object, dropped as kube-apiserver drops them.

kube-apiserver never stores a ``null`` where its schema has a field: a Kubernetes kind is
decoded into Go types, where ``null`` leaves a field unset, and a custom resource (every
Karmada kind is one in Karmada's API server) has the nulls of its schema's properties and
map values pruned unless the schema says ``nullable: true``. So ``kubectl create`` of a
PropagationPolicy with ``failover: null`` stores no ``failover``, as one without it would.

:func:`drop_nulls` does the same on every write path (create, update, patch, ``/status``;
server-side apply drops an intent's nulls itself), before the object is decoded:

* a key whose field the schema declares, or a value of a map the schema types, is removed
  when it is ``null`` (unless the CRD's schema marks it nullable);
* below a place the schema leaves free (``x-kubernetes-preserve-unknown-fields``, a raw
  manifest of a Work), a ``null`` is data and kept, as it is where the schema has no such
  field (strict decoding then reports the field);
* list items are kept (a ``null`` item is the decoder's to judge).

The schema is the typed model of a Karmada kind (its fields, read once per class) or the
compiled OpenAPI schema of a kind kept unstructured (:func:`fieldcheck.checker_for`).
"""

from __future__ import annotations

import types
import typing
from typing import Any, Union

from pydantic import BaseModel

from fleetkeeper.api.meta import Unstructured
from fleetkeeper.api.scheme import ResourceInfo
from fleetkeeper.apiserver.fieldcheck import Node, checker_for

#: the trees of the typed models met so far (a bounded set: the classes of the scheme)
_TYPED: dict[type[BaseModel], Node] = {}


def drop_nulls(info: ResourceInfo, obj: dict[str, Any]) -> None:
    """Remove from ``obj`` (in place) the nulls kube-apiserver would not store for ``info``'s kind."""
    node = _typed(info.model) if not issubclass(info.model, Unstructured) else checker_for(info)
    if node is not None:
        _walk(node, obj)


def _walk(node: Node, value: Any) -> None:
    if isinstance(value, dict):
        if node.properties is not None:
            for key in [k for k, v in value.items() if v is None]:
                child = node.properties.get(key)
                if child is not None and not child.nullable:
                    del value[key]
            for key, sub in value.items():
                child = node.properties.get(key)
                if child is not None and _inner(child):
                    _walk(child, sub)
        elif node.values is not None:
            values = node.values
            if not values.nullable:
                for key in [k for k, v in value.items() if v is None]:
                    del value[key]
            if _inner(values):
                for sub in value.values():
                    _walk(values, sub)
    elif isinstance(value, list) and node.items is not None and _inner(node.items):
        for sub in value:
            _walk(node.items, sub)


def _inner(node: Node) -> bool:
    """Whether the schema says anything of what lies below ``node``."""
    return node.properties is not None or node.values is not None or node.items is not None


def _typed(model: type[BaseModel]) -> Node:
    """The tree of a typed model: its fields under both spellings, typed down to free-form values."""
    found = _TYPED.get(model)
    if found is not None:
        return found
    node = _TYPED[model] = Node()  # filled below; a recursive model finds it meanwhile
    node.properties = {}
    node.leaf = False
    for name, field in model.model_fields.items():
        child = _of_type(field.annotation)
        node.properties[name] = child
        if field.alias:
            node.properties[field.alias] = child
    return node


def _of_type(annotation: Any) -> Node:
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (Union, types.UnionType):
        kinds = [arg for arg in args if arg is not type(None)]
        return _of_type(kinds[0]) if len(kinds) == 1 else Node()
    if origin is typing.Annotated:
        return _of_type(args[0])
    node = Node()
    if origin is list and args and args[0] is not Any:
        node.items = _of_type(args[0])
    elif origin is dict and len(args) == 2 and args[1] is not Any:
        node.values = _of_type(args[1])
    elif isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _typed(annotation)
    return node


__all__ = ["drop_nulls"]
