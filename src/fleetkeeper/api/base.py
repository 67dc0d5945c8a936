"""Model conventions shared by every API kind.

* Python attributes are snake_case; the wire (JSON/YAML) is camelCase, exactly
  Karmada's field names. ``Model.from_dict`` accepts either spelling.
* ``to_dict()`` renders the wire form: aliases, JSON types, ``None`` omitted.
* Typed kinds forbid unknown fields, so a typo is an error naming the field path
  (``spec.placement.clusterAfinity: Extra inputs are not permitted``) instead of being
  silently dropped. Raw JSON fields (manifests, reflected status) are ``dict[str, Any]``.
* Timestamps are timezone-aware UTC ``datetime`` values rendered as RFC 3339 with a
  ``Z`` (fractional seconds only when non-zero, which Kubernetes parses too).
* Validation errors are converted to :class:`fleetkeeper.errors.Invalid` with one
  ``Cause`` per field path by :func:`validation_error`.
"""

from __future__ import annotations

import functools
import re
from datetime import UTC, datetime
from typing import Annotated, Any, ClassVar, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    PlainSerializer,
    ValidationError,
)
from pydantic.alias_generators import to_camel

from fleetkeeper import errors


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


@functools.lru_cache(maxsize=8192)
def format_time(value: datetime) -> str:
    """RFC 3339 in UTC with ``Z``; microseconds only when non-zero.

    Cached: every write and copy of an object serializes its timestamps again, and the
    same few instants (creation times, condition transitions) recur all the time."""
    # isoformat of an aware UTC time ends in ``+00:00`` and leaves out zero microseconds
    # (much cheaper than ``strftime``, and this runs on every serialization)
    return _utc(value).isoformat()[:-6] + "Z"


def parse_time(value: str) -> datetime:
    """Parse an RFC 3339 timestamp (``Z`` or offset) into aware UTC."""
    return _utc(datetime.fromisoformat(value.replace("Z", "+00:00")))


def millisecond_time(value: str, *, iso: bool) -> str:
    """An RFC 3339 time in UTC to the millisecond, for people: ``2026-01-01T10:00:00.123Z`` (``iso``)
    or ``2026-01-01 10:00:00.123``; a value that does not parse comes back as it is."""
    try:
        parsed = parse_time(value)
    except ValueError:
        return value
    text = parsed.strftime("%Y-%m-%dT%H:%M:%S." if iso else "%Y-%m-%d %H:%M:%S.")
    return f"{text}{parsed.microsecond // 1000:03d}{'Z' if iso else ''}"


def human_duration(seconds: float) -> str:
    """Kubernetes' ``duration.HumanDuration`` (``42s``, ``5m3s``, ``3h``, ``9d``, ``2y``)."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        return f"{minutes}m" if s % 60 == 0 else f"{minutes}m{s % 60}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        return f"{hours}h" if minutes % 60 == 0 else f"{hours}h{minutes % 60}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{hours // 24}d" if hours % 24 == 0 else f"{hours // 24}d{hours % 24}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if days == 0 else f"{hours // 24 // 365}y{days}d"
    return f"{hours // 24 // 365}y"


#: ``metav1.Time``: aware UTC datetime on the Python side, RFC 3339 on the wire.
Time = Annotated[
    datetime, AfterValidator(_utc), PlainSerializer(format_time, return_type=str, when_used="always")
]


class Model(BaseModel):
    """Base of every API (sub)structure: camelCase on the wire, strict about unknown fields.

    A string literal under a field is its description in the published schema (what
    ``kubectl explain`` prints), so every field of a served kind says what it means there."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        validate_assignment=False,
        ser_json_timedelta="float",
        use_enum_values=True,
        use_attribute_docstrings=True,
    )

    def __eq__(self, other: object) -> bool:
        """Field equality, as pydantic's, with a fast path: controllers compare specs and
        placements on every watch event, and for two models of one class without extra or
        private attributes (all of ours but the unstructured kinds) the field dicts decide."""
        if (type(other) is type(self) and self.__pydantic_extra__ is None
                and other.__pydantic_extra__ is None
                and getattr(self, "__pydantic_private__", None) is None
                and getattr(other, "__pydantic_private__", None) is None):
            return self.__dict__ == other.__dict__
        return super().__eq__(other)

    def to_dict(self) -> dict[str, Any]:
        """The wire form: camelCase keys, JSON-compatible values, ``None`` omitted."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)

    @classmethod
    def from_dict(cls, data: Any, *, path: str = "") -> Self:
        """Validate ``data`` (wire or Python spelling); raise ``errors.Invalid`` naming the fields."""
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise validation_error(exc, prefix=path, kind=getattr(cls, "KIND", None)) from None


def _loc_to_path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def validation_error(
    exc: ValidationError, *, prefix: str = "", kind: str | None = None, name: str | None = None
) -> errors.Invalid:
    """Turn a pydantic ``ValidationError`` into ``errors.Invalid`` with a cause per field path."""
    causes: list[errors.Cause] = []
    for err in exc.errors():
        loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-")))
        path = _loc_to_path(loc)
        if prefix:
            path = f"{prefix}.{path}" if path and not path.startswith("[") else f"{prefix}{path}"
        msg = _message(err)
        reason = {
            "missing": "FieldValueRequired",
            "extra_forbidden": "FieldValueNotSupported",
            "literal_error": "FieldValueNotSupported",
            "enum": "FieldValueNotSupported",
        }.get(err["type"], "FieldValueInvalid")
        causes.append(errors.Cause(field=path, message=msg, reason=reason))
    summary = "; ".join(f"{c.field}: {c.message}" if c.field else c.message for c in causes)
    what = f'{kind} "{name}"' if kind and name else (kind or "object")
    return errors.Invalid(f"{what} is invalid: {summary}", causes=causes, kind=kind, name=name)


#: the message of a field the kind does not have (what strict field validation refuses)
UNKNOWN_FIELD = "unknown field"
#: pydantic error type → what the value must be, in Kubernetes' words
_MUST_BE = {
    "int_type": "an integer", "int_parsing": "an integer", "int_from_float": "an integer",
    "float_type": "a number", "float_parsing": "a number", "string_type": "a string",
    "bool_type": "a boolean", "bool_parsing": "a boolean", "list_type": "a list",
    "dict_type": "an object", "model_type": "an object", "model_attributes_type": "an object",
}
_QUOTED = re.compile(r"'((?:[^'\\]|\\.)*)'")


def _shown(value: Any) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, dict):
        return "object"
    return "list" if isinstance(value, list) else type(value).__name__


def _message(err: Any) -> str:
    """A pydantic error in Kubernetes' words (``Required value``, ``Unsupported value: "x":
    supported values: "A", "B"``, ``Invalid value: "three": must be an integer``)."""
    kind, value = err["type"], err.get("input")
    if kind == "missing":
        return "Required value"
    if kind == "extra_forbidden":
        return UNKNOWN_FIELD
    if kind in ("literal_error", "enum"):
        supported = _QUOTED.findall(str((err.get("ctx") or {}).get("expected", "")))
        if supported:
            return (f"Unsupported value: {_shown(value)}: supported values: "
                    + ", ".join(f'"{s}"' for s in supported))
    if kind in _MUST_BE:
        return f"Invalid value: {_shown(value)}: must be {_MUST_BE[kind]}"
    msg = str(err["msg"])
    return msg[len("Value error, "):] if msg.startswith("Value error, ") else msg


def field_error(path: str, message: str, *, kind: str | None = None, name: str | None = None,
                reason: str = "FieldValueInvalid") -> errors.Invalid:
    """A single-field ``Invalid`` (for rules checked outside pydantic, e.g. admission)."""
    what = f'{kind} "{name}"' if kind and name else (kind or "object")
    return errors.Invalid(f"{what} is invalid: {path}: {message}",
                          causes=[errors.Cause(field=path, message=message, reason=reason)],
                          kind=kind, name=name)


__all__ = ["UNKNOWN_FIELD", "Model", "Time", "field_error", "format_time", "human_duration",
           "millisecond_time", "parse_time", "validation_error"]

# ClassVar re-exported for kind modules that declare scheme metadata on classes.
_ = ClassVar
