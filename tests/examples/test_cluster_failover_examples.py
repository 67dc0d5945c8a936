"""The cluster-failover state-preservation scenario of ``examples/``: the state read from the
failed cluster travels in the eviction task and, for purge mode Directly, reaches the new copy
only after the old copy is gone."""

from __future__ import annotations

from pathlib import Path

from fleetkeeper.cmd.simulate import run_file

STORY = Path(__file__).resolve().parents[2] / "examples" / "cluster-failover-state-preservation.yaml"


def test_directly_injects_into_the_new_copy_after_the_old_one_is_gone() -> None:
    outcome = run_file(STORY)
    assert outcome.passed, "\n".join(f.message() for f in outcome.failures)
    for name in ("directly", "immediately"):
        told = [line.message for line in outcome.timeline if line.subject == f"rb/default/{name}-deployment"]
        evicted = told.index("evicted from member1 (TaintUntolerated, Directly)")
        gone = f"Deployment default/{name} removed from member1"
        removed = next(i for i, m in enumerate(told) if m.startswith(gone))
        created = next(i for i, m in enumerate(told) if m.endswith("created in member2"))
        assert evicted < removed < created, told
