"""RBAC's escalation checks: nobody grants more than they hold.

As in kube-apiserver, on every write of a Role, ClusterRole, RoleBinding or ClusterRoleBinding
(create, update, every patch type, apply):

* a **Role or ClusterRole** is written only if the writer holds every permission it
  contains — in the Role's namespace, or cluster-wide for a ClusterRole — or may ``escalate``
  roles (``clusterroles``) there. An aggregated ClusterRole (``aggregationRule``) may come to
  hold anything, so writing one needs every permission (or ``escalate``);
* a **binding** is written only if the writer holds every permission of the role it refers
  to — in the binding's namespace, or cluster-wide for a ClusterRoleBinding — or may ``bind``
  that role (``roles``/``clusterroles`` with the role's name). A binding to a role that does
  not exist needs ``bind``.

Holding is checked rule by rule, verb by verb, resource by resource (a wildcard is held only
by a wildcard), up to :data:`MAX_ATOMS` such pieces; a role larger than that needs
``escalate``/``bind``. The admin (``system:masters``) and the plane itself are not checked.
A refusal is ``403`` listing what the writer lacks, in Kubernetes' words.

A binding's ``roleRef`` is checked for everyone but the plane, as Kubernetes validates it: a
Role or ClusterRole (a ClusterRole for a ClusterRoleBinding) of ``rbac.authorization.k8s.io``
with a name, never changed once written (``422``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fleetkeeper import errors
from fleetkeeper.api.scheme import ResourceInfo
from fleetkeeper.apiserver.auth import User
from fleetkeeper.apiserver.rbac import GROUP, PolicyRule, RbacIndex, parse_rules

MAX_ATOMS = 100_000
ROLE_KINDS = {"Role": "roles", "ClusterRole": "clusterroles"}
_ANY = frozenset({"*"})
FULL_AUTHORITY = (PolicyRule(_ANY, _ANY, _ANY), PolicyRule(_ANY, urls=_ANY))


def _atoms(rule: PolicyRule) -> Iterator[tuple[str, str, str, str, bool]]:
    """(verb, group, resource or URL, name, is-URL) pieces of a rule."""
    for verb in sorted(rule.verbs):
        if rule.urls:
            for url in sorted(rule.urls):
                yield verb, "", url, "", True
            continue
        for group in sorted(rule.groups):
            for resource in sorted(rule.resources):
                for name in sorted(rule.names) or [""]:
                    yield verb, group, resource, name, False


def _held(held: tuple[PolicyRule, ...], atom: tuple[str, str, str, str, bool]) -> bool:
    verb, group, resource, name, is_url = atom
    for rule in held:
        if not ("*" in rule.verbs or verb in rule.verbs):
            continue
        if is_url:
            if any(url == "*" or url == resource or (url.endswith("*") and resource.startswith(url[:-1]))
                   for url in rule.urls):
                return True
            continue
        if rule.urls or not ("*" in rule.groups or group in rule.groups):
            continue
        if not ("*" in rule.resources or resource in rule.resources):
            continue
        if not rule.names or (name and name in rule.names):
            return True
    return False


def missing(held: tuple[PolicyRule, ...], wanted: tuple[PolicyRule, ...]) -> list[PolicyRule] | None:
    """The wanted rules not wholly held (empty: all held); None when too large to check."""
    count = 0
    lacking: list[PolicyRule] = []
    for rule in wanted:
        for atom in _atoms(rule):
            count += 1
            if count > MAX_ATOMS:
                return None
            if not _held(held, atom):
                lacking.append(rule)
                break
    return lacking


def _describe(rule: PolicyRule) -> str:
    def q(values: frozenset[str]) -> str:
        return "[" + ",".join(f'"{v}"' for v in sorted(values)) + "]"

    if rule.urls:
        return f"{{NonResourceURLs:{q(rule.urls)}, Verbs:{q(rule.verbs)}}}"
    names = f", ResourceNames:{q(rule.names)}" if rule.names else ""
    return f"{{APIGroups:{q(rule.groups)}, Resources:{q(rule.resources)}{names}, Verbs:{q(rule.verbs)}}}"


def check_binding(info: ResourceInfo, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
    """Refuse a binding whose ``roleRef`` is not a role it can refer to, or that changes it (``422``)."""
    if info.group != GROUP or info.kind not in ("RoleBinding", "ClusterRoleBinding"):
        return
    ref = obj.get("roleRef")
    name = str((obj.get("metadata") or {}).get("name") or "")
    kinds = ("Role", "ClusterRole") if info.kind == "RoleBinding" else ("ClusterRole",)
    problem = None
    if not isinstance(ref, dict) or not ref.get("name") or not isinstance(ref.get("name"), str):
        problem = ("roleRef.name", "Required value")
    elif ref.get("kind") not in kinds:
        problem = ("roleRef.kind", f"Unsupported value: {str(ref.get('kind'))[:64]!r}: supported values: "
                   + ", ".join(f'"{k}"' for k in kinds))
    elif ref.get("apiGroup") != GROUP:
        problem = ("roleRef.apiGroup",
                   f'Unsupported value: {str(ref.get("apiGroup"))[:64]!r}: supported values: "{GROUP}"')
    elif old is not None and old.get("roleRef") != ref:
        problem = ("roleRef", "Invalid value: cannot change roleRef")
    if problem is not None:
        raise errors.Invalid(f'{info.kind}.{GROUP} "{name}" is invalid: {problem[0]}: {problem[1]}',
                             causes=[errors.Cause(problem[0], problem[1], "FieldValueInvalid")],
                             kind=info.kind, group=GROUP, name=name or None)


def check(index: RbacIndex | None, user: User | None, info: ResourceInfo, obj: dict[str, Any],
          old: dict[str, Any] | None = None) -> None:
    """Raise ``Invalid`` for a binding :func:`check_binding` refuses, ``Forbidden`` if ``user`` may not
    write this RBAC object (see the module notes)."""
    if user is not None:
        check_binding(info, obj, old)
    if index is None or user is None or user.is_admin or info.group != GROUP:
        return
    meta = obj.get("metadata") or {}
    namespace, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
    held = index.rules_for(user.name, user.groups, namespace)
    if info.kind in ROLE_KINDS:
        if _may(held, "escalate", ROLE_KINDS[info.kind], ""):
            return
        aggregation = obj.get("aggregationRule")
        aggregates = info.kind == "ClusterRole" and isinstance(aggregation, dict) \
            and bool(aggregation.get("clusterRoleSelectors"))
        # an aggregated ClusterRole may come to hold anything: writing one needs full authority
        wanted = FULL_AUTHORITY if aggregates else parse_rules(obj.get("rules"))
    elif info.kind in ("RoleBinding", "ClusterRoleBinding"):
        raw_ref = obj.get("roleRef")
        ref: dict[str, Any] = raw_ref if isinstance(raw_ref, dict) else {}
        kind, role_name = str(ref.get("kind") or ""), str(ref.get("name") or "")
        if kind in ROLE_KINDS and _may(held, "bind", ROLE_KINDS[kind], role_name):
            return
        found = index.cluster_role(role_name) if kind == "ClusterRole" else \
            index.role(namespace, role_name) if kind == "Role" and namespace else None
        if found is None:
            raise _forbidden(user, info, name, f'{kind.lower()}s "{role_name}" not found, and binding it '
                             'needs the "bind" verb on it')
        wanted = found
    else:
        return
    lacking = missing(held, wanted)
    if lacking is None:
        raise _forbidden(user, info, name, "the rules are too many to compare with what the user holds; "
                         'writing them needs the "escalate" (or "bind") verb')
    if lacking:
        where = f" in namespace {namespace!r}" if namespace else ""
        groups = "[" + " ".join(f'"{g}"' for g in user.groups) + "]"
        raise _forbidden(user, info, name, f'user "{user.name}" (groups={groups}) is attempting to grant '
                         f"RBAC permissions not currently held{where}:\n"
                         + "\n".join(_describe(rule) for rule in lacking[:20]))


def _may(held: tuple[PolicyRule, ...], verb: str, resource: str, name: str) -> bool:
    return any(rule.allows(verb, GROUP, resource, None, name) for rule in held)


def _forbidden(user: User, info: ResourceInfo, name: str, why: str) -> errors.Forbidden:
    return errors.Forbidden(f'{info.plural}.{info.group} "{name}" is forbidden: {why}', kind=info.plural,
                            group=info.group, name=name or None)


__all__ = ["MAX_ATOMS", "check", "check_binding", "missing"]
