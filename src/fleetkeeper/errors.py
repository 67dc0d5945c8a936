"""The one error tree of fleetkeeper.

Every error a caller may want to handle is named by its cause, and API errors carry
what a Kubernetes ``Status`` needs (HTTP code, reason, field causes), so the same
exception travels from the store through the local client, the API server and the
REST client unchanged::

    FleetkeeperError
    ├── ApiError                      (code, reason, causes)  -> Kubernetes Status
    │   ├── BadRequest                400 BadRequest
    │   ├── Invalid                   422 Invalid (field causes: path + rule)
    │   ├── Unauthorized              401 Unauthorized
    │   ├── Forbidden                 403 Forbidden
    │   ├── NotFound                  404 NotFound
    │   ├── MethodNotAllowed          405 MethodNotAllowed
    │   ├── AlreadyExists             409 AlreadyExists
    │   ├── Conflict                  409 Conflict (stale resourceVersion)
    │   ├── Gone                      410 Expired (watch/list revision compacted)
    │   ├── RequestEntityTooLarge     413 RequestEntityTooLarge
    │   ├── UnsupportedMediaType      415 UnsupportedMediaType
    │   ├── InternalError             500 InternalError
    │   └── ServiceUnavailable        503 ServiceUnavailable (a member behind the cluster proxy)
    ├── MemberError                   a member cluster could not be reached or refused
    │   ├── MemberUnreachable         connection refused / no route
    │   └── MemberTimeout             no answer within the bound
    ├── InterpreterError              a resource interpreter rule or script failed
    │   └── ScriptError               a Lua customization failed (syntax, runtime, limits)
    ├── CustomizationBusy             a customization's scripts are busy: ask again later
    ├── ScenarioError                 a scenario file is invalid (names the field)
    └── TerminalError                 a reconcile failure that retrying cannot fix
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any


class FleetkeeperError(Exception):
    """Base of every error raised on purpose by fleetkeeper."""


@dataclass(frozen=True)
class Cause:
    """One reason an API request failed, e.g. a field path and the rule it broke."""

    field: str
    message: str
    reason: str = "FieldValueInvalid"

    def to_dict(self) -> dict[str, str]:
        return {"field": self.field, "message": self.message, "reason": self.reason}


class ApiError(FleetkeeperError):
    """An error with Kubernetes semantics; it renders as a ``Status`` object."""

    code: int = 500
    reason: str = "InternalError"

    def __init__(
        self,
        message: str,
        *,
        causes: list[Cause] | None = None,
        kind: str | None = None,
        name: str | None = None,
        group: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.causes: list[Cause] = list(causes or [])
        self.kind = kind
        self.name = name
        self.group = group

    def to_status(self) -> dict[str, Any]:
        """Render as a ``meta.k8s.io/v1`` Status (what the API server sends)."""
        details: dict[str, Any] = {}
        if self.name:
            details["name"] = self.name
        if self.group is not None:
            details["group"] = self.group
        if self.kind:
            details["kind"] = self.kind
        if self.causes:
            details["causes"] = [c.to_dict() for c in self.causes]
        status: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if details:
            status["details"] = details
        return status


class BadRequest(ApiError):
    code, reason = 400, "BadRequest"


class Invalid(ApiError):
    code, reason = 422, "Invalid"


class Unauthorized(ApiError):
    code, reason = 401, "Unauthorized"


class Forbidden(ApiError):
    code, reason = 403, "Forbidden"


class NotFound(ApiError):
    code, reason = 404, "NotFound"


class MethodNotAllowed(ApiError):
    code, reason = 405, "MethodNotAllowed"


class AlreadyExists(ApiError):
    code, reason = 409, "AlreadyExists"


class Conflict(ApiError):
    code, reason = 409, "Conflict"


class Gone(ApiError):
    code, reason = 410, "Expired"


class RequestEntityTooLarge(ApiError):
    code, reason = 413, "RequestEntityTooLarge"


class UnsupportedMediaType(ApiError):
    code, reason = 415, "UnsupportedMediaType"


class InternalError(ApiError):
    code, reason = 500, "InternalError"


class ServiceUnavailable(ApiError):
    code, reason = 503, "ServiceUnavailable"


class Timeout(ApiError):
    """What Kubernetes answers when the request could not be completed in time (``504``)."""

    code, reason = 504, "Timeout"


_BY_REASON: dict[str, type[ApiError]] = {
    cls.reason: cls
    for cls in (
        BadRequest, Invalid, Unauthorized, Forbidden, NotFound, MethodNotAllowed, AlreadyExists,
        Conflict, Gone, RequestEntityTooLarge, UnsupportedMediaType, InternalError, ServiceUnavailable,
        Timeout,
    )
}


def from_status(status: dict[str, Any]) -> ApiError:
    """Rebuild the error a ``Status`` object describes (used by the REST client)."""
    reason = str(status.get("reason") or "")
    code = int(status.get("code") or 500)
    cls = _BY_REASON.get(reason)
    if cls is None:
        cls = next((c for c in _BY_REASON.values() if c.code == code), InternalError)
    details = status.get("details") or {}
    causes = [
        Cause(field=str(c.get("field", "")), message=str(c.get("message", "")),
              reason=str(c.get("reason", "FieldValueInvalid")))
        for c in details.get("causes") or []
    ]
    return cls(str(status.get("message") or reason), causes=causes, kind=details.get("kind"),
               name=details.get("name"), group=details.get("group"))


class MemberError(FleetkeeperError):
    """A member cluster could not be reached, or refused a request."""


class MemberUnreachable(MemberError):
    """The member refused the connection (cluster down)."""


class MemberTimeout(MemberError):
    """The member did not answer within the bound (black hole)."""


class InterpreterError(FleetkeeperError):
    """A resource interpreter rule or customization failed."""


class ScriptError(InterpreterError):
    """A Lua customization failed: syntax, runtime error, or a sandbox limit."""


class CustomizationBusy(FleetkeeperError):
    """A customization's calls are too slow to wait for right now; ask again after ``wait`` seconds.
    Not a failure of the object: it says nothing about whether the script would succeed."""

    def __init__(self, message: str, *, customization: str, wait: float) -> None:
        super().__init__(message)
        self.customization = customization
        self.wait = wait


@dataclass
class ScenarioError(FleetkeeperError):
    """A scenario file is invalid; ``field`` names where."""

    field: str
    message: str
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)

    def __str__(self) -> str:
        return f"{self.field}: {self.message}" if self.field else self.message


class TerminalError(FleetkeeperError):
    """Raised by a reconciler for a failure that retrying cannot fix: log and drop the key."""
