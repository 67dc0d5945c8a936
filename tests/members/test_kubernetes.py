"""The kubernetes member backend: the Member conformance suite over HTTPS against
``fleetkeeper member-sim`` (a simulated cluster behind a Kubernetes API, in its own
process), and what only a network member has — kubeconfig URLs, credentials from a
Secret, a rotated token, a black hole, discovery of kinds.

One member-sim process serves the tests of this module (starting one costs ~2 s); each
conformance body gets a fresh client, the member is brought back up after it, and the
conformance namespace is created before each body and deleted after it, so every body
starts from an empty namespace. Like a real cluster, member-sim has no namespace the
client did not create: an object of another namespace is refused.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
import yaml

from fleetkeeper import errors
from fleetkeeper.apiserver.certs import ensure_certificates
from fleetkeeper.clock import SystemClock
from fleetkeeper.members import open_member
from fleetkeeper.members.interface import Member, ObjectRef, bounded
from fleetkeeper.members.kubernetes import Credentials, KubernetesMember, default_kubeconfig, parse_kube_url
from fleetkeeper.members.kubernetes_pool import KubernetesMembers, credentials_from_secret
from fleetkeeper.members.kubernetes_summary import node_summary, resource_summary
from fleetkeeper.members.testing import NAMESPACE, Body, MemberConformance

from .member_sim import MemberSim

T = TypeVar("T")
#: bound on one test body (seconds of real time)
BODY = 60.0


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemberSim]:
    member = MemberSim(tmp_path_factory.mktemp("member-sim"), "member1")
    try:
        member.wait()
        yield member
    finally:
        assert member.stop() == 0, member.err.read_text()


def run(main: Callable[[], Awaitable[T]]) -> T:
    """Run a coroutine to completion, bounded by :data:`BODY` seconds."""
    async def bounded_main() -> T:
        async with asyncio.timeout(BODY):
            return await main()

    return asyncio.run(bounded_main())


def namespace(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


class TestKubernetesMember(MemberConformance):
    @pytest.fixture(autouse=True)
    def _member_sim(self, sim: MemberSim) -> None:
        self.sim = sim

    def run(self, body: Body) -> None:
        async def main() -> None:
            member = KubernetesMember.from_kubeconfig(self.sim.kubeconfig, name="conformance")
            try:
                await member.apply(namespace(NAMESPACE))
                await body(member, SystemClock())
            finally:
                self.sim.set_state("up")
                await member.delete(ObjectRef("v1", "Namespace", "", NAMESPACE))
                await member.close()

        run(main)

    async def take_down(self, member: Member) -> None:
        self.sim.set_state("down")

    async def bring_up(self, member: Member) -> None:
        self.sim.set_state("up")


# ----------------------------------------------------------------------------- member URLs
@pytest.mark.parametrize("url, expected", [
    ("kube://kind-dev", (None, "kind-dev")),
    ("kube://", (None, None)),
    ("kube:///etc/fleet/member1.kubeconfig#member1", (Path("/etc/fleet/member1.kubeconfig"), "member1")),
    ("kube:///etc/fleet/member1.kubeconfig", (Path("/etc/fleet/member1.kubeconfig"), None)),
    ("kube://arn%3Aaws%3Aeks%3Aeu-west-1%3A1%3Acluster%2Fprod",
     (None, "arn:aws:eks:eu-west-1:1:cluster/prod")),
], ids=[
    "a context of the default kubeconfig", "the current context of the default kubeconfig",
    "a context of a given file", "the current context of a given file", "an escaped context name",
])
def test_kube_urls_name_a_kubeconfig_and_a_context(url: str,
                                                    expected: tuple[Path | None, str | None]) -> None:
    assert parse_kube_url(url) == expected


@pytest.mark.parametrize("url", ["kube://ctx#other", "kube://ctx?timeout=3", "https://example.org"],
                         ids=["a context with a fragment", "parameters", "not a kube URL"])
def test_malformed_kube_urls_are_refused(url: str) -> None:
    with pytest.raises(ValueError):
        parse_kube_url(url)


def test_open_member_reads_the_kubeconfig_at_once(sim: MemberSim, tmp_path: Path) -> None:
    member = open_member(f"kube://{sim.kubeconfig}#member1", clock=SystemClock())
    assert isinstance(member, KubernetesMember) and member.name == "member1"
    with pytest.raises(ValueError, match="Context 'nope' not found"):
        open_member(f"kube://{sim.kubeconfig}#nope", clock=SystemClock())
    with pytest.raises(ValueError, match="not found"):
        open_member(f"kube://{tmp_path / 'missing'}#member1", clock=SystemClock())


def test_the_default_kubeconfig_is_the_first_existing_file_of_KUBECONFIG(tmp_path: Path) -> None:
    present = tmp_path / "b.kubeconfig"
    present.write_text("{}")
    listed = f"{tmp_path / 'a.kubeconfig'}:{present}"
    assert default_kubeconfig({"KUBECONFIG": listed}) == present
    assert default_kubeconfig({}) == Path("~/.kube/config").expanduser()


def test_a_kube_url_reaches_the_member(sim: MemberSim) -> None:
    async def main() -> tuple[int, str]:
        member = open_member(f"kube://{sim.kubeconfig}", clock=SystemClock())
        try:
            return await member.probe("/readyz"), (await member.summary()).kubernetes_version
        finally:
            await member.close()

    assert run(main) == (200, "v1.31.0")


# ----------------------------------------------------------------------------- credentials
def secret_of(sim: MemberSim, token: str | None = None) -> dict[str, Any]:
    encode = base64.b64encode
    meta = {"name": sim.name, "namespace": "karmada-cluster"}
    return {"apiVersion": "v1", "kind": "Secret", "metadata": meta,
            "data": {"token": encode((token or sim.token).encode()).decode(),
                     "caBundle": encode(sim.ca.read_bytes()).decode()}}


def test_a_cluster_secret_decodes_to_credentials(sim: MemberSim) -> None:
    credentials = credentials_from_secret(secret_of(sim), insecure_skip_tls_verify=True)
    assert credentials.token == sim.token and credentials.ca_bundle == sim.ca.read_bytes()
    assert credentials.insecure_skip_tls_verify and sim.token not in repr(credentials)
    assert credentials_from_secret({"stringData": {"token": "abc"}}) == Credentials(token="abc")
    with pytest.raises(ValueError, match="'token' is not base64"):
        credentials_from_secret({"data": {"token": "not base64!"}})


def test_the_pool_builds_members_from_endpoints_and_asks_again_for_a_refused_token(sim: MemberSim) -> None:
    tokens = ["wrong-token", sim.token]
    asked: list[str] = []

    async def credentials(cluster: str) -> Credentials:
        asked.append(cluster)
        return credentials_from_secret(secret_of(sim, tokens[min(len(asked), 2) - 1]))

    async def main() -> None:
        pool = KubernetesMembers(credentials, clock=SystemClock())
        try:
            member = pool.member("member1", sim.url)
            assert pool.member("member1", sim.url) is member and asked == []  # lazy: nothing read yet
            with pytest.raises(errors.Unauthorized):
                await member.list("v1", "Node")
            nodes = await member.list("v1", "Node")  # the rotated token is read again
            assert [n["metadata"]["name"] for n in nodes] == [f"member1-node-{i:03d}" for i in range(3)]
            assert asked == ["member1", "member1"]
            kube = pool.member("member1", f"kube://{sim.kubeconfig}")
            assert kube is not member and await kube.probe("/healthz") == 200
            with pytest.raises(errors.MemberUnreachable, match="not an https:// or kube:// URL"):
                pool.member("member2", "simulated://member2")
        finally:
            await pool.close()

    run(main)


def test_a_wrong_ca_is_a_transport_failure_unless_verification_is_skipped(sim: MemberSim,
                                                                           tmp_path: Path) -> None:
    foreign = ensure_certificates(tmp_path / "pki", clock=SystemClock()).ca_pem()  # another CA

    async def probe(insecure: bool) -> int:
        async def credentials() -> Credentials:
            return Credentials(token=sim.token, ca_bundle=foreign, insecure_skip_tls_verify=insecure)

        member = KubernetesMember.from_endpoint("member1", sim.url, credentials)
        try:
            return await member.probe("/readyz")
        finally:
            await member.close()

    with pytest.raises(errors.MemberUnreachable, match="CERTIFICATE_VERIFY_FAILED"):
        run(lambda: probe(False))
    assert run(lambda: probe(True)) == 200


# ----------------------------------------------------------------------------- faults
def test_a_black_hole_is_a_timeout_and_an_unhealthy_member_answers_500(sim: MemberSim) -> None:
    async def main() -> None:
        member = KubernetesMember.from_kubeconfig(sim.kubeconfig, timeout=1.0)
        try:
            assert await member.probe("/readyz") == 200  # a pooled connection exists
            sim.set_state("blackhole")
            for call in (member.probe("/readyz"), member.list("v1", "ConfigMap")):
                with pytest.raises(errors.MemberTimeout):
                    await call
            with pytest.raises(errors.MemberTimeout):
                await bounded(member.summary(), 0.5, member.name)
            sim.set_state("unhealthy")
            assert await member.probe("/readyz") == 500
            assert await member.probe("/healthz") == 500
            sim.set_state("up")
            assert await member.probe("/readyz") == 200
        finally:
            sim.set_state("up")
            await member.close()

    run(main)


def test_a_watch_breaks_with_member_unreachable_when_the_member_goes_down(sim: MemberSim) -> None:
    async def main() -> None:
        member = KubernetesMember.from_kubeconfig(sim.kubeconfig)
        stream = member.watch("v1", "Node")
        try:
            first = await anext(stream)
            assert first.type == "ADDED"
            for _ in range(2):
                await anext(stream)
            sim.set_state("down")
            with pytest.raises(errors.MemberUnreachable):
                await asyncio.wait_for(anext(stream), 10)
        finally:
            sim.set_state("up")
            with contextlib.suppress(Exception):
                await stream.aclose()  # type: ignore[attr-defined]
            await member.close()

    run(main)


def test_a_watch_told_410_lists_again_and_reports_only_the_difference(sim: MemberSim) -> None:
    def labelled(name: str, value: str = "v") -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": value},
                "metadata": {"name": name, "namespace": "relist", "labels": {"relist": "yes"}}}

    async def main() -> list[tuple[str, str, str]]:
        member = KubernetesMember.from_kubeconfig(sim.kubeconfig)
        stream = member.watch("v1", "ConfigMap", label_selector="relist=yes")
        try:
            await member.apply(namespace("relist"))
            for name in ("a", "b", "unchanged"):
                await member.apply(labelled(name))
            seen = [(e.type, e.object["metadata"]["name"]) for e in [await anext(stream) for _ in range(3)]]
            assert seen == [("ADDED", "a"), ("ADDED", "b"), ("ADDED", "unchanged")]
            sim.compact()  # the watch ends; resuming from its revision will be refused
            await member.apply(labelled("a", "changed"))
            await member.delete(ObjectRef("v1", "ConfigMap", "relist", "b"))
            await member.apply(labelled("c"))
            events = [await asyncio.wait_for(anext(stream), 10) for _ in range(3)]
            return [(e.type, e.object["metadata"]["name"], e.object["data"]["k"]) for e in events]
        finally:
            await stream.aclose()  # type: ignore[attr-defined]
            await member.delete(ObjectRef("v1", "Namespace", "", "relist"))
            await member.close()

    assert run(main) == [("MODIFIED", "a", "changed"), ("ADDED", "c", "v"), ("DELETED", "b", "v")]


def test_an_object_of_a_namespace_the_member_lacks_is_refused_until_the_namespace_exists(
        sim: MemberSim) -> None:
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": "v"},
                  "metadata": {"name": "early", "namespace": "not-yet"}}

    async def main() -> None:
        member = KubernetesMember.from_kubeconfig(sim.kubeconfig)
        try:
            with pytest.raises(errors.NotFound, match='namespaces "not-yet" not found') as refused:
                await member.apply(config_map)
            assert (refused.value.kind, refused.value.name) == ("namespaces", "not-yet")
            assert await member.get(ObjectRef("v1", "Namespace", "", "not-yet")) is None
            await member.apply(namespace("not-yet"))
            assert (await member.apply(config_map))["metadata"]["namespace"] == "not-yet"
        finally:
            await member.delete(ObjectRef("v1", "Namespace", "", "not-yet"))
            await member.close()

    run(main)


# ----------------------------------------------------------------------------- kinds and summary
def test_kinds_are_found_by_discovery_and_an_unserved_kind_is_absent(sim: MemberSim) -> None:
    schema = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "widgets.example.io"},
           "spec": {"group": "example.io", "scope": "Cluster",
                    "names": {"kind": "Widget", "plural": "widgets"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": schema}]}}
    widget = {"apiVersion": "example.io/v1", "kind": "Widget", "metadata": {"name": "w1"},
              "spec": {"size": 3}}

    async def main() -> None:
        member = KubernetesMember.from_kubeconfig(sim.kubeconfig)
        try:
            assert await member.get(ObjectRef("example.io/v1", "Widget", "", "w1")) is None
            assert await member.list("example.io/v1", "Widget") == []
            with pytest.raises(errors.NotFound, match="does not serve Widget"):
                await member.apply(widget)
            await member.apply(crd)
        finally:
            await member.close()
        member = KubernetesMember.from_kubeconfig(sim.kubeconfig)  # a new client discovers the new kind
        try:
            live = await member.apply({**widget, "metadata": {"name": "w1", "namespace": "ignored"}})
            assert "namespace" not in live["metadata"] and live["spec"] == {"size": 3}
            summary = await member.summary()
            groups = {g["groupVersion"]: g["resources"] for g in summary.api_enablements}
            assert groups["example.io/v1"] == [{"name": "widgets", "kind": "Widget"}]
            assert {"name": "deployments", "kind": "Deployment"} in groups["apps/v1"]
            assert all("/" not in r["name"] for resources in groups.values() for r in resources)
            assert await member.delete(ObjectRef("example.io/v1", "Widget", "", "w1")) is True
        finally:
            await member.delete(ObjectRef("apiextensions.k8s.io/v1", "CustomResourceDefinition", "",
                                          "widgets.example.io"))
            await member.close()

    run(main)


def test_the_summary_counts_nodes_and_pod_requests(sim: MemberSim) -> None:
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment",
                  "metadata": {"name": "sized", "namespace": NAMESPACE},
                  "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "sized"}},
                           "template": {"metadata": {"labels": {"app": "sized"}}, "spec": {"containers": [
                               {"name": "main", "image": "app:v1",
                                "resources": {"requests": {"cpu": "250m", "memory": "64Mi"}}}]}}}}

    async def main() -> None:
        member = KubernetesMember.from_kubeconfig(sim.kubeconfig)
        try:
            await member.apply(namespace(NAMESPACE))
            await member.apply(deployment)
            summary = await member.summary()
            assert summary.node_summary == {"totalNum": 3, "readyNum": 3}
            assert summary.resource_summary["allocated"] == {"cpu": "500m", "memory": "128Mi", "pods": "2"}
            sim.set_nodes(5)
            assert (await member.summary()).node_summary == {"totalNum": 5, "readyNum": 5}
        finally:
            sim.set_nodes(3)
            await member.delete(ObjectRef("v1", "Namespace", "", NAMESPACE))
            await member.close()

    run(main)


def _pod(node: str | None, phase: str, cpu: str) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}
    if node:
        spec["nodeName"] = node
    return {"spec": spec, "status": {"phase": phase}}


def test_resource_summary_splits_pods_by_binding_and_phase() -> None:
    nodes = [{"status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                         "conditions": [{"type": "Ready", "status": "True"}]}},
             {"status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "110"},
                         "conditions": [{"type": "Ready", "status": "False"}]}}]
    pods = [_pod(None, "Pending", "100m"), _pod("n1", "Running", "1"), _pod("n1", "Succeeded", "2"),
            _pod("n2", "Failed", "3")]
    assert node_summary(nodes) == {"totalNum": 2, "readyNum": 1}
    assert resource_summary(nodes, pods) == {
        "allocatable": {"cpu": "6", "memory": "12Gi", "pods": "220"},
        "allocating": {"cpu": "100m", "memory": "0", "pods": "1"},
        "allocated": {"cpu": "1", "memory": "0", "pods": "1"},
    }


def test_the_kubeconfig_member_sim_writes_verifies_the_server(sim: MemberSim) -> None:
    config = yaml.safe_load(sim.kubeconfig.read_text())
    cluster = config["clusters"][0]["cluster"]
    assert cluster["server"] == sim.url and "insecure-skip-tls-verify" not in cluster
    assert base64.b64decode(cluster["certificate-authority-data"]) == sim.ca.read_bytes()
    assert oct(sim.kubeconfig.stat().st_mode & 0o777) == "0o600"
