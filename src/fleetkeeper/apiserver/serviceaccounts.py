"""The TokenRequest API: ``POST …/namespaces/NS/serviceaccounts/NAME/token`` (``kubectl create token``).

Whoever may ``create`` ``serviceaccounts/token`` in the namespace (``edit`` and ``admin``
may, as in Kubernetes) gets a token for an existing ServiceAccount, bound to its uid and
expiring after ``spec.expirationSeconds`` (:mod:`fleetkeeper.apiserver.satokens`). The
body is a ``TokenRequest`` in JSON or protobuf (kubectl's typed client sends protobuf);
``spec.boundObjectRef`` is not supported (``400``). Nothing is stored.
"""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from fleetkeeper import errors
from fleetkeeper.api.scheme import GroupKind
from fleetkeeper.apiserver import satokens
from fleetkeeper.apiserver.request import decode_object
from fleetkeeper.apiserver.state import Context, ServerState, json_response

SERVICE_ACCOUNT = GroupKind("", "ServiceAccount")


async def create_token(state: ServerState, ctx: Context, body: bytes, content_type: str) -> Response:
    """Answer a TokenRequest for the ServiceAccount the request addresses."""
    target = ctx.target
    if state.authz is None or state.authz.signer is None:
        raise errors.MethodNotAllowed("this server issues no ServiceAccount tokens: it has no signing key "
                                      "(authentication is off, or a member cluster accepts its one bearer "
                                      "token only)")
    request = decode_object(body, content_type)
    if request.get("kind") not in (None, "TokenRequest") or \
            request.get("apiVersion") not in (None, "authentication.k8s.io/v1"):
        raise errors.BadRequest("the body must be an authentication.k8s.io/v1 TokenRequest")
    raw = request.get("spec")
    spec: dict[str, Any] = raw if isinstance(raw, dict) else {}
    if spec.get("boundObjectRef"):
        raise errors.BadRequest("TokenRequest spec.boundObjectRef is not supported: leave it out")
    seconds, audiences = satokens.expiration(spec), satokens.audiences(spec)
    namespace, name = target.namespace or "", target.name or ""
    account = await state.store.get(SERVICE_ACCOUNT, namespace, name)  # 404 when it does not exist
    uid = str((account.get("metadata") or {}).get("uid") or "")
    state.authz.accounts.setdefault((namespace, name), uid)  # its watch event may not be here yet
    signer = state.authz.signer
    token, expires = signer.account_token(namespace, name, uid, seconds=seconds, audiences=audiences)
    return json_response(satokens.token_response(request, token, expires, state.clock), 201)


__all__ = ["create_token"]
