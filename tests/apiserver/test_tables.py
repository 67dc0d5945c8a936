"""Table columns and Kubernetes' human durations."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from fleetkeeper.apiserver.tables import human_duration, table

NOW = datetime(2026, 1, 2, tzinfo=UTC)


@pytest.mark.parametrize(("seconds", "text"), [
    (-5, "<invalid>"), (-1, "0s"), (0, "0s"), (119, "119s"), (120, "2m"), (185, "3m5s"), (600, "10m"),
    (3 * 3600 + 60, "3h1m"), (8 * 3600, "8h"), (50 * 3600, "2d2h"), (10 * 86400, "10d"),
    (800 * 86400, "2y70d"), (9 * 365 * 86400, "9y"),
], ids=lambda v: str(v))
def test_human_duration(seconds: int, text: str) -> None:
    assert human_duration(seconds) == text


def test_binding_rows_show_scheduled_fully_applied_and_ready_for_failover() -> None:
    binding = {"metadata": {"name": "nginx-deployment", "namespace": "default",
                            "creationTimestamp": "2026-01-01T23:59:00Z"},
               "status": {"conditions": [{"type": "Scheduled", "status": "True"},
                                         {"type": "FullyApplied", "status": "False"},
                                         {"type": "FailoverReady", "status": "False"}]}}
    rendered = table("work.karmada.io", "ResourceBinding", [binding], now=NOW, resource_version="9")
    assert [c["name"] for c in rendered["columnDefinitions"]] == ["Name", "Scheduled", "FullyApplied",
                                                                  "Ready-For-Failover", "Age"]
    assert rendered["rows"][0]["cells"] == ["nginx-deployment", "True", "False", "False", "60s"]
    assert rendered["metadata"] == {"resourceVersion": "9"}


def test_unknown_kinds_get_name_and_age_and_missing_fields_print_none() -> None:
    rendered = table("example.com", "Widget", [{"metadata": {"name": "w"}}], now=NOW)
    assert rendered["rows"][0]["cells"] == ["w", "<unknown>"]
    work = table("work.karmada.io", "Work", [{"metadata": {"name": "w"}}], now=NOW)
    assert work["rows"][0]["cells"][1:3] == [None, None]


EVENT = {"metadata": {"name": "member1.1", "namespace": "default"},
         "type": "Warning", "reason": "EvictWorkload",
         "involvedObject": {"kind": "ResourceBinding", "name": "nginx-deployment", "fieldPath": "spec"},
         "source": {"component": "taint-manager"}, "message": " evicted from member1 \n",
         "firstTimestamp": "2026-01-01T23:50:00Z", "lastTimestamp": "2026-01-01T23:59:00Z", "count": 3}


def test_events_print_as_kubernetes_prints_them() -> None:
    rendered = table("", "Event", [EVENT], now=NOW)
    columns = [(c["name"], c["priority"]) for c in rendered["columnDefinitions"]]
    assert columns == [("Last Seen", 0), ("Type", 0), ("Reason", 0), ("Object", 0), ("Subobject", 1),
                       ("Source", 1), ("Message", 0), ("First Seen", 1), ("Count", 1), ("Name", 1)]
    assert rendered["rows"][0]["cells"] == [
        "60s", "Warning", "EvictWorkload", "resourcebinding/nginx-deployment", "spec", "taint-manager",
        "evicted from member1", "10m", 3, "member1.1"]


@pytest.mark.parametrize(("fields", "last", "first", "source", "count"), [
    ({}, "10m", "10m", "fleetkeeper, node-1", 1),  # no lastTimestamp: the first; no count: 1
    ({"series": {"count": 7, "lastObservedTime": "2026-01-01T23:58:00.000000Z"}}, "2m", "10m",
     "fleetkeeper, node-1", 7),
    ({"firstTimestamp": None, "eventTime": "2026-01-01T23:55:00.500000Z"}, "4m59s", "4m59s",
     "fleetkeeper, node-1", 1),
], ids=["only the first time", "a series", "only an event time"])
def test_event_times_and_sources_fall_back_as_kubernetes_does(
        fields: dict[str, object], last: str, first: str, source: str, count: int) -> None:
    event = {**EVENT, "lastTimestamp": None, "count": None, "source": {},
             "reportingComponent": "fleetkeeper", "reportingInstance": "node-1", **fields}
    cells = table("", "Event", [event], now=NOW)["rows"][0]["cells"]
    assert (cells[0], cells[7], cells[5], cells[8]) == (last, first, source, count)


def test_timeline_entries_print_time_subject_action_and_message() -> None:
    entry = {"metadata": {"name": "tl.1"}, "time": "2026-01-01T23:59:30.123456Z",
             "action": "EvictionStarted",
             "subject": {"kind": "ResourceBinding", "namespace": "default", "name": "nginx-deployment"},
             "message": "evicted from member1", "reason": "TaintUntolerated", "component": "taint-manager"}
    rendered = table("fleetkeeper.io", "TimelineEntry", [entry], now=NOW)
    assert [c["name"] for c in rendered["columnDefinitions"] if c["priority"] == 0] == [
        "Time", "Subject", "Action", "Message"]
    assert rendered["rows"][0]["cells"] == [
        "2026-01-01T23:59:30.123Z", "resourcebinding/default/nginx-deployment", "EvictionStarted",
        "evicted from member1", "TaintUntolerated", "taint-manager", "tl.1"]


def test_namespaces_print_their_status() -> None:
    namespaces = [{"metadata": {"name": "karmada-es-member1"}},
                  {"metadata": {"name": "gone"}, "status": {"phase": "Terminating"}}]
    rendered = table("", "Namespace", namespaces, now=NOW)
    assert [row["cells"][:2] for row in rendered["rows"]] == [
        ["karmada-es-member1", "Active"], ["gone", "Terminating"]]


def _cells(group: str, kind: str, obj: dict[str, object]) -> dict[str, object]:
    rendered = table(group, kind, [{"metadata": {"name": "x", "creationTimestamp": "2026-01-01T23:59:00Z"},
                                    **obj}], now=NOW)
    names = [c["name"] for c in rendered["columnDefinitions"]]
    return dict(zip(names, rendered["rows"][0]["cells"], strict=True))


def test_clusters_print_karmadas_columns_and_wide_ones() -> None:
    rendered = table("cluster.karmada.io", "Cluster", [{"metadata": {"name": "m1"}, "spec": {
        "syncMode": "Push", "apiEndpoint": "https://m1", "zones": ["a", "b"], "region": "eu"}}], now=NOW)
    columns = [(c["name"], c["priority"]) for c in rendered["columnDefinitions"]]
    assert columns == [("Name", 0), ("Version", 0), ("Mode", 0), ("Ready", 0), ("Age", 0), ("Zones", 1),
                       ("Region", 1), ("Provider", 1), ("API-Endpoint", 1), ("Proxy-URL", 1)]
    assert rendered["rows"][0]["cells"] == ["m1", None, "Push", "Unknown", "<unknown>", "a,b", "eu", "<none>",
                                            "https://m1", "<none>"]


def test_works_show_their_workload_kind_without_wide() -> None:
    rendered = table("work.karmada.io", "Work", [{"metadata": {"name": "w"}, "spec": {"workload": {
        "manifests": [{"kind": "Deployment"}, {"kind": "ConfigMap"}]}}}], now=NOW)
    assert [(c["name"], c["priority"]) for c in rendered["columnDefinitions"]][1] == ("Workload-Kind", 0)
    assert rendered["rows"][0]["cells"][1] == "Deployment,ConfigMap"


def test_built_in_kinds_print_kubectls_columns() -> None:
    svc = _cells("", "Service", {"spec": {"type": "NodePort", "ports": [
        {"port": 80, "nodePort": 30080, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}]}})
    assert svc == {"Name": "x", "Type": "NodePort", "Cluster-IP": "<none>", "External-IP": "<none>",
                   "Port(s)": "80:30080/TCP,53/UDP", "Age": "60s", "Selector": "<none>"}
    assert _cells("", "Service", {"spec": {"type": "LoadBalancer"}})["External-IP"] == "<pending>"
    pod = _cells("", "Pod", {"spec": {"containers": [{"name": "a"}, {"name": "b"}]}, "status": {
        "phase": "Running", "containerStatuses": [
            {"ready": True, "restartCount": 2},
            {"ready": False, "restartCount": 1, "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}})
    assert (pod["Ready"], pod["Status"], pod["Restarts"]) == ("1/2", "CrashLoopBackOff", 3)
    job = _cells("batch", "Job", {"spec": {"completions": 3}, "status": {
        "succeeded": 3, "conditions": [{"type": "Complete", "status": "True"}]}})
    assert (job["Status"], job["Completions"]) == ("Complete", "3/3")
    cron = _cells("batch", "CronJob", {"spec": {"schedule": "*/5 * * * *"}, "status": {"active": [{}]}})
    assert (cron["Schedule"], cron["Timezone"], cron["Suspend"], cron["Active"], cron["Last Schedule"]) == (
        "*/5 * * * *", "<none>", "False", 1, "<none>")
    sts = _cells("apps", "StatefulSet", {"spec": {"replicas": 3}, "status": {"readyReplicas": 2}})
    assert sts["Ready"] == "2/3"
    ds = _cells("apps", "DaemonSet", {"spec": {"template": {"spec": {"nodeSelector": {"disk": "ssd"}}}},
                                      "status": {"desiredNumberScheduled": 4, "numberReady": 3}})
    assert (ds["Desired"], ds["Ready"], ds["Node Selector"]) == (4, 3, "disk=ssd")
    ric = _cells("config.karmada.io", "ResourceInterpreterCustomization",
                 {"spec": {"target": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet"}}})
    assert (ric["Target-API-Version"], ric["Target-Kind"]) == ("apps.kruise.io/v1alpha1", "CloneSet")
    crd = _cells("apiextensions.k8s.io", "CustomResourceDefinition", {})
    assert crd == {"Name": "x", "Created At": "2026-01-01T23:59:00Z"}


def test_resource_templates_print_kubectls_wide_columns() -> None:
    containers = [{"name": "nginx", "image": "nginx:1.27"}]
    spec = {"replicas": 2, "selector": {"matchLabels": {"app": "nginx"}},
            "template": {"spec": {"containers": containers}}}
    deploy = _cells("apps", "Deployment", {"spec": spec})
    assert (deploy["Ready"], deploy["Containers"], deploy["Images"], deploy["Selector"]) == (
        "0/2", "nginx", "nginx:1.27", "app=nginx")
    wide = table("apps", "Deployment", [], now=NOW)["columnDefinitions"]
    assert [c["name"] for c in wide if c["priority"] == 1] == ["Containers", "Images", "Selector"]
