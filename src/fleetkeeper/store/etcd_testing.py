"""A throwaway etcd: one member on loopback, its own data directory, free ports.

For tests, benchmarks and local trials of the ``etcd://`` store (``fleetkeeper bench
store`` uses it too): ``EtcdServer(data_dir).start()`` runs the ``etcd`` binary (Debian
package ``etcd-server``) with its client *and* peer URLs on 127.0.0.1 — nothing binds a
public interface or the default ports 2379/2380 — and returns once ``/health`` says the
member serves. ``kill()`` (SIGKILL) then ``start()`` on the same data directory and
ports is a crash and restart; ``stop()`` ends it. It needs no etcd client library.

Waits are bounded by attempt counts (no clock reads): a start that never becomes
healthy raises with the tail of etcd's log.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path
from types import TracebackType

#: health checks before a start is declared failed (each waits up to HEALTH_PAUSE seconds + a request)
HEALTH_ATTEMPTS = 1500
HEALTH_PAUSE = 0.02


def find_etcd() -> str | None:
    """The etcd binary on PATH (``None`` when it is not installed)."""
    return shutil.which("etcd")


#: starts with fresh ports when the first start finds a port taken (someone bound it meanwhile)
PORT_ATTEMPTS = 3


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on right now."""
    return free_ports(1)[0]


def free_ports(count: int) -> list[int]:
    """``count`` distinct TCP ports on 127.0.0.1 nobody listens on right now (all held while
    choosing, so two of them are never the same)."""
    socks: list[socket.socket] = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            socks.append(sock)
            sock.bind(("127.0.0.1", 0))
        return [int(sock.getsockname()[1]) for sock in socks]
    finally:
        for sock in socks:
            sock.close()


class EtcdServer:
    """One etcd member (see the module docstring); also a context manager."""

    def __init__(self, data_dir: Path, *, binary: str | None = None) -> None:
        found = binary or find_etcd()
        if found is None:
            raise FileNotFoundError("the etcd binary is not installed (Debian package etcd-server)")
        self.binary = found
        self.data_dir = data_dir
        self.client_port, self.peer_port = free_ports(2)
        self.log = data_dir.with_name(data_dir.name + ".log")
        self.proc: subprocess.Popen[bytes] | None = None
        #: whether it served once (its ports are then its own: a restart must keep them)
        self._served = False

    @property
    def url(self) -> str:
        """The store URL of this etcd."""
        return f"etcd://127.0.0.1:{self.client_port}"

    def start(self) -> EtcdServer:
        """Start the member (again, after ``kill``/``stop``) and wait until it serves.

        The ports were free when chosen, but another process may bind one before etcd
        does: a first start that fails on a taken port tries again with fresh ports."""
        attempts = 1 if self._served else PORT_ATTEMPTS
        for attempt in range(1, attempts + 1):
            try:
                self._start_once()
                break
            except RuntimeError as exc:
                if attempt == attempts or "address already in use" not in str(exc):
                    raise
                self.client_port, self.peer_port = free_ports(2)
        self._served = True
        return self

    def _start_once(self) -> None:
        client = f"http://127.0.0.1:{self.client_port}"
        peer = f"http://127.0.0.1:{self.peer_port}"
        args = [
            self.binary, "--name", "default", "--data-dir", str(self.data_dir), "--logger", "zap",
            "--log-level", "warn", "--listen-client-urls", client, "--advertise-client-urls", client,
            "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
            "--initial-cluster", f"default={peer}", "--heartbeat-interval", "20", "--election-timeout", "200",
        ]
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(args, stdout=log, stderr=log, start_new_session=True)
        self._wait_healthy()

    def _wait_healthy(self) -> None:
        health = f"http://127.0.0.1:{self.client_port}/health"
        for _ in range(HEALTH_ATTEMPTS):
            if self.proc is None or self.proc.poll() is not None:
                code = None if self.proc is None else self.proc.returncode
                raise RuntimeError(f"etcd exited with {code}: {self._log_tail()}")
            try:
                with urllib.request.urlopen(health, timeout=1) as reply:
                    if b'"true"' in reply.read():
                        return
            except OSError:
                pass
            time.sleep(HEALTH_PAUSE)
        self.stop()
        raise RuntimeError(f"etcd did not become healthy: {self._log_tail()}")

    def _log_tail(self) -> str:
        return self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""

    def kill(self) -> None:
        """SIGKILL the member: a crash, no shutdown of any kind."""
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()

    def stop(self) -> None:
        """End the member (SIGTERM, then SIGKILL if it lingers)."""
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def __enter__(self) -> EtcdServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


__all__ = ["PORT_ATTEMPTS", "EtcdServer", "find_etcd", "free_port", "free_ports"]
