"""The Store: Kubernetes storage semantics over pluggable backends.

``open_store(url, clock=…)`` picks the backend by URL scheme and imports it lazily, so a
backend's dependencies cost nothing unless it is used:

* ``memory://`` — process-local, for tests and simulations;
* ``sqlite:///abs/path/state.db`` or ``sqlite://relative.db`` (``?synchronous=full`` to
  fsync every commit) — the embedded, durable default;
* ``etcd://host:port`` — shared by replicas; it needs the ``etcd`` extra (``pip install
  'fleetkeeper[etcd]'``: a gRPC client the embedded default does without), and a URL that
  names it without the extra installed raises :class:`MissingExtra`, a ``ValueError``
  saying that command;
* more schemes plug in by adding a ``"scheme": "module:function"`` entry to
  :data:`BACKENDS`; the function takes ``(location, options, *, history)`` and returns
  a :class:`~fleetkeeper.store.backend.Backend`.

Everyone uses the one façade, :class:`Store`; its semantics are those documented in
:mod:`fleetkeeper.store.interface`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from urllib.parse import parse_qsl

from fleetkeeper.clock import Clock
from fleetkeeper.store.backend import Backend
from fleetkeeper.store.core import Store
from fleetkeeper.store.interface import Event, EventType, ListResult, StoreProtocol, Watch

#: URL scheme → ``module:function`` building the backend (imported on first use)
BACKENDS: dict[str, str] = {
    "memory": "fleetkeeper.store.memory:open_backend",
    "sqlite": "fleetkeeper.store.sqlite:open_backend",
    "etcd": "fleetkeeper.store.etcd:open_backend",
}

DEFAULT_HISTORY = 10_000
#: URL scheme → the package extra its backend's libraries come with
EXTRAS: dict[str, str] = {"etcd": "etcd"}


class MissingExtra(ValueError):
    """A store URL names a backend whose libraries are not installed; says what to install."""


def require_backend(scheme: str) -> None:
    """Raise :class:`MissingExtra` when the backend of ``scheme`` cannot be imported for want of
    its extra's libraries (importing it is what opening a store of that scheme does anyway)."""
    target = BACKENDS.get(scheme)
    if target is None:
        return
    try:
        importlib.import_module(target.partition(":")[0])
    except ModuleNotFoundError as exc:
        extra = EXTRAS.get(scheme)
        if extra is None or (exc.name or "").startswith("fleetkeeper"):
            raise
        raise MissingExtra(f"{scheme} support needs: pip install 'fleetkeeper[{extra}]' "
                           f"(no module named {exc.name!r})") from None


def _split(url: str) -> tuple[str, str, dict[str, str]]:
    scheme, sep, rest = url.partition("://")
    if not sep or not scheme:
        raise ValueError(f"store URL {url!r} has no scheme; use one of "
                         + ", ".join(f"{s}://" for s in sorted(BACKENDS)))
    location, _, query = rest.partition("?")
    try:
        options = dict(parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query)))
    except ValueError:
        raise ValueError(f"store URL {url!r} has a malformed query {query!r}") from None
    return scheme.lower(), location, options


def open_backend(url: str, *, history: int = DEFAULT_HISTORY) -> Backend:
    """The backend a store URL names (raises ``ValueError`` for an unknown scheme or bad URL)."""
    scheme, location, options = _split(url)
    target = BACKENDS.get(scheme)
    if target is None:
        raise ValueError(f"unknown store URL scheme {scheme!r} in {url!r}; known schemes: "
                         + ", ".join(f"{s}://" for s in sorted(BACKENDS)))
    require_backend(scheme)
    module_name, _, function = target.partition(":")
    factory: Callable[..., Backend] = getattr(importlib.import_module(module_name), function)
    return factory(location, options, history=history)


def open_store(
    url: str,
    *,
    clock: Clock,
    history: int = DEFAULT_HISTORY,
    uid_factory: Callable[[], str] | None = None,
    watch_queue: int | None = None,
) -> Store:
    """Open the store at ``url``; keep at least ``history`` changes for resuming watches.

    ``uid_factory`` (default: uuid4) makes uids deterministic for simulations;
    ``watch_queue`` bounds each watcher's buffer (default: ``history``) — a watcher that
    falls further behind is ended with ``errors.Gone``.
    """
    backend = open_backend(url, history=history)
    return Store(backend, clock=clock, uid_factory=uid_factory,
                 watch_queue=watch_queue if watch_queue is not None else history)


__all__ = [
    "BACKENDS", "DEFAULT_HISTORY", "EXTRAS", "Event", "EventType", "ListResult", "MissingExtra", "Store",
    "StoreProtocol", "Watch", "open_backend", "open_store", "require_backend",
]
