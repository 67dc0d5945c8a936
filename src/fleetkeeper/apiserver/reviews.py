"""Who am I, and may I: ``kubectl auth whoami``, ``kubectl auth can-i`` and ``kubectl auth can-i --list``.

``POST /apis/authentication.k8s.io/v1/selfsubjectreviews`` answers with the caller's user
name and groups; ``POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews`` with
whether the caller may make a request — decided by the same
:func:`~fleetkeeper.apiserver.auth.authorize` every request goes through, so a Pull
agent's kubeconfig can be checked before the agent runs::

    kubectl --kubeconfig agent-edge1.kubeconfig auth can-i update works -n karmada-es-edge1   # yes
    kubectl --kubeconfig agent-edge1.kubeconfig auth can-i get works -n karmada-es-edge2      # no

Non-resource requests (``kubectl auth can-i get /healthz``) are decided by
:func:`~fleetkeeper.apiserver.auth.authorize_path`, as ``/metrics`` is.
``POST /apis/authorization.k8s.io/v1/selfsubjectrulesreviews`` lists what the caller may do
in a namespace as RBAC rules (:func:`~fleetkeeper.apiserver.auth.rules`, the rules
``authorize`` itself goes by); the answer is complete (``incomplete: false``). No review is
stored, as in Kubernetes. Bodies are JSON or, as kubectl's typed client sends them,
protobuf.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fleetkeeper import errors
from fleetkeeper.apiserver.auth import Attributes, User, authorize, authorize_path, rules
from fleetkeeper.apiserver.rbac import RbacIndex

ACCESS_REVIEW = ("authorization.k8s.io", "v1", "selfsubjectaccessreviews")
RULES_REVIEW = ("authorization.k8s.io", "v1", "selfsubjectrulesreviews")
SELF_REVIEW = ("authentication.k8s.io", "v1", "selfsubjectreviews")


def self_review(user: User, obj: dict[str, Any]) -> dict[str, Any]:
    """The ``SelfSubjectReview`` answer: the caller's user info."""
    _check_kind(obj, "authentication.k8s.io/v1", "SelfSubjectReview")
    return {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview", "metadata": {},
            "status": {"userInfo": {"username": user.name, "groups": list(user.groups)}}}


def access_review(user: User, obj: dict[str, Any], rbac: RbacIndex | None = None) -> dict[str, Any]:
    """The ``SelfSubjectAccessReview`` answer: ``status.allowed`` and the reason."""
    _check_kind(obj, "authorization.k8s.io/v1", "SelfSubjectAccessReview")
    spec = obj.get("spec")
    spec = spec if isinstance(spec, dict) else {}
    resource, other = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if isinstance(resource, dict) == isinstance(other, dict):
        raise errors.Invalid(
            "SelfSubjectAccessReview is invalid: exactly one of spec.resourceAttributes and "
            "spec.nonResourceAttributes must be specified",
            causes=[errors.Cause("spec.resourceAttributes", "exactly one of resourceAttributes, "
                                 "nonResourceAttributes must be specified", "FieldValueRequired")],
            kind="SelfSubjectAccessReview")
    if isinstance(resource, dict):
        allowed, reason = _resource_allowed(user, resource, rbac)
    else:
        assert isinstance(other, dict)
        path, verb = str(other.get("path") or ""), str(other.get("verb") or "")
        allowed, reason = _path_allowed(user, path, verb, rbac)
    status: dict[str, Any] = {"allowed": allowed}
    if reason:
        status["reason"] = reason
    return {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview", "metadata": {},
            "spec": spec, "status": status}


def rules_review(user: User, obj: dict[str, Any], rbac: RbacIndex | None = None) -> dict[str, Any]:
    """The ``SelfSubjectRulesReview`` answer: the caller's rules in ``spec.namespace``."""
    _check_kind(obj, "authorization.k8s.io/v1", "SelfSubjectRulesReview")
    spec = obj.get("spec")
    namespace = spec.get("namespace") if isinstance(spec, dict) else None
    if namespace is not None and not isinstance(namespace, str):
        raise errors.Invalid("SelfSubjectRulesReview is invalid: spec.namespace must be a string",
                             causes=[errors.Cause("spec.namespace", "must be a string", "FieldValueInvalid")],
                             kind="SelfSubjectRulesReview")
    resource_rules, non_resource_rules = rules(user, namespace or "", rbac)
    return {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview", "metadata": {},
            "spec": {"namespace": namespace or ""},
            "status": {"resourceRules": resource_rules, "nonResourceRules": non_resource_rules,
                       "incomplete": False}}


def _check_kind(obj: dict[str, Any], api_version: str, kind: str) -> None:
    if obj.get("kind") not in (None, kind) or obj.get("apiVersion") not in (None, api_version):
        raise errors.BadRequest(f"the body must be a {api_version} {kind}, got "
                                f"{obj.get('apiVersion')} {obj.get('kind')}")


def _resource_allowed(user: User, attributes: dict[str, Any], rbac: RbacIndex | None) -> tuple[bool, str]:
    def text(name: str) -> str:
        value = attributes.get(name)
        return value if isinstance(value, str) else ""

    return _decision(user, lambda: authorize(user, Attributes(
        verb=text("verb"), group=text("group"), resource=text("resource"), namespace=text("namespace"),
        name=text("name"), subresource=text("subresource") or None), rbac))


def _path_allowed(user: User, path: str, verb: str, rbac: RbacIndex | None) -> tuple[bool, str]:
    return _decision(user, lambda: authorize_path(user, verb, path, rbac))


def _decision(user: User, check: Callable[[], None]) -> tuple[bool, str]:
    """(allowed, reason) of an authorization ``check``."""
    try:
        check()
    except (errors.Forbidden, errors.Unauthorized) as exc:
        # RBAC gives no reason for a denial (kubectl prints a bare "no"); an agent's confinement says why
        return False, exc.message if user.cluster is not None else ""
    return True, "the admin may do anything" if user.is_admin else ""


__all__ = ["ACCESS_REVIEW", "RULES_REVIEW", "SELF_REVIEW", "access_review", "rules_review", "self_review"]
