"""``fleetkeeper member-sim`` as a test fixture: a simulated member behind HTTPS, in its own process.

:class:`MemberSim` starts ``python -m fleetkeeper.cmd.member_sim`` on free loopback
ports (``--port 0 --admin-port 0``: the process picks them, so there is no race);
:meth:`MemberSim.wait` waits for the line it prints once it serves and reads its URLs
from it. Faults go through
the admin API (:meth:`MemberSim.set_state`). Every wait is bounded; :meth:`stop` ends
the process (SIGTERM, then SIGKILL) and says how it exited.
"""

from __future__ import annotations

import re
import signal
import ssl
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import yaml

#: bound on the process starting or stopping
PROCESS = 30.0
_SERVING = re.compile(
    r"serving on (?P<url>https://\S+) \(admin (?P<admin>https://\S+)\), kubeconfig (?P<kc>\S+)")


class MemberSim:
    """One member-sim process (see the module notes)."""

    def __init__(self, directory: Path, name: str = "member1", *, nodes: int = 3,
                 pod_startup: float = 0.5) -> None:
        self.name = name
        self.directory = directory
        self.directory.mkdir(parents=True, exist_ok=True)
        self.out, self.err = directory / "member-sim.out", directory / "member-sim.err"
        args = [sys.executable, "-m", "fleetkeeper.cmd.member_sim", "--port", "0", "--admin-port", "0",
                "--name", name, "--nodes", str(nodes), "--pod-startup", str(pod_startup),
                "--tls-dir", str(directory)]
        with self.out.open("wb") as out, self.err.open("wb") as err:
            self.popen = subprocess.Popen(args, stdout=out, stderr=err)
        self.url = self.admin_url = self.token = ""
        self.kubeconfig = directory / "kubeconfig"
        self.ca = directory / "pki" / "ca.crt"

    def wait(self) -> MemberSim:
        """Wait until the process serves (started processes can be waited for one after the other)."""
        deadline = time.monotonic() + PROCESS
        while time.monotonic() < deadline:
            match = _SERVING.search(self.out.read_text())
            if match:
                self.url, self.admin_url, self.kubeconfig = match["url"], match["admin"], Path(match["kc"])
                config = yaml.safe_load(self.kubeconfig.read_text())
                self.token = config["users"][0]["user"]["token"]
                return self
            if self.popen.poll() is not None:
                code = self.popen.returncode
                raise AssertionError(f"member-sim exited with {code}: {self.err.read_text()}")
            time.sleep(0.05)
        self.popen.kill()
        raise AssertionError(f"member-sim did not serve within {PROCESS:g}s: {self.err.read_text()}")

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    def _admin(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        context = ssl.create_default_context(cafile=str(self.ca))
        response = httpx.request(method, f"{self.admin_url}{path}", json=body, verify=context, timeout=10,
                                 headers={"Authorization": f"Bearer {self.token}"})
        assert response.status_code == 200, response.text
        result: dict[str, Any] = response.json()
        return result

    def set_state(self, state: str) -> dict[str, Any]:
        """``down``, ``blackhole``, ``unhealthy`` or ``up``, through the admin API."""
        return self._admin("POST", "/admin/state", {"state": state})

    def state(self) -> dict[str, Any]:
        return self._admin("GET", "/admin/state")

    def set_nodes(self, count: int) -> dict[str, Any]:
        return self._admin("POST", "/admin/nodes", {"count": count})

    def compact(self) -> dict[str, Any]:
        """Forget the server's watch history (open watches end; resuming ones get 410)."""
        return self._admin("POST", "/admin/compact")

    def stop(self) -> int:
        """SIGTERM and wait; killed (and reported as -SIGKILL) when it does not stop in time."""
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
            try:
                return self.popen.wait(PROCESS)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(PROCESS)
        return self.popen.returncode


__all__ = ["PROCESS", "MemberSim"]
