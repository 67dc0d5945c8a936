"""A member cluster's API server: the plane's application serving a member's store.

:func:`build_member_app` serves a member cluster's store (a simulated member's, say) with
:class:`MemberServerApp`, the plane's :class:`~fleetkeeper.apiserver.app.ApiServerApp` with
what differs on a member (:mod:`~fleetkeeper.apiserver.member`): Kubernetes' kinds only, no
cluster proxy, its pods' ``log``, ``exec`` and ``attach``
(:mod:`~fleetkeeper.apiserver.member_pods`), its version and its health checks. The kinds of
the CRDs it is given are served in its own scheme, with classes of its own
(:class:`~fleetkeeper.api.crd.CustomKinds`), so a member served beside the plane changes
nothing the plane serves.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute

from fleetkeeper.api.crd import CustomKinds
from fleetkeeper.apiserver import health
from fleetkeeper.apiserver.app import ApiServerApp
from fleetkeeper.apiserver.auth import Tokens, User
from fleetkeeper.apiserver.member import MemberApi, member_config, member_scheme
from fleetkeeper.apiserver.member_pods import PodSubresources
from fleetkeeper.apiserver.state import ServerConfig, ServerState, json_response
from fleetkeeper.clock import Clock
from fleetkeeper.store.interface import StoreProtocol


class MemberServerApp(ApiServerApp):
    """A member cluster's API server (see the module notes)."""

    def __init__(self, state: ServerState, member: MemberApi, *, kinds: CustomKinds) -> None:
        #: what this member serves beyond its store
        self.member = member
        #: its pods' log, exec and attach
        self._pods = PodSubresources(state, member, authenticate=self._authenticate, ready=self._ready)
        super().__init__(state, kinds=kinds)

    async def _ready(self) -> None:
        await self._bootstrap.ensure()

    def _proxy_routes(self, every: list[str]) -> list[BaseRoute]:
        """No cluster proxy on a member: its pods' exec and attach instead."""
        return self._pods.routes()

    def _checks(self, endpoint: str) -> list[health.Check]:
        return list(self.member.health) + super()._checks(endpoint)

    async def _version(self, request: Request, user: User) -> Response:
        return json_response(self.member.version())

    async def _core_request(self, request: Request, user: User) -> Response:
        target = self._pods.target(request.path_params["version"], request.path_params["rest"])
        if target is not None:
            return await self._pods.request(target, request, user)
        return await super()._core_request(request, user)


def build_member_app(store: StoreProtocol, member: MemberApi, *, clock: Clock, token: str | None,
                     config: ServerConfig | None = None) -> MemberServerApp:
    """A member cluster's API server over ``store`` (:mod:`~fleetkeeper.apiserver.member`): Kubernetes'
    kinds only, its token its admin's; ``token=None`` serves every caller as the admin (in-process)."""
    scheme = member_scheme()
    tokens = Tokens(admin=token) if token is not None else None
    state = ServerState(store, clock=clock, scheme=scheme, tokens=tokens, config=member_config(config))
    return MemberServerApp(state, member, kinds=CustomKinds(scheme))


__all__ = ["MemberServerApp", "build_member_app"]
