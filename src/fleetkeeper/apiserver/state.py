"""What every handler shares: the store, the clock, the scheme's derived documents,
the tokens and the tunables, plus the per-request context.

:class:`ServerState` is built once by :func:`fleetkeeper.apiserver.app.build_app`.
:class:`Context` is what a resource handler needs to know about one request after
routing, authentication and authorization: the target, the caller, the query, the
``Accept`` decision, and the field manager of a write.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson
from starlette.responses import Response

from fleetkeeper import errors
from fleetkeeper.api import constants
from fleetkeeper.api.scheme import Scheme
from fleetkeeper.apiserver.admit import check_validation_mode
from fleetkeeper.apiserver.auth import Tokens, User
from fleetkeeper.apiserver.authz import Authorizer
from fleetkeeper.apiserver.discovery import Discovery
from fleetkeeper.apiserver.openapi import OpenAPI
from fleetkeeper.apiserver.request import MAX_BODY_BYTES, Target, parse_bool
from fleetkeeper.clock import Clock
from fleetkeeper.store.interface import StoreProtocol


@dataclass(frozen=True)
class ServerConfig:
    """Tunables of the API server."""

    #: bodies larger than this are refused with 413
    max_body_bytes: int = MAX_BODY_BYTES
    #: a watch without ``timeoutSeconds`` ends after this long (clients re-watch)
    watch_timeout: float = 1800.0
    #: with ``allowWatchBookmarks=true``, an idle watch gets a BOOKMARK this often
    bookmark_interval: float = 60.0
    #: ``fieldValidation`` when the client sends none (Kubernetes' default; kubectl sends Strict)
    default_field_validation: str = "Warn"
    #: Kubernetes minor version reported by ``/version`` (kubectl warns beyond ±1)
    kubernetes_minor: int = 37
    #: how often a patch or apply is retried when a concurrent write wins the race
    patch_retries: int = 32
    #: namespaces made when missing before the first answer (a member cluster's are Kubernetes' own)
    bootstrap_namespaces: tuple[str, ...] = constants.SYSTEM_NAMESPACES
    #: authorize by the stored RBAC (off for a member: its one token is its admin)
    follow_rbac: bool = True


class ServerState:
    """Shared by all requests of one API server."""

    def __init__(self, store: StoreProtocol, *, clock: Clock, scheme: Scheme, tokens: Tokens | None,
                 config: ServerConfig) -> None:
        self.store = store
        self.clock = clock
        self.scheme = scheme
        self.tokens = tokens
        #: RBAC and ServiceAccounts, followed from the store (None when authentication is off)
        self.authz = Authorizer(store, scheme=scheme, clock=clock, tokens=tokens) \
            if tokens is not None and config.follow_rbac else None
        self.config = config
        self.discovery = Discovery(scheme)
        self.openapi = OpenAPI(scheme)
        #: set when the server stops: open watches end
        self.closing = asyncio.Event()


@dataclass
class Context:
    """One resource request, routed and authorized."""

    target: Target
    user: User
    query: Mapping[str, str]
    accept: str
    user_agent: str = ""
    warnings: list[str] = field(default_factory=list)
    #: the paths of the keys the request's JSON body gave twice (strict field validation)
    duplicates: list[str] = field(default_factory=list)
    #: the written object is the result of a patch (how a strict decoding error is worded)
    patching: bool = False

    def param(self, name: str) -> str | None:
        return self.query.get(name)

    def flag(self, name: str, default: bool = False) -> bool:
        return parse_bool(name, self.query.get(name), default)

    @property
    def dry_run(self) -> bool:
        value = self.query.get("dryRun")
        if value in (None, ""):
            return False
        if value != "All":
            raise errors.BadRequest(f"dryRun must be 'All', got {value!r}")
        return True

    def field_validation(self, default: str) -> str:
        return check_validation_mode(self.query.get("fieldValidation"), default)

    @property
    def field_manager(self) -> str:
        """``?fieldManager=``, else the client's name from its User-Agent (as Kubernetes does)."""
        manager = self.query.get("fieldManager")
        if manager:
            if len(manager) > 128:
                raise errors.BadRequest("fieldManager must be at most 128 characters")
            return manager
        agent = self.user_agent.split("/", 1)[0].strip()
        return agent[:128] or "unknown"


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _quoted(text: str) -> str:
    """A warning as a header's quoted string: quotes and backslashes escaped, and control characters
    and anything beyond ASCII as Go escapes (kubectl unquotes them; a header is Latin-1)."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').encode("ascii", "backslashreplace").decode()
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group(0)):02x}", escaped)


def json_response(body: Any, status: int = 200, *, warnings: list[str] | None = None,
                  content_type: str = "application/json") -> Response:
    """A JSON response, with ``Warning`` headers (kubectl prints them) when there are warnings."""
    response = Response(orjson.dumps(body), status_code=status, media_type=content_type)
    for warning in warnings or ():
        response.headers.append("Warning", f'299 - "{_quoted(warning)}"')
    return response


def status_response(exc: errors.ApiError) -> Response:
    """The ``Status`` answer for an API error."""
    return json_response(exc.to_status(), exc.code)


__all__ = ["Context", "ServerConfig", "ServerState", "json_response", "status_response"]
