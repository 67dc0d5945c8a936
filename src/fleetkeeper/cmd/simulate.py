"""``fleetkeeper simulate FILE``: a scenario on the real control plane in virtual time.

Exit codes (docs/scenario-format.md): 0 every expectation held, 1 at least one failed,
2 the file is invalid (the message names the field) — or the ``--store`` cannot hold the run.

A scenario starts from nothing: its clusters and resources are the whole world. A
``--store`` that already holds objects (say, a previous run's) would carry them over and
change the story, so it is refused; give an empty store or a fresh path.

The control plane, the API kinds and the scenario machinery are imported when a run
starts, not with the command: ``fleetkeeper simulate --help`` answers at once.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from fleetkeeper.clock import VirtualClock
from fleetkeeper.errors import FleetkeeperError, ScenarioError

if TYPE_CHECKING:
    from fleetkeeper.members.interface import MemberPool
    from fleetkeeper.options import Options
    from fleetkeeper.runtime.context import Scope
    from fleetkeeper.simulation.driver import Outcome, Plane
    from fleetkeeper.store.interface import StoreProtocol


class StoreUnusable(FleetkeeperError):
    """The store URL cannot be opened, or its store is not empty."""


class PlaneFactory:
    """Builds the control plane and Pull agents of one run over one shared store.

    The store is opened from ``store_url`` at the first call, unless one was given in
    ``store`` (then it is used as it is). :meth:`check_store` says beforehand whether the
    URL opens onto an empty store. The planes share the process's collector (one pause
    holds it for all of them).
    """

    def __init__(self, store_url: str = "memory://") -> None:
        from fleetkeeper.runtime.gcpause import Collector

        self.store_url = store_url
        self.store: StoreProtocol | None = None
        self.collector = Collector()

    def check_store(self) -> None:
        """Raise :class:`StoreUnusable` unless ``store_url`` opens and holds nothing yet.

        Call it outside any event loop: the store is opened and closed again here.
        """
        import asyncio

        from fleetkeeper.store import open_backend

        url = self.store_url
        try:
            backend = open_backend(url)
        except Exception as exc:  # any backend's failure to open (bad URL, unreadable file)
            raise StoreUnusable(f"--store {url}: cannot open the store: {exc}") from None
        try:
            revision = backend.revision
        finally:
            asyncio.run(backend.close())
        if revision:
            raise StoreUnusable(
                f"--store {url}: the store is not empty (it has recorded {revision} change(s)); "
                "a scenario must start from an empty store: give an empty one or a fresh path"
            )

    def __call__(self, *, clock: VirtualClock, options: Options, members: MemberPool, scope: Scope,
                 uid_factory: Callable[[], str]) -> Plane:
        from fleetkeeper.cmd.app import ControlPlane
        from fleetkeeper.store import open_store

        if self.store is None:
            self.store = open_store(self.store_url, clock=clock, uid_factory=uid_factory)
        plane = ControlPlane(store=self.store, clock=clock, members=members,
                             options=options.replace(leader_elect=False), scope=scope,
                             collector=self.collector)
        return plane


def run_file(path: str | Path, *, store_url: str = "memory://") -> Outcome:
    """Load and run a scenario file (raises ScenarioError when it is invalid, StoreUnusable when
    the store cannot be opened or is not empty)."""
    from fleetkeeper.simulation import scenario
    from fleetkeeper.simulation.driver import run_scenario

    sc = scenario.load_file(path)
    factory = PlaneFactory(store_url)
    factory.check_store()
    return run_scenario(sc, factory)


def write_chart(outcome: Outcome, path: Path) -> None:
    """Draw ``outcome``'s timeline as SVG into ``path`` (:mod:`fleetkeeper.cli.chart`)."""
    from fleetkeeper.cli import chart

    events = [chart.Event(line.t, line.subject, line.action, line.message) for line in outcome.timeline]
    drawn = chart.build(events, title=f"{outcome.scenario}: replicas per cluster", end=outcome.finished_at)
    try:
        path.write_text(chart.render(drawn), encoding="utf-8")
    except OSError as exc:
        typer.echo(f"error: --chart {path}: {exc.strerror or exc}", err=True)
        raise typer.Exit(2) from None


def simulate(
    file: Annotated[Path, typer.Argument(help="scenario file (docs/scenario-format.md)", show_default=False)],
    output: Annotated[str, typer.Option("--output", "-o", help="text or json")] = "text",
    timeline: Annotated[
        bool, typer.Option("--timeline", help="print every notable event with its time")
    ] = False,
    store: Annotated[str, typer.Option(
        help="store URL for the run (memory://, or sqlite:///path of an empty or new file)")] = "memory://",
    log_level: Annotated[str, typer.Option(help="debug, info, warning or error (stderr)")] = "error",
    chart: Annotated[Path | None, typer.Option(
        "--chart", help="also draw replicas per cluster over time, with the failover's marks, as SVG "
        "into this file", show_default=False)] = None,
) -> None:
    """Run a failover story in virtual time and check its expectations."""
    from fleetkeeper.cmd import logs
    from fleetkeeper.simulation import report, scenario
    from fleetkeeper.simulation.driver import run_scenario

    if output not in ("text", "json"):
        raise typer.BadParameter("must be text or json", param_hint="--output")
    clock = VirtualClock()
    logs.configure(level=log_level, clock=clock)
    factory = PlaneFactory(store)
    try:
        sc = scenario.load_file(file)
        factory.check_store()
        outcome = run_scenario(sc, factory, clock=clock)
    except ScenarioError as exc:
        typer.echo(f"error: {file}: {exc}", err=True)
        raise typer.Exit(2) from None
    except StoreUnusable as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    if chart is not None:
        write_chart(outcome, chart)
    if output == "json":
        typer.echo(report.as_json(outcome, timeline=timeline))
    else:
        for line in report.as_text(outcome, timeline=timeline):
            typer.echo(line)
    raise typer.Exit(0 if outcome.passed else 1)


__all__ = ["PlaneFactory", "StoreUnusable", "run_file", "simulate", "write_chart"]
