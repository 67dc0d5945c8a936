"""``fleetkeeper whatif``: the what-if (:mod:`fleetkeeper.cli.whatif`), and ``--simulate``.

``--simulate`` goes further than the what-if: it takes a snapshot of the running plane —
clusters, policies, templates — and runs the whole control plane on it in virtual time
(:mod:`fleetkeeper.readiness.replay`: simulated members sized like the real ones), with the
named clusters going down, and says per workload when it was rescheduled and when its
replacement was ready (the eviction completed), in seconds after the failure::

    fleetkeeper whatif --down member1 --simulate
    fleetkeeper whatif --region eu-west --simulate --horizon 15m -o json

Only the wiring layer may build a control plane, so the option is added here to the
command :mod:`fleetkeeper.cli.whatif` declares; without it the command is that one. The
simulated plane runs with the default options (and the circuit breaker's threshold given),
in this process, on an in-memory store. Exit codes as the what-if's; 3 also when a moved
workload is not ready again within ``--horizon``.
"""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Callable
from typing import Annotated, Any

import typer
import yaml

from fleetkeeper import errors
from fleetkeeper.cli import connect
from fleetkeeper.cli import whatif as cli
from fleetkeeper.cli.schedule import BadInput
from fleetkeeper.clock import SystemClock, VirtualClock
from fleetkeeper.cmd import logs
from fleetkeeper.options import parse_duration
from fleetkeeper.readiness import replay
from fleetkeeper.readiness import whatif as core
from fleetkeeper.readiness.live import read_fleet, read_resources
from fleetkeeper.simulation import scenario
from fleetkeeper.simulation.driver import run_scenario

#: the longest virtual time a simulated failure may run
MAX_HORIZON = 24 * 3600.0


def simulated_failure(*, down: list[str] | None, region: str | None, zone: str | None, provider: str | None,
             threshold: float, horizon: float, kubeconfig: Any) -> tuple[core.Report, list[replay.Simulated]]:
    """The what-if of the failure, and its simulated run from a snapshot of the running plane."""
    now = SystemClock().now()

    async def snapshot(session: connect.Session) -> tuple[core.Report, dict[str, Any]]:
        fleet = await read_fleet(session.client, threshold=threshold)
        try:
            named = cli.failed_clusters(fleet, down or [], region=region, zone=zone, provider=provider)
        except BadInput as exc:
            raise connect.BadInput(str(exc)) from None
        doc = replay.scenario_doc(fleet.clusters.values(), await read_resources(session.client, fleet), named,
                                  threshold=threshold, horizon=horizon)
        return core.whatif(fleet, named, now), doc

    report, doc = connect.run(kubeconfig, snapshot)
    logs.configure(level="error")  # the simulated plane's logs are not the answer
    from fleetkeeper.cmd.simulate import PlaneFactory  # the simulator, only when simulating

    try:
        run = run_scenario(scenario.parse(doc), PlaneFactory("memory://"), clock=VirtualClock())
    except errors.ScenarioError as exc:
        connect.die(f"the plane's state cannot be simulated: {exc}", 2)
    return report, replay.outcomes(run.timeline, [w.binding for w in report.workloads])


def render(report: core.Report, timed: list[replay.Simulated], output: str) -> str:
    """The what-if with each workload's simulated timing."""
    data = report.as_dict()
    for item, sim in zip(data["workloads"], timed, strict=True):
        item.update(sim.as_dict())
    if output == "json":
        return json.dumps(data, indent=2)
    if output == "yaml":
        return yaml.safe_dump(data, sort_keys=False).rstrip("\n")
    rows = [["BINDING", "BEFORE", "AFTER", "RESCHEDULED", "READY"]]
    for w, sim in zip(report.workloads, timed, strict=True):
        rows.append([w.binding, _placement(w.before), _placement(w.after), _after(sim.rescheduled_after),
                     _after(sim.ready_after)])
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    return "\n".join("   ".join(c.ljust(widths[i]) for i, c in enumerate(row)).rstrip() for row in rows)


def _placement(placement: Any) -> str:
    return ",".join(f"{name}:{n}" for name, n in sorted(dict(placement).items())) or "-"


def _after(seconds: float | None) -> str:
    return "-" if seconds is None else f"+{seconds:g}s"


def with_simulate(command: Callable[..., None]) -> Callable[..., None]:
    """``command`` (the what-if) with ``--simulate`` and ``--horizon`` added."""
    signature = inspect.signature(command, eval_str=True)
    extra = [
        inspect.Parameter("simulate", inspect.Parameter.KEYWORD_ONLY, default=False, annotation=Annotated[
            bool, typer.Option(help="run the control plane in virtual time from a snapshot of the "
                                    "running plane, the clusters down: when is each workload "
                                    "rescheduled and ready?")]),
        inspect.Parameter("horizon", inspect.Parameter.KEYWORD_ONLY, default="10m", annotation=Annotated[
            str, typer.Option(help="with --simulate: how long after the failure the simulation runs")]),
    ]

    @functools.wraps(command)
    def run(*, simulate: bool, horizon: str, **kwargs: Any) -> None:
        if not simulate:
            return command(**kwargs)
        if kwargs.get("filename") or kwargs.get("each"):
            connect.die("--simulate reads the running plane: give it without -f or --each", 2)
        try:
            seconds = parse_duration(horizon)
        except ValueError as exc:
            connect.die(f"--horizon: {exc}", 2)
        if not 0 < seconds <= MAX_HORIZON:
            connect.die(f"--horizon: must be more than 0 and at most {MAX_HORIZON / 3600:g}h", 2)
        output = kwargs["output"]
        if output not in cli.OUTPUTS:
            connect.die(f"--output: must be one of {', '.join(cli.OUTPUTS)}, not {output!r}", 2)
        report, timed = simulated_failure(
            down=kwargs["down"], region=kwargs["region"], zone=kwargs["zone"], provider=kwargs["provider"],
            threshold=kwargs["threshold"], horizon=seconds, kubeconfig=kwargs["kubeconfig"])
        typer.echo(render(report, timed, output))
        if not report.whole or any(w.moved and t.ready_after is None for w, t in zip(report.workloads, timed,
                                                                                      strict=True)):
            raise typer.Exit(cli.SHORT)
        return None

    run.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[*signature.parameters.values(), *extra])
    return run


whatif = with_simulate(cli.whatif)


__all__ = ["MAX_HORIZON", "render", "simulated_failure", "whatif", "with_simulate"]
