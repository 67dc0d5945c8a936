"""``fleetkeeper up``'s API server is not Ready until the rest of the plane is: its
``control-plane`` check fails among the others, and says alone what it waits for."""

from __future__ import annotations

import httpx

import fleetkeeper.api  # noqa: F401  (registers every kind)
from fleetkeeper.apiserver import InProcessTransport, build_app
from fleetkeeper.clock import SystemClock
from fleetkeeper.cmd.serving import GatedApp
from fleetkeeper.store import open_store


async def test_readyz_waits_for_the_control_plane_as_a_check() -> None:
    clock = SystemClock()
    store = open_store("memory://", clock=clock)
    app = GatedApp(build_app(store, clock=clock).state)
    async with httpx.AsyncClient(transport=InProcessTransport(app), base_url="http://plane.test") as http:
        app.pending = "joining member clusters"
        waiting = await http.get("/readyz", params={"verbose": ""})
        assert waiting.status_code == 500
        assert waiting.text == ("[+]ping ok\n[+]etcd ok\n[+]shutdown ok\n"
                                "[-]control-plane failed: reason withheld\nreadyz check failed\n")
        alone = await http.get("/readyz/control-plane")
        assert alone.text == "internal server error: waiting: joining member clusters\n"
        assert (await http.get("/livez")).status_code == 200, "alive while it starts"
        app.pending = ""
        ready = await http.get("/readyz", params={"verbose": ""})
        assert ready.status_code == 200 and "[+]control-plane ok\n" in ready.text
    app.close()
    await store.close()
