"""fleetkeeper's Kubernetes API server: discovery, CRUD, watch, patch/apply, tables,
OpenAPI, authentication and authorization over a Store.

Build the ASGI app from a store, then serve it::

    from fleetkeeper.apiserver import Tokens, bind, build_app, ensure_certificates, serve

    app = build_app(store, clock=clock, tokens=Tokens(admin=token))
    await serve(app, sock=bind("127.0.0.1", 6443), tls=ensure_certificates(state_dir, clock=clock),
                stop=stop_event)

Modules, by concept: :mod:`.app` (routing, authn/authz wiring, errors as Status),
:mod:`.request` (paths, queries, bodies), :mod:`.handlers` (verbs), :mod:`.patching`
(patch and apply requests) over :mod:`fleetkeeper.api.patch`, :mod:`.strategic` and
:mod:`fleetkeeper.api.serverapply` with :mod:`fleetkeeper.api.managedfields`, :mod:`.scale`,
:mod:`.watch`, :mod:`.tables`, :mod:`.documents` (served from :mod:`.discovery`, :mod:`.openapi` and
:mod:`.openapi_v2`) with
:mod:`.kubeschema` (Kubernetes' kinds' schemas), :mod:`.crds` (the kinds of
CustomResourceDefinitions), :mod:`.admit` (admission on every write) with :mod:`.fieldcheck`
(unknown and duplicate fields), :mod:`.auth`, :mod:`.certs`, :mod:`.identity` and
:mod:`.credentials` (the plane's identity and tokens, kept in the store), :mod:`.kubeconfig`,
:mod:`.serve` (uvicorn), :mod:`.transport` (in-process httpx transport), :mod:`.proxy`
(Karmada's cluster proxy to the members) and :mod:`.bench`; :mod:`.member` (a member cluster's
API: Kubernetes' kinds only) with :mod:`.pods`, :mod:`.podlogs` and :mod:`.podexec` (its pods' log,
exec and attach, told by the member).
"""

from __future__ import annotations

from fleetkeeper.apiserver.app import ApiServerApp, build_app
from fleetkeeper.apiserver.auth import Tokens, new_token
from fleetkeeper.apiserver.certs import TLSFiles, ensure_certificates
from fleetkeeper.apiserver.kubeconfig import write_kubeconfig
from fleetkeeper.apiserver.serve import ServerThread, bind, serve
from fleetkeeper.apiserver.state import ServerConfig
from fleetkeeper.apiserver.transport import InProcessTransport

__all__ = [
    "ApiServerApp", "InProcessTransport", "ServerConfig", "ServerThread", "TLSFiles", "Tokens", "bind",
    "build_app", "ensure_certificates", "new_token", "serve", "write_kubeconfig",
]
