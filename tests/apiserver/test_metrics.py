"""Karmada's, controller-runtime's, client-go's and kube-apiserver's metric names on ``/metrics``
after a failover (the seed story on virtual time: member1 goes down at 60 s, its replicas
move to member2, member1 comes back at 200 s), and the shipped Grafana dashboard and
Prometheus alerts (``deploy/monitoring``) name only what is served.

``/metrics`` is scraped through an API server in-process while the story runs — the plane's
controllers and the server share the process's registry, as in ``fleetkeeper up`` — once
during the outage and once after the recovery."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from fleetkeeper.api.scheme import SCHEME
from fleetkeeper.apiserver.metrics import labels_of
from fleetkeeper.apiserver.request import Target
from fleetkeeper.clock import VirtualClock
from fleetkeeper.cmd.simulate import PlaneFactory
from fleetkeeper.simulation import scenario
from fleetkeeper.simulation.driver import Driver, run_scenario
from fleetkeeper.simulation.scenario import Step

from . import promql
from .helpers import Api, close_api, open_api

STORY = Path(__file__).resolve().parents[2] / "examples" / "seed-blog-member1-down.yaml"
MEMBER = "member_cluster"

#: every name the plane serves for Karmada's dashboards → the labels each sample carries
KARMADA: dict[str, set[str]] = {
    "cluster_ready_state": {MEMBER},
    "cluster_node_number": {MEMBER},
    "cluster_ready_node_number": {MEMBER},
    "cluster_cpu_allocatable_number": {MEMBER},
    "cluster_memory_allocatable_bytes": {MEMBER},
    "cluster_pod_allocatable_number": {MEMBER},
    "cluster_cpu_allocated_number": {MEMBER},
    "cluster_memory_allocated_bytes": {MEMBER},
    "cluster_pod_allocated_number": {MEMBER},
    "cluster_sync_status_duration_seconds": {MEMBER},
    "eviction_queue_depth": {"name"},
    "eviction_kind_total": {MEMBER, "resource_kind"},
    "eviction_processing_latency_seconds": {"name"},
    "eviction_processing_total": {"name", "result"},
    "karmada_scheduler_schedule_attempts_total": {"result", "schedule_type"},
    "karmada_scheduler_e2e_scheduling_duration_seconds": {"result", "schedule_type"},
    "karmada_scheduler_scheduling_algorithm_duration_seconds": {"schedule_step"},
    "karmada_scheduler_queue_incoming_bindings_total": {"event"},
    "scheduler_pending_bindings": {"queue"},
    "karmada_scheduler_framework_extension_point_duration_seconds": {"extension_point", "result"},
    "karmada_scheduler_plugin_execution_duration_seconds": {"plugin", "extension_point", "result"},
    "binding_sync_work_duration_seconds": {"result"},
    "work_sync_workload_duration_seconds": {"result"},
    "create_resource_to_cluster_total": {"result", "apiversion", "kind", MEMBER, "recreate"},
    "update_resource_to_cluster_total": {"result", "apiversion", "kind", MEMBER, "operationResult"},
    "delete_resource_from_cluster_total": {"result", "apiversion", "kind", MEMBER},
    "policy_apply_attempts_total": {"result"},
    "karmada_build_info": {"git_version", "git_commit", "go_version", "platform"},
    "controller_runtime_reconcile_total": {"controller", "result"},
    "controller_runtime_reconcile_errors_total": {"controller"},
    "controller_runtime_reconcile_time_seconds": {"controller"},
    "controller_runtime_max_concurrent_reconciles": {"controller"},
    "controller_runtime_active_workers": {"controller"},
    "workqueue_depth": {"name", "controller"},
    "workqueue_adds_total": {"name", "controller"},
    "workqueue_retries_total": {"name", "controller"},
    "workqueue_queue_duration_seconds": {"name", "controller"},
    "workqueue_work_duration_seconds": {"name", "controller"},
    "workqueue_unfinished_work_seconds": {"name", "controller"},
    "workqueue_longest_running_processor_seconds": {"name", "controller"},
    "apiserver_request_total": {"verb", "dry_run", "group", "version", "resource", "subresource", "scope",
                                "component", "code"},
    "apiserver_request_duration_seconds": {"verb", "dry_run", "group", "version", "resource", "subresource",
                                           "scope", "component"},
}
DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment",
              "metadata": {"name": "web", "namespace": "default"},
              "spec": {"selector": {"matchLabels": {"app": "web"}},
                       "template": {"metadata": {"labels": {"app": "web"}},
                                    "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}}


Scrape = dict[str, list[Sample]]


async def scrape_metrics() -> Scrape:
    """Some requests to an API server, then ``GET /metrics`` from it: samples by series name
    (a histogram's also under its own name)."""
    api = await open_api()
    try:
        deployments = "/apis/apps/v1/namespaces/default/deployments"
        assert (await api.http.post(deployments, json=DEPLOYMENT)).status_code == 201
        assert (await api.http.get(deployments)).status_code == 200
        assert (await api.http.get(f"{deployments}/missing")).status_code == 404
        applied = await api.http.patch(f"{deployments}/web", params={"fieldManager": "ops"}, json=DEPLOYMENT,
                                       headers={"Content-Type": "application/apply-patch+yaml"})
        assert applied.status_code == 200
        response = await api.http.get("/metrics")
        assert response.status_code == 200
        text = response.text
    finally:
        await close_api(api)
    out: Scrape = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out.setdefault(sample.name, []).append(sample)
            if family.type == "histogram":
                out.setdefault(family.name, []).append(sample)
    return out


@pytest.fixture(scope="module")
def scrapes() -> dict[float, Scrape]:
    """The two scrapes of one run of the story."""
    story: dict[str, Any] = yaml.safe_load(STORY.read_text())
    seen: dict[float, Scrape] = {}

    async def observe(driver: Driver, step: Step) -> None:
        if step.at in (100, 260):
            seen[step.at] = await scrape_metrics()

    outcome = run_scenario(scenario.parse(story), PlaneFactory("memory://"), clock=VirtualClock(),
                           observers=[observe])
    assert outcome.passed, [f.message() for f in outcome.failures]
    return seen


def value(scrape: Scrape, series: str, /, **labels: str) -> float:
    """The sum of the samples of ``series`` whose labels include ``labels``."""
    found = [s.value for s in scrape.get(series, []) if labels.items() <= s.labels.items()]
    assert found, f"no {series} with {labels}: {scrape.get(series, [])[:3]}"
    return sum(found)


def test_a_failover_is_seen_under_karmadas_and_kubernetes_metric_names(
        scrapes: dict[float, Scrape]) -> None:
    during, after = scrapes[100], scrapes[260]
    for name, labels in KARMADA.items():
        samples = after.get(name)
        assert samples, f"/metrics serves no {name}"
        assert all(labels <= sample.labels.keys() for sample in samples), (name, samples[0].labels)
    # member1 is down during the outage, and Ready again after
    assert value(during, "cluster_ready_state", member_cluster="member1") == 0
    assert value(during, "cluster_ready_state", member_cluster="member2") == 1
    assert value(after, "cluster_ready_state", member_cluster="member1") == 1
    assert value(during, "cluster_node_number", member_cluster="member2") > 0
    # the scheduler placed the binding, then moved member1's replicas
    assert value(after, "karmada_scheduler_schedule_attempts_total", result="scheduled") >= 2
    assert value(after, "karmada_scheduler_e2e_scheduling_duration_seconds_count", result="scheduled") >= 2
    assert value(after, "karmada_scheduler_queue_incoming_bindings_total", event="BindingAdd") >= 1
    # the taint manager evicted the binding from member1 and its queue is empty again
    assert value(during, "eviction_processing_total", name="binding-eviction", result="success") >= 1
    assert value(during, "eviction_queue_depth", name="binding-eviction") == 0
    assert value(during, "eviction_kind_total", member_cluster="member1", resource_kind="Deployment") == 0
    # Works were applied to the members, and member1's copy removed once it was back
    assert value(during, "create_resource_to_cluster_total", member_cluster="member2", kind="Deployment",
                 result="success") >= 1
    assert value(after, "delete_resource_from_cluster_total", member_cluster="member1", kind="Deployment",
                 result="success") >= 1
    assert value(after, "policy_apply_attempts_total", result="success") >= 1
    assert value(after, "controller_runtime_reconcile_total", controller="scheduler", result="success") >= 2
    assert value(after, "workqueue_adds_total", name="scheduler") >= 2
    # the API server counted the requests with kube-apiserver's verbs, scopes and codes
    deployments = {"group": "apps", "version": "v1", "resource": "deployments", "component": "apiserver"}
    for verb, scope, code in (("POST", "resource", "201"), ("LIST", "namespace", "200"),
                              ("GET", "resource", "404"), ("APPLY", "resource", "200")):
        assert value(after, "apiserver_request_total", verb=verb, scope=scope, code=code, **deployments) >= 1
    assert value(after, "apiserver_request_duration_seconds_count", verb="LIST", **deployments) >= 1


MONITORING = Path(__file__).resolve().parents[2] / "deploy" / "monitoring"


def shipped_expressions() -> list[tuple[str, str]]:
    """(where, PromQL) of every expression the dashboard and the alert rules hold."""
    dashboard = json.loads((MONITORING / "fleetkeeper-failover-dashboard.json").read_text())
    found = [(f"panel {panel['title']!r}", target["expr"])
             for panel in dashboard["panels"] for target in panel.get("targets", [])]
    rules = yaml.safe_load((MONITORING / "fleetkeeper-alerts.yaml").read_text())
    found += [(f"alert {rule['alert']}", rule["expr"])
              for group in rules["groups"] for rule in group["rules"]]
    return found


@pytest.mark.parametrize(("text", "metrics", "matchers", "grouping"), [
    ('sum by (le, name) (rate(x_bucket{member_cluster=~"$cluster"}[$__rate_interval]))', {"x_bucket"},
     {("x_bucket", "member_cluster")}, {"le", "name"}),
    ("a / on (job) group_left (member_cluster) b offset 5m > bool 0.5", {"a", "b"}, set(),
     {"job", "member_cluster"}),
    ('histogram_quantile(0.99, sum(rate(y[5m])) without (pod)) and count(z{code=~"5.."}) == 0',
     {"y", "z"}, {("z", "code")}, {"pod"}),
], ids=["functions, aggregations, matchers, ranges and Grafana variables",
        "vector matching, offsets and bool", "without clauses and set operators"])
def test_the_promql_reader(text: str, metrics: set[str], matchers: set[tuple[str, str]],
                           grouping: set[str]) -> None:
    found = promql.read(text)
    assert (found.metrics, found.matchers, found.grouping) == (metrics, matchers, grouping)


@pytest.mark.parametrize("text", ["sum(rate(x[5m])", 'x{a="b"', "x)", "x ? y"],
                         ids=["an unclosed call", "an unclosed selector", "a stray bracket", "no such token"])
def test_the_promql_reader_refuses_what_it_cannot_read(text: str) -> None:
    with pytest.raises(ValueError):
        promql.read(text)


def test_the_shipped_dashboard_and_alerts_name_only_served_metrics(scrapes: dict[float, Scrape]) -> None:
    served = scrapes[260]
    labels_of = {name: set().union(*(s.labels.keys() for s in samples)) for name, samples in served.items()}
    expressions = shipped_expressions()
    assert len(expressions) >= 40
    read = {where: promql.read(text) for where, text in expressions}
    named = set().union(*(found.metrics for found in read.values()))
    for name in ("cluster_ready_state", "eviction_queue_depth", "karmada_scheduler_schedule_attempts_total",
                 "workqueue_depth"):
        assert name in named, f"the failover assets never look at {name}"
    for where, found in read.items():
        missing = found.metrics - served.keys()
        assert not missing, f"{where} names what /metrics does not serve: {sorted(missing)}"
        for metric, label in found.matchers:
            assert label in labels_of[metric], f"{where}: {metric} has no label {label!r}"
        known = set().union(*(labels_of[metric] for metric in found.metrics))
        assert found.grouping <= known, f"{where} groups by {sorted(found.grouping - known)}"
    dashboard = json.loads((MONITORING / "fleetkeeper-failover-dashboard.json").read_text())
    (clusters,) = [v for v in dashboard["templating"]["list"] if v["name"] == "cluster"]
    query = re.fullmatch(r"label_values\((\w+), (\w+)\)", clusters["definition"])
    assert query is not None
    metric, label = query.groups()
    assert label in labels_of[metric]


def target(plural: str, namespace: str | None, name: str | None = None, sub: str | None = None, *,
           group: str = "apps") -> Target:
    info = SCHEME.by_plural(group, "v1", plural)
    assert info is not None
    return Target(info, namespace, name, sub)


@pytest.mark.parametrize(("to", "method", "query", "content_type", "labels"), [
    (target("deployments", "default"), "GET", {}, "", ("LIST", "", "namespace")),
    (target("deployments", None), "GET", {"watch": "true"}, "", ("WATCH", "", "cluster")),
    (target("deployments", "default", "web"), "HEAD", {}, "", ("GET", "", "resource")),
    (target("deployments", "default"), "POST", {"dryRun": "All"}, "", ("POST", "All", "resource")),
    (target("deployments", "default", "web"), "PATCH", {}, "application/apply-patch+yaml; charset=utf-8",
     ("APPLY", "", "resource")),
    (target("deployments", "default", "web", "scale"), "PUT", {}, "", ("PUT", "", "resource")),
], ids=["a list", "a watch of every namespace", "a head of one", "a dry-run create", "an apply",
        "a scale update"])
def test_request_labels_come_from_the_target_the_handler_resolved(
        to: Target, method: str, query: dict[str, str], content_type: str,
        labels: tuple[str, str, str]) -> None:
    verb, dry_run, scope = labels
    assert labels_of(to, method, query, content_type) == (
        verb, dry_run, "apps", "v1", "deployments", to.subresource or "", scope, "apiserver")


async def test_requests_refused_before_their_handler_are_counted_and_unserved_paths_are_not(api: Api) -> None:
    secrets = {"verb": "LIST", "dry_run": "", "group": "", "version": "v1", "resource": "secrets",
               "subresource": "", "scope": "namespace", "component": "apiserver"}

    def count(code: str) -> float:
        return REGISTRY.get_sample_value("apiserver_request_total", {**secrets, "code": code}) or 0.0

    def total() -> float:
        return sum(s.value for m in REGISTRY.collect() if m.name == "apiserver_request" for s in m.samples
                   if s.name == "apiserver_request_total")

    before = count("401"), count("200")
    async with api.client("not-a-token") as stranger:
        assert (await stranger.get("/api/v1/namespaces/default/secrets")).status_code == 401
    assert (await api.http.get("/api/v1/namespaces/default/secrets")).status_code == 200
    assert (count("401"), count("200")) == (before[0] + 1, before[1] + 1)
    counted = total()
    assert (await api.http.get("/api/v1/namespaces/default/no-such-things")).status_code == 404
    assert total() == counted
