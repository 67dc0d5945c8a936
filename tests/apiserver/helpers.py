"""An API server in-process: memory store, admin and agent tokens, httpx over
:class:`~fleetkeeper.apiserver.transport.InProcessTransport` (no sockets)."""

from __future__ import annotations

from dataclasses import dataclass

import httpx

import fleetkeeper.api  # noqa: F401  (registers every kind)
from fleetkeeper.apiserver import ApiServerApp, InProcessTransport, ServerConfig, Tokens, build_app
from fleetkeeper.clock import SystemClock
from fleetkeeper.store import Store, open_store

ADMIN = "admin-token"
AGENT = "agent-member1"


@dataclass
class Api:
    app: ApiServerApp
    store: Store
    http: httpx.AsyncClient
    transport: InProcessTransport

    def client(self, token: str | None) -> httpx.AsyncClient:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.AsyncClient(transport=self.transport, base_url="http://apiserver.test", headers=headers)


async def open_api(*, history: int = 10_000, config: ServerConfig | None = None) -> Api:
    clock = SystemClock()
    store = open_store("memory://", clock=clock, history=history)
    tokens = Tokens(admin=ADMIN)
    tokens.add_agent("member1", AGENT)
    app = build_app(store, clock=clock, tokens=tokens, config=config)
    transport = InProcessTransport(app)
    http = httpx.AsyncClient(transport=transport, base_url="http://apiserver.test",
                             headers={"Authorization": f"Bearer {ADMIN}"})
    return Api(app, store, http, transport)


async def close_api(api: Api) -> None:
    await api.http.aclose()
    api.app.close()
    await api.store.close()
