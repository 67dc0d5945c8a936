"""The cluster proxy's way to members named by a kubeconfig context.

A Push cluster whose ``spec.apiEndpoint`` is ``kube://CONTEXT`` (a context of the plane's
default kubeconfig) or ``kube:///path/to/kubeconfig#CONTEXT`` is a real cluster the plane
reaches as that context says (:mod:`fleetkeeper.members.kubernetes`); its cluster proxy
(:mod:`fleetkeeper.apiserver.proxy`) reaches it the same way: the context's server, its
``certificate-authority(-data)`` or ``insecure-skip-tls-verify``, its token, token file,
user name and password or client certificate, and its cluster's ``proxy-url``. The
kubeconfig (bounded in size) and a token file are read again at each request, so an edited
file or a rotated token takes effect at once. A context whose credentials come from a
program (an exec plugin, an auth-provider) answers ``503`` saying so: the proxy does not
run programs a kubeconfig names.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import httpx

from fleetkeeper.apiserver.proxy import Connection
from fleetkeeper.errors import ServiceUnavailable
from fleetkeeper.members.kubernetes import parse_kube_url, read_context
from fleetkeeper.members.kubernetes_http import Reach, reach


class KubeconfigMembers:
    """A :class:`~fleetkeeper.apiserver.proxy.MemberTransport` for ``kube://`` endpoints."""

    async def connect(self, cluster: Mapping[str, Any]) -> Connection | None:
        endpoint = str((cluster.get("spec") or {}).get("apiEndpoint") or "")
        if not endpoint.startswith("kube://"):
            return None
        name = (cluster.get("metadata") or {}).get("name")
        try:
            found, authorization = await asyncio.to_thread(_read, endpoint)
            proxy = httpx.Proxy(found.proxy_url) if found.proxy_url else None
        except (ValueError, OSError) as exc:
            raise ServiceUnavailable(f'cluster "{name}": {str(exc)[:400]}') from None
        headers = (("Authorization", authorization),) if authorization else ()
        return Connection(found.server, headers, verify=found.tls, proxy=proxy)


def _read(endpoint: str) -> tuple[Reach, str | None]:
    """The member's reach and ``Authorization`` header now (file I/O: run off the event loop)."""
    path, context = parse_kube_url(endpoint)
    found = reach(*read_context(path, context))
    return found, found.header()


__all__ = ["KubeconfigMembers"]
