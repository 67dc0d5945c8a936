"""The dashboard's web site: its static files and its one endpoint, under ``/dashboard/``.

The plane serves it beside the API (``fleetkeeper up`` and ``fleetkeeper apiserver`` mount it on
the API server's app), so it needs no process of its own and works against any replica.

* The files — ``index.html`` (the sign-in page and the views' shell), the scripts and the style
  sheet, shipped in this package — are the same for everyone and hold no data, so they are
  served to anonymous callers; a path that is not one of them is ``404``. Every answer carries a
  Content-Security-Policy that lets the page load and call only its own origin (no inline
  script, no other host), and headers that keep it out of frames and caches.
* Every piece of data the page shows comes from the API with the token the user signed in with
  (list, then watch from the list's resourceVersion): the page sees what that token may read.
* ``POST /dashboard/api/whatif`` (:mod:`.whatif`) answers the what-if of the *What if* view and
  of the Fleet cards, computed here by the same code as ``fleetkeeper whatif``, from what the
  caller's token may list.
"""

from __future__ import annotations

from pathlib import Path

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from fleetkeeper.clock import Clock
from fleetkeeper.dashboard.whatif import WhatIf

PREFIX = "/dashboard"
STATIC = Path(__file__).parent / "static"
#: the files served, by name, with their media types (nothing else under the prefix is)
FILES = {
    "index.html": "text/html; charset=utf-8",
    "style.css": "text/css; charset=utf-8",
    "api.js": "text/javascript; charset=utf-8",
    "chart.js": "text/javascript; charset=utf-8",
    "scope.js": "text/javascript; charset=utf-8",
    "views.js": "text/javascript; charset=utf-8",
    "pages.js": "text/javascript; charset=utf-8",
    "drills.js": "text/javascript; charset=utf-8",
    "app.js": "text/javascript; charset=utf-8",
}
#: the page may load and call its own origin only
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; font-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


class Site:
    """The ASGI app of everything under :data:`PREFIX` (mount it on the API server's app): ``api`` is
    that app (called in-process for the what-if), ``threshold`` the circuit breaker's as the plane
    runs with it."""

    def __init__(self, api: ASGIApp, *, clock: Clock, threshold: float) -> None:
        self._files = {name: (STATIC / name).read_bytes() for name in FILES}
        self._whatif = WhatIf(api, clock=clock, threshold=threshold)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        response = await self._answer(request)
        response.headers.update(HEADERS)
        await response(scope, receive, send)

    async def _answer(self, request: Request) -> Response:
        path = request.url.path
        if path == PREFIX:
            return RedirectResponse(PREFIX + "/", status_code=308)
        name = path[len(PREFIX) + 1:] or "index.html"
        if name == "api/whatif":
            if request.method != "POST":
                return Response("POST only\n", status_code=405, media_type="text/plain",
                                headers={"Allow": "POST"})
            return await self._whatif(request)
        if name not in FILES:
            return Response("not found\n", status_code=404, media_type="text/plain")
        if request.method not in ("GET", "HEAD"):
            return Response("GET only\n", status_code=405, media_type="text/plain", headers={"Allow": "GET"})
        return Response(self._files[name], media_type=FILES[name])


__all__ = ["CSP", "FILES", "PREFIX", "Site"]
