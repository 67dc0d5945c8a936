"""A throwaway etcd per test (:mod:`fleetkeeper.store.etcd_testing`), skipped without the binary.

The ``etcd`` binary comes from the Debian package ``etcd-server``; the test command
installs it. Without it, the etcd tests skip with a message saying so.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fleetkeeper.store.etcd_testing import EtcdServer, find_etcd, free_port


def require_etcd() -> str:
    """The etcd binary, or skip the test."""
    binary = find_etcd()
    if binary is None:
        pytest.skip("the etcd binary is not installed (Debian package etcd-server); the etcd store tests "
                    "need a real etcd")
    return binary


def etcd_server(data_dir: Path) -> EtcdServer:
    """A started etcd in ``data_dir`` (the caller stops it)."""
    return EtcdServer(data_dir, binary=require_etcd()).start()


__all__ = ["EtcdServer", "etcd_server", "free_port", "require_etcd"]
