"""Conformance for durable backends: reopening, and a writer killed mid-stream loses nothing acknowledged."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from fleetkeeper.clock import SystemClock
from fleetkeeper.store import Store, open_store
from fleetkeeper.store._conformance_base import DEPLOY, Opener, StoreFixtures, deployment, rv, summary, take

#: The child writes forever and prints each write only after it was acknowledged.
_WRITER = """
import asyncio, sys
from fleetkeeper.clock import SystemClock
from fleetkeeper.store import open_store

async def main(url: str) -> None:
    store = open_store(url, clock=SystemClock())
    for i in range(1_000_000):
        obj = await store.create({"apiVersion": "apps/v1", "kind": "Deployment",
                                  "metadata": {"name": f"w{i}", "namespace": "crash"}, "spec": {"n": 0}})
        print(f"w{i} {obj['metadata']['resourceVersion']}", flush=True)
        if i % 3 == 0:
            async with store.batch():
                obj = await store.update({**obj, "spec": {"n": 1}})
                extra = await store.create({"apiVersion": "v1", "kind": "ConfigMap",
                                            "metadata": {"name": f"c{i}", "namespace": "crash"}})
            print(f"w{i} {obj['metadata']['resourceVersion']}", flush=True)
            print(f"c{i} {extra['metadata']['resourceVersion']}", flush=True)

asyncio.run(main(sys.argv[1]))
"""

#: how many acknowledged writes to see before killing the writer
_KILL_AFTER = 293


class DurabilityConformance(StoreFixtures):
    async def test_reopening_restores_objects_revision_and_history(self, opener: Opener) -> None:
        if not self.durable:
            pytest.skip("the backend does not persist across reopening")
        first = opener()
        made = [rv(await first.create(deployment(f"d{i}", spec={"i": i}))) for i in range(5)]
        obj = await first.get(DEPLOY, "default", "d0")
        changed = rv(await first.update({**obj, "spec": {"i": 100}}))
        gone = rv(await first.delete(DEPLOY, "default", "d4"))
        await first.close()
        second = opener()
        assert second.revision == gone
        names = [(i["metadata"]["name"], rv(i)) for i in (await second.list(DEPLOY)).items]
        assert names == [("d0", changed), ("d1", made[1]), ("d2", made[2]), ("d3", made[3])]
        assert summary(await take(second.watch(DEPLOY, since=made[3]), 3)) == [
            ("ADDED", "d4", made[4]), ("MODIFIED", "d0", changed), ("DELETED", "d4", gone)]
        assert rv(await second.create(deployment("next"))) > gone

    def test_a_writer_killed_mid_stream_loses_no_acknowledged_write(self, tmp_path: Path) -> None:
        if not self.durable:
            pytest.skip("the backend does not persist across reopening")
        url = self.url(tmp_path)
        acked = _run_and_kill(url)
        assert len(acked) >= _KILL_AFTER // 2
        asyncio.run(_verify(url, acked))


def _run_and_kill(url: str) -> dict[str, int]:
    """Run the writer, SIGKILL it after enough acknowledgments; every acknowledged (name → revision)."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, url], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    acked: dict[str, int] = {}
    lines = 0
    try:
        for line in proc.stdout:
            name, revision = line.split()
            acked[name] = int(revision)
            lines += 1
            if lines >= _KILL_AFTER:
                proc.send_signal(signal.SIGKILL)
                break
        for line in proc.stdout:  # acknowledged before the kill landed
            parts = line.split()
            if len(parts) == 2:
                acked[parts[0]] = int(parts[1])
    finally:
        proc.kill()
        proc.wait()
    if lines < _KILL_AFTER:
        raise AssertionError(f"writer died early: {proc.stderr.read() if proc.stderr else ''}")
    return acked


async def _verify(url: str, acked: dict[str, int]) -> None:
    store: Store = open_store(url, clock=SystemClock())
    try:
        stored: dict[str, int] = {}
        for gk in (DEPLOY, DEPLOY._replace(group="", kind="ConfigMap")):
            for item in (await store.list(gk, "crash")).items:
                stored[item["metadata"]["name"]] = rv(item)
        missing = {name: r for name, r in acked.items() if stored.get(name, -1) < r}
        assert not missing, f"acknowledged writes lost: {sorted(missing.items())[:5]}"
        top = max(acked.values())
        assert store.revision >= top
        assert rv(await store.create(deployment("after-crash", namespace="crash"))) > top
    finally:
        await store.close()


__all__ = ["DurabilityConformance"]
