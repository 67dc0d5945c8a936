"""Kubernetes' defaults and first checks for the built-in workload kinds a template can be.

A resource template is stored here as kube-apiserver would store it, because every
decision downstream reads it: a Deployment without ``spec.replicas`` is a Deployment of
one replica (``rb.spec.replicas: 1``), not of none — left unset, the scheduler would give
each cluster zero replicas and every member would then default its copy to one, running
the workload once per cluster. A Job without ``parallelism`` or ``completions`` likewise
runs one pod to one completion.

Defaults (Kubernetes' ``SetDefaults_*`` for apps/v1, batch/v1, core/v1 and autoscaling/v2,
the fields a workload's meaning and its propagation depend on; pod-template fields are
left as given, as the members default them):

* Deployment: ``replicas: 1``, ``strategy.type: RollingUpdate`` with ``maxUnavailable`` and
  ``maxSurge`` 25%, ``revisionHistoryLimit: 10``, ``progressDeadlineSeconds: 600``;
* StatefulSet: ``replicas: 1``, ``podManagementPolicy: OrderedReady``,
  ``updateStrategy: {type: RollingUpdate, rollingUpdate: {partition: 0}}``,
  ``revisionHistoryLimit: 10``, ``persistentVolumeClaimRetentionPolicy`` Retain/Retain;
* ReplicaSet: ``replicas: 1``; DaemonSet: ``updateStrategy`` RollingUpdate with
  ``maxUnavailable: 1``, ``maxSurge: 0``, ``revisionHistoryLimit: 10``;
* Job: ``completions`` and ``parallelism`` 1 when both are unset, else ``parallelism: 1``
  when unset; ``backoffLimit: 6``, ``completionMode: NonIndexed``, ``suspend: false``;
* CronJob: ``concurrencyPolicy: Allow``, ``suspend: false``, history limits 3 and 1;
* Service: ``type: ClusterIP``, ``sessionAffinity: None``, each port ``protocol: TCP`` and
  ``targetPort`` = ``port``; HorizontalPodAutoscaler: ``minReplicas: 1``.

Checks, each naming the field as Kubernetes does: counts (``replicas``, ``parallelism``,
``completions``, ``backoffLimit``, ``minReplicas``) are integers of at least 0 (``minReplicas``
1); a Deployment, StatefulSet, ReplicaSet or DaemonSet has a non-empty ``spec.selector`` that
matches its pod template's labels; the pods every workload kind describes (a Pod's own ``spec``)
are pods Kubernetes would run (:mod:`.admission_pod`: containers with a name and an image …);
names are RFC 1123 subdomains (a Service's an RFC 1035 label, a CronJob's at most 52 characters).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final

from fleetkeeper import errors
from fleetkeeper.api import admission_pod, validation
from fleetkeeper.api.meta import LabelSelector, Unstructured
from fleetkeeper.api.selectors import requirements_match, selector_requirements
from fleetkeeper.api.validation import FieldErrors

#: a CronJob's name leaves room for the 11 characters its Jobs' names add
CRONJOB_NAME_MAX: Final = 52
_DNS1035_LABEL: Final = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
#: kind → its defaulting-and-checking rule over the object's fields beside metadata
_Rule = Callable[[dict[str, Any], FieldErrors], None]


def dns1035_label(value: str) -> list[str]:
    """Problems of ``value`` as an RFC 1035 label (Service names)."""
    out = []
    if len(value) > validation.DNS1123_LABEL_MAX:
        out.append(f"must be no more than {validation.DNS1123_LABEL_MAX} characters")
    if not _DNS1035_LABEL.match(value):
        out.append("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with "
                   "an alphabetic character, and end with an alphanumeric character (e.g. 'my-name', or "
                   "'abc-123')")
    return out


def name_problems(kind: str, name: str) -> list[str] | None:
    """Problems of ``name`` for a built-in workload kind; ``None`` when this module has no rule for it."""
    if kind == "Service":
        return dns1035_label(name)
    if kind not in _NAMED:
        return None
    problems = validation.dns1123_subdomain(name)
    if kind == "CronJob" and len(name) > CRONJOB_NAME_MAX:
        problems.append(f"must be no more than {CRONJOB_NAME_MAX} characters")
    return problems


def admit_builtin(obj: Unstructured, errs: FieldErrors) -> None:
    """Default then check ``obj`` (a copy, changed in place) if its kind is one of this module's."""
    rule = _RULES.get(obj.kind)
    fields = obj.model_extra
    if rule is None or fields is None:
        return
    spec = fields.get("spec")
    if spec is None and obj.kind != "Service":
        spec = fields["spec"] = {}
    if spec is not None and not isinstance(spec, dict):
        errs.wrong_type("spec", spec, "an object")
        return
    rule(fields, errs)


# --- helpers ---------------------------------------------------------------------------------------


def _section(parent: dict[str, Any], key: str, path: str, errs: FieldErrors) -> dict[str, Any] | None:
    """``parent[key]`` as an object, made when absent; ``None`` (and an error) when it is not one."""
    value = parent.get(key)
    if value is None:
        value = parent[key] = {}
    if not isinstance(value, dict):
        errs.wrong_type(path, value, "an object")
        return None
    return value


def _count(spec: dict[str, Any], key: str, path: str, errs: FieldErrors, *, default: int | None = None,
           minimum: int = 0) -> None:
    """``spec[key]`` is an integer of at least ``minimum`` (``default`` when unset)."""
    value = spec.get(key)
    if value is None:
        if default is not None:
            spec[key] = default
        return
    if isinstance(value, bool) or not isinstance(value, int):
        errs.wrong_type(path, value, "an integer")
    elif value < minimum:
        errs.invalid(path, value, f"must be greater than or equal to {minimum}")


def _selector(kind: str, spec: dict[str, Any], errs: FieldErrors) -> None:
    """``spec.selector`` is given, not empty, and matches ``spec.template.metadata.labels``."""
    raw = spec.get("selector")
    if raw is None:
        errs.required("spec.selector")
        return
    try:
        selector = LabelSelector.from_dict(raw, path="spec.selector")
    except errors.Invalid as exc:
        errs.causes.extend(exc.causes)
        return
    try:
        requirements = selector_requirements(selector)
    except (ValueError, errors.BadRequest) as exc:
        errs.invalid("spec.selector", "", f"invalid label selector: {_first_line(exc)}")
        return
    if not requirements:
        errs.invalid("spec.selector", "", f"empty selector is invalid for {kind.lower()}")
        return
    template = spec.get("template")
    meta = template.get("metadata") if isinstance(template, dict) else None
    labels = meta.get("labels") if isinstance(meta, dict) else None
    labels = labels if isinstance(labels, dict) else {}
    if not requirements_match(requirements, {str(k): str(v) for k, v in labels.items()}):
        shown = ",".join(f'"{k}":"{v}"' for k, v in sorted(labels.items()))
        errs.invalid("spec.template.metadata.labels", f"map[string]string{{{shown}}}",
                     "`selector` does not match template `labels`")


def _first_line(exc: Exception) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _setdefault(section: dict[str, Any], key: str, value: Any) -> None:
    if section.get(key) is None:
        section[key] = value


def _rolling(spec: dict[str, Any], key: str, errs: FieldErrors, **rolling_defaults: Any) -> None:
    """``spec[key]`` (an update strategy) is ``RollingUpdate`` unless it says otherwise, and a
    rolling update gets ``rolling_defaults`` where unset."""
    strategy = _section(spec, key, f"spec.{key}", errs)
    if strategy is None:
        return
    _setdefault(strategy, "type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        rolling = _section(strategy, "rollingUpdate", f"spec.{key}.rollingUpdate", errs)
        if rolling is not None:
            for name, value in rolling_defaults.items():
                _setdefault(rolling, name, value)


# --- per-kind rules --------------------------------------------------------------------------------


def _deployment(fields: dict[str, Any], errs: FieldErrors) -> None:
    spec = fields["spec"]
    _count(spec, "replicas", "spec.replicas", errs, default=1)
    _rolling(spec, "strategy", errs, maxUnavailable="25%", maxSurge="25%")
    _count(spec, "revisionHistoryLimit", "spec.revisionHistoryLimit", errs, default=10)
    _count(spec, "progressDeadlineSeconds", "spec.progressDeadlineSeconds", errs, default=600)
    _selector("Deployment", spec, errs)
    admission_pod.check_pod_template(spec.get("template"), "spec.template", errs)


def _statefulset(fields: dict[str, Any], errs: FieldErrors) -> None:
    spec = fields["spec"]
    _count(spec, "replicas", "spec.replicas", errs, default=1)
    _setdefault(spec, "podManagementPolicy", "OrderedReady")
    _rolling(spec, "updateStrategy", errs, partition=0)
    _count(spec, "revisionHistoryLimit", "spec.revisionHistoryLimit", errs, default=10)
    retention = _section(spec, "persistentVolumeClaimRetentionPolicy",
                         "spec.persistentVolumeClaimRetentionPolicy", errs)
    if retention is not None:
        _setdefault(retention, "whenDeleted", "Retain")
        _setdefault(retention, "whenScaled", "Retain")
    _selector("StatefulSet", spec, errs)
    admission_pod.check_pod_template(spec.get("template"), "spec.template", errs)


def _replicaset(fields: dict[str, Any], errs: FieldErrors) -> None:
    spec = fields["spec"]
    _count(spec, "replicas", "spec.replicas", errs, default=1)
    _selector("ReplicaSet", spec, errs)
    admission_pod.check_pod_template(spec.get("template"), "spec.template", errs)


def _daemonset(fields: dict[str, Any], errs: FieldErrors) -> None:
    spec = fields["spec"]
    _rolling(spec, "updateStrategy", errs, maxUnavailable=1, maxSurge=0)
    _count(spec, "revisionHistoryLimit", "spec.revisionHistoryLimit", errs, default=10)
    _selector("DaemonSet", spec, errs)
    admission_pod.check_pod_template(spec.get("template"), "spec.template", errs)


def _job(fields: dict[str, Any], errs: FieldErrors) -> None:
    spec = fields["spec"]
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
    _count(spec, "completions", "spec.completions", errs)
    _count(spec, "parallelism", "spec.parallelism", errs, default=1)
    _count(spec, "backoffLimit", "spec.backoffLimit", errs, default=6)
    _setdefault(spec, "completionMode", "NonIndexed")
    _setdefault(spec, "suspend", False)
    admission_pod.check_pod_template(spec.get("template"), "spec.template", errs)


def _cronjob(fields: dict[str, Any], errs: FieldErrors) -> None:
    spec = fields["spec"]
    _setdefault(spec, "concurrencyPolicy", "Allow")
    _setdefault(spec, "suspend", False)
    _count(spec, "successfulJobsHistoryLimit", "spec.successfulJobsHistoryLimit", errs, default=3)
    _count(spec, "failedJobsHistoryLimit", "spec.failedJobsHistoryLimit", errs, default=1)
    job = spec.get("jobTemplate")
    if job is None or admission_pod.OBJECT(job, "spec.jobTemplate", errs):
        job_spec = (job or {}).get("spec")
        if job_spec is None or admission_pod.OBJECT(job_spec, "spec.jobTemplate.spec", errs):
            admission_pod.check_pod_template((job_spec or {}).get("template"),
                                             "spec.jobTemplate.spec.template", errs)


def _pod(fields: dict[str, Any], errs: FieldErrors) -> None:
    admission_pod.check_pod_spec(fields["spec"], "spec", errs)


def _service(fields: dict[str, Any], errs: FieldErrors) -> None:
    spec = _section(fields, "spec", "spec", errs)
    if spec is None:
        return
    _setdefault(spec, "type", "ClusterIP")
    _setdefault(spec, "sessionAffinity", "None")
    ports = spec.get("ports")
    for index, port in enumerate(ports if isinstance(ports, list) else ()):
        if not isinstance(port, dict):
            errs.invalid(f"spec.ports[{index}]", type(port).__name__, "must be an object")
            continue
        _setdefault(port, "protocol", "TCP")
        if port.get("targetPort") in (None, 0, "") and port.get("port") is not None:
            port["targetPort"] = port["port"]


def _hpa(fields: dict[str, Any], errs: FieldErrors) -> None:
    _count(fields["spec"], "minReplicas", "spec.minReplicas", errs, default=1, minimum=1)


_RULES: Final[dict[str, _Rule]] = {
    "Deployment": _deployment, "StatefulSet": _statefulset, "ReplicaSet": _replicaset,
    "DaemonSet": _daemonset, "Job": _job, "CronJob": _cronjob, "Service": _service,
    "HorizontalPodAutoscaler": _hpa, "Pod": _pod,
}
#: kinds whose names are RFC 1123 subdomains (Service: RFC 1035 label, see :func:`name_problems`)
_NAMED: Final = frozenset({"Deployment", "StatefulSet", "ReplicaSet", "DaemonSet", "Job", "CronJob", "Pod",
                           "ConfigMap", "Secret", "ServiceAccount", "PersistentVolumeClaim", "Ingress",
                           "PodDisruptionBudget", "HorizontalPodAutoscaler"})
#: the kinds :func:`admit_builtin` defaults and checks
KINDS: Final = frozenset(_RULES)

__all__ = ["CRONJOB_NAME_MAX", "KINDS", "admit_builtin", "dns1035_label", "name_problems"]
