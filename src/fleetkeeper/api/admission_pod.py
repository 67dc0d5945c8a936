"""Kubernetes' checks of a pod spec, for every built-in kind whose pods come from one.

A Deployment's, StatefulSet's, ReplicaSet's, DaemonSet's and Job's ``spec.template``, a
CronJob's ``spec.jobTemplate.spec.template`` and a Pod's own ``spec`` describe pods. kube-apiserver
refuses a pod description no kubelet could run, and fleetkeeper refuses the same, naming the
field as Kubernetes does (``spec.template.spec.containers[0].image: Required value``): the
interpreter, the scheduler's estimator and the members' workload controllers all read these
fields, and a value of the wrong shape would otherwise fail each of them later, and again at
every retry.

What is checked is a short table per structure (pod spec, container, port, environment
variable, resources …) of the fields whose JSON type Kubernetes' decoding insists on — a string
where an object or a list is due is refused, as ``Invalid value: "x": must be a list`` — plus the
few rules beyond types that every pod needs:

* ``containers`` is a non-empty list of objects (``initContainers`` a list of objects);
* every container has a ``name`` that is an RFC 1123 label, unique among the pod's containers
  and init containers, and an ``image``;
* a port has a ``containerPort`` between 1 and 65535 (a ``hostPort`` too, when given) and a
  protocol of ``TCP``, ``UDP`` or ``SCTP``; an environment variable has a ``name``; a volume has
  a unique RFC 1123 label for a name;
* every resource quantity (``limits``, ``requests``, ``overhead``) parses and is not negative,
  and no request is above its limit.

Fields not in the tables are left as they are: this is not the full OpenAPI schema.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any, Final

from fleetkeeper.api import validation
from fleetkeeper.api.quantity import parse_quantity
from fleetkeeper.api.validation import FieldErrors

#: a JSON type check: (value, field path, errors) → whether the value has the type (reported if not)
Check = Callable[[Any, str, FieldErrors], bool]
PORT_MAX: Final = 65535
_QUANTITY_FORMAT: Final = ("quantities must match the regular expression "
                           "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
PROTOCOLS: Final = ("SCTP", "TCP", "UDP")


def _typed(expected: str, test: Callable[[Any], bool]) -> Check:
    def check(value: Any, path: str, errs: FieldErrors) -> bool:
        if test(value):
            return True
        errs.wrong_type(path, value, expected)
        return False
    return check


STRING: Final = _typed("a string", lambda v: isinstance(v, str))
INTEGER: Final = _typed("an integer", lambda v: isinstance(v, int) and not isinstance(v, bool))
BOOLEAN: Final = _typed("a boolean", lambda v: isinstance(v, bool))
OBJECT: Final = _typed("an object", lambda v: isinstance(v, dict))
LIST: Final = _typed("a list", lambda v: isinstance(v, list))


def _list_of(item: Check) -> Check:
    def check(value: Any, path: str, errs: FieldErrors) -> bool:
        if not LIST(value, path, errs):
            return False
        results = [item(entry, f"{path}[{index}]", errs) for index, entry in enumerate(value)]
        return all(results)
    return check


def _map_of(item: Check) -> Check:
    def check(value: Any, path: str, errs: FieldErrors) -> bool:
        if not OBJECT(value, path, errs):
            return False
        results = [item(entry, f"{path}[{key}]", errs) for key, entry in value.items()]
        return all(results)
    return check


STRINGS: Final = _list_of(STRING)
OBJECTS: Final = _list_of(OBJECT)
STRING_MAP: Final = _map_of(STRING)

# --- the tables: field → the JSON type Kubernetes decodes it into -------------------------------------

_POD_SPEC: Final[Mapping[str, Check]] = {
    "containers": OBJECTS, "initContainers": OBJECTS, "ephemeralContainers": OBJECTS, "volumes": OBJECTS,
    "restartPolicy": STRING, "terminationGracePeriodSeconds": INTEGER, "activeDeadlineSeconds": INTEGER,
    "dnsPolicy": STRING, "nodeSelector": STRING_MAP, "serviceAccountName": STRING, "serviceAccount": STRING,
    "automountServiceAccountToken": BOOLEAN, "nodeName": STRING, "hostNetwork": BOOLEAN,
    "hostPID": BOOLEAN, "hostIPC": BOOLEAN, "shareProcessNamespace": BOOLEAN, "securityContext": OBJECT,
    "imagePullSecrets": OBJECTS, "hostname": STRING, "subdomain": STRING, "affinity": OBJECT,
    "schedulerName": STRING, "tolerations": OBJECTS, "hostAliases": OBJECTS, "priorityClassName": STRING,
    "priority": INTEGER, "dnsConfig": OBJECT, "readinessGates": OBJECTS, "runtimeClassName": STRING,
    "enableServiceLinks": BOOLEAN, "preemptionPolicy": STRING, "topologySpreadConstraints": OBJECTS,
    "resources": OBJECT,
}
_CONTAINER: Final[Mapping[str, Check]] = {
    "name": STRING, "image": STRING, "command": STRINGS, "args": STRINGS, "workingDir": STRING,
    "ports": OBJECTS, "envFrom": OBJECTS, "env": OBJECTS, "resources": OBJECT, "resizePolicy": OBJECTS,
    "restartPolicy": STRING, "volumeMounts": OBJECTS, "volumeDevices": OBJECTS, "livenessProbe": OBJECT,
    "readinessProbe": OBJECT, "startupProbe": OBJECT, "lifecycle": OBJECT, "terminationMessagePath": STRING,
    "terminationMessagePolicy": STRING, "imagePullPolicy": STRING, "securityContext": OBJECT,
    "stdin": BOOLEAN, "stdinOnce": BOOLEAN, "tty": BOOLEAN,
}
_PORT: Final[Mapping[str, Check]] = {
    "name": STRING, "hostPort": INTEGER, "containerPort": INTEGER, "protocol": STRING, "hostIP": STRING,
}
_ENV: Final[Mapping[str, Check]] = {"name": STRING, "value": STRING, "valueFrom": OBJECT}
_ENV_FROM: Final[Mapping[str, Check]] = {"prefix": STRING, "configMapRef": OBJECT, "secretRef": OBJECT}
_MOUNT: Final[Mapping[str, Check]] = {
    "name": STRING, "readOnly": BOOLEAN, "mountPath": STRING, "subPath": STRING, "mountPropagation": STRING,
    "subPathExpr": STRING,
}
_TOLERATION: Final[Mapping[str, Check]] = {
    "key": STRING, "operator": STRING, "value": STRING, "effect": STRING, "tolerationSeconds": INTEGER,
}
_VOLUME: Final[Mapping[str, Check]] = {"name": STRING}
_RESOURCES: Final[Mapping[str, Check]] = {"claims": OBJECTS}
_TEMPLATE_META: Final[Mapping[str, Check]] = {"labels": STRING_MAP, "annotations": STRING_MAP}
#: list fields of a structure whose items are structures with a table of their own
_ITEMS: Final[Mapping[str, Mapping[str, Check]]] = {
    "env": _ENV, "envFrom": _ENV_FROM, "volumeMounts": _MOUNT, "tolerations": _TOLERATION, "volumes": _VOLUME,
}


def _fields(obj: dict[str, Any], table: Mapping[str, Check], path: str, errs: FieldErrors) -> None:
    """Each field of ``table`` that ``obj`` sets (``null`` is unset) has its type; the items of
    the list fields with a table of their own have theirs."""
    for key, check in table.items():
        value = obj.get(key)
        if value is None or not check(value, f"{path}.{key}", errs):
            continue
        item_table = _ITEMS.get(key)
        if item_table is not None:
            for index, item in enumerate(value):
                _fields(item, item_table, f"{path}.{key}[{index}]", errs)


# --- the rules beyond types --------------------------------------------------------------------------


def check_pod_template(template: Any, path: str, errs: FieldErrors) -> None:
    """A PodTemplateSpec at ``path`` (``spec.template``): its metadata's labels and annotations
    are maps of strings, and its ``spec`` is a pod spec (:func:`check_pod_spec`)."""
    if template is None:
        template = {}
    if not OBJECT(template, path, errs):
        return
    meta = template.get("metadata")
    if meta is not None and OBJECT(meta, f"{path}.metadata", errs):
        _fields(meta, _TEMPLATE_META, f"{path}.metadata", errs)
    check_pod_spec(template.get("spec"), f"{path}.spec", errs)


def check_pod_spec(spec: Any, path: str, errs: FieldErrors) -> None:
    """A PodSpec at ``path``: see the module notes for what it must be."""
    if spec is None:
        spec = {}
    if not OBJECT(spec, path, errs):
        return
    _fields(spec, _POD_SPEC, path, errs)
    if spec.get("containers") in (None, []):
        errs.required(f"{path}.containers")
    containers: set[str] = set()
    for group in ("containers", "initContainers"):
        for index, container in _objects(spec, group):
            _container(container, f"{path}.{group}[{index}]", containers, errs)
    volumes: set[str] = set()
    for index, volume in _objects(spec, "volumes"):
        _name(volume, f"{path}.volumes[{index}].name", volumes, errs)
    _quantities(spec.get("overhead"), f"{path}.overhead", errs)
    resources = spec.get("resources")
    if isinstance(resources, dict):
        _resources(resources, f"{path}.resources", errs)


def _objects(parent: dict[str, Any], key: str) -> list[tuple[int, dict[str, Any]]]:
    """The items of ``parent[key]`` that are objects, with their indexes (the others are reported
    by the type table)."""
    items = parent.get(key)
    if not isinstance(items, list):
        return []
    return [(index, item) for index, item in enumerate(items) if isinstance(item, dict)]


def _container(container: dict[str, Any], path: str, names: set[str], errs: FieldErrors) -> None:
    _fields(container, _CONTAINER, path, errs)
    _name(container, f"{path}.name", names, errs)
    if container.get("image") in (None, ""):
        errs.required(f"{path}.image")
    for index, port in _objects(container, "ports"):
        _port(port, f"{path}.ports[{index}]", errs)
    for index, variable in _objects(container, "env"):
        if variable.get("name") in (None, ""):
            errs.required(f"{path}.env[{index}].name")
    resources = container.get("resources")
    if isinstance(resources, dict):
        _resources(resources, f"{path}.resources", errs)


def _name(item: dict[str, Any], path: str, seen: set[str], errs: FieldErrors) -> None:
    """``item``'s ``name`` (at ``path``) is given, an RFC 1123 label, and not one of ``seen``
    (the names of the items before it, which it joins)."""
    name = item.get("name")
    if name in (None, ""):
        errs.required(path)
    elif isinstance(name, str):
        errs.invalid_all(path, name, validation.dns1123_label(name))
        if name in seen:
            errs.duplicate(path, f'"{name}"')
        seen.add(name)


def _port(port: dict[str, Any], path: str, errs: FieldErrors) -> None:
    _fields(port, _PORT, path, errs)
    number = port.get("containerPort")
    if number in (None, 0):
        errs.required(f"{path}.containerPort")
    for key in ("containerPort", "hostPort"):
        value = port.get(key)
        if type(value) is int and value != 0 and not 1 <= value <= PORT_MAX:
            errs.invalid(f"{path}.{key}", value, f"must be between 1 and {PORT_MAX}, inclusive")
    protocol = port.get("protocol")
    if isinstance(protocol, str) and protocol and protocol not in PROTOCOLS:
        errs.not_supported(f"{path}.protocol", protocol, PROTOCOLS)


def _resources(resources: dict[str, Any], path: str, errs: FieldErrors) -> None:
    """Limits and requests are quantities, not negative, and no request is above its limit."""
    _fields(resources, _RESOURCES, path, errs)
    limits = _quantities(resources.get("limits"), f"{path}.limits", errs)
    requests = _quantities(resources.get("requests"), f"{path}.requests", errs)
    for name, (request, given) in requests.items():
        limit = limits.get(name)
        if limit is not None and request > limit[0]:
            errs.invalid(f"{path}.requests[{name}]", given,
                         f"must be less than or equal to {name} limit of {limit[1]}")


def _quantities(value: Any, path: str, errs: FieldErrors) -> dict[str, tuple[Decimal, str | int | float]]:
    """A ResourceList: resource name → quantity; the ones that parse, with what was given."""
    if value is None or not OBJECT(value, path, errs):
        return {}
    parsed: dict[str, tuple[Decimal, str | int | float]] = {}
    for name, given in value.items():
        field = f"{path}[{name}]"
        if isinstance(given, bool) or not isinstance(given, str | int | float):
            errs.wrong_type(field, given, "a quantity (e.g. 500m, 2Gi)")
            continue
        try:
            amount = parse_quantity(given)
            if not amount.is_finite():
                raise ValueError(_QUANTITY_FORMAT)
        except ValueError:
            errs.invalid(field, given, _QUANTITY_FORMAT)
            continue
        if amount < 0:
            errs.invalid(field, given, "must be greater than or equal to 0")
            continue
        parsed[str(name)] = (amount, given)
    return parsed


__all__ = ["PORT_MAX", "PROTOCOLS", "check_pod_spec", "check_pod_template"]
