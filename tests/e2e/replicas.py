"""Control-plane replicas for the end-to-end tests: several ``fleetkeeper up`` on one etcd.

:class:`Replicas` runs ``fleetkeeper up --store etcd://… --clusters 0`` once per
replica, each with its own state directory — its own kubeconfig and lock; the CA and
admin token are the plane's, shared through the store — on a free loopback port
(``--port 0``). Each replica is reached through its own kubeconfig (:class:`Api`, a
small Kubernetes REST reader: bearer token and CA from the kubeconfig). Which replica
leads is read from the Lease ``karmada-system/fleetkeeper-controller-manager``: its
``holderIdentity`` is :func:`~fleetkeeper.cmd.up.up_identity` of the leader's state
directory.

Members are ``fleetkeeper member-sim`` processes (:class:`~members.member_sim.MemberSim`)
joined with ``fleetkeeper join NAME --cluster-kubeconfig FILE``, so every replica
reaches them over HTTPS with the credentials stored in the shared store.

Every wait is bounded; :meth:`Replicas.stop_all` ends every replica still running
(SIGTERM, then SIGKILL for one that lingers).
"""

from __future__ import annotations

import base64
import os
import signal
import ssl
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import yaml

from fleetkeeper.cmd.up import up_identity

from .test_up import FLEETKEEPER, KUBECTL, PROCESS, Process, wait_for

LEASE_PATH = "/apis/coordination.k8s.io/v1/namespaces/karmada-system/leases/fleetkeeper-controller-manager"
#: leader election as Karmada times it: a 15 s lease, a 10 s renew deadline, a try every 2 s
LEASE_DURATION, RENEW_DEADLINE, RETRY_PERIOD = 15.0, 10.0, 2.0
ELECTION = ["--leader-elect-lease-duration", f"{LEASE_DURATION:g}s",
            "--leader-elect-renew-deadline", f"{RENEW_DEADLINE:g}s",
            "--leader-elect-retry-period", f"{RETRY_PERIOD:g}s"]
#: probe members every second; Ready flips after 2 s of failures (1 s of successes)
PROBES = ["--cluster-status-update-frequency", "1s", "--cluster-failure-threshold", "2s",
          "--cluster-success-threshold", "1s", "--cluster-probe-timeout", "2s"]


class Api:
    """Reads through one kubeconfig: its server, CA and bearer token."""

    def __init__(self, kubeconfig: Path, *, timeout: float = 5.0) -> None:
        config = yaml.safe_load(kubeconfig.read_text())
        cluster, user = config["clusters"][0]["cluster"], config["users"][0]["user"]
        self.server: str = cluster["server"]
        if "certificate-authority-data" in cluster:
            ca = base64.b64decode(cluster["certificate-authority-data"]).decode()
            context = ssl.create_default_context(cadata=ca)
        else:
            context = ssl.create_default_context(cafile=cluster["certificate-authority"])
        self.client = httpx.Client(base_url=self.server, verify=context, timeout=timeout,
                                   headers={"Authorization": f"Bearer {user['token']}"})

    def get(self, path: str) -> dict[str, Any] | None:
        """The object at ``path``; None when it does not exist."""
        response = self.client.get(path)
        if response.status_code == 404:
            return None
        assert response.status_code == 200, f"GET {path}: {response.status_code} {response.text}"
        found: dict[str, Any] = response.json()
        return found

    def items(self, path: str) -> list[dict[str, Any]]:
        listed = self.get(path)
        assert listed is not None, f"GET {path}: 404"
        items: list[dict[str, Any]] = listed["items"]
        return items

    def ready(self) -> bool:
        """``/readyz`` answers 200 (False while it does not, or the server is unreachable)."""
        try:
            return self.client.get("/readyz").status_code == 200
        except httpx.HTTPError:
            return False

    def close(self) -> None:
        self.client.close()

    def __enter__(self) -> Api:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class Replica:
    """One ``fleetkeeper up`` replica: its state directory and its current process."""

    index: int
    state_dir: Path
    process: Process | None = None
    starts: int = 0

    @property
    def name(self) -> str:
        return f"replica{self.index}"

    @property
    def identity(self) -> str:
        """Its leader-election identity (what the Lease's holderIdentity says when it leads)."""
        return up_identity(self.state_dir)

    @property
    def kubeconfig(self) -> Path:
        return self.state_dir / "kubeconfig"

    def alive(self) -> bool:
        return self.process is not None and self.process.alive()

    def api(self) -> Api:
        return Api(self.kubeconfig)


@dataclass
class Replicas:
    """N replicas of the control plane over one etcd (see the module notes)."""

    root: Path
    store_url: str
    env: dict[str, str]
    count: int = 3
    extra: list[str] = field(default_factory=list)
    replicas: list[Replica] = field(init=False)

    def __post_init__(self) -> None:
        (self.root / "logs").mkdir(parents=True, exist_ok=True)
        self.replicas = [Replica(i, self.root / f"replica{i}") for i in range(self.count)]

    # ------------------------------------------------------------------ processes
    def launch(self, replica: Replica) -> None:
        """Start ``replica``'s process (without waiting for it)."""
        assert not replica.alive(), f"{replica.name} is already running"
        replica.starts += 1
        args = ["up", "--state-dir", str(replica.state_dir), "--port", "0", "--clusters", "0",
                "--store", self.store_url, *ELECTION, *PROBES, *self.extra]
        replica.process = Process(args, self.root / "logs", f"{replica.name}-{replica.starts}", self.env)

    def wait_ready(self, replica: Replica) -> Replica:
        """Wait until ``replica`` printed its ready message and its ``/readyz`` answers 200."""
        process = replica.process
        assert process is not None

        def started() -> bool:
            assert process.alive(), f"{replica.name} exited:\n{process.stdout}\n{process.stderr}"
            return "Ready in" in process.stdout

        wait_for(started, f"{replica.name} ready", PROCESS)
        with replica.api() as api:
            wait_for(api.ready, f"{replica.name} GET /readyz 200", PROCESS)
        return replica

    def start(self, replica: Replica) -> Replica:
        self.launch(replica)
        return self.wait_ready(replica)

    def start_all(self) -> None:
        """Start every replica at once and wait until each is Ready."""
        for replica in self.replicas:
            self.launch(replica)
        for replica in self.replicas:
            self.wait_ready(replica)

    def stop_all(self) -> None:
        """SIGTERM every running replica; SIGKILL one that has not stopped in time."""
        running = [r.process for r in self.replicas if r.process is not None and r.process.alive()]
        for process in running:
            process.popen.send_signal(signal.SIGTERM)
        for process in running:
            try:
                process.popen.wait(PROCESS)
            except subprocess.TimeoutExpired:
                process.popen.kill()
                process.popen.wait(PROCESS)

    # ------------------------------------------------------------------ who leads
    def live(self) -> list[Replica]:
        return [r for r in self.replicas if r.alive()]

    def lease(self, via: Replica | None = None) -> dict[str, Any] | None:
        """The controllers' Lease, read through ``via`` (default: the first live replica)."""
        through = via or self.live()[0]
        with through.api() as api:
            return api.get(LEASE_PATH)

    def holder(self, lease: dict[str, Any] | None) -> Replica | None:
        identity = ((lease or {}).get("spec") or {}).get("holderIdentity")
        return next((r for r in self.replicas if r.identity == identity), None)

    def led_by(self, candidates: list[Replica]) -> Replica | None:
        """The holder of the lease if it is one of ``candidates`` (read through the first)."""
        holder = self.holder(self.lease(candidates[0]))
        return holder if holder in candidates else None

    def leader(self) -> Replica | None:
        """The replica the Lease names (None when nobody holds it)."""
        return self.holder(self.lease())

    # ------------------------------------------------------------------ commands through one replica
    def kubectl(self, replica: Replica, *args: str, stdin: str | None = None) -> str:
        command = [str(KUBECTL), "--kubeconfig", str(replica.kubeconfig),
                   "--cache-dir", str(self.root / "kube-cache" / replica.name), *args]
        done = subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 0, f"kubectl {' '.join(args)} via {replica.name} failed:\n{done.stderr}"
        return done.stdout

    def cli(self, replica: Replica, *args: str) -> str:
        done = subprocess.run([*FLEETKEEPER, *args, "--kubeconfig", str(replica.kubeconfig)],
                              capture_output=True, text=True, timeout=60, env=self.env, check=False)
        assert done.returncode == 0, f"fleetkeeper {' '.join(args)} via {replica.name} failed:\n{done.stderr}"
        return done.stdout


class Sampler:
    """Calls ``sample()`` every ``period`` seconds on a thread while inside ``with``; keeps
    every problem it reports (a failed read is a problem too) and counts the samples."""

    def __init__(self, sample: Callable[[], list[str]], *, period: float = 0.2) -> None:
        self._sample = sample
        self._period = period
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="sampler", daemon=True)
        self.problems: list[str] = []
        self.samples = 0

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.problems.extend(self._sample())
            except Exception as exc:  # a read that fails is what the test must see
                self.problems.append(f"sample failed: {exc!r}")
            self.samples += 1
            self._stop.wait(self._period)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(PROCESS)


def unexpected_errors(stderr: str) -> list[str]:
    """The closing line of every traceback in a replica's log that is not a ``Conflict`` (an
    optimistic write that lost a race; the controller retries it, by design)."""
    lines = stderr.splitlines()
    found = []
    for start, line in enumerate(lines):
        if line.startswith("Traceback"):
            last = next((x for x in lines[start + 1:] if x and not x[0].isspace()), "")
            if not last.startswith("fleetkeeper.errors.Conflict"):
                found.append(last)
    return found


def scratch_env(root: Path) -> dict[str, str]:
    """The environment of every process: never the user's state directory or kubeconfig."""
    return {**os.environ, "XDG_STATE_HOME": str(root / "xdg"), "PYTHONUNBUFFERED": "1", "KUBECONFIG": ""}


__all__ = ["ELECTION", "LEASE_DURATION", "PROBES", "RENEW_DEADLINE", "RETRY_PERIOD", "Api", "Replica",
           "Replicas", "Sampler", "scratch_env", "unexpected_errors"]
