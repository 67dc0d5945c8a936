"""Protobuf request bodies: what real kubectl sends for ``kubectl create <kind> …``.

kubectl's typed commands — ``kubectl create namespace|configmap|secret|serviceaccount|
service|deployment|job|cronjob|role|clusterrole|rolebinding|clusterrolebinding|
poddisruptionbudget|ingress``, ``kubectl autoscale`` and ``kubectl auth can-i|whoami`` — send
``application/vnd.kubernetes.protobuf`` and never fall back to JSON: the magic
``k8s\\x00``, then a ``runtime.Unknown`` envelope holding the object's apiVersion and kind
and its bytes in the protobuf encoding of its Kubernetes type. :func:`decode_body` turns
such a body into the JSON object the server would have received, and the request goes
on as any other.

**What is read.** :data:`MESSAGES` knows, by field number (the Kubernetes API's protobuf
definitions), the fields those commands can set on those kinds. The encoding writes
every non-pointer field of a Go type, set or not; a field the table does not know is
therefore accepted when its value is a zero value (``0``, ``""``, an empty or all-zero
message) — JSON omits those — and refused otherwise with 415, naming the type and the
field number. Nothing a client sent is dropped silently: an object using more than the
commands set goes through ``kubectl create -f`` / ``kubectl apply -f``, which send JSON.
Zero values of known fields are dropped too (JSON's ``omitempty``), except where zero is
a value (``replicas: 0``, ``minAvailable: 0``): the fields marked ``keep_zero``.

Responses stay JSON: kubectl accepts them.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from fleetkeeper import errors
from fleetkeeper.api.base import format_time

PROTOBUF = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"
#: deepest nesting of messages read (a Deployment's container port is 7 deep)
MAX_DEPTH = 32

VARINT, FIXED64, LENGTH, FIXED32 = 0, 1, 2, 5


@dataclass(frozen=True, slots=True)
class Field:
    """One field: its JSON name and kind — ``string``, ``bytes`` (base64 in JSON), ``int``,
    ``bool``, ``time``, ``intorstr``, ``quantity``, ``map`` (of ``value``), ``raw`` (bytes as they
    are: the envelope's object) or a message name."""

    name: str
    kind: str
    repeated: bool = False
    value: str = ""
    keep_zero: bool = False
    #: a Go struct embedded without a JSON name: its fields are the parent's (``IngressRule.http``)
    inline: bool = False


def _s(name: str) -> Field:
    return Field(name, "string")


def _i(name: str, *, keep_zero: bool = False) -> Field:
    return Field(name, "int", keep_zero=keep_zero)


def _b(name: str) -> Field:
    return Field(name, "bool")


def _list(name: str, kind: str) -> Field:
    return Field(name, kind, repeated=True)


def _map(name: str, value: str) -> Field:
    return Field(name, "map", value=value)


def _m(name: str, message: str, *, keep_zero: bool = False) -> Field:
    return Field(name, message, keep_zero=keep_zero)


_META = {1: _m("metadata", "ObjectMeta")}
_BINDING = {**_META, 2: _list("subjects", "Subject"), 3: _m("roleRef", "RoleRef")}

#: message → field number → field (the fields ``kubectl create`` and ``autoscale`` can set)
MESSAGES: dict[str, dict[int, Field]] = {
    # runtime (the envelope's type) and meta/v1
    "TypeMeta": {1: _s("apiVersion"), 2: _s("kind")},
    "ObjectMeta": {1: _s("name"), 2: _s("generateName"), 3: _s("namespace"), 5: _s("uid"),
                   6: _s("resourceVersion"), 7: _i("generation"), 8: Field("creationTimestamp", "time"),
                   9: Field("deletionTimestamp", "time"), 10: _i("deletionGracePeriodSeconds"),
                   11: _map("labels", "string"), 12: _map("annotations", "string"),
                   13: _list("ownerReferences", "OwnerReference"), 14: _list("finalizers", "string")},
    "OwnerReference": {5: _s("apiVersion"), 1: _s("kind"), 3: _s("name"), 4: _s("uid"), 6: _b("controller"),
                       7: _b("blockOwnerDeletion")},
    "LabelSelector": {1: _map("matchLabels", "string"),
                      2: _list("matchExpressions", "LabelSelectorRequirement")},
    "LabelSelectorRequirement": {1: _s("key"), 2: _s("operator"), 3: _list("values", "string")},
    # core/v1
    "Namespace": {**_META, 2: _m("spec", "NamespaceSpec")},
    "NamespaceSpec": {1: _list("finalizers", "string")},
    "ConfigMap": {**_META, 2: _map("data", "string"), 3: _map("binaryData", "bytes"), 4: _b("immutable")},
    "Secret": {**_META, 2: _map("data", "bytes"), 3: _s("type"), 4: _map("stringData", "string"),
               5: _b("immutable")},
    "ServiceAccount": {**_META, 4: _b("automountServiceAccountToken")},
    "Service": {**_META, 2: _m("spec", "ServiceSpec")},
    "ServiceSpec": {1: _list("ports", "ServicePort"), 2: _map("selector", "string"), 3: _s("clusterIP"),
                    18: _list("clusterIPs", "string"), 4: _s("type"), 5: _list("externalIPs", "string"),
                    7: _s("sessionAffinity"), 10: _s("externalName"), 11: _s("externalTrafficPolicy"),
                    17: _s("ipFamilyPolicy"), 19: _list("ipFamilies", "string"),
                    22: _s("internalTrafficPolicy")},
    "ServicePort": {1: _s("name"), 2: _s("protocol"), 6: _s("appProtocol"), 3: _i("port"),
                    4: Field("targetPort", "intorstr"), 5: _i("nodePort")},
    "PodTemplateSpec": {**_META, 2: _m("spec", "PodSpec")},
    "PodSpec": {2: _list("containers", "Container"), 20: _list("initContainers", "Container"),
                3: _s("restartPolicy"), 4: _i("terminationGracePeriodSeconds", keep_zero=True),
                5: _i("activeDeadlineSeconds"), 6: _s("dnsPolicy"), 7: _map("nodeSelector", "string"),
                8: _s("serviceAccountName"), 9: _s("serviceAccount"), 10: _s("nodeName"), 16: _s("hostname"),
                17: _s("subdomain"), 19: _s("schedulerName"), 24: _s("priorityClassName"),
                25: _i("priority", keep_zero=True)},
    "Container": {1: _s("name"), 2: _s("image"), 3: _list("command", "string"), 4: _list("args", "string"),
                  5: _s("workingDir"), 6: _list("ports", "ContainerPort"), 7: _list("env", "EnvVar"),
                  8: _m("resources", "ResourceRequirements"), 13: _s("terminationMessagePath"),
                  20: _s("terminationMessagePolicy"), 14: _s("imagePullPolicy"), 16: _b("stdin"),
                  17: _b("stdinOnce"), 18: _b("tty"), 24: _s("restartPolicy")},
    "ContainerPort": {1: _s("name"), 2: _i("hostPort"), 3: _i("containerPort"), 4: _s("protocol"),
                      5: _s("hostIP")},
    "EnvVar": {1: _s("name"), 2: _s("value")},
    "ResourceRequirements": {1: _map("limits", "quantity"), 2: _map("requests", "quantity")},
    # apps/v1
    "Deployment": {**_META, 2: _m("spec", "DeploymentSpec")},
    "DeploymentSpec": {1: _i("replicas", keep_zero=True), 2: _m("selector", "LabelSelector"),
                       3: _m("template", "PodTemplateSpec"), 4: _m("strategy", "DeploymentStrategy"),
                       5: _i("minReadySeconds"), 6: _i("revisionHistoryLimit", keep_zero=True),
                       7: _b("paused"), 9: _i("progressDeadlineSeconds", keep_zero=True)},
    "DeploymentStrategy": {1: _s("type"), 2: _m("rollingUpdate", "RollingUpdateDeployment")},
    "RollingUpdateDeployment": {1: Field("maxUnavailable", "intorstr", keep_zero=True),
                                2: Field("maxSurge", "intorstr", keep_zero=True)},
    # batch/v1
    "Job": {**_META, 2: _m("spec", "JobSpec")},
    "JobSpec": {1: _i("parallelism", keep_zero=True), 2: _i("completions", keep_zero=True),
                3: _i("activeDeadlineSeconds"), 7: _i("backoffLimit", keep_zero=True),
                4: _m("selector", "LabelSelector"), 5: _b("manualSelector"),
                6: _m("template", "PodTemplateSpec"),
                8: _i("ttlSecondsAfterFinished", keep_zero=True), 9: _s("completionMode"), 10: _b("suspend")},
    "CronJob": {**_META, 2: _m("spec", "CronJobSpec")},
    "CronJobSpec": {1: _s("schedule"), 8: _s("timeZone"), 2: _i("startingDeadlineSeconds"),
                    3: _s("concurrencyPolicy"), 4: _b("suspend"), 5: _m("jobTemplate", "JobTemplateSpec"),
                    6: _i("successfulJobsHistoryLimit", keep_zero=True),
                    7: _i("failedJobsHistoryLimit", keep_zero=True)},
    "JobTemplateSpec": {**_META, 2: _m("spec", "JobSpec")},
    # rbac.authorization.k8s.io/v1
    "Role": {**_META, 2: _list("rules", "PolicyRule")},
    "ClusterRole": {**_META, 2: _list("rules", "PolicyRule"), 3: _m("aggregationRule", "AggregationRule")},
    "RoleBinding": _BINDING,
    "ClusterRoleBinding": _BINDING,
    "PolicyRule": {1: _list("verbs", "string"), 2: _list("apiGroups", "string"),
                   3: _list("resources", "string"), 4: _list("resourceNames", "string"),
                   5: _list("nonResourceURLs", "string")},
    "Subject": {1: _s("kind"), 2: _s("apiGroup"), 3: _s("name"), 4: _s("namespace")},
    "RoleRef": {1: _s("apiGroup"), 2: _s("kind"), 3: _s("name")},
    "AggregationRule": {1: _list("clusterRoleSelectors", "LabelSelector")},
    # policy/v1
    "PodDisruptionBudget": {**_META, 2: _m("spec", "PodDisruptionBudgetSpec")},
    "PodDisruptionBudgetSpec": {1: Field("minAvailable", "intorstr", keep_zero=True),
                                2: _m("selector", "LabelSelector"),
                                3: Field("maxUnavailable", "intorstr", keep_zero=True),
                                4: _s("unhealthyPodEvictionPolicy")},
    # autoscaling/v2
    "HorizontalPodAutoscaler": {**_META, 2: _m("spec", "HorizontalPodAutoscalerSpec")},
    "HorizontalPodAutoscalerSpec": {1: _m("scaleTargetRef", "CrossVersionObjectReference"),
                                    2: _i("minReplicas", keep_zero=True), 3: _i("maxReplicas"),
                                    4: _list("metrics", "MetricSpec")},
    "CrossVersionObjectReference": {1: _s("kind"), 2: _s("name"), 3: _s("apiVersion")},
    "MetricSpec": {1: _s("type"), 4: _m("resource", "ResourceMetricSource")},
    "ResourceMetricSource": {1: _s("name"), 2: _m("target", "MetricTarget")},
    "MetricTarget": {1: _s("type"), 2: Field("value", "quantity"), 3: Field("averageValue", "quantity"),
                     4: _i("averageUtilization", keep_zero=True)},
    # networking.k8s.io/v1
    "Ingress": {**_META, 2: _m("spec", "IngressSpec")},
    "IngressSpec": {4: _s("ingressClassName"), 1: _m("defaultBackend", "IngressBackend"),
                    2: _list("tls", "IngressTLS"), 3: _list("rules", "IngressRule")},
    "IngressBackend": {4: _m("service", "IngressServiceBackend"),
                       3: _m("resource", "TypedLocalObjectReference")},
    "IngressServiceBackend": {1: _s("name"), 2: _m("port", "ServiceBackendPort")},
    "ServiceBackendPort": {1: _s("name"), 2: _i("number")},
    "TypedLocalObjectReference": {1: _s("apiGroup"), 2: _s("kind"), 3: _s("name")},
    "IngressTLS": {1: _list("hosts", "string"), 2: _s("secretName")},
    "IngressRule": {1: _s("host"), 2: Field("ingressRuleValue", "IngressRuleValue", inline=True)},
    "IngressRuleValue": {1: _m("http", "HTTPIngressRuleValue")},
    "HTTPIngressRuleValue": {1: _list("paths", "HTTPIngressPath")},
    "HTTPIngressPath": {1: _s("path"), 3: _s("pathType"), 2: _m("backend", "IngressBackend")},
    "ResourceQuota": {**_META, 2: _m("spec", "ResourceQuotaSpec")},
    "ResourceQuotaSpec": {1: _map("hard", "quantity"), 2: _list("scopes", "string")},
    # scheduling.k8s.io/v1 (the value is written even when 0, and 0 is a priority)
    "PriorityClass": {**_META, 2: _i("value", keep_zero=True), 3: _b("globalDefault"), 4: _s("description"),
                      5: _s("preemptionPolicy")},
    # authorization.k8s.io/v1 and authentication.k8s.io/v1 (kubectl auth can-i, kubectl auth whoami)
    "SelfSubjectAccessReview": {**_META, 2: _m("spec", "SelfSubjectAccessReviewSpec")},
    "SelfSubjectAccessReviewSpec": {1: _m("resourceAttributes", "ResourceAttributes"),
                                    2: _m("nonResourceAttributes", "NonResourceAttributes")},
    "ResourceAttributes": {1: _s("namespace"), 2: _s("verb"), 3: _s("group"), 4: _s("version"),
                           5: _s("resource"), 6: _s("subresource"), 7: _s("name")},
    "NonResourceAttributes": {1: _s("path"), 2: _s("verb")},
    "SelfSubjectReview": _META,
    "SelfSubjectRulesReview": {**_META, 2: _m("spec", "SelfSubjectRulesReviewSpec")},
    "SelfSubjectRulesReviewSpec": {1: _s("namespace")},
    "TokenRequest": {**_META, 2: _m("spec", "TokenRequestSpec")},
    "TokenRequestSpec": {1: _list("audiences", "string"), 3: _m("boundObjectRef", "BoundObjectReference"),
                         4: _i("expirationSeconds")},
    "BoundObjectReference": {1: _s("kind"), 2: _s("apiVersion"), 3: _s("name"), 4: _s("uid")},
}

#: (apiVersion, kind) → the message of the object
KINDS: dict[tuple[str, str], str] = {
    **{("v1", kind): kind
       for kind in ("Namespace", "ConfigMap", "Secret", "ServiceAccount", "Service", "ResourceQuota")},
    ("scheduling.k8s.io/v1", "PriorityClass"): "PriorityClass",
    ("apps/v1", "Deployment"): "Deployment",
    ("batch/v1", "Job"): "Job",
    ("batch/v1", "CronJob"): "CronJob",
    **{("rbac.authorization.k8s.io/v1", kind): kind
       for kind in ("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding")},
    ("policy/v1", "PodDisruptionBudget"): "PodDisruptionBudget",
    ("autoscaling/v2", "HorizontalPodAutoscaler"): "HorizontalPodAutoscaler",
    ("networking.k8s.io/v1", "Ingress"): "Ingress",
    ("authorization.k8s.io/v1", "SelfSubjectAccessReview"): "SelfSubjectAccessReview",
    ("authentication.k8s.io/v1", "SelfSubjectReview"): "SelfSubjectReview",
    ("authorization.k8s.io/v1", "SelfSubjectRulesReview"): "SelfSubjectRulesReview",
    ("authentication.k8s.io/v1", "TokenRequest"): "TokenRequest",
}

_JSON_HINT = "send it as JSON instead (kubectl create -f FILE or kubectl apply -f FILE)"
#: the messages of meta/v1 Time, intstr IntOrString and resource Quantity (JSON: one value each)
_TIME = {1: _i("seconds"), 2: _i("nanos")}
_INT_OR_STRING = {1: _i("type"), 2: _i("intVal"), 3: _s("strVal")}
_QUANTITY = {1: _s("string")}
#: the envelope (runtime.Unknown)
_ENVELOPE = {1: _m("typeMeta", "TypeMeta"), 2: Field("raw", "raw"), 3: _s("contentEncoding"),
             4: _s("contentType")}


# --------------------------------------------------------------------------- the wire format
def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise errors.BadRequest("the protobuf body is truncated or malformed (a varint)")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


def _fields(data: bytes) -> list[tuple[int, int, int | bytes]]:
    """(field number, wire type, value) in order; lengths and fixed values checked."""
    out: list[tuple[int, int, int | bytes]] = []
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        value: int | bytes
        if number == 0:
            raise errors.BadRequest("the protobuf body is malformed (field number 0)")
        if wire == VARINT:
            value, pos = _varint(data, pos)
        elif wire in (FIXED64, FIXED32):
            size = 8 if wire == FIXED64 else 4
            if pos + size > len(data):
                raise errors.BadRequest("the protobuf body is truncated (a fixed-size value)")
            value, pos = int.from_bytes(data[pos:pos + size], "little"), pos + size
        elif wire == LENGTH:
            size, pos = _varint(data, pos)
            if pos + size > len(data):
                raise errors.BadRequest("the protobuf body is truncated (a length-delimited value)")
            value, pos = data[pos:pos + size], pos + size
        else:
            raise errors.BadRequest(f"the protobuf body is malformed (wire type {wire})")
        out.append((number, wire, value))
    return out


def _is_zero(value: int | bytes, depth: int = 0) -> bool:
    """A zero value: ``0``, empty bytes, or bytes that read as a message of zero values."""
    if isinstance(value, int):
        return value == 0
    if not value:
        return True
    if depth >= MAX_DEPTH:
        return False
    try:
        return all(_is_zero(v, depth + 1) for _, _, v in _fields(value))
    except errors.BadRequest:
        return False


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


# --------------------------------------------------------------------------- messages → JSON
def _text(value: int | bytes, where: str) -> str:
    if not isinstance(value, bytes):
        raise errors.BadRequest(f"the protobuf body is malformed: {where} is not a string")
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        raise errors.BadRequest(f"the protobuf body is malformed: {where} is not UTF-8") from None


def _number(value: int | bytes, where: str) -> int:
    if not isinstance(value, int):
        raise errors.BadRequest(f"the protobuf body is malformed: {where} is not a number")
    return _signed(value)


def _scalar(kind: str, value: int | bytes, where: str, depth: int) -> Any:
    if kind == "string":
        return _text(value, where)
    if kind == "raw":  # the envelope's object, decoded next: kept as bytes
        return _bytes(value, where)
    if kind == "bytes":
        if not isinstance(value, bytes):
            raise errors.BadRequest(f"the protobuf body is malformed: {where} is not bytes")
        return base64.b64encode(value).decode("ascii")
    if kind == "int":
        return _number(value, where)
    if kind == "bool":
        return _number(value, where) != 0
    if not isinstance(value, bytes):
        raise errors.BadRequest(f"the protobuf body is malformed: {where} is not a message")
    if kind == "time":
        parts = _message_dict(_TIME, value, where, depth)
        seconds, nanos = int(parts.get("seconds", 0)), int(parts.get("nanos", 0))
        if not seconds and not nanos:
            return None
        try:
            return format_time(datetime.fromtimestamp(seconds + nanos / 1e9, UTC))
        except (ValueError, OverflowError, OSError):
            raise errors.BadRequest(f"the protobuf body is malformed: {where} ({seconds}s, {nanos}ns) "
                                    "is not a time") from None
    if kind == "intorstr":
        parts = _message_dict(_INT_OR_STRING, value, where, depth)
        return str(parts.get("strVal", "")) if parts.get("type") == 1 else int(parts.get("intVal", 0))
    if kind == "quantity":
        return str(_message_dict(_QUANTITY, value, where, depth).get("string", ""))
    return decode_message(kind, value, where, depth + 1)


def _empty(value: Any) -> bool:
    return value is None or value == "" or value is False or (
        isinstance(value, (int, dict, list)) and not isinstance(value, bool) and not value)


def _message_dict(schema: dict[int, Field], data: bytes, where: str, depth: int) -> dict[str, Any]:
    if depth > MAX_DEPTH:
        raise errors.BadRequest(f"the protobuf body nests deeper than {MAX_DEPTH} messages")
    out: dict[str, Any] = {}
    for number, _, value in _fields(data):
        field = schema.get(number)
        if field is None:
            if not _is_zero(value):
                raise errors.UnsupportedMediaType(
                    f"{where}: field {number} of this protobuf body is not read here; {_JSON_HINT}")
            continue
        path = f"{where}.{field.name}"
        if field.kind == "map":  # repeated entries {1: key, 2: value}
            entry = _message_dict({1: _s("key"), 2: Field("value", field.value)}, _bytes(value, path), path,
                                  depth + 1)
            out.setdefault(field.name, {})[str(entry.get("key", ""))] = entry.get("value", "")
        elif field.repeated:  # strings and messages: one entry per element
            out.setdefault(field.name, []).append(_scalar(field.kind, value, path, depth))
        elif field.inline:
            out.update(_scalar(field.kind, value, where, depth))
        else:
            out[field.name] = _scalar(field.kind, value, path, depth)
    keep = {f.name for f in schema.values() if f.keep_zero}
    return {name: value for name, value in out.items()
            if not _empty(value) or (name in keep and value is not None)}


def _bytes(value: int | bytes, where: str) -> bytes:
    if not isinstance(value, bytes):
        raise errors.BadRequest(f"the protobuf body is malformed: {where} is not length-delimited")
    return value


def decode_message(message: str, data: bytes, where: str = "", depth: int = 0) -> dict[str, Any]:
    """One message of :data:`MESSAGES` as a JSON object (see the module notes)."""
    return _message_dict(MESSAGES[message], data, where or message, depth)


def decode_body(body: bytes) -> dict[str, Any]:
    """A ``application/vnd.kubernetes.protobuf`` request body as the JSON object it stands for:
    400 when malformed, 415 for a kind or a field not read here."""
    if not body.startswith(MAGIC):
        raise errors.BadRequest("a protobuf request body starts with k8s\\x00; this one does not")
    envelope = _message_dict(_ENVELOPE, body[len(MAGIC):], "the envelope", 0)
    type_meta = envelope.get("typeMeta") or {}
    api_version, kind = str(type_meta.get("apiVersion", "")), str(type_meta.get("kind", ""))
    if envelope.get("contentEncoding") or envelope.get("contentType", PROTOBUF) != PROTOBUF:
        raise errors.UnsupportedMediaType(
            f"the protobuf envelope holds {envelope.get('contentType')!r} "
            f"{envelope.get('contentEncoding') or ''}; {_JSON_HINT}")
    message = KINDS.get((api_version, kind))
    if message is None:
        raise errors.UnsupportedMediaType(f"{kind or 'an object'} ({api_version or 'no apiVersion'}) "
                                          f"is not read from protobuf here; {_JSON_HINT}")
    raw: bytes = envelope.get("raw", b"")
    return {"apiVersion": api_version, "kind": kind, **decode_message(message, raw, kind)}


__all__ = ["KINDS", "MESSAGES", "PROTOBUF", "Field", "decode_body", "decode_message"]
