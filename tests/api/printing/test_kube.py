"""kubectl's columns for built-in kinds, as kube-apiserver prints them (and ``-o wide``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from fleetkeeper import errors
from fleetkeeper.api.printing.columns import selector_text
from fleetkeeper.api.printing.kube import kube_columns
from fleetkeeper.api.printing.table import include_object, table, wants_table

NOW = datetime(2026, 1, 2, tzinfo=UTC)
META = {"name": "x", "namespace": "default", "creationTimestamp": "2026-01-01T23:59:00Z"}
TEMPLATE = {"spec": {"containers": [{"name": "web", "image": "nginx:1.27"},
                                    {"name": "log", "image": "busybox"}]}}


def _headers(group: str, kind: str) -> tuple[list[str], list[str]]:
    """(the columns kubectl prints, the ones it adds with ``-o wide``), upper-cased as it prints them."""
    columns = kube_columns(group, kind)
    names = [(c.name.upper(), c.priority) for c in columns]
    return [n for n, p in names if p == 0], [n for n, p in names if p]


def _row(group: str, kind: str, obj: dict[str, Any]) -> dict[str, Any]:
    rendered = table(kube_columns(group, kind), [{"metadata": META, **obj}], now=NOW)
    names = [c["name"] for c in rendered["columnDefinitions"]]
    return dict(zip(names, rendered["rows"][0]["cells"], strict=True))


WORKLOAD_WIDE = ["CONTAINERS", "IMAGES", "SELECTOR"]


@pytest.mark.parametrize(("group", "kind", "shown", "wide"), [
    ("", "Node", ["NAME", "STATUS", "ROLES", "AGE", "VERSION"],
     ["INTERNAL-IP", "EXTERNAL-IP", "OS-IMAGE", "KERNEL-VERSION", "CONTAINER-RUNTIME"]),
    ("", "Pod", ["NAME", "READY", "STATUS", "RESTARTS", "AGE"],
     ["IP", "NODE", "NOMINATED NODE", "READINESS GATES"]),
    ("apps", "Deployment", ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"], WORKLOAD_WIDE),
    ("apps", "ReplicaSet", ["NAME", "DESIRED", "CURRENT", "READY", "AGE"], WORKLOAD_WIDE),
    ("apps", "StatefulSet", ["NAME", "READY", "AGE"], ["CONTAINERS", "IMAGES"]),
    ("apps", "DaemonSet",
     ["NAME", "DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE", "NODE SELECTOR", "AGE"],
     WORKLOAD_WIDE),
    ("batch", "Job", ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"], WORKLOAD_WIDE),
    ("batch", "CronJob", ["NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST SCHEDULE", "AGE"],
     WORKLOAD_WIDE),
    ("", "Service", ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"], ["SELECTOR"]),
    ("", "Event", ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"],
     ["SUBOBJECT", "SOURCE", "FIRST SEEN", "COUNT", "NAME"]),
    ("example.com", "Widget", ["NAME", "AGE"], []),
], ids=["Node", "Pod", "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "CronJob", "Service",
       "Event", "a kind kubectl has no table for"])
def test_each_kind_prints_kubectls_headers_and_wide_ones(group: str, kind: str, shown: list[str],
                                                         wide: list[str]) -> None:
    assert _headers(group, kind) == (shown, wide)


def test_nodes_print_status_roles_version_addresses_and_system_info() -> None:
    node = _row("", "Node", {
        "metadata": {**META, "labels": {"node-role.kubernetes.io/control-plane": "",
                                        "kubernetes.io/role": "edge", "node-role.kubernetes.io/": ""}},
        "spec": {"unschedulable": True},
        "status": {"conditions": [{"type": "Ready", "status": "False"}],
                   "addresses": [{"type": "Hostname", "address": "n1"},
                                 {"type": "InternalIP", "address": "10.0.0.4"}],
                   "nodeInfo": {"kubeletVersion": "v1.31.0", "osImage": "Ubuntu 24.04",
                                "kernelVersion": "6.8.0", "containerRuntimeVersion": "containerd://1.7.0"}}})
    assert node == {"Name": "x", "Status": "NotReady,SchedulingDisabled", "Roles": "control-plane,edge",
                     "Age": "60s", "Version": "v1.31.0", "Internal-IP": "10.0.0.4", "External-IP": "<none>",
                     "OS-Image": "Ubuntu 24.04", "Kernel-Version": "6.8.0",
                     "Container-Runtime": "containerd://1.7.0"}
    bare = _row("", "Node", {})
    assert (bare["Status"], bare["Roles"], bare["Internal-IP"], bare["OS-Image"]) == (
        "Unknown", "<none>", "<none>", "<unknown>")


def test_pods_print_ip_node_nominated_node_readiness_gates_and_the_last_restart() -> None:
    pod = _row("", "Pod", {
        "spec": {"nodeName": "member1-node-001", "containers": [{"name": "web"}],
                 "readinessGates": [{"conditionType": "example.com/lb"},
                                    {"conditionType": "example.com/dns"}]},
        "status": {"phase": "Running", "podIP": "10.1.0.9", "podIPs": [{"ip": "10.1.0.7"}],
                   "conditions": [{"type": "example.com/lb", "status": "True"}],
                   "containerStatuses": [{
                       "ready": True, "restartCount": 2, "state": {"running": {}},
                       "lastState": {"terminated": {"finishedAt": "2026-01-01T23:55:00Z"}}}]}})
    assert pod == {"Name": "x", "Ready": "1/1", "Status": "Running", "Restarts": "2 (5m ago)", "Age": "60s",
                   "IP": "10.1.0.7", "Node": "member1-node-001", "Nominated Node": "<none>",
                   "Readiness Gates": "1/2"}
    pending = _row("", "Pod", {"status": {"phase": "Pending", "nominatedNodeName": "n2"}})
    assert (pending["IP"], pending["Node"], pending["Nominated Node"], pending["Readiness Gates"]) == (
        "<none>", "<none>", "n2", "<none>")
    assert _row("", "Pod", {"status": {"podIP": "10.1.0.9"}})["IP"] == "10.1.0.9"


RUNNING = {"ready": True, "state": {"running": {}}}


@pytest.mark.parametrize(("status", "extra", "shown"), [
    ({"phase": "Pending",
      "conditions": [{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}]},
     {}, "SchedulingGated"),
    ({"phase": "Pending", "initContainerStatuses": [{"state": {"terminated": {"exitCode": 0}}},
                                                    {"state": {"waiting": {"reason": "PodInitializing"}}}]},
     {}, "Init:1/2"),
    ({"phase": "Pending", "initContainerStatuses": [{"state": {"waiting": {"reason": "CrashLoopBackOff"}}}]},
     {}, "Init:CrashLoopBackOff"),
    ({"phase": "Running", "containerStatuses": [{"state": {"terminated": {"exitCode": 137, "signal": 9}}}]},
     {}, "Signal:9"),
    ({"phase": "Failed", "containerStatuses": [{"state": {"terminated": {"exitCode": 2}}}]},
     {}, "ExitCode:2"),
    ({"phase": "Running", "conditions": [{"type": "Ready", "status": "False"}],
      "containerStatuses": [RUNNING, {"state": {"terminated": {"reason": "Completed"}}}]}, {}, "NotReady"),
    ({"phase": "Succeeded", "containerStatuses": [{"state": {"terminated": {"reason": "Completed"}}}]},
     {}, "Completed"),
    ({"phase": "Running", "reason": "NodeLost"}, {"deletionTimestamp": "2026-01-02T00:00:00Z"}, "Unknown"),
    ({"phase": "Running"}, {"deletionTimestamp": "2026-01-02T00:00:00Z"}, "Terminating"),
], ids=["gated", "initializing", "init crash loop", "killed", "exit code", "not ready", "completed",
        "node lost", "terminating"])
def test_pod_status_says_what_kubectl_says(status: dict[str, Any], extra: dict[str, Any], shown: str) -> None:
    pod = {"spec": {"initContainers": [{"name": "a"}, {"name": "b"}]}, "status": status,
           "metadata": {**META, **extra}}
    assert _row("", "Pod", pod)["Status"] == shown


def test_workloads_print_containers_images_and_their_selector() -> None:
    selector = {"matchLabels": {"tier": "web", "app": "nginx"},
                "matchExpressions": [{"key": "env", "operator": "In", "values": ["prod", "dev"]},
                                     {"key": "canary", "operator": "DoesNotExist"}]}
    deploy = _row("apps", "Deployment", {"spec": {"replicas": 3, "selector": selector, "template": TEMPLATE},
                                         "status": {"readyReplicas": 2, "updatedReplicas": 3}})
    assert deploy == {"Name": "x", "Ready": "2/3", "Up-to-date": 3, "Available": 0, "Age": "60s",
                      "Containers": "web,log", "Images": "nginx:1.27,busybox",
                      "Selector": "app=nginx,!canary,env in (dev,prod),tier=web"}
    rs = _row("apps", "ReplicaSet", {"spec": {"replicas": 2, "selector": {"matchLabels": {"app": "a"}},
                                              "template": TEMPLATE}, "status": {"replicas": 2}})
    assert (rs["Desired"], rs["Current"], rs["Ready"], rs["Images"], rs["Selector"]) == (
        2, 2, 0, "nginx:1.27,busybox", "app=a")
    ds = _row("apps", "DaemonSet", {"spec": {"template": {**TEMPLATE, "spec": {
        **TEMPLATE["spec"], "nodeSelector": {"zone": "a", "disk": "ssd"}}}}})
    assert (ds["Node Selector"], ds["Containers"], ds["Selector"]) == ("disk=ssd,zone=a", "web,log", "")
    sts = _row("apps", "StatefulSet", {"spec": {"replicas": 3, "template": TEMPLATE},
                                       "status": {"readyReplicas": 1}})
    assert (sts["Ready"], sts["Images"]) == ("1/3", "nginx:1.27,busybox")
    cron = _row("batch", "CronJob", {"spec": {"schedule": "@hourly",
                                              "jobTemplate": {"spec": {"template": TEMPLATE}}}})
    assert (cron["Containers"], cron["Selector"]) == ("web,log", "")


@pytest.mark.parametrize(("spec", "status", "deleting", "shown"), [
    ({"completions": 3}, {"succeeded": 1, "startTime": "2026-01-01T23:58:00Z"}, False,
     ("Running", "1/3", "2m")),
    ({"parallelism": 4}, {"succeeded": 0, "conditions": [{"type": "Failed", "status": "True"}],
                          "startTime": "2026-01-01T23:00:00Z", "completionTime": "2026-01-01T23:00:42Z"},
     True, ("Failed", "0/1 of 4", "42s")),
    ({"parallelism": 1}, {"conditions": [{"type": "Suspended", "status": "True"}]}, False,
     ("Suspended", "0/1", "")),
    ({}, {"conditions": [{"type": "Suspended", "status": "True"}]}, True, ("Terminating", "0/1", "")),
], ids=["running", "failed", "suspended", "terminating"])
def test_jobs_print_status_completions_and_duration(spec: dict[str, Any], status: dict[str, Any],
                                                    deleting: bool, shown: tuple[str, str, str]) -> None:
    meta = {**META, "deletionTimestamp": "2026-01-02T00:00:00Z"} if deleting else META
    job = _row("batch", "Job", {"metadata": meta, "spec": spec, "status": status})
    assert (job["Status"], job["Completions"], job["Duration"]) == shown


def test_services_print_their_selector_wide() -> None:
    assert _row("", "Service", {"spec": {"selector": {"b": "2", "a": "1"}}})["Selector"] == "a=1,b=2"
    assert _row("", "Service", {"spec": {}})["Selector"] == "<none>"


def test_selectors_and_table_requests_read_as_kubernetes_reads_them() -> None:
    assert selector_text({"matchExpressions": [{"key": "k", "operator": "NotIn", "values": ["b", "a"]},
                                               {"key": "e", "operator": "Exists"}]}) == "e,k notin (a,b)"
    assert selector_text(None) == ""
    assert wants_table("application/json;as=Table;v=v1;g=meta.k8s.io,application/json")
    assert not wants_table("application/json")
    assert include_object(None) == "Metadata"
    with pytest.raises(errors.BadRequest, match="includeObject"):
        include_object("Everything")


def test_rows_carry_the_object_as_include_object_asks() -> None:
    obj = {"metadata": META, "spec": {"nodeName": "n1"}}
    columns = kube_columns("", "Pod")
    assert table(columns, [obj], now=NOW)["rows"][0]["object"] == {
        "kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": META}
    assert table(columns, [obj], now=NOW, include_object="Object")["rows"][0]["object"] == obj
    assert "object" not in table(columns, [obj], now=NOW, include_object="None")["rows"][0]
