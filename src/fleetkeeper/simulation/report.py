"""Printing a scenario outcome: text for people, JSON for programs."""

from __future__ import annotations

import json
from typing import Any

from fleetkeeper.simulation.driver import Outcome


def as_json(outcome: Outcome, *, timeline: bool) -> str:
    """One JSON document (stable key order, so identical runs print identical bytes)."""
    doc: dict[str, Any] = {
        "scenario": outcome.scenario,
        "passed": outcome.passed,
        "expectations": outcome.expectations,
        "failed": len(outcome.failures),
        "finishedAt": round(outcome.finished_at, 6),
        "failures": [
            {
                "step": f.step,
                "at": f.at,
                "object": f.object,
                "member": f.member,
                "path": f.path,
                "check": f.check,
                "expected": f.expected,
                "actual": f.actual,
                "reason": f.reason,
                "message": f.message(),
            }
            for f in outcome.failures
        ],
    }
    if timeline:
        doc["timeline"] = [
            {"t": round(line.t, 6), "subject": line.subject, "action": line.action, "message": line.message}
            for line in outcome.timeline
        ]
    return json.dumps(doc, sort_keys=True, default=str)


def as_text(outcome: Outcome, *, timeline: bool) -> list[str]:
    """Lines for a terminal."""
    lines: list[str] = []
    if timeline:
        lines.extend(line.text() for line in outcome.timeline)
        lines.append("")
    for failure in outcome.failures:
        lines.append(f"FAIL {failure.message()}")
    held = outcome.expectations - len([f for f in outcome.failures if f.check != "do"])
    verdict = "PASS" if outcome.passed else "FAIL"
    lines.append(
        f"{verdict} {outcome.scenario}: {held}/{outcome.expectations} expectations held, "
        f"{len(outcome.failures)} failure(s), ended at t={outcome.finished_at:g}s"
    )
    return lines


__all__ = ["as_json", "as_text"]
