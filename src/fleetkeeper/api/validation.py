"""Kubernetes name formats and a collector of field errors, for admission.

The format checks return a list of human-readable problems (empty = valid), worded
like Kubernetes' ``k8s.io/apimachinery/pkg/util/validation`` so messages look familiar.
:class:`FieldErrors` gathers every problem of one object with its field path and turns
them into a single :class:`fleetkeeper.errors.Invalid` — the caller sees all mistakes
at once, each naming the field (``spec.taints[1].effect``) and the rule it broke.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Final

from fleetkeeper import errors

_DNS1123_LABEL: Final = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_SUBDOMAIN: Final = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_QUALIFIED_NAME: Final = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_LABEL_VALUE: Final = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")

DNS1123_LABEL_MAX: Final = 63
DNS1123_SUBDOMAIN_MAX: Final = 253
QUALIFIED_NAME_MAX: Final = 63
LABEL_VALUE_MAX: Final = 63


def dns1123_label(value: str) -> list[str]:
    """Problems of ``value`` as an RFC 1123 label (namespace and cluster names)."""
    out = []
    if len(value) > DNS1123_LABEL_MAX:
        out.append(f"must be no more than {DNS1123_LABEL_MAX} characters")
    if not _DNS1123_LABEL.match(value):
        out.append("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
                   "and must start and end with an alphanumeric character (e.g. 'my-name', or '123-abc')")
    return out


def dns1123_subdomain(value: str) -> list[str]:
    """Problems of ``value`` as an RFC 1123 subdomain (most object names)."""
    out = []
    if len(value) > DNS1123_SUBDOMAIN_MAX:
        out.append(f"must be no more than {DNS1123_SUBDOMAIN_MAX} characters")
    if not _DNS1123_SUBDOMAIN.match(value):
        out.append("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
                   "or '.', and must start and end with an alphanumeric character (e.g. 'example.com')")
    return out


def path_segment_name(value: str) -> list[str]:
    """Problems of ``value`` as a name usable in a URL path (the loosest Kubernetes rule)."""
    if value in (".", ".."):
        return [f"may not be {value!r}"]
    return [f"may not contain {c!r}" for c in ("/", "%") if c in value]


def qualified_name(value: str) -> list[str]:
    """Problems of ``value`` as a qualified name (``[prefix/]name``: label keys, taint keys)."""
    prefix, slash, name = value.rpartition("/")
    out: list[str] = []
    if slash:
        if not prefix:
            out.append("prefix part must be non-empty")
        else:
            out.extend(f"prefix part {msg}" for msg in dns1123_subdomain(prefix))
    if not name:
        out.append("name part must be non-empty")
        return out
    if len(name) > QUALIFIED_NAME_MAX:
        out.append(f"name part must be no more than {QUALIFIED_NAME_MAX} characters")
    if not _QUALIFIED_NAME.match(name):
        out.append("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
                   "end with an alphanumeric character (e.g. 'MyName', or 'my.name', or '123-abc')")
    return out


def label_value(value: str) -> list[str]:
    """Problems of ``value`` as a label value (may be empty)."""
    out = []
    if len(value) > LABEL_VALUE_MAX:
        out.append(f"must be no more than {LABEL_VALUE_MAX} characters")
    if not _LABEL_VALUE.match(value):
        out.append("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
                   "or '.', and must start and end with an alphanumeric character")
    return out


def _render(value: Any) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def shown(value: Any) -> str:
    """A JSON value as a type error shows it: scalars as they are (strings quoted), ``null``,
    and ``object`` or ``list`` for the containers (as the decoding errors do)."""
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "list"
    return _render(value)


class FieldErrors:
    """Problems found in one object, each with a field path and the rule broken."""

    def __init__(self) -> None:
        self.causes: list[errors.Cause] = []

    def __bool__(self) -> bool:
        return bool(self.causes)

    def invalid(self, path: str, value: Any, detail: str) -> None:
        """``path: Invalid value: <value>: <detail>`` (value shown when it is a scalar)."""
        prefix = f"Invalid value: {_render(value)}: " if isinstance(value, str | int | float | bool) else ""
        self.causes.append(errors.Cause(path, prefix + detail, "FieldValueInvalid"))

    def wrong_type(self, path: str, value: Any, expected: str) -> None:
        """``path: Invalid value: <value>: must be <expected>`` for a value of the wrong JSON type
        (``an object``, ``a list``, ``a string`` …), worded as a decoding error is."""
        self.causes.append(errors.Cause(path, f"Invalid value: {shown(value)}: must be {expected}",
                                        "FieldValueInvalid"))

    def invalid_all(self, path: str, value: Any, details: Iterable[str]) -> None:
        for detail in details:
            self.invalid(path, value, detail)

    def required(self, path: str, detail: str = "") -> None:
        self.causes.append(errors.Cause(path, "Required value" + (f": {detail}" if detail else ""),
                                        "FieldValueRequired"))

    def not_supported(self, path: str, value: Any, supported: Iterable[str]) -> None:
        options = ", ".join(f'"{s}"' for s in supported)
        message = f"Unsupported value: {_render(value)}: supported values: {options}"
        self.causes.append(errors.Cause(path, message, "FieldValueNotSupported"))

    def duplicate(self, path: str, detail: str) -> None:
        self.causes.append(errors.Cause(path, f"Duplicate value: {detail}", "FieldValueDuplicate"))

    def forbidden(self, path: str, detail: str) -> None:
        self.causes.append(errors.Cause(path, f"Forbidden: {detail}", "FieldValueForbidden"))

    def raise_if_any(self, *, kind: str, name: str, group: str | None = None) -> None:
        """Raise one ``errors.Invalid`` carrying every cause, if there is any."""
        if not self.causes:
            return
        summary = ", ".join(f"{c.field}: {c.message}" for c in self.causes)
        what = f'{kind} "{name}"' if name else kind
        raise errors.Invalid(f"{what} is invalid: {summary}", causes=list(self.causes), kind=kind,
                             name=name or None, group=group)


__all__ = [
    "FieldErrors", "dns1123_label", "dns1123_subdomain", "label_value", "path_segment_name", "qualified_name",
    "shown",
]
