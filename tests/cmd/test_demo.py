"""``fleetkeeper demo`` (what ``./run demo`` runs): the seed story, every expectation held,
the failover on its timeline, the replica table and what to try next."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from fleetkeeper.cmd.demo import NEXT_STEPS

ROOT = Path(__file__).resolve().parents[2]


def test_the_demo_tells_the_seed_story_and_every_expectation_holds(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "fleetkeeper.cmd.main", "demo", "--state-dir", str(tmp_path)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    verdict = re.search(r"every expectation held: (\d+)/(\d+)", out)
    assert verdict and verdict.group(1) == verdict.group(2) and int(verdict.group(2)) > 0, out
    section = out.split("Failover timeline\n", 1)[1].split("\n\n", 1)[0]
    timeline = section.splitlines()
    moves = ["evicted from member1 (TaintUntolerated, Gracefully)", "scheduled to {member2:3}",
             "Deployment default/nginx removed from member1"]
    at = [next((i for i, line in enumerate(timeline) if move in line), -1) for move in moves]
    assert -1 not in at and at == sorted(at), timeline
    # one line per entry: never broken in the middle, whatever the width of the output
    assert timeline and all(re.match(r"  t=\s*\d+\.\ds  \S", line) for line in timeline), timeline
    assert "NotReady 0/1" in out and "Ready 3/3" in out
    assert out.rstrip().endswith(NEXT_STEPS[-1])
    for hint in NEXT_STEPS:
        assert hint in out
        for example in re.findall(r"examples/\S+\.yaml", hint):
            assert (ROOT / example).is_file(), f"the demo suggests {example}, which does not exist"
