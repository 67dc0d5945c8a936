"""A member cluster's API server in-process over a memory store, on the virtual clock."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import httpx

import fleetkeeper.api  # noqa: F401  (registers every kind)
from fleetkeeper.apiserver import InProcessTransport
from fleetkeeper.apiserver.app import ApiServerApp
from fleetkeeper.apiserver.health import Check
from fleetkeeper.apiserver.member import MemberApi
from fleetkeeper.apiserver.member_app import build_member_app
from fleetkeeper.clock import VirtualClock
from fleetkeeper.members.simulated.containers import SimulatedContainers
from fleetkeeper.store import Store, open_store

TOKEN = "member-token"
#: what kubectl get sends
TABLE = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"}


@dataclass
class Member:
    app: ApiServerApp
    store: Store
    http: httpx.AsyncClient


@asynccontextmanager
async def member_api(clock: VirtualClock, *, health: tuple[Check, ...] = ()) -> AsyncIterator[Member]:
    store = open_store("memory://", clock=clock)
    member = MemberApi(SimulatedContainers(), health=health)
    app = build_member_app(store, member, clock=clock, token=TOKEN)
    http = httpx.AsyncClient(transport=InProcessTransport(app), base_url="http://member.test",
                             headers={"Authorization": f"Bearer {TOKEN}"})
    try:
        yield Member(app, store, http)
    finally:
        await http.aclose()
        app.close()
        await store.close()


__all__ = ["TABLE", "TOKEN", "Member", "member_api"]
