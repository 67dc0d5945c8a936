"""The API server's documents: discovery (``/api``, ``/apis``, each group and group-version,
aggregated or legacy) and OpenAPI (``/openapi/v2``, ``/openapi/v3`` and its documents).

:class:`Documents` answers them from the server's state (:mod:`.discovery`, :mod:`.openapi`,
:mod:`.openapi_v2`), rebuilt whenever the scheme changes; the aggregated discovery and the
OpenAPI documents carry an ``ETag`` and answer ``304`` to a client whose copy is current.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from fleetkeeper import errors
from fleetkeeper.apiserver.auth import User
from fleetkeeper.apiserver.discovery import AGGREGATED_CONTENT_TYPE, wants_aggregated
from fleetkeeper.apiserver.openapi_v2 import PROTOBUF as OPENAPI_V2
from fleetkeeper.apiserver.openapi_v2 import PROTOBUF_ANSWER as OPENAPI_V2_ANSWER
from fleetkeeper.apiserver.state import ServerState, json_response


class Documents:
    """The discovery and OpenAPI endpoints of one server (each a route's handler)."""

    def __init__(self, state: ServerState) -> None:
        self._state = state

    async def api(self, request: Request, user: User) -> Response:
        if wants_aggregated(request.headers.get("accept")):
            return self._aggregated(request, core=True)
        return json_response(self._state.discovery.api_versions())

    async def apis(self, request: Request, user: User) -> Response:
        if wants_aggregated(request.headers.get("accept")):
            return self._aggregated(request, core=False)
        return json_response(self._state.discovery.group_list())

    def _aggregated(self, request: Request, *, core: bool) -> Response:
        """Aggregated discovery with its ETag; ``304`` when the client's copy is current."""
        body, etag = self._state.discovery.aggregated_document(core=core)
        headers = {"Etag": f'"{etag}"', "Vary": "Accept"}
        if f'"{etag}"' in (request.headers.get("if-none-match") or ""):
            return Response(status_code=304, headers=headers)
        return Response(body, media_type=AGGREGATED_CONTENT_TYPE, headers=headers)

    async def group(self, request: Request, user: User) -> Response:
        found = self._state.discovery.group(request.path_params["group"])
        if found is None:
            raise errors.NotFound("the server could not find the requested resource")
        return json_response(found)

    async def core_resources(self, request: Request, user: User) -> Response:
        return self._resource_list("", request.path_params["version"])

    async def resources(self, request: Request, user: User) -> Response:
        return self._resource_list(request.path_params["group"], request.path_params["version"])

    def _resource_list(self, group: str, version: str) -> Response:
        found = self._state.discovery.resource_list(group, version)
        if found is None:
            raise errors.NotFound("the server could not find the requested resource")
        return json_response(found)

    async def openapi_index(self, request: Request, user: User) -> Response:
        return json_response(self._state.openapi.index())

    async def openapi_v2(self, request: Request, user: User) -> Response:
        """Swagger 2.0 of every served kind: protobuf when asked for (kubectl), JSON otherwise."""
        body, proto, etag = self._state.openapi.v2()
        headers = {"Etag": f'"{etag}"', "Vary": "Accept"}
        if f'"{etag}"' in (request.headers.get("if-none-match") or ""):
            return Response(status_code=304, headers=headers)
        accept = request.headers.get("accept") or ""
        if OPENAPI_V2 in accept or OPENAPI_V2_ANSWER in accept:
            return Response(proto, media_type=OPENAPI_V2_ANSWER, headers=headers)
        return Response(body, media_type="application/json", headers=headers)

    async def openapi_doc(self, request: Request, user: User) -> Response:
        parts = request.path_params["path"].strip("/").split("/")
        doc = None
        if len(parts) == 2 and parts[0] == "api":
            doc = self._state.openapi.document("", parts[1])
        elif len(parts) == 3 and parts[0] == "apis":
            doc = self._state.openapi.document(parts[1], parts[2])
        if doc is None:
            raise errors.NotFound("the server could not find the requested resource")
        return Response(doc[0], media_type="application/json",
                        headers={"Cache-Control": "public, immutable", "Etag": f'"{doc[1]}"'})


__all__ = ["Documents"]
