"""Impersonation: ``kubectl --as NAME --as-group GROUP`` acts as another user, if allowed.

kube-apiserver's ``Impersonate-User`` and ``Impersonate-Group`` headers: the caller must
be allowed the ``impersonate`` verb on ``users`` (with that name), on each ``groups``
asked for, and — for ``system:serviceaccount:NS:NAME`` — on ``serviceaccounts`` NAME in
NS. The request is then authorized as that user, in the groups asked for plus
``system:authenticated`` (and, for a ServiceAccount, ``system:serviceaccounts`` and
``system:serviceaccounts:NS``). Impersonating ``system:fleetkeeper:agent:C`` acts as the
Pull agent of C, so ``kubectl auth can-i --list --as system:fleetkeeper:agent:C`` shows
what that agent may do. Groups without a user, and ``Impersonate-Uid`` or extras, are
refused with ``400``; at most :data:`MAX_GROUPS` groups. A refusal is ``403`` in
Kubernetes' words.
"""

from __future__ import annotations

from starlette.datastructures import Headers

from fleetkeeper import errors
from fleetkeeper.apiserver.auth import AGENT_USER_PREFIX, User
from fleetkeeper.apiserver.rbac import SA_PREFIX, RbacIndex

MAX_GROUPS = 64


def _may(caller: User, index: RbacIndex | None, resource: str, name: str, namespace: str = "") -> bool:
    if caller.is_admin:
        return True
    return index is not None and caller.cluster is None and index.allows(
        caller.name, caller.groups, verb="impersonate", group="", resource=resource, subresource=None,
        namespace=namespace, name=name)


def _refuse(caller: User, resource: str, name: str, namespace: str = "") -> errors.Forbidden:
    scope = f' in the namespace "{namespace}"' if namespace else ""
    return errors.Forbidden(f'{resource} "{name}" is forbidden: User "{caller.name}" cannot impersonate '
                            f'resource "{resource}" in API group ""{scope}', kind=resource, name=name)


def impersonate(headers: Headers, caller: User, index: RbacIndex | None) -> User:
    """The user a request acts as: ``caller``, or the one it impersonates (see the module notes)."""
    name = headers.get("impersonate-user")
    groups = headers.getlist("impersonate-group")
    if name is None:
        if groups or headers.get("impersonate-uid"):
            raise errors.BadRequest("impersonating groups or a uid needs Impersonate-User too")
        return caller
    if headers.get("impersonate-uid") or any(k.lower().startswith("impersonate-extra-") for k in headers):
        raise errors.BadRequest("Impersonate-Uid and Impersonate-Extra- are not supported")
    if len(groups) > MAX_GROUPS or not name:
        raise errors.BadRequest(f"impersonation takes a user name and at most {MAX_GROUPS} groups")
    if caller.is_anonymous:
        raise errors.Unauthorized("Unauthorized: impersonation needs a bearer token")
    implied: list[str] = []
    if name.startswith(SA_PREFIX) and name.count(":") == 3:
        namespace, account = name[len(SA_PREFIX):].split(":")
        if not _may(caller, index, "serviceaccounts", account, namespace):
            raise _refuse(caller, "serviceaccounts", account, namespace)
        implied = ["system:serviceaccounts", f"system:serviceaccounts:{namespace}"]
    elif not _may(caller, index, "users", name):
        raise _refuse(caller, "users", name)
    for group in groups:
        if not _may(caller, index, "groups", group):
            raise _refuse(caller, "groups", group)
    every = tuple(dict.fromkeys([*groups, *implied, "system:authenticated"]))
    cluster = name[len(AGENT_USER_PREFIX):] if name.startswith(AGENT_USER_PREFIX) else None
    return User(name, every, cluster=cluster or None)


__all__ = ["MAX_GROUPS", "impersonate"]
