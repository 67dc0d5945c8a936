"""``POST /dashboard/api/whatif``: the what-if of ``fleetkeeper whatif``, for the dashboard.

The question is a small JSON object — one of::

    {"down": ["member1", "member2"]}     # these clusters
    {"region": "eu-west"}                # every cluster of a region (or "zone", "provider")
    {"each": "cluster"}                  # the N+1 matrix: each cluster (zone, region) alone

and the answer is what ``fleetkeeper whatif -o json`` prints (``--each``: its matrix).

It is authorized like everything else, because it reads the fleet through the API with the
caller's own bearer token (in-process, over the API server's app): a token that may not list
clusters, bindings or taint policies gets that list's ``401``/``403`` Status back. It is
bounded: a body of at most :data:`MAX_BODY` bytes, at most :data:`MAX_DOWN` clusters, names of
at most 253 characters, and one what-if at a time per process: another one waits for its turn,
up to :data:`WAIT_SECONDS` and :data:`MAX_WAITING` waiting, else it is ``429``, to try again.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp

from fleetkeeper import errors
from fleetkeeper.api.limits import read_body
from fleetkeeper.client.rest import RestClient
from fleetkeeper.clock import Clock
from fleetkeeper.readiness import assess
from fleetkeeper.readiness import whatif as core
from fleetkeeper.readiness.live import read_fleet

MAX_BODY = 16 * 1024
MAX_DOWN = 100
MAX_NAME = 253
#: what-ifs computed one at a time: how many may wait, and for how long
MAX_WAITING = 4
WAIT_SECONDS = 15.0
DOMAINS = ("region", "zone", "provider")


class TooManyRequests(errors.ApiError):
    code, reason = 429, "TooManyRequests"


def parse_question(body: bytes) -> dict[str, Any]:
    """The question, checked (raises ``BadRequest`` naming the field and the rule)."""
    if len(body) > MAX_BODY:
        raise errors.RequestEntityTooLarge(f"the body is limited to {MAX_BODY} bytes")
    try:
        doc = json.loads(body or b"{}")
    except ValueError as exc:
        raise errors.BadRequest(f"the body is not JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise errors.BadRequest("the body must be a JSON object")
    unknown = sorted(set(doc) - {"down", "each", *DOMAINS})
    if unknown:
        raise errors.BadRequest(f"{unknown[0]}: unknown field (known: down, each, region, zone, provider)")
    asked = [k for k in ("down", "each", *DOMAINS) if doc.get(k) not in (None, [], "")]
    if len(asked) != 1:
        raise errors.BadRequest("give exactly one of down, each, region, zone or provider")
    key = asked[0]
    value = doc[key]
    if key == "down":
        names_ok = isinstance(value, list) and all(isinstance(n, str) and 0 < len(n) <= MAX_NAME
                                                   for n in value)
        if not names_ok:
            raise errors.BadRequest(f"down: must be a list of cluster names of 1 to {MAX_NAME} characters")
        if len(value) > MAX_DOWN:
            raise errors.BadRequest(f"down: at most {MAX_DOWN} clusters")
    elif key == "each":
        if value not in assess.DOMAINS:
            raise errors.BadRequest(f"each: must be one of {', '.join(assess.DOMAINS)}")
    elif not isinstance(value, str) or len(value) > MAX_NAME:
        raise errors.BadRequest(f"{key}: must be a name of at most {MAX_NAME} characters")
    return {key: value}


def answer(fleet: core.Fleet, question: dict[str, Any], clock: Clock) -> dict[str, Any]:
    """The what-if ``question`` asks of ``fleet`` (raises ``BadRequest`` for a cluster or
    domain the fleet does not have)."""
    now = clock.now()
    if "each" in question:
        by = str(question["each"])
        return {"each": by, "domains": [{"domain": d, "down": list(r.down), "summary": r.summary()}
                                        for d, r in assess.each(fleet, by, now)]}
    if "down" in question:
        names = sorted(set(question["down"]))
        unknown = [n for n in names if n not in fleet.clusters]
        if unknown:
            raise errors.BadRequest(f"down: no cluster named {unknown[0]!r}")
    else:
        key = next(iter(question))
        names = fleet.in_domain(**{key: str(question[key])})
        if not names:
            raise errors.BadRequest(f"{key}: no cluster is in {key} {question[key]!r}")
    return core.whatif(fleet, names, now).as_dict()


class WhatIf:
    """The endpoint (see the module notes)."""

    def __init__(self, api: ASGIApp, *, clock: Clock, threshold: float) -> None:
        self._api = api
        self._clock = clock
        self._threshold = threshold
        self._running = asyncio.Lock()
        self._waiting = 0

    async def __call__(self, request: Request) -> Response:
        try:
            return _json(await self._answer(request), 200)
        except errors.ApiError as exc:
            return _json(exc.to_status(), exc.code)

    async def _answer(self, request: Request) -> dict[str, Any]:
        scheme, _, token = (request.headers.get("authorization") or "").strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise errors.Unauthorized("Unauthorized: this request needs a bearer token")
        question = parse_question(await read_body(request, MAX_BODY))
        if self._waiting >= MAX_WAITING:
            raise TooManyRequests("what-ifs are already being computed; try again in a moment")
        self._waiting += 1
        try:
            async with asyncio.timeout(WAIT_SECONDS):
                await self._running.acquire()
        except TimeoutError:
            raise TooManyRequests("a what-if is being computed; try again in a moment") from None
        finally:
            self._waiting -= 1
        try:
            transport = httpx.ASGITransport(app=self._api)
            async with RestClient("http://dashboard.invalid", token=token.strip(), transport=transport,
                                  field_manager="fleetkeeper-dashboard", clock=self._clock) as client:
                fleet = await read_fleet(client, threshold=self._threshold)
            return await asyncio.to_thread(answer, fleet, question, self._clock)
        finally:
            self._running.release()


def _json(doc: dict[str, Any], code: int) -> Response:
    return Response(json.dumps(doc, sort_keys=True), status_code=code, media_type="application/json")


__all__ = ["MAX_BODY", "MAX_DOWN", "WhatIf", "answer", "parse_question"]
