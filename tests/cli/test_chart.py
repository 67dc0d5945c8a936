"""The replicas-per-cluster chart: the SVG ``simulate --chart`` writes, read back with an XML
parser, says what the scenario's own expectations say about where the replicas are."""

from __future__ import annotations

from pathlib import Path
from xml.etree import ElementTree

import yaml
from typer.testing import CliRunner

from fleetkeeper.api import timeline as tl
from fleetkeeper.cli import chart
from fleetkeeper.cmd.main import app

SEED = Path(__file__).parents[2] / "examples" / "seed-blog-member1-down.yaml"
SVG = "{http://www.w3.org/2000/svg}"


def read_svg(path: Path) -> tuple[dict[str, list[tuple[float, int]]], list[tuple[str, str, float]]]:
    """The series (cluster → points) and the marks (kind, cluster, t) of a chart file."""
    root = ElementTree.parse(path).getroot()
    series = {
        g.attrib["data-cluster"]: [(float(c.attrib["data-t"]), int(c.attrib["data-replicas"]))
                                   for c in g.iter(f"{SVG}circle")]
        for g in root.iter(f"{SVG}g") if g.attrib.get("class") == "series"
    }
    marks = [(g.attrib["data-kind"], g.attrib["data-cluster"], float(g.attrib["data-t"]))
             for g in root.iter(f"{SVG}g") if g.attrib.get("class") == "mark"]
    return series, marks


def value_at(points: list[tuple[float, int]], t: float) -> int:
    return [v for at, v in points if at <= t][-1]


def expected_placements(path: Path) -> dict[float, dict[str, int]]:
    """The binding's ``spec.clusters`` each step of the scenario expects, by the step's time."""
    doc = yaml.safe_load(path.read_text())
    found: dict[float, dict[str, int]] = {}
    for step in doc["spec"]["timeline"]:
        for expect in step.get("expect", []):
            if expect["object"]["kind"] == "ResourceBinding" and expect.get("path") == "spec.clusters":
                placed = {c["name"]: c["replicas"] for c in expect["equalsUnordered"]}
                found[float(step["at"].rstrip("s"))] = placed
    return found


def test_simulate_chart_draws_each_cluster_with_the_scenarios_replica_counts(tmp_path: Path) -> None:
    out = tmp_path / "out.svg"
    done = CliRunner().invoke(app, ["simulate", str(SEED), "--chart", str(out)])
    assert done.exit_code == 0, done.output
    series, marks = read_svg(out)
    assert sorted(series) == ["member1", "member2", "member3"]
    placements = expected_placements(SEED)
    assert len(placements) >= 3
    for at, placed in placements.items():
        for cluster, points in series.items():
            assert value_at(points, at) == placed.get(cluster, 0), (cluster, at)
    kinds = {kind for kind, cluster, _ in marks if cluster == "member1"}
    assert kinds == set(chart.MARK_KINDS)
    down = next(t for kind, _, t in marks if kind == "down")
    assert 60 < down < 100, "member1 is noticed down after the failure threshold, before 100s"
    again = tmp_path / "again.svg"
    assert CliRunner().invoke(app, ["simulate", str(SEED), "--chart", str(again)]).exit_code == 0
    assert again.read_bytes() == out.read_bytes(), "the same story draws the same bytes"


def test_a_chart_sums_bindings_and_starts_from_the_first_result() -> None:
    events = [
        chart.Event(5, "rb/default/b", tl.SCHEDULED, "scheduled to {m2:1} (was {m1:1})"),
        chart.Event(0, "rb/default/a", tl.SCHEDULED, "scheduled to {m1:2, m2:1} (was {})"),
        chart.Event(3, "cluster/m1", tl.CONDITION_CHANGED, "Ready=Unknown (ClusterStatusUnknown)"),
        chart.Event(4, "cluster/m3", tl.CONDITION_CHANGED, "Ready=True (ClusterReady)"),
    ]
    drawn = chart.build(events, title="t")  # b was on m1 from the start
    assert {s.cluster: s.points for s in drawn.series} == {
        "m1": ((0, 3), (5, 2)), "m2": ((0, 1), (5, 2)), "m3": ((0, 0),)}
    assert drawn.marks == (chart.Mark(3, "m1", "down"),)
    assert drawn.end == 5


def test_a_title_with_markup_stays_text() -> None:
    svg = chart.render(chart.build([], title="<b>&"))
    root = ElementTree.fromstring(svg)
    assert root.find(f"{SVG}title") is not None and root.find(f"{SVG}title").text == "<b>&"  # type: ignore[union-attr]
