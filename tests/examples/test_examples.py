"""Every scenario under examples/ runs through `fleetkeeper simulate` and holds.

Each story is also run twice: the `--timeline` output must be byte-identical (same
file, same output, every run). Some story families have their own modules for details.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from fleetkeeper.cmd.main import app

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
STORIES = sorted(EXAMPLES.glob("*.yaml"))
runner = CliRunner()


def simulate(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["simulate", *args])
    return result.exit_code, result.stdout


def test_there_are_stories_to_run() -> None:
    assert len(STORIES) >= 7


@pytest.mark.parametrize("story", STORIES, ids=lambda p: p.stem)
def test_story_holds_and_replays_identically(story: Path) -> None:
    code, first = simulate(str(story), "--timeline")
    assert code == 0, first
    assert "PASS" in first.splitlines()[-1]
    code_again, second = simulate(str(story), "--timeline")
    assert code_again == 0
    assert first == second, "the timeline differs between two runs of the same file"


def test_seed_story_timeline_tells_the_failover() -> None:
    _, out = simulate(str(EXAMPLES / "seed-blog-member1-down.yaml"), "--timeline")
    lines = out.splitlines()
    wanted = [
        "t=60.0s  scenario  clusterDown member1",
        "t=90.0s  cluster/member1  Ready=False (ClusterNotReachable)",
        "t=90.0s  rb/default/nginx-deployment  evicted from member1 (TaintUntolerated, Gracefully)",
        "t=90.0s  rb/default/nginx-deployment  scheduled to {member2:3} (was {member2:2})",
        "t=230.0s  cluster/member1  Ready=True (ClusterReady)",
    ]
    positions = [lines.index(w) for w in wanted]
    assert positions == sorted(positions)


def test_json_output_is_one_document(tmp_path: Path) -> None:
    code, out = simulate(str(EXAMPLES / "toleration-120s.yaml"), "--output", "json", "--timeline")
    assert code == 0
    import json

    doc = json.loads(out)
    assert doc["passed"] is True and doc["failed"] == 0 and doc["expectations"] == 7
    assert any(e["message"].startswith("evicted from member1") and e["t"] == 210.0 for e in doc["timeline"])


def test_a_failing_expectation_exits_1_and_names_step_time_object_path(tmp_path: Path) -> None:
    text = (EXAMPLES / "toleration-120s.yaml").read_text().replace(
        "equalsUnordered: [{name: member2, replicas: 3}]", "equalsUnordered: [{name: member2, replicas: 4}]"
    )
    story = tmp_path / "wrong.yaml"
    story.write_text(text)
    code, out = simulate(str(story))
    assert code == 1
    failure = next(line for line in out.splitlines() if line.startswith("FAIL spec."))
    assert "spec.timeline[3] at t=210s" in failure
    assert "ResourceBinding/default/web-deployment" in failure and "path spec.clusters" in failure
    assert '"replicas": 4' in failure and '"replicas": 3' in failure


def test_an_invalid_file_exits_2_naming_the_field(tmp_path: Path) -> None:
    story = tmp_path / "bad.yaml"
    story.write_text((EXAMPLES / "toleration-120s.yaml").read_text().replace("at: 209s", "at: 20s"))
    result = runner.invoke(app, ["simulate", str(story)])
    assert result.exit_code == 2
    assert "spec.timeline[2].at" in result.stderr and "non-decreasing" in result.stderr
