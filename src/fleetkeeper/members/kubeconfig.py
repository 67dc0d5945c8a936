"""Reading the files a ``kube://`` member names: a kubeconfig, and the token file of a context.

The plane reads them when a member is registered and when the cluster proxy reaches it;
each read is bounded (:data:`MAX_KUBECONFIG_BYTES`, :data:`MAX_TOKEN_BYTES`), so a wrong
path (a log, a device) is refused instead of parsed. A kubeconfig cluster's ``proxy-url``,
which lightkube's model of a cluster does not carry, is read from the document here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

#: the largest kubeconfig read (kubeconfigs of hundreds of contexts are far smaller)
MAX_KUBECONFIG_BYTES = 1 << 20
#: the largest token file read (a service account token is about a kilobyte)
MAX_TOKEN_BYTES = 64 << 10


def read_bounded(file: Path, limit: int, what: str) -> bytes:
    """The bytes of ``file``; ``ValueError`` past ``limit`` (``OSError`` when it cannot be read)."""
    with file.open("rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"{what} {file} is larger than {limit} bytes")
    return data


def read_kubeconfig(file: Path) -> dict[str, Any]:
    """The document of a kubeconfig file (``ValueError`` when missing, too large or not a mapping)."""
    if not file.is_file():
        raise ValueError(f"kubeconfig {file}: not found")
    try:
        doc = yaml.safe_load(read_bounded(file, MAX_KUBECONFIG_BYTES, "kubeconfig"))
    except yaml.YAMLError as exc:
        raise ValueError(f"kubeconfig {file}: not YAML ({str(exc)[:200]})") from None
    if not isinstance(doc, dict):
        raise ValueError(f"kubeconfig {file}: not a mapping")
    return doc


def proxy_url(doc: dict[str, Any], cluster: str) -> str | None:
    """The ``proxy-url`` of the kubeconfig cluster named ``cluster``, if it has one."""
    for item in doc.get("clusters") or []:
        if isinstance(item, dict) and item.get("name") == cluster and isinstance(item.get("cluster"), dict):
            value = item["cluster"].get("proxy-url")
            return str(value) if value else None
    return None


def read_token(file: Path) -> str:
    """The bearer token a token file holds (read at each use: tokens are rotated in place)."""
    try:
        return read_bounded(file, MAX_TOKEN_BYTES, "token file").decode().strip()
    except UnicodeDecodeError:
        raise ValueError(f"token file {file} is not text") from None


__all__ = ["MAX_KUBECONFIG_BYTES", "MAX_TOKEN_BYTES", "proxy_url", "read_bounded", "read_kubeconfig",
           "read_token"]
