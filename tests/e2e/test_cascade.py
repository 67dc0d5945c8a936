"""``kubectl delete --cascade=orphan|foreground`` on a propagated workload, with the real
kubectl against ``fleetkeeper up`` (every controller, simulated members)."""

from __future__ import annotations

import json
import time

from .test_up import Fleet, fleet, ready_clusters, wait_for, workload

__all__ = ["fleet"]  # the fixture, shared with test_up

WEIGHTS = {"member1": 1, "member2": 1}


def applied_everywhere(fleet: Fleet, name: str) -> bool:
    got = fleet.kubectl("get", "rb", f"{name}-deployment", "-n", "default", "-o", "json")
    if got.returncode != 0:
        return False
    items = json.loads(got.stdout).get("status", {}).get("aggregatedStatus") or []
    return sorted(i["clusterName"] for i in items if i.get("applied")) == sorted(WEIGHTS)


def works_of(fleet: Fleet, name: str) -> list[str]:
    found = json.loads(fleet.kubectl_ok("get", "works", "-A", "-o", "json"))["items"]
    return sorted(w["metadata"]["namespace"] for w in found if w["metadata"]["name"].startswith(f"{name}-"))


def test_orphan_keeps_the_binding_and_its_copies_and_foreground_waits_for_them(fleet: Fleet) -> None:
    fleet.up("--clusters", "2")
    wait_for(lambda: ready_clusters(fleet) == {"member1": "True", "member2": "True"}, "both members Ready")

    fleet.kubectl_ok("apply", "-f", "-", stdin=workload("kept", 2, WEIGHTS))
    wait_for(lambda: applied_everywhere(fleet, "kept"), "kept applied in both members")
    fleet.kubectl_ok("delete", "deployment", "kept", "--cascade=orphan")
    time.sleep(3)  # the detector removes an owned binding within a second; this one it must leave
    rb = json.loads(fleet.kubectl_ok("get", "rb", "kept-deployment", "-n", "default", "-o", "json"))
    assert "ownerReferences" not in rb["metadata"], rb["metadata"]
    assert works_of(fleet, "kept") == ["karmada-es-member1", "karmada-es-member2"]

    fleet.kubectl_ok("apply", "-f", "-", stdin=workload("fg", 2, WEIGHTS))
    wait_for(lambda: applied_everywhere(fleet, "fg"), "fg applied in both members")
    fleet.kubectl_ok("delete", "deployment", "fg", "--cascade=foreground", "--timeout=60s")
    assert fleet.kubectl("get", "rb", "fg-deployment", "-n", "default").returncode == 1, "gone before it"
    assert works_of(fleet, "fg") == []
