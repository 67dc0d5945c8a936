"""Kubeconfig files for the API server's clients (kubectl, the REST client, agents).

The server certificate is verified against the embedded CA
(``certificate-authority-data``) and the caller authenticates with a bearer token —
the form kubectl needs, since it sends tokens only over TLS. The file holds a secret,
so it is written ``0600`` (atomically: a reader never sees half a file). Reading
kubeconfigs is the client's business (:func:`fleetkeeper.client.rest.read_kubeconfig`).
"""

from __future__ import annotations

import base64
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml


def kubeconfig(server: str, ca_pem: bytes | str, token: str, *, name: str = "fleetkeeper",
               namespace: str = "default", user: str = "fleetkeeper-admin") -> dict[str, Any]:
    """A kubeconfig document with one cluster, one user and one current context."""
    ca = ca_pem.encode() if isinstance(ca_pem, str) else ca_pem
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": {
            "server": server, "certificate-authority-data": base64.b64encode(ca).decode()}}],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": user, "namespace": namespace}}],
        "current-context": name,
        "preferences": {},
    }


def plane_kubeconfig(servers: Sequence[str], ca_pem: bytes, token: str, *, name: str,
                     namespace: str = "default") -> dict[str, Any]:
    """A kubeconfig reaching one plane through each of ``servers`` (replicas, or a load balancer):
    one cluster and context per server — named ``name``, or ``name-1`` … ``name-N`` for several —
    one user ``name-admin``, the first context current."""
    names = [name] if len(servers) == 1 else [f"{name}-{i}" for i in range(1, len(servers) + 1)]
    ca = base64.b64encode(ca_pem).decode()
    user = f"{name}-admin"
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": n, "cluster": {"server": s, "certificate-authority-data": ca}}
                     for n, s in zip(names, servers, strict=True)],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": n, "context": {"cluster": n, "user": user, "namespace": namespace}}
                     for n in names],
        "current-context": names[0],
        "preferences": {},
    }


def write_kubeconfig(path: Path | str, server: str, ca_pem: bytes | str, token: str, *,
                     name: str = "fleetkeeper", namespace: str = "default",
                     user: str = "fleetkeeper-admin") -> Path:
    """Write an admin (or agent) kubeconfig to ``path`` (mode 0600); return the path."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    text = yaml.safe_dump(kubeconfig(server, ca_pem, token, name=name, namespace=namespace, user=user),
                          sort_keys=False)
    tmp = target.with_name(target.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(text)
    os.replace(tmp, target)
    return target


__all__ = ["kubeconfig", "plane_kubeconfig", "write_kubeconfig"]
