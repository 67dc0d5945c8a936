"""The CLI's commands against a real API server: HTTPS on a free loopback port, sqlite
store, bearer token, CA from the generated PKI — no controllers, so what the commands
print is exactly what they wrote or what a test put there.

Commands run in-process through typer's runner (the exit codes and output a user sees);
the server runs on its own thread and event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from fleetkeeper.api.apps import WorkloadRebalancer
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.work import ResourceBinding
from fleetkeeper.apiserver import (
    ApiServerApp,
    ServerThread,
    Tokens,
    build_app,
    ensure_certificates,
    write_kubeconfig,
)
from fleetkeeper.client.rest import RestClient
from fleetkeeper.clock import SystemClock
from fleetkeeper.cmd.main import app
from fleetkeeper.store import open_store

from .test_chart import read_svg

ADMIN = "cli-admin-token"
WIDE = {"COLUMNS": "250"}


class Cli:
    """Runs ``fleetkeeper …`` against the test server."""

    def __init__(self, kubeconfig: Path, files: Path) -> None:
        self.kubeconfig = kubeconfig
        self.files = files
        self.runner = CliRunner()

    def run(self, *args: str, stdin: str | None = None, kubeconfig: bool = True) -> Any:
        extra = ["--kubeconfig", str(self.kubeconfig)] if kubeconfig else []
        return self.runner.invoke(app, [*args, *extra], input=stdin, env=WIDE)

    def ok(self, *args: str, stdin: str | None = None) -> str:
        done = self.run(*args, stdin=stdin)
        assert done.exit_code == 0, f"fleetkeeper {' '.join(args)} failed ({done.exit_code}):\n{done.output}"
        return str(done.stdout)

    def write(self, name: str, text: str) -> str:
        path = self.files / name
        path.write_text(text)
        return str(path)

    def client(self) -> RestClient:
        return RestClient.from_kubeconfig(self.kubeconfig)


@pytest.fixture(scope="module")
def cli(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cli]:
    root = tmp_path_factory.mktemp("cli")
    clock = SystemClock()
    tls = ensure_certificates(root / "pki", clock=clock)

    @asynccontextmanager
    async def factory() -> AsyncIterator[ApiServerApp]:
        store = open_store(f"sqlite:///{root / 'state.db'}", clock=clock)
        try:
            yield build_app(store, clock=clock, tokens=Tokens(admin=ADMIN))
        finally:
            await store.close()

    server = ServerThread(factory, tls=tls).start()
    try:
        kubeconfig = write_kubeconfig(root / "kubeconfig", server.url, tls.ca_pem(), ADMIN)
        files = root / "files"
        files.mkdir()
        yield Cli(kubeconfig, files)
    finally:
        server.stop()


def table(output: str) -> list[list[str]]:
    return [line.split() for line in output.strip().splitlines()]


# --------------------------------------------------------------------------- join, get


def test_join_registers_push_and_pull_clusters_that_get_lists(cli: Cli) -> None:
    assert "cluster/m1 joined (Push, simulated://m1)" in cli.ok("join", "m1", "--member", "simulated://m1",
                                                                "--region", "eu-west")
    pulled = cli.ok("join", "m2", "--sync-mode", "Pull")
    assert "cluster/m2 joined (Pull)" in pulled and "fleetkeeper agent" in pulled
    rows = table(cli.ok("get", "clusters"))
    assert rows[0] == ["NAME", "MODE", "READY", "VERSION", "REGION", "TAINTS", "AGE"]
    assert [r[:5] for r in rows[1:]] == [["m1", "Push", "Unknown", "<none>", "eu-west"],
                                         ["m2", "Pull", "Unknown", "<none>", "<none>"]]
    wide = table(cli.ok("get", "cluster", "m1", "-o", "wide"))
    assert "API-ENDPOINT" in wide[0] and "simulated://m1" in wide[1]


def test_get_prints_yaml_and_json_like_kubectl(cli: Cli) -> None:
    cli.ok("join", "m3", "--member", "simulated://m3")
    one = yaml.safe_load(cli.ok("get", "cluster", "m3", "-o", "yaml"))
    assert one["kind"] == "Cluster" and one["spec"]["apiEndpoint"] == "simulated://m3"
    many = yaml.safe_load(cli.ok("get", "clusters", "-o", "json"))
    assert many["kind"] == "List" and "m3" in [c["metadata"]["name"] for c in many["items"]]


@pytest.mark.parametrize(("args", "words"), [
    (("join", "Bad_Name", "--member", "simulated://x"), "NAME"),
    (("join", "m9"), "--member"),
    (("join", "m9", "--member", "simulated://m9", "--sync-mode", "Both"), "--sync-mode"),
    (("get", "clustrs"), "unknown kind"),
    (("get", "clusters", "-o", "xml"), "--output"),
    (("taint", "m1", "k=v:Sometimes"), "NoSchedule or NoExecute"),
], ids=["an invalid cluster name", "a Push cluster without --member", "an unknown sync mode",
        "an unknown kind", "an unknown output", "an effect a Cluster does not take"])
def test_bad_input_exits_2_naming_it(cli: Cli, args: tuple[str, ...], words: str) -> None:
    done = cli.run(*args)
    assert done.exit_code == 2, done.output
    assert words in done.output


def test_joining_twice_fails_with_exit_1(cli: Cli) -> None:
    cli.ok("join", "twice", "--member", "simulated://twice")
    done = cli.run("join", "twice", "--member", "simulated://twice")
    assert done.exit_code == 1 and "already joined" in done.stderr


# --------------------------------------------------------------------------- taints


def _taints(cli: Cli, name: str) -> list[tuple[str, str | None, str]]:
    cluster = yaml.safe_load(cli.ok("get", "cluster", name, "-o", "yaml"))
    return [(t["key"], t.get("value"), t["effect"]) for t in cluster["spec"].get("taints") or []]


def test_cordon_and_uncordon(cli: Cli) -> None:
    cli.ok("join", "c1", "--member", "simulated://c1")
    assert "cluster/c1 cordoned" in cli.ok("cordon", "c1")
    assert _taints(cli, "c1") == [("cluster.karmada.io/unschedulable", None, "NoSchedule")]
    assert "already cordoned" in cli.ok("cordon", "c1")
    assert "TAINTS" in cli.ok("get", "clusters") and "cluster.karmada.io/unschedulable:NoSchedule" in cli.ok(
        "get", "cluster", "c1")
    assert "cluster/c1 uncordoned" in cli.ok("uncordon", "c1")
    assert _taints(cli, "c1") == []
    assert "not cordoned" in cli.ok("uncordon", "c1")


def test_taint_adds_overwrites_and_removes(cli: Cli) -> None:
    cli.ok("join", "t1", "--member", "simulated://t1")
    cli.ok("taint", "t1", "dedicated=gpu:NoSchedule", "maintenance:NoExecute")
    assert _taints(cli, "t1") == [("dedicated", "gpu", "NoSchedule"), ("maintenance", None, "NoExecute")]
    refused = cli.run("taint", "t1", "dedicated=cpu:NoSchedule")
    assert refused.exit_code == 1 and "--overwrite" in refused.stderr
    cli.ok("taint", "t1", "dedicated=cpu:NoSchedule", "--overwrite")
    cli.ok("taint", "t1", "maintenance-")
    assert _taints(cli, "t1") == [("dedicated", "cpu", "NoSchedule")]
    gone = cli.run("taint", "t1", "maintenance-")
    assert gone.exit_code == 1 and "not found" in gone.stderr
    missing = cli.run("taint", "nowhere", "a:NoSchedule")
    assert missing.exit_code == 1 and "(NotFound)" in missing.stderr
    logged = table(cli.ok("get", "timeline", "--field-selector", "subject.kind=Cluster,subject.name=t1"))
    assert [row[3:5] for row in logged[1:]] == [["TaintAdded", "Manual"], ["TaintAdded", "Manual"],
                                                ["TaintAdded", "Manual"], ["TaintRemoved", "Manual"]]
    assert "taint maintenance removed by hand" in " ".join(logged[-1])


def test_taint_takes_karmadactls_form_and_answers_in_its_words(cli: Cli) -> None:
    cli.ok("join", "member1", "--member", "simulated://member1")
    tainted = cli.ok("taint", "clusters", "member1", "dedicated=special:NoSchedule")
    assert tainted == "cluster/member1 tainted\n"
    assert _taints(cli, "member1") == [("dedicated", "special", "NoSchedule")]
    again = cli.run("taint", "clusters", "member1", "dedicated=other:NoSchedule")
    assert again.exit_code == 1
    assert ("cluster member1 already has dedicated taint(s) with same effect(s) and --overwrite is false"
            in again.stderr)
    assert "modified" in cli.ok("taint", "clusters", "member1", "dedicated=other:NoSchedule", "--overwrite")
    assert _taints(cli, "member1") == [("dedicated", "other", "NoSchedule")]
    assert cli.ok("taint", "cluster/member1", "dedicated:NoSchedule-") == "cluster/member1 untainted\n"
    gone = cli.run("taint", "clusters", "member1", "dedicated-")
    assert gone.exit_code == 1 and 'taint "dedicated" not found' in gone.stderr
    mixed = cli.run("taint", "clusters", "member1", "k:NoSchedule", "k-")
    assert mixed.exit_code == 2 and "can not both modify and remove" in mixed.output


# --------------------------------------------------------------------------- apply, delete

DEPLOY = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {app: web}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {clusterAffinity: {clusterNames: [m1]}}
"""


def test_apply_creates_then_leaves_alone_then_configures(cli: Cli) -> None:
    path = cli.write("web.yaml", DEPLOY)
    assert cli.ok("apply", "-f", path).splitlines() == [
        "deployment.apps/web created", "propagationpolicy.policy.karmada.io/web created"]
    assert cli.ok("apply", "-f", path).splitlines() == [
        "deployment.apps/web unchanged", "propagationpolicy.policy.karmada.io/web unchanged"]
    changed = cli.ok("apply", "-f", "-", stdin=DEPLOY.replace("replicas: 2", "replicas: 5"))
    assert changed.splitlines()[0] == "deployment.apps/web configured"
    stored = yaml.safe_load(cli.ok("get", "deploy", "web", "-n", "default", "-o", "yaml"))
    assert stored["spec"]["replicas"] == 5 and stored["metadata"]["namespace"] == "default"
    rows = table(cli.ok("get", "deploy", "-A"))
    assert rows[0][:2] == ["NAMESPACE", "NAME"] and rows[1][:2] == ["default", "web"]


@pytest.mark.parametrize(("text", "words"), [
    ("kind: ConfigMap\nmetadata: {name: x}\n", "document 2: apiVersion: Required value"),
    ("apiVersion: v1\nkind: ConfigMap\n", "document 2: metadata.name: Required value"),
    ("- a list\n", "document 2: expected an object"),
    ("a: [b\n", "invalid YAML"),
], ids=["no apiVersion", "no name", "not an object", "broken YAML"])
def test_apply_of_a_broken_file_sends_nothing_and_exits_2(cli: Cli, text: str, words: str) -> None:
    valid = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: never-sent\n---\n"
    done = cli.run("apply", "-f", cli.write("broken.yaml", valid + text))
    assert done.exit_code == 2 and words in done.stderr and "broken.yaml" in done.stderr
    assert cli.run("get", "cm", "never-sent").exit_code == 1


def test_apply_of_nothing_or_of_a_missing_file_exits_2(cli: Cli) -> None:
    empty = cli.run("apply", "-f", cli.write("empty.yaml", "---\n"))
    assert empty.exit_code == 2 and "no objects to apply" in empty.stderr
    missing = cli.run("apply", "-f", str(cli.files / "absent.yaml"))
    assert missing.exit_code == 2 and "cannot read" in missing.stderr


def test_apply_reports_what_the_server_refuses_with_the_field(cli: Cli) -> None:
    bad = DEPLOY.split("---\n")[1].replace("name: web", "name: bad-policy", 1) + (
        "  failover:\n    application:\n      decisionConditions: {tolerationSeconds: 10}\n"
        "      purgeMode: Sometimes\n")
    done = cli.run("apply", "-f", cli.write("bad.yaml", bad))
    assert done.exit_code == 2
    assert "Error from server (Invalid)" in done.stderr
    assert "spec.failover.application.purgeMode" in done.stderr


def test_delete_removes_an_object_and_a_missing_one_fails(cli: Cli) -> None:
    config = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: doomed}\ndata: {a: b}\n"
    cli.ok("apply", "-f", "-", stdin=config)
    assert 'configmap "doomed" deleted' in cli.ok("delete", "cm", "doomed", "--wait")
    again = cli.run("delete", "cm", "doomed")
    assert again.exit_code == 1 and "(NotFound)" in again.stderr


def test_unjoin_removes_a_cluster(cli: Cli) -> None:
    cli.ok("join", "leaving", "--member", "simulated://leaving")
    assert "cluster/leaving unjoined" in cli.ok("unjoin", "leaving")
    assert cli.run("get", "cluster", "leaving").exit_code == 1


# --------------------------------------------------------------------------- describe

BINDING = """\
apiVersion: work.karmada.io/v1alpha2
kind: ResourceBinding
metadata: {name: web-deployment, namespace: default}
spec:
  resource: {apiVersion: apps/v1, kind: Deployment, namespace: default, name: web}
  replicas: 3
  schedulePriority: {priority: 100000}
  clusters: [{name: m3, replicas: 3}]
  placement:
    clusterAffinity: {clusterNames: [m1, m3]}
  gracefulEvictionTasks:
  - {fromCluster: m1, reason: TaintUntolerated, producer: TaintManager, purgeMode: Gracefully}
"""


def _entry(name: str, time: str, kind: str, subject: str, action: str, message: str,
           namespace: str | None = None) -> str:
    ns = f", namespace: {namespace}" if namespace else ""
    api = "work.karmada.io/v1alpha2" if kind == "ResourceBinding" else "cluster.karmada.io/v1alpha1"
    return (f"---\napiVersion: fleetkeeper.io/v1alpha1\nkind: TimelineEntry\nmetadata: {{name: {name}}}\n"
            f"time: '{time}'\nsubject: {{apiVersion: {api}, kind: {kind}, name: {subject}{ns}}}\n"
            f"action: {action}\nmessage: '{message}'\ncomponent: test\n")


TIMELINE = "".join([
    _entry("tl-3", "2026-01-01T10:02:00Z", "ResourceBinding", "web-deployment", "Scheduled",
           "scheduled to {m3:3} (was {m1:1, m3:2})", "default"),
    _entry("tl-1", "2026-01-01T10:00:00Z", "Cluster", "m1", "ConditionChanged",
           "Ready=False (ClusterNotReachable)"),
    _entry("tl-2", "2026-01-01T10:01:00Z", "ResourceBinding", "web-deployment", "EvictionStarted",
           "evicted from m1 (TaintUntolerated, Gracefully)", "default"),
    _entry("tl-x", "2026-01-01T09:00:00Z", "ResourceBinding", "web-deployment", "Scheduled",
           "a binding in another namespace", "other"),
])


def test_describe_binding_explains_placement_health_and_the_timeline_in_order(cli: Cli) -> None:
    cli.ok("apply", "-f", cli.write("binding.yaml", BINDING + TIMELINE))

    async def report_health() -> None:
        async with cli.client() as client:
            rb = await client.get(ResourceBinding, "web-deployment", "default")
            rb.status = rb.status.model_validate({"aggregatedStatus": [
                {"clusterName": "m3", "applied": True, "health": "Healthy", "status": {"readyReplicas": 3}}]})
            await client.update_status(rb)

    asyncio.run(report_health())
    out = cli.ok("describe", "binding", "default/web-deployment")
    assert "Resource:" in out and "apps/v1 Deployment default/web" in out
    assert "m3:3" in out and "Health:" in out and "Healthy" in out
    assert "Priority:" in out and "100000 (schedulePriority" in out
    tasks = out.split("Eviction tasks:")[1]
    assert "m1" in tasks and "TaintUntolerated" in tasks and "TaintManager" in tasks
    timeline = out.split("Failover timeline (oldest first):")[1].splitlines()
    messages = [line for line in timeline if "2026-01-01" in line]
    assert "Ready=False" in messages[0]
    assert "evicted from m1" in messages[1]
    assert "scheduled to" in messages[2]
    assert len(messages) == 3, "an entry about another namespace's binding crept in"
    assert "Cluster/m1" in messages[0] and "ResourceBinding/default/web-deployment" in messages[1]
    same = cli.ok("describe", "rb", "web-deployment", "-n", "default")
    assert same.split("Failover timeline")[1] == out.split("Failover timeline")[1]


def test_describe_binding_chart_draws_its_replicas_per_cluster_from_its_timeline(cli: Cli) -> None:
    cli.ok("apply", "-f", cli.write("binding.yaml", BINDING + TIMELINE))
    out = cli.files / "web.svg"
    cli.ok("describe", "binding", "default/web-deployment", "--chart", str(out))
    series, marks = read_svg(out)
    assert series == {"m1": [(0, 1), (120, 0)], "m3": [(0, 2), (120, 3)]}
    assert marks == [("down", "m1", 0), ("evicted", "m1", 60)]
    refused = cli.run("describe", "cluster", "m1", "--chart", str(out))
    assert refused.exit_code == 2 and "--chart" in refused.output


def _joined(cli: Cli, name: str, *flags: str) -> None:
    """Join ``name`` unless an earlier test of the module did (so a test also runs alone)."""
    if cli.run("get", "cluster", name).exit_code != 0:
        cli.ok("join", name, *flags)


def test_describe_cluster_shows_taints_workloads_evictions_and_its_timeline(cli: Cli) -> None:
    _joined(cli, "m1", "--member", "simulated://m1", "--region", "eu-west")
    _joined(cli, "m2", "--sync-mode", "Pull")
    cli.ok("apply", "-f", cli.write("binding.yaml", BINDING + TIMELINE))
    cli.ok("taint", "m1", "maintenance:NoExecute")
    out = cli.ok("describe", "cluster", "m1")
    assert "Mode:" in out and "Push" in out and "simulated://m1" in out and "region eu-west" in out
    assert "maintenance" in out.split("Taints:")[1].split("Workloads")[0]
    assert "default/web-deployment" in out.split("Eviction tasks away from here:")[1]
    assert "Ready=False (ClusterNotReachable)" in out.split("Failover timeline")[1]
    pull = cli.ok("describe", "cluster", "m2")
    assert "Heartbeat:" in pull and "never renewed" in pull
    assert "Fault drills:" not in out + pull

    async def drill() -> None:  # what `fleetkeeper fault` writes
        async with cli.client() as client:
            await client.patch(Cluster, "m1", patch={"metadata": {"annotations": {
                "faults.fleetkeeper.io/api": "down",
                "faults.fleetkeeper.io/crashed-workloads": '[{"kind":"Deployment","name":"web"}]'}}})

    asyncio.run(drill())
    drilled = cli.ok("describe", "cluster", "m1")
    fields = [line.split(None, 2) for line in drilled.splitlines() if line.startswith("Fault drills:")]
    assert fields == [["Fault", "drills:",
                       'api=down, crashed-workloads=[{"kind":"Deployment","name":"web"}]']]

    async def clusters() -> list[str]:
        async with cli.client() as client:
            return [c.name for c in (await client.list(Cluster)).items]

    assert "m1" in asyncio.run(clusters())


def test_describe_refuses_other_kinds_and_a_missing_object_fails(cli: Cli) -> None:
    assert cli.run("describe", "deploy", "web").exit_code == 2
    assert cli.run("describe", "cluster", "ns/m1").exit_code == 2
    missing = cli.run("describe", "binding", "default/nothing")
    assert missing.exit_code == 1 and "(NotFound)" in missing.stderr


# --------------------------------------------------------------------------- reaching the server


def test_without_any_kubeconfig_the_error_says_what_to_do(cli: Cli, tmp_path: Path) -> None:
    done = cli.runner.invoke(app, ["get", "clusters"],
                             env={**WIDE, "KUBECONFIG": "", "XDG_STATE_HOME": str(tmp_path)})
    assert done.exit_code == 2
    assert "no kubeconfig found" in done.stderr and "fleetkeeper up" in done.stderr


def test_an_unreachable_server_is_exit_1_with_a_hint(cli: Cli, tmp_path: Path) -> None:
    from fleetkeeper.apiserver import bind

    sock = bind("127.0.0.1", 0)
    port = sock.getsockname()[1]
    sock.close()  # nobody listens there any more
    ca = (cli.kubeconfig.parent / "pki" / "ca.crt").read_bytes()
    dead = write_kubeconfig(tmp_path / "dead", f"https://127.0.0.1:{port}", ca, ADMIN)
    done = cli.runner.invoke(app, ["get", "clusters", "--kubeconfig", str(dead)], env=WIDE)
    assert done.exit_code == 1
    assert "cannot reach the API server" in done.stderr and "fleetkeeper up" in done.stderr


def test_a_wrong_token_is_unauthorized(cli: Cli, tmp_path: Path) -> None:
    ca = (cli.kubeconfig.parent / "pki" / "ca.crt").read_bytes()
    server = yaml.safe_load(cli.kubeconfig.read_text())["clusters"][0]["cluster"]["server"]
    wrong = write_kubeconfig(tmp_path / "wrong", server, ca, "not-the-token")
    done = cli.runner.invoke(app, ["get", "clusters", "--kubeconfig", str(wrong)], env=WIDE)
    assert done.exit_code == 1 and "(Unauthorized)" in done.stderr


WORKED = """\
apiVersion: v1
kind: Namespace
metadata: {name: karmada-es-w1}
---
apiVersion: work.karmada.io/v1alpha2
kind: ResourceBinding
metadata:
  name: api-deployment
  namespace: default
  labels: {resourcebinding.karmada.io/permanent-id: rb-api}
spec:
  resource: {apiVersion: apps/v1, kind: Deployment, namespace: default, name: api}
  clusters: [{name: w1, replicas: 1}]
---
apiVersion: work.karmada.io/v1alpha1
kind: Work
metadata:
  name: api-5d8b9c7f6
  namespace: karmada-es-w1
  labels: {resourcebinding.karmada.io/permanent-id: rb-api}
  annotations:
    policy.karmada.io/applied-cluster-overrides: '[{"policyName":"regional-registry","overriders":{}}]'
    policy.karmada.io/applied-overrides: '[{"policyName":"api-tuning","overriders":{}}]'
spec: {workload: {manifests: []}}
"""


def test_describe_binding_names_the_override_policies_applied_to_each_work(cli: Cli) -> None:
    cli.ok("apply", "-f", cli.write("worked.yaml", WORKED))
    out = cli.ok("describe", "binding", "default/api-deployment")
    works = out.split("Works")[1].splitlines()
    header = next(line for line in works if "NAMESPACE" in line)
    assert header.split() == ["NAMESPACE", "NAME", "APPLIED", "HEALTH", "OVERRIDES"]
    row = next(line for line in works if "api-5d8b9c7f6" in line)
    assert row.split()[-2:] == ["regional-registry,", "api-tuning"]


def test_rebalance_creates_a_workload_rebalancer_for_the_named_workloads(cli: Cli) -> None:
    out = cli.ok("rebalance", "deploy/web", "clusterrole/viewer", "-n", "default", "--ttl", "10m",
                 "--no-wait")
    assert out.startswith("workloadrebalancer.apps.karmada.io/rebalance-") and out.strip().endswith("created")
    name = out.split("/", 1)[1].split()[0]

    async def stored() -> WorkloadRebalancer:
        async with cli.client() as client:
            return await client.get(WorkloadRebalancer, name)

    rebalancer = asyncio.run(stored())
    assert [w.to_dict() for w in rebalancer.spec.workloads] == [
        {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "namespace": "default"},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "name": "viewer"}]
    assert rebalancer.spec.ttl_seconds_after_finished == 600
    # no control plane runs here: waiting for the result ends with a clear error
    waited = cli.run("rebalance", "deploy/web", "--timeout", "1s")
    assert waited.exit_code == 1 and "has not finished after 1s" in waited.stderr


@pytest.mark.parametrize(("args", "words"), [
    (("rebalance", "nginx"), "KIND/NAME"),
    (("rebalance", "widgets/x"), "unknown kind"),
    (("rebalance", "deploy/web", "--ttl", "soon"), "--ttl"),
], ids=["no kind", "an unknown kind", "a bad TTL"])
def test_rebalance_refuses_bad_input_naming_it(cli: Cli, args: tuple[str, ...], words: str) -> None:
    done = cli.run(*args)
    assert done.exit_code == 2 and words in done.output
