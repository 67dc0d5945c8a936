"""The throwaway etcd of tests and benchmarks: distinct ports, and a taken port is not fatal."""

from __future__ import annotations

import socket
from pathlib import Path

from fleetkeeper.store.etcd_testing import EtcdServer, free_ports

from .etcd_server import require_etcd


def test_ports_chosen_together_are_distinct() -> None:
    for _ in range(50):
        ports = free_ports(4)
        assert len(set(ports)) == 4


def test_a_first_start_on_a_port_someone_took_retries_with_fresh_ports(tmp_path: Path) -> None:
    server = EtcdServer(tmp_path / "etcd", binary=require_etcd())
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as squatter:
        squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        taken = squatter.getsockname()[1]
        server.peer_port = taken
        server.start()
        try:
            assert server.peer_port != taken
            assert "address already in use" in server.log.read_text(errors="replace")
        finally:
            server.stop()
