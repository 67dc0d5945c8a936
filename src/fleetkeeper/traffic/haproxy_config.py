"""HAProxy configuration and runtime commands for a route table: pure text.

The HAProxy provider splits a :class:`~fleetkeeper.traffic.routes.RouteTable` in two:

* the **layout** — the frontend's routing rules, one backend per route, one server per
  cluster in each backend. It changes only when routes or the clusters of a Service
  change, and only then is a configuration written and HAProxy reloaded (seamlessly:
  the new process takes the listening socket over and the old one finishes its
  connections);
* the **server states** — each server's address and whether it is blocked. These
  change when a Remedy blocks a cluster or a load balancer moves, and are applied
  through HAProxy's runtime API without a reload: ``set server B/S state maint`` (new
  requests avoid it, running ones finish), ``state ready``, ``addr IP port P``.

A reload keeps the old process's idle keep-alive connections open until their next
response (``option idle-close-on-response``, HAProxy 2.6), so a client reusing one is
answered instead of finding it closed; ``retry-on conn-failure`` and ``redispatch`` send
a request whose server went away to another one.

Routing rules follow :func:`~fleetkeeper.traffic.routes.precedence` (the table is in that
order; HAProxy takes the first ``use_backend`` that matches): hosts compare without the
port and case-insensitively; ``*.example.com`` matches by suffix (HAProxy has no
single-label match, so it also matches deeper names); a ``Prefix`` path matches the
path itself or anything below it, an ``Exact`` path only itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fleetkeeper.controllers import multicluster_ingress_rules as mci_rules
from fleetkeeper.traffic.routes import RouteTable


@dataclass(frozen=True, slots=True)
class BackendLayout:
    name: str
    host: str
    path: str
    path_type: str
    servers: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ServerState:
    host: str
    port: int
    blocked: bool


#: (backend name, server name) → its address and state
States = dict[tuple[str, str], ServerState]


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)


def layout(table: RouteTable) -> tuple[BackendLayout, ...]:
    """The structure of the configuration (what needs a reload when it changes)."""
    return tuple(
        BackendLayout(f"r{index}_{_safe(route.service)}", route.host, route.path, route.path_type,
                      tuple(_safe(b.cluster) for b in route.backends))
        for index, route in enumerate(table.routes))


def states(table: RouteTable) -> States:
    """Every server's address and whether it is blocked."""
    out: States = {}
    for backend, route in zip(layout(table), table.routes, strict=True):
        for name, b in zip(backend.servers, route.backends, strict=True):
            out[(backend.name, name)] = ServerState(b.host, b.port, b.blocked)
    return out


def _acls(index: int, route: BackendLayout) -> tuple[list[str], list[str]]:
    lines, names = [], []
    if route.host:
        if route.host.startswith("*."):
            lines.append(f"acl h{index} req.hdr(host),field(1,:) -m end -i {route.host[1:]}")
        else:
            lines.append(f"acl h{index} req.hdr(host),field(1,:) -m str -i {route.host}")
        names.append(f"h{index}")
    prefix = route.path.rstrip("/")
    if route.path_type == mci_rules.EXACT:
        lines.append(f"acl p{index} path -m str {route.path}")
        names.append(f"p{index}")
    elif prefix:
        lines += [f"acl p{index} path -m str {prefix}", f"acl p{index} path -m beg {prefix}/"]
        names.append(f"p{index}")
    return lines, names


def render(table: RouteTable, *, bind: str, admin_socket: str) -> str:
    """The whole configuration for ``table`` (servers at their current address and state)."""
    backends = layout(table)
    current = states(table)
    out = [
        "global",
        f"    stats socket {admin_socket} mode 600 level admin expose-fd listeners",
        "    stats timeout 10s",
        "defaults",
        "    mode http",
        "    option redispatch",
        "    option idle-close-on-response",
        "    retries 3",
        "    retry-on conn-failure empty-response",
        "    timeout connect 2s",
        "    timeout client 30s",
        "    timeout server 30s",
        "    timeout http-keep-alive 10s",
        "frontend fleetkeeper",
        f"    bind {bind}",
        "    http-response set-header X-Fleetkeeper-Backend %s",
    ]
    for index, backend in enumerate(backends):
        lines, names = _acls(index, backend)
        out += [f"    {line}" for line in lines]
        out.append(f"    use_backend {backend.name}" + (f" if {' '.join(names)}" if names else ""))
    for backend in backends:
        out += [f"backend {backend.name}", "    balance roundrobin"]
        for server in backend.servers:
            state = current[(backend.name, server)]
            disabled = " disabled" if state.blocked else ""
            out.append(f"    server {server} {state.host}:{state.port}{disabled}")
    return "\n".join(out) + "\n"


def commands(before: States, after: States) -> list[str]:
    """Runtime API commands that take servers from ``before`` to ``after`` (same layout)."""
    out: list[str] = []
    for (backend, server), want in sorted(after.items()):
        have = before.get((backend, server))
        if have is None or (have.host, have.port) != (want.host, want.port):
            out.append(f"set server {backend}/{server} addr {want.host} port {want.port}")
        if have is None or have.blocked != want.blocked:
            out.append(f"set server {backend}/{server} state {'maint' if want.blocked else 'ready'}")
    return out


__all__ = ["BackendLayout", "ServerState", "States", "commands", "layout", "render", "states"]
