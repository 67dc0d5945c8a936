"""Karmada's, controller-runtime's, client-go's and kube-apiserver's metric names on ``/metrics``
after a failover (the seed story on virtual time: member1 goes down at 60 s, its replicas
move to member2, member1 comes back at 200 s).

``/metrics`` is scraped through an API server in-process while the story runs — the plane's
controllers and the server share the process's registry, as in ``fleetkeeper up`` — once
during the outage and once after the recovery."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from fleetkeeper.clock import VirtualClock
from fleetkeeper.cmd.simulate import PlaneFactory
from fleetkeeper.simulation import scenario
from fleetkeeper.simulation.driver import Driver, run_scenario
from fleetkeeper.simulation.scenario import Step

from .helpers import close_api, open_api

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


def run_story() -> dict[float, Scrape]:
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


def test_a_failover_is_seen_under_karmadas_and_kubernetes_metric_names() -> None:
    seen = run_story()
    during, after = seen[100], seen[260]
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
