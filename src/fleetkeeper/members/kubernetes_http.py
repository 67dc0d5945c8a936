"""The connection to one real member cluster, and what its failures mean to fleetkeeper.

A :class:`Connection` is built from a lightkube ``SingleConfig`` (a kubeconfig context,
or an endpoint plus credentials): lightkube parses the configuration, authenticates
(bearer token, token file, client certificate, exec plugin) and verifies TLS.
It holds two clients on that configuration: lightkube's ``AsyncClient`` for objects and
a plain ``httpx2`` client for the paths that are not objects — health endpoints,
``/version`` and discovery — which must answer with their status code, not raise.
:func:`reach` turns the same configuration into what a plain HTTP client needs (the cluster
proxy's), by lightkube's rules; credentials only a program gives are refused there.

:func:`translated` is the one place that maps client failures onto the error tree of
:mod:`fleetkeeper.errors`: a ``Status`` from the member becomes the matching
``ApiError`` (``NotFound``, ``Conflict``, ``Gone`` …); a request that got no answer in
time is ``MemberTimeout``; anything else on the transport — connection refused or
reset, TLS failure, a stream cut mid-way — is ``MemberUnreachable``.
"""

from __future__ import annotations

import base64
import contextlib
import ssl
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
from lightkube import AsyncClient
from lightkube.config.client_adapter import AsyncClient as adapter_client
from lightkube.config.client_adapter import ConnectionParams, verify_cluster
from lightkube.config.kubeconfig import SingleConfig
from lightkube.config.models import User
from lightkube.core.exceptions import ApiError as LightkubeApiError
from lightkube.core.exceptions import ConfigError

from fleetkeeper import errors
from fleetkeeper.clock import Clock
from fleetkeeper.members.kubeconfig import read_token
from fleetkeeper.members.kubernetes_discovery import ApiDiscovery

#: seconds to establish a connection (TCP and TLS)
CONNECT_TIMEOUT = 10.0


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def status_error(code: int, body: Any, text: str = "") -> errors.ApiError:
    """The error an HTTP error answer stands for (a ``Status`` body when there is one)."""
    if isinstance(body, dict) and body.get("kind") == "Status":
        return errors.from_status(body)
    return errors.from_status({"code": code, "message": text[:300] or f"HTTP {code}"})


@contextlib.contextmanager
def translated(cluster: str) -> Iterator[None]:
    """Re-raise client failures as fleetkeeper errors (see the module notes)."""
    try:
        yield
    except LightkubeApiError as exc:
        raise errors.from_status(exc.status.to_dict()) from exc
    except httpx2.TimeoutException as exc:
        raise errors.MemberTimeout(f"member cluster {cluster!r}: no answer ({_describe(exc)})") from exc
    except httpx2.HTTPStatusError as exc:
        response = exc.response
        try:
            body = response.json()
        except ValueError:
            body = None
        raise status_error(response.status_code, body, response.text) from exc
    except (httpx2.TransportError, ssl.SSLError, OSError) as exc:
        raise errors.MemberUnreachable(f"member cluster {cluster!r}: {_describe(exc)}") from exc


class Connection:
    """The clients of one member (see the module notes)."""

    def __init__(self, config: SingleConfig, *, clock: Clock, timeout: float,
                 proxy: str | None = None) -> None:
        limits = httpx2.Timeout(timeout, connect=min(timeout, CONNECT_TIMEOUT))
        self.config = config
        self.objects = AsyncClient(config, timeout=limits, trust_env=True, proxy=proxy)
        self.http: httpx2.AsyncClient = adapter_client(config, ConnectionParams(timeout=limits, proxy=proxy))
        self.discovery = ApiDiscovery(self.http, clock)

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await self.objects.close()
        with contextlib.suppress(Exception):
            await self.http.aclose()


@dataclass(frozen=True, eq=False)
class Reach:
    """A kubeconfig context as a plain HTTP client uses it: the server, the TLS context (its CA
    or none, its client certificate), the ``Authorization`` header or the token file that
    gives it at each use, and the proxy to go through."""

    server: str
    tls: ssl.SSLContext
    authorization: str | None = field(default=None, repr=False)
    token_file: Path | None = None
    proxy_url: str | None = None

    def header(self) -> str | None:
        """The ``Authorization`` header now (a token file is read again: tokens are rotated)."""
        if self.token_file is not None:
            return f"Bearer {read_token(self.token_file)}"
        return self.authorization


def reach(config: SingleConfig, proxy_url: str | None = None) -> Reach:
    """How ``config`` is reached, as lightkube reaches it for the plane (its ``verify_cluster``,
    then a token file, a token or a user name and password); ``ValueError`` when the context's
    credentials come from a program (an exec plugin, an auth-provider), which is not run here."""
    user = config.user or User()
    token_file = Path(config.abs_file(user.token_file)) if user.token_file else None
    authorization = f"Bearer {user.token}" if user.token and token_file is None else None
    if token_file is None and user.token is None:
        if user.exec is not None:
            raise ValueError(f"kubeconfig context {config.context_name!r} gets its credentials from an exec "
                             f"plugin ({user.exec.command}), which the cluster proxy does not run; give the "
                             "context a token, a tokenFile or a client certificate")
        if user.username and user.password:
            basic = base64.b64encode(f"{user.username}:{user.password}".encode()).decode()
            authorization = f"Basic {basic}"
        elif user.auth_provider:
            raise ValueError(f"kubeconfig context {config.context_name!r} gets its credentials from an "
                             "auth-provider, which the cluster proxy does not run; give the context a token, "
                             "a tokenFile or a client certificate")
    try:
        tls = verify_cluster(config.cluster, user, config.abs_file)
    except (ssl.SSLError, OSError, ValueError, ConfigError) as exc:
        raise ValueError(f"kubeconfig context {config.context_name!r}: its certificates cannot be used: "
                         f"{_describe(exc)[:200]}") from None
    return Reach(config.cluster.server.rstrip("/"), tls, authorization, token_file, proxy_url)


__all__ = ["CONNECT_TIMEOUT", "Connection", "Reach", "reach", "status_error", "translated"]
