"""``/openapi/v2``: every served kind's schema in one Swagger 2.0 document, as JSON or protobuf.

kubectl reads it where the OpenAPI v3 documents do not answer: ``kubectl apply`` of a kind
whose group-version the server does not publish validates the object on the client with
this document (a 404 here made it print ``the server could not find the requested
resource`` instead of the ``no matches for kind`` it owes the user), and older tools
explain kinds from it. kubectl asks for ``application/com.github.proto-openapi.spec.v2@v1.0+protobuf``
and parses nothing else: :func:`encode` writes the document in that encoding (gnostic's
``openapi.v2.Document``; extension values and defaults are YAML text, as there).

The document is derived from the v3 documents (:mod:`~fleetkeeper.apiserver.openapi`):
their component schemas become ``definitions`` (``#/components/schemas/X`` references
become ``#/definitions/X``, a described reference ``allOf: [$ref]`` becomes a ``$ref``
beside its description, which Swagger allows), and what Swagger 2.0 cannot say (``anyOf``,
``oneOf``, ``nullable``) is left out, so the schema allows more, never less. Paths are
not repeated: kubectl finds the kinds by ``x-kubernetes-group-version-kind``.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from typing import Any

import yaml

#: what kubectl asks for, and what the answer says it is (Go's MIME parser refuses the ``@``)
PROTOBUF = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
PROTOBUF_ANSWER = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
_V3_REF, _V2_REF = "#/components/schemas/", "#/definitions/"
_DROPPED = frozenset({"anyOf", "oneOf", "not", "nullable", "prefixItems", "const", "$defs"})


def _schema(node: Any) -> Any:
    if isinstance(node, list):
        return [_schema(v) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROPPED:
            continue
        if key == "$ref" and isinstance(value, str):
            out[key] = value.replace(_V3_REF, _V2_REF, 1)
        elif key in ("properties", "patternProperties"):
            out[key] = {name: _schema(sub) for name, sub in value.items()}
        elif key in ("x-kubernetes-group-version-kind", "default", "enum", "example") or key.startswith("x-"):
            out[key] = value
        else:
            out[key] = _schema(value)
    every = out.get("allOf")
    if isinstance(every, list) and len(every) == 1 and isinstance(every[0], dict) and len(every[0]) == 1 \
            and "$ref" in every[0]:
        out["$ref"] = out.pop("allOf")[0]["$ref"]
    if out.get("type") == "array" and not isinstance(out.get("items"), dict):
        out["items"] = {}
    return out


def swagger(documents: Iterable[dict[str, Any]], *, version: str) -> dict[str, Any]:
    """One Swagger 2.0 document holding the component schemas of every v3 document."""
    definitions: dict[str, Any] = {}
    for document in documents:
        for name, schema in ((document.get("components") or {}).get("schemas") or {}).items():
            definitions.setdefault(name, _schema(schema))
    return {"swagger": "2.0", "info": {"title": "fleetkeeper", "version": version}, "paths": {},
            "definitions": dict(sorted(definitions.items()))}


# ---------------------------------------------------------------------------------- protobuf


def _varint(value: int) -> bytes:
    out = bytearray()
    value &= (1 << 64) - 1  # negative int64s as two's complement, as protobuf writes them
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _bytes(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _text(number: int, value: str) -> bytes:
    return _bytes(number, value.encode())


def _yaml_any(number: int, value: Any) -> bytes:
    """gnostic's ``Any`` with the value as YAML text (its field 2)."""
    return _bytes(number, _text(2, yaml.safe_dump(value, default_flow_style=False, sort_keys=False)))


def _named(number: int, name: str, value: bytes) -> bytes:
    return _bytes(number, _text(1, name) + _bytes(2, value))


_STRINGS = {"$ref": 1, "format": 2, "title": 3, "description": 4, "pattern": 13, "discriminator": 26}
_NUMBERS = {"multipleOf": 6, "maximum": 7, "minimum": 9}
_FLAGS = {"exclusiveMaximum": 8, "exclusiveMinimum": 10, "uniqueItems": 16, "readOnly": 27}
_COUNTS = {"maxLength": 11, "minLength": 12, "maxItems": 14, "minItems": 15, "maxProperties": 17,
           "minProperties": 18}


def _encode_schema(schema: dict[str, Any]) -> bytes:
    """gnostic's ``Schema`` message (fields in its numbering)."""
    out = bytearray()
    for key, value in schema.items():
        if key in _STRINGS and isinstance(value, str):
            out += _text(_STRINGS[key], value)
        elif key in _NUMBERS and isinstance(value, int | float) and not isinstance(value, bool):
            out += _varint(_NUMBERS[key] << 3 | 1) + struct.pack("<d", float(value))
        elif key in _FLAGS and isinstance(value, bool):
            out += _varint(_FLAGS[key] << 3) + _varint(int(value))
        elif key in _COUNTS and isinstance(value, int) and not isinstance(value, bool):
            out += _varint(_COUNTS[key] << 3) + _varint(value)
        elif key == "default":
            out += _yaml_any(5, value)
        elif key == "required" and isinstance(value, list):
            out += b"".join(_text(19, str(name)) for name in value)
        elif key == "enum" and isinstance(value, list):
            out += b"".join(_yaml_any(20, item) for item in value)
        elif key == "additionalProperties":
            inner = _bytes(1, _encode_schema(value)) if isinstance(value, dict) else \
                _varint(2 << 3) + _varint(int(bool(value)))
            out += _bytes(21, inner)
        elif key == "type" and isinstance(value, str):
            out += _bytes(22, _text(1, value))
        elif key == "items" and isinstance(value, dict):
            out += _bytes(23, _bytes(1, _encode_schema(value)))
        elif key == "allOf" and isinstance(value, list):
            out += b"".join(_bytes(24, _encode_schema(sub)) for sub in value if isinstance(sub, dict))
        elif key == "properties" and isinstance(value, dict):
            out += _bytes(25, b"".join(_named(1, name, _encode_schema(sub)) for name, sub in value.items()))
        elif key.startswith("x-"):
            out += _bytes(31, _text(1, key) + _yaml_any(2, value))
    return bytes(out)


def encode(document: dict[str, Any]) -> bytes:
    """A Swagger document from :func:`swagger` as gnostic's ``openapi.v2.Document``."""
    info = document.get("info") or {}
    out = bytearray(_text(1, str(document.get("swagger", "2.0"))))
    out += _bytes(2, _text(1, str(info.get("title", ""))) + _text(2, str(info.get("version", ""))))
    out += _bytes(8, b"")
    definitions = document.get("definitions") or {}
    out += _bytes(9, b"".join(_named(1, name, _encode_schema(sub)) for name, sub in definitions.items()))
    return bytes(out)


__all__ = ["PROTOBUF", "PROTOBUF_ANSWER", "encode", "swagger"]
