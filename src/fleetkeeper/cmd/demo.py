"""``fleetkeeper demo``: the seed failover story on the embedded default, in virtual time.

Three simulated clusters, the sqlite store in a temporary (or given) state directory,
every controller and the scheduler — the same graph ``fleetkeeper up`` runs — driven
through the story of ``examples/seed-blog-member1-down.yaml`` on a virtual clock: about
five minutes of failover in well under ten seconds. It prints the failover timeline and
where nginx's replicas run before the failure, after the failover and after recovery.
"""

from __future__ import annotations

import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from fleetkeeper.api import cluster as cluster_api
from fleetkeeper.api import conditions, work
from fleetkeeper.clock import VirtualClock
from fleetkeeper.cmd import logs
from fleetkeeper.cmd.simulate import PlaneFactory
from fleetkeeper.errors import NotFound
from fleetkeeper.members.interface import ObjectRef
from fleetkeeper.simulation import scenario
from fleetkeeper.simulation.driver import Driver, run_scenario
from fleetkeeper.simulation.scenario import Step

STORY = "seed-blog-member1-down.yaml"
NGINX = ObjectRef("apps/v1", "Deployment", "default", "nginx")


@dataclass(frozen=True)
class Snapshot:
    t: float
    label: str
    ready: dict[str, str]
    scheduled: dict[str, int]
    running: dict[str, int]
    tasks: int


def story_path() -> Path:
    """The packaged story file."""
    return Path(__file__).resolve().parents[1] / "simulation" / "stories" / STORY


async def _snapshot(driver: Driver, step: Step, out: list[Snapshot]) -> None:
    names = [c.name for c in driver.scenario.clusters]
    ready: dict[str, str] = {}
    for name in names:
        try:
            c = await driver.client.get(cluster_api.Cluster, name)
            cond = conditions.get_condition(c.status.conditions or [], "Ready")
            ready[name] = cond.status if cond else "?"
        except NotFound:
            ready[name] = "-"
    rb = await driver.client.get(work.ResourceBinding, "nginx-deployment", "default")
    scheduled = {t.name: t.replicas for t in rb.spec.clusters or []}
    running: dict[str, int] = {}
    for name in names:
        live = driver.fleet[name].peek(NGINX)
        running[name] = int(((live or {}).get("status") or {}).get("readyReplicas") or 0)
    label = ", ".join(a.name + " " + str(a.arg) for a in step.do) or "observe"
    tasks = len(rb.spec.graceful_eviction_tasks or [])
    out.append(Snapshot(step.at, label, ready, scheduled, running, tasks))


#: what to try after the demo, printed at its end
NEXT_STEPS = (
    "fleetkeeper simulate examples/seed-blog-member1-down.yaml --timeline   # this story, from its file",
    "fleetkeeper simulate examples/rebalance-after-recovery.yaml --timeline   # moving back after recovery",
    "fleetkeeper simulate examples/app-failover-purge-gracefully.yaml --timeline   # application failover",
    "fleetkeeper up   # then: fleetkeeper fault clusterDown member1; kubectl get rb -A -w",
)


def demo(
    state_dir: Annotated[
        Path | None, typer.Option(help="keep the sqlite state here (default: a temp dir)")
    ] = None,
) -> None:
    """Watch a cluster fail and its workload move, on three simulated clusters."""
    console = Console(highlight=False, width=None if sys.stdout.isatty() else 120)
    clock = VirtualClock()
    logs.configure(level="error", clock=clock)
    sc = scenario.load_file(story_path())
    with tempfile.TemporaryDirectory(prefix="fleetkeeper-demo-") as tmp:
        directory = state_dir or Path(tmp)
        directory.mkdir(parents=True, exist_ok=True)
        db = directory / "state.db"
        db.unlink(missing_ok=True)
        url = f"sqlite:///{db}"
        console.print("[bold]fleetkeeper demo[/bold] — cluster failover on the embedded default")
        console.print(f"store {url} · clusters {', '.join(c.name for c in sc.clusters)} (simulated) · "
                      "virtual time\n")
        snaps: list[Snapshot] = []

        async def observe(driver: Driver, step: Step) -> None:
            await _snapshot(driver, step, snaps)

        started = time.perf_counter()
        outcome = run_scenario(sc, PlaneFactory(url), clock=clock, observers=[observe])
        wall = time.perf_counter() - started
    console.print("[bold]Failover timeline[/bold]")
    for line in outcome.timeline:
        console.print(f"  [cyan]t={line.t:6.1f}s[/cyan]  {line.subject:<28} {line.message}", soft_wrap=True)
    console.print()
    console.print(_table(snaps, [c.name for c in sc.clusters]))
    for failure in outcome.failures:
        console.print(f"[red]FAIL[/red] {failure.message()}")
    verdict = "[green]every expectation held[/green]" if outcome.passed else "[red]expectations failed[/red]"
    console.print(f"\n{verdict}: {outcome.expectations - len(outcome.failures)}/{outcome.expectations} · "
                  f"{outcome.finished_at:g}s of virtual time in {wall:.2f}s wall")
    console.print("\n[bold]Next[/bold]", soft_wrap=True)
    for hint in NEXT_STEPS:
        console.print(f"  {hint}", soft_wrap=True, markup=False)
    raise typer.Exit(0 if outcome.passed else 1)


def _table(snaps: list[Snapshot], names: list[str]) -> Table:
    table = Table(title="nginx (3 replicas): Ready clusters, scheduled / ready replicas per cluster")
    table.add_column("t", justify="right")
    table.add_column("step")
    for name in names:
        table.add_column(name, justify="center")
    table.add_column("eviction tasks", justify="right")
    for s in snaps:
        cells = []
        for name in names:
            mark = {"True": "[green]Ready[/green]", "False": "[red]NotReady[/red]",
                    "Unknown": "[yellow]Unknown[/yellow]"}.get(s.ready.get(name, "?"), "?")
            cells.append(f"{mark} {s.scheduled.get(name, 0)}/{s.running.get(name, 0)}")
        table.add_row(f"{s.t:g}s", s.label, *cells, str(s.tasks))
    return table


__all__ = ["demo", "story_path"]
