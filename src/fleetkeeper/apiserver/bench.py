"""``bench_apiserver``: latency and throughput of the API server on this machine.

A real server (uvicorn, HTTPS, bearer token, sqlite store in a temporary directory) runs
on its own thread and loopback port; the store is seeded with ``objects``
ResourceBindings directly (batched), then an httpx client in the caller's event loop
measures, each phase a fixed number of requests:

* ``list`` — the whole collection of ``objects`` bindings, as kubectl ``-o json`` gets it;
* ``get`` — single objects by name;
* ``create`` and ``patch`` — mutating requests through admission (sequential latency,
  then throughput with concurrent clients);
* ``watch`` — end-to-end delivery: from sending a write to the watcher reading its event.

Targets (mutating p99 ≤ 50 ms, a 10,000-item list ≤ 1 s, watch delivery p99 ≤
50 ms) are reported next to the figures; figures depend on the machine, so quote them
with it. Time is measured with the injected clock's ``monotonic()``.
"""

from __future__ import annotations

import asyncio
import math
import ssl
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import orjson

from fleetkeeper.apiserver.app import ApiServerApp, build_app
from fleetkeeper.apiserver.auth import Tokens, new_token
from fleetkeeper.apiserver.certs import ensure_certificates
from fleetkeeper.apiserver.serve import ServerThread
from fleetkeeper.clock import Clock
from fleetkeeper.store import Store, open_store

NAMESPACE = "bench"
BINDINGS = f"/apis/work.karmada.io/v1alpha2/namespaces/{NAMESPACE}/resourcebindings"
TARGETS = {"mutating_p99_ms": 50.0, "list_10k_s": 1.0, "watch_delivery_p99_ms": 50.0}


def binding(i: int) -> dict[str, Any]:
    """A ResourceBinding as the detector would write it (small, realistic)."""
    return {
        "apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding",
        "metadata": {"name": f"app-{i}-deployment", "namespace": NAMESPACE, "labels": {"app": f"app-{i}"}},
        "spec": {"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": NAMESPACE,
                              "name": f"app-{i}"},
                 "replicas": 2,
                 "clusters": [{"name": "member1", "replicas": 1}, {"name": "member2", "replicas": 1}]},
    }


def percentile(samples: list[float], p: float) -> float:
    """Nearest-rank percentile (``p`` in 0..100) of non-empty ``samples``."""
    ordered = sorted(samples)
    rank = max(1, min(len(ordered), math.ceil(p / 100 * len(ordered))))
    return ordered[rank - 1]


def _summary(samples: list[float], elapsed: float) -> dict[str, float]:
    return {"count": len(samples), "p50_ms": round(percentile(samples, 50) * 1000, 2),
            "p99_ms": round(percentile(samples, 99) * 1000, 2), "max_ms": round(max(samples) * 1000, 2),
            "per_second": round(len(samples) / elapsed, 1) if elapsed > 0 else 0.0}


async def _timed(clock: Clock, count: int, call: Callable[[int], Awaitable[None]]) -> dict[str, float]:
    samples: list[float] = []
    start = clock.monotonic()
    for i in range(count):
        before = clock.monotonic()
        await call(i)
        samples.append(clock.monotonic() - before)
    return _summary(samples, clock.monotonic() - start)


async def _concurrent(clock: Clock, workers: int, each: int, call: Callable[[int], Awaitable[None]]) -> float:
    async def worker(w: int) -> None:
        for i in range(each):
            await call(w * each + i)

    start = clock.monotonic()
    await asyncio.gather(*(worker(w) for w in range(workers)))
    return round(workers * each / (clock.monotonic() - start), 1)


def _check(response: httpx.Response, *codes: int) -> httpx.Response:
    if response.status_code not in codes:
        raise RuntimeError(f"{response.request.method} {response.request.url.path}: "
                           f"{response.status_code} {response.text[:300]}")
    return response


async def _seed(store: Store, objects: int) -> None:
    await store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE},
                        "status": {"phase": "Active"}})
    for start in range(0, objects, 1000):
        async with store.batch():
            for i in range(start, min(objects, start + 1000)):
                await store.create(binding(i))


async def _watch_phase(http: httpx.AsyncClient, clock: Clock, writes: int, objects: int) -> dict[str, float]:
    """One write in flight at a time, so each event's delivery time is unambiguous."""
    listed = _check(await http.get(BINDINGS, params={"limit": "1"}), 200).json()
    params = {"watch": "true", "resourceVersion": listed["metadata"]["resourceVersion"]}
    samples: list[float] = []
    merge = {"Content-Type": "application/merge-patch+json"}
    start = clock.monotonic()
    async with http.stream("GET", BINDINGS, params=params, timeout=httpx.Timeout(60.0)) as stream:
        lines = stream.aiter_lines()
        for i in range(writes):
            name = binding(i % objects)["metadata"]["name"]
            sent = clock.monotonic()
            patch = orjson.dumps({"metadata": {"labels": {"watched": str(i)}}})
            write = asyncio.ensure_future(http.patch(f"{BINDINGS}/{name}", content=patch, headers=merge))
            async with asyncio.timeout(30):
                async for line in lines:
                    if line and orjson.loads(line)["object"]["metadata"]["name"] == name:
                        samples.append(clock.monotonic() - sent)
                        break
                _check(await write, 200)
    return _summary(samples, clock.monotonic() - start)


async def bench_apiserver(*, objects: int = 10_000, clock: Clock, requests: int = 500) -> dict[str, object]:
    """Measure the API server with ``objects`` bindings stored (see the module notes)."""
    requests = max(10, min(requests, 5000))
    token = new_token()
    with tempfile.TemporaryDirectory(prefix="fleetkeeper-apiserver-bench-") as tmp:
        root = Path(tmp)
        tls = ensure_certificates(root / "pki", clock=clock)
        stores: list[Store] = []

        @asynccontextmanager
        async def factory() -> AsyncIterator[ApiServerApp]:
            store = open_store(f"sqlite:///{root / 'state.db'}", clock=clock)
            stores.append(store)
            try:
                yield build_app(store, clock=clock, tokens=Tokens(admin=token))
            finally:
                await store.close()

        server = ServerThread(factory, tls=tls)
        await asyncio.to_thread(server.start)
        try:
            await asyncio.to_thread(server.call, _seed(stores[0], objects), 600.0)
            verify = ssl.create_default_context(cadata=tls.ca_pem().decode())
            async with httpx.AsyncClient(base_url=server.url, verify=verify, timeout=60.0,
                                         headers={"Authorization": f"Bearer {token}"}) as http:
                result = await _measure(http, clock, objects, requests)
        finally:
            await asyncio.to_thread(server.stop)
    return result


async def _measure(http: httpx.AsyncClient, clock: Clock, objects: int, requests: int) -> dict[str, object]:
    every = "/apis/work.karmada.io/v1alpha2/resourcebindings"
    listed = await _timed(clock, 5, lambda i: _expect(http.get(every), 200))
    gets = await _timed(clock, requests, lambda i: _expect(
        http.get(f"{BINDINGS}/app-{(i * 7919) % objects}-deployment"), 200))
    creates = await _timed(clock, requests, lambda i: _expect(
        http.post(BINDINGS, content=orjson.dumps(binding(objects + i))), 201))
    merge = {"Content-Type": "application/merge-patch+json"}
    patches = await _timed(clock, requests, lambda i: _expect(http.patch(
        f"{BINDINGS}/app-{i % objects}-deployment", headers=merge,
        content=orjson.dumps({"spec": {"replicas": 3 + i % 5}})), 200))
    create_rate = await _concurrent(clock, 8, requests // 8, lambda i: _expect(
        http.post(BINDINGS, content=orjson.dumps(binding(objects + requests + i))), 201))
    watch = await _watch_phase(http, clock, min(requests, 300), objects)
    mutating_p99 = max(creates["p99_ms"], patches["p99_ms"])
    return {
        "benchmark": "apiserver", "objects": objects, "store": "sqlite", "transport": "https+token",
        "list": {**listed, "items": objects}, "get": gets, "create": creates, "patch": patches,
        "create_concurrent_per_second": create_rate, "watch_delivery": watch, "targets": TARGETS,
        "meets_targets": {
            "mutating_p99": mutating_p99 <= TARGETS["mutating_p99_ms"],
            "list": listed["max_ms"] / 1000 <= TARGETS["list_10k_s"] * max(1.0, objects / 10_000),
            "watch_delivery_p99": watch["p99_ms"] <= TARGETS["watch_delivery_p99_ms"],
        },
    }


async def _expect(request: Awaitable[httpx.Response], code: int) -> None:
    _check(await request, code)


__all__ = ["TARGETS", "bench_apiserver", "binding", "percentile"]
