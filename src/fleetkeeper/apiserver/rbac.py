"""RBAC as kube-apiserver evaluates it: Roles, ClusterRoles and their bindings, indexed by subject.

:class:`RbacIndex` holds the stored ``rbac.authorization.k8s.io/v1`` objects (kept current by
:mod:`fleetkeeper.apiserver.rbac_follow`) and answers, for a caller and a namespace, the rules
that apply: those of every ClusterRoleBinding naming the caller (its user name, or one of its
groups; a ServiceAccount subject is the user ``system:serviceaccount:NS:NAME``) and of every
RoleBinding in that namespace naming it. Bindings are indexed by subject, so a request costs
the rules of its caller, not the bindings stored; the answer per (caller, namespace) is cached
until a Role, ClusterRole or binding changes.

Matching is RBAC's (:meth:`PolicyRule.allows`): ``*`` is any verb, group, resource or URL; a
request for a subresource needs ``resource/subresource`` (or ``*/subresource``); a rule with
``resourceNames`` matches only requests naming one of them (so never ``create`` nor an unnamed
``list``, but a ``list``/``watch`` pinned to one name by ``fieldSelector=metadata.name=…``); a
non-resource URL rule ending in ``*`` is a prefix. Roles cannot grant non-resource URLs.

ClusterRole aggregation is resolved here, when a ClusterRole changes: a ClusterRole with an
``aggregationRule`` holds its own rules plus those of every ClusterRole its selectors match,
transitively (so ``admin`` holds ``edit``'s, which holds ``view``'s). Doing it in the index
rather than in a controller writing ``rules`` back means a change takes effect with the watch
event that brought it, on every replica, and also where no controllers run
(``fleetkeeper apiserver``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from fleetkeeper.api.meta import LabelSelector
from fleetkeeper.api.selectors import label_selector_matches

GROUP = "rbac.authorization.k8s.io"
SA_PREFIX = "system:serviceaccount:"
#: at most this many rules are read from one Role or ClusterRole, and strings from one list in a rule
MAX_RULES, MAX_STRINGS = 1000, 1000
#: answers kept per (caller, namespace) before the cache starts over
CACHE_SIZE = 10_000


def _strings(value: Any) -> frozenset[str]:
    if not isinstance(value, list):
        return frozenset()
    return frozenset(v for v in value[:MAX_STRINGS] if isinstance(v, str))


@dataclass(frozen=True)
class PolicyRule:
    """One RBAC rule, ready to match."""

    verbs: frozenset[str]
    groups: frozenset[str] = frozenset()
    resources: frozenset[str] = frozenset()
    names: frozenset[str] = frozenset()
    urls: frozenset[str] = frozenset()

    @classmethod
    def of(cls, raw: Mapping[str, Any]) -> PolicyRule:
        return cls(_strings(raw.get("verbs")), _strings(raw.get("apiGroups")), _strings(raw.get("resources")),
                   _strings(raw.get("resourceNames")), _strings(raw.get("nonResourceURLs")))

    def allows(self, verb: str, group: str, resource: str, subresource: str | None, name: str) -> bool:
        """Whether this rule grants the resource request."""
        if not self.resources or not ("*" in self.verbs or verb in self.verbs):
            return False
        if not ("*" in self.groups or group in self.groups):
            return False
        wanted = f"{resource}/{subresource}" if subresource else resource
        if not ("*" in self.resources or wanted in self.resources
                or (subresource is not None and f"*/{subresource}" in self.resources)):
            return False
        return not self.names or name in self.names

    def allows_path(self, verb: str, path: str) -> bool:
        """Whether this rule grants the non-resource request."""
        if not self.urls or not ("*" in self.verbs or verb in self.verbs):
            return False
        return any(url == "*" or url == path or (url.endswith("*") and path.startswith(url[:-1]))
                   for url in self.urls)

    def wire(self) -> dict[str, list[str]]:
        """The rule as a SelfSubjectRulesReview lists it."""
        out: dict[str, list[str]] = {"verbs": sorted(self.verbs)}
        if self.urls:
            out["nonResourceURLs"] = sorted(self.urls)
            return out
        out["apiGroups"] = sorted(self.groups)
        out["resources"] = sorted(self.resources)
        if self.names:
            out["resourceNames"] = sorted(self.names)
        return out


def parse_rules(raw: Any) -> tuple[PolicyRule, ...]:
    """The rules of a Role or ClusterRole (what is not a rule is skipped: admission checked it)."""
    if not isinstance(raw, list):
        return ()
    return tuple(PolicyRule.of(rule) for rule in raw[:MAX_RULES] if isinstance(rule, dict))


@dataclass(frozen=True)
class Binding:
    """A RoleBinding (``namespace`` set) or ClusterRoleBinding (``namespace`` empty)."""

    namespace: str
    role_kind: str
    role_name: str
    subjects: tuple[str, ...]


def subject_keys(raw: Any, namespace: str) -> tuple[str, ...]:
    """The index keys of a binding's subjects: ``u:NAME`` for a user (a ServiceAccount is one),
    ``g:NAME`` for a group."""
    keys: list[str] = []
    for subject in raw[:MAX_STRINGS] if isinstance(raw, list) else ():
        if not isinstance(subject, dict) or not isinstance(subject.get("name"), str):
            continue
        kind, name = subject.get("kind"), subject["name"]
        if kind == "User":
            keys.append("u:" + name)
        elif kind == "Group":
            keys.append("g:" + name)
        elif kind == "ServiceAccount":
            keys.append(f"u:{SA_PREFIX}{subject.get('namespace') or namespace}:{name}")
    return tuple(dict.fromkeys(keys))


def _meta(obj: Mapping[str, Any]) -> tuple[str, str, dict[str, Any]]:
    meta = obj.get("metadata") or {}
    labels = meta.get("labels")
    kept = labels if isinstance(labels, dict) else {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or ""), kept


def _selectors(obj: Mapping[str, Any]) -> tuple[LabelSelector, ...] | None:
    rule = obj.get("aggregationRule")
    if not isinstance(rule, dict):
        return None
    found: list[LabelSelector] = []
    for raw in (rule.get("clusterRoleSelectors") or [])[:MAX_STRINGS]:
        try:
            found.append(LabelSelector.model_validate(raw))
        except ValueError:
            continue
    return tuple(found)


@dataclass(frozen=True)
class _ClusterRole:
    labels: Mapping[str, Any]
    rules: tuple[PolicyRule, ...]
    selectors: tuple[LabelSelector, ...] | None


class RbacIndex:
    """The stored RBAC objects, indexed by subject (see the module notes)."""

    def __init__(self) -> None:
        self._roles: dict[tuple[str, str], tuple[PolicyRule, ...]] = {}
        self._cluster_roles: dict[str, _ClusterRole] = {}
        #: ClusterRole name → its rules, aggregation resolved
        self._effective: dict[str, tuple[PolicyRule, ...]] = {}
        self._bindings: dict[tuple[str, str], Binding] = {}
        #: subject key → the (namespace, name) of the bindings naming it
        self._by_subject: dict[str, set[tuple[str, str]]] = {}
        self._cache: dict[tuple[str, tuple[str, ...], str], tuple[PolicyRule, ...]] = {}
        self.generation = 0

    # ------------------------------------------------------------------ changes
    def put(self, kind: str, obj: Mapping[str, Any]) -> None:
        """Take a stored Role, ClusterRole, RoleBinding or ClusterRoleBinding (added or changed)."""
        namespace, name, labels = _meta(obj)
        if kind == "Role":
            self._roles[(namespace, name)] = parse_rules(obj.get("rules"))
        elif kind == "ClusterRole":
            rules = parse_rules(obj.get("rules"))
            self._cluster_roles[name] = _ClusterRole(dict(labels), rules, _selectors(obj))
            self._aggregate()
        else:
            self._unbind((namespace, name))
            raw_ref = obj.get("roleRef")
            ref: Mapping[str, Any] = raw_ref if isinstance(raw_ref, dict) else {}
            binding = Binding(namespace if kind == "RoleBinding" else "", str(ref.get("kind") or ""),
                              str(ref.get("name") or ""), subject_keys(obj.get("subjects"), namespace))
            self._bindings[(binding.namespace, name)] = binding
            for key in binding.subjects:
                self._by_subject.setdefault(key, set()).add((binding.namespace, name))
        self._changed()

    def remove(self, kind: str, obj: Mapping[str, Any]) -> None:
        """Forget a deleted object."""
        namespace, name, _ = _meta(obj)
        if kind == "Role":
            self._roles.pop((namespace, name), None)
        elif kind == "ClusterRole":
            self._cluster_roles.pop(name, None)
            self._aggregate()
        else:
            self._unbind((namespace if kind == "RoleBinding" else "", name))
        self._changed()

    def replace(self, kind: str, objs: Iterable[Mapping[str, Any]]) -> None:
        """Take a full listing of ``kind``: what it lacks is forgotten."""
        if kind == "Role":
            self._roles.clear()
        elif kind == "ClusterRole":
            self._cluster_roles.clear()
        else:
            for key in [k for k in self._bindings if (k[0] != "") == (kind == "RoleBinding")]:
                self._unbind(key)
        for obj in objs:
            self.put(kind, obj)
        if kind == "ClusterRole":
            self._aggregate()
        self._changed()

    def _unbind(self, key: tuple[str, str]) -> None:
        old = self._bindings.pop(key, None)
        for subject in old.subjects if old else ():
            held = self._by_subject.get(subject)
            if held is not None:
                held.discard(key)
                if not held:
                    del self._by_subject[subject]

    def _changed(self) -> None:
        self._cache.clear()
        self.generation += 1

    def _aggregate(self) -> None:
        effective: dict[str, tuple[PolicyRule, ...]] = {}
        for name in self._cluster_roles:
            effective[name] = self._resolve(name, set())
        self._effective = effective

    def _resolve(self, name: str, seen: set[str]) -> tuple[PolicyRule, ...]:
        role = self._cluster_roles.get(name)
        if role is None or name in seen:
            return ()
        seen.add(name)
        rules = list(role.rules)
        for selector in role.selectors or ():
            if not (selector.match_labels or selector.match_expressions):
                continue  # an empty selector aggregates nothing, as in Kubernetes
            for other, candidate in sorted(self._cluster_roles.items()):
                if other != name and label_selector_matches(selector, candidate.labels):
                    rules.extend(self._resolve(other, seen))
        return tuple(dict.fromkeys(rules))

    # ------------------------------------------------------------------ questions
    def cluster_role(self, name: str) -> tuple[PolicyRule, ...] | None:
        """A ClusterRole's rules (aggregation resolved), None if it is not stored."""
        return self._effective.get(name) if name in self._cluster_roles else None

    def role(self, namespace: str, name: str) -> tuple[PolicyRule, ...] | None:
        return self._roles.get((namespace, name))

    def rules_for(self, user: str, groups: tuple[str, ...], namespace: str) -> tuple[PolicyRule, ...]:
        """Every rule granted to the caller in ``namespace`` (``""``: cluster-wide only)."""
        key = (user, groups, namespace)
        found = self._cache.get(key)
        if found is not None:
            return found
        granted = [self._role_rules(binding)
                   for binding in self._bindings_of(("u:" + user, *("g:" + g for g in groups)))
                   if not binding.namespace or binding.namespace == namespace]
        found = granted[0] if len(granted) == 1 else \
            tuple(dict.fromkeys(rule for rules in granted for rule in rules))
        if len(self._cache) >= CACHE_SIZE:
            self._cache.clear()
        self._cache[key] = found
        return found

    def _bindings_of(self, keys: Iterable[str]) -> Iterator[Binding]:
        seen: set[tuple[str, str]] = set()
        for key in keys:
            for ref in self._by_subject.get(key, ()):
                if ref not in seen:
                    seen.add(ref)
                    yield self._bindings[ref]

    def _role_rules(self, binding: Binding) -> tuple[PolicyRule, ...]:
        if binding.role_kind == "ClusterRole":
            return self._effective.get(binding.role_name, ())
        if binding.role_kind == "Role" and binding.namespace:
            # a Role grants resources only: non-resource URLs are the cluster's
            return tuple(r for r in self._roles.get((binding.namespace, binding.role_name), ()) if not r.urls)
        return ()

    def allows(self, user: str, groups: tuple[str, ...], *, verb: str, group: str, resource: str,
               subresource: str | None, namespace: str, name: str) -> bool:
        """Whether some rule granted to the caller covers the resource request."""
        return any(rule.allows(verb, group, resource, subresource, name)
                   for rule in self.rules_for(user, groups, namespace))

    def allows_path(self, user: str, groups: tuple[str, ...], verb: str, path: str) -> bool:
        return any(rule.allows_path(verb, path) for rule in self.rules_for(user, groups, ""))

    @property
    def binding_count(self) -> int:
        return len(self._bindings)


__all__ = ["GROUP", "SA_PREFIX", "Binding", "PolicyRule", "RbacIndex", "parse_rules", "subject_keys"]
