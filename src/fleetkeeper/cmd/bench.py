"""``fleetkeeper bench …``: benchmarks that measure this machine, printed as JSON.

Each benchmark prints one JSON object per configuration (one per line), so results
can be piped into ``jq`` or stored. Figures depend on the machine: always quote them
with the machine they were measured on. Logs go to stderr at ``--log-level`` (warning by
default): unconfigured, every reconcile would print a debug line onto the JSON's stdout,
and formatting them would be part of what is measured.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from fleetkeeper.clock import SystemClock
from fleetkeeper.cmd import logs

if TYPE_CHECKING:
    from fleetkeeper.cmd.benchkit import Measure, Progress

#: ``--profile``: the measured phase under pyinstrument (HTML for ``.html``/``.htm``, else text)
PROFILE_HELP = ("write a profile of the measured phase to this file (pyinstrument: HTML when it ends "
                "in .html, else text); the figures then include the profiler's overhead")

#: typed updates through the client that ``bench store`` times after the store's own phases
CLIENT_OBJECTS = 2_000

app = typer.Typer(help="Benchmarks (JSON output; figures depend on the machine).", no_args_is_help=True)


@app.callback()
def _bench(
    log_level: Annotated[str, typer.Option(help="debug, info, warning or error (stderr)")] = "warning",
) -> None:
    """Benchmarks (JSON output; figures depend on the machine)."""
    if log_level not in logs.LEVELS:
        raise typer.BadParameter(f"must be one of {', '.join(logs.LEVELS)}", param_hint="--log-level")
    logs.configure(level=log_level, clock=SystemClock())


def _emit(result: dict[str, object]) -> None:
    typer.echo(json.dumps(result, sort_keys=True))


def _profiler(path: Path | None, progress: Progress) -> Measure:
    """What wraps the measured phase: nothing, or a sampling profiler writing to ``path``."""
    from fleetkeeper.cmd.benchkit import UNMEASURED

    if path is None:
        return UNMEASURED
    try:
        from pyinstrument import Profiler
    except ImportError:
        raise typer.BadParameter("needs pyinstrument (pip install pyinstrument, or ./run test's virtualenv)",
                                 param_hint="--profile") from None
    if not path.parent.is_dir():
        raise typer.BadParameter(f"{path.parent} is not a directory", param_hint="--profile")

    @contextlib.contextmanager
    def profiled() -> Iterator[None]:
        # whole-thread sampling, as py-spy does: the event loop's callbacks, not one task's awaits
        profiler = Profiler(interval=0.001, async_mode="disabled")
        profiler.start()
        try:
            yield
        finally:
            profiler.stop()
            html = path.suffix.lower() in (".html", ".htm")
            path.write_text(profiler.output_html() if html else profiler.output_text(unicode=True))
            progress.phase(f"profile of the measured phase written to {path}")

    return profiled


def _with_profile(result: dict[str, Any], path: Path | None) -> dict[str, Any]:
    """Say in the figures that they were taken under the profiler."""
    return result if path is None else {**result, "profile": str(path)}


def _progress(quiet: bool) -> Progress:
    """Progress lines on stderr (the pipeline benchmarks take minutes), or none."""
    from fleetkeeper.cmd.benchkit import SILENT, Progress

    return SILENT if quiet else Progress(lambda line: typer.echo(line, err=True))


async def _store_and_client(url: str, *, objects: int, watchers: int, batch: int) -> dict[str, Any]:
    """The store's own phases, then typed ResourceBinding updates through the plane's client
    (at most :data:`CLIENT_OBJECTS`): what one controller write costs."""
    from fleetkeeper.client.bench import bench_client_updates
    from fleetkeeper.store import DEFAULT_HISTORY, open_store
    from fleetkeeper.store.bench import bench_store

    clock = SystemClock()
    result = await bench_store(url, clock=clock, objects=objects, watchers=watchers, batch=batch)
    count = min(objects, CLIENT_OBJECTS)
    store = open_store(url, clock=clock, history=max(DEFAULT_HISTORY, 2 * count))
    try:
        result.update(await bench_client_updates(store, clock, f"bench-{store.revision}-client", count))
    finally:
        await store.close()
    return result


def _require_backend(scheme: str) -> None:
    """Exit 2 saying what to install when the libraries of the store ``scheme`` are missing."""
    from fleetkeeper.store import MissingExtra, require_backend

    try:
        require_backend(scheme)
    except MissingExtra as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None


@app.command("store")
def bench_store_cmd(
    backend: Annotated[str, typer.Option(help="memory, sqlite, etcd (a throwaway one) or all")] = "all",
    store: Annotated[str | None, typer.Option(help="store URL to measure instead of a throwaway one")] = None,
    objects: Annotated[int, typer.Option(min=1, max=1_000_000, help="objects to write")] = 10_000,
    watchers: Annotated[int, typer.Option(min=0, max=1000, help="concurrent watchers for fan-out")] = 50,
    batch: Annotated[int, typer.Option(min=1, max=10_000, help="writes per transaction")] = 100,
) -> None:
    """Creates/s, updates/s and watch fan-out p99 of the store backends; one typed write's cost."""
    urls: list[str]
    with tempfile.TemporaryDirectory(prefix="fleetkeeper-bench-") as tmp:
        if store:
            urls = [store]
        else:
            choices = {"memory": ["memory://"], "sqlite": [f"sqlite:///{Path(tmp) / 'bench.db'}"],
                       "etcd": ["etcd"]}
            choices["all"] = choices["memory"] + choices["sqlite"]
            if backend not in choices:
                raise typer.BadParameter(f"unknown backend {backend!r}: use memory, sqlite, etcd or all",
                                         param_hint="--backend")
            urls = choices[backend]
        for url in urls:
            _require_backend("etcd" if url == "etcd" else url.partition("://")[0].lower())
        for url in urls:
            if url == "etcd":  # a throwaway etcd on loopback, stopped afterwards
                from fleetkeeper.store.etcd_testing import EtcdServer

                with EtcdServer(Path(tmp) / "etcd") as etcd:
                    _emit(asyncio.run(_store_and_client(etcd.url, objects=objects, watchers=watchers,
                                                        batch=batch)))
                continue
            _emit(asyncio.run(_store_and_client(url, objects=objects, watchers=watchers, batch=batch)))


@app.command("scheduler")
def bench_scheduler_cmd(
    bindings: Annotated[int, typer.Option(min=1, max=1_000_000, help="bindings to schedule")] = 10_000,
    clusters: Annotated[int, typer.Option(min=1, max=10_000, help="member clusters")] = 100,
    seed: Annotated[int, typer.Option(help="seed of the generated workload")] = 0,
) -> None:
    """Scheduling throughput and per-binding p99 on a mixed workload, in process."""
    from fleetkeeper.scheduler.bench import bench_scheduler

    _emit(bench_scheduler(bindings=bindings, clusters=clusters, seed=seed))


@app.command("readiness")
def bench_readiness_cmd(
    clusters: Annotated[int, typer.Option(min=1, max=10_000, help="member clusters")] = 100,
    bindings: Annotated[int, typer.Option(min=1, max=1_000_000, help="bindings to assess")] = 10_000,
    seed: Annotated[int, typer.Option(help="seed of the generated fleet")] = 0,
) -> None:
    """One full failover-readiness pass: every cluster's loss assessed for every binding, in process."""
    from fleetkeeper.readiness.bench import bench_readiness

    _emit(bench_readiness(clusters=clusters, bindings=bindings, seed=seed))


@app.command("apiserver")
def bench_apiserver_cmd(
    objects: Annotated[int, typer.Option(min=1, max=1_000_000, help="bindings stored first")] = 10_000,
    requests: Annotated[int, typer.Option(min=10, max=5000, help="requests per phase")] = 500,
    rbac: Annotated[bool, typer.Option(
        "--rbac", help="instead: what RBAC evaluation adds to a request, with --bindings stored")] = False,
    bindings: Annotated[int, typer.Option(min=1, max=100_000, help="RoleBindings stored (--rbac)")] = 1000,
) -> None:
    """Latency and throughput of the API server over HTTPS (list, get, create, patch, watch); with
    --rbac, the time RBAC evaluation adds to a request."""
    if rbac:
        from fleetkeeper.apiserver.bench_rbac import bench_rbac

        _emit(asyncio.run(bench_rbac(bindings=bindings, requests=requests * 10, clock=SystemClock())))
        return
    from fleetkeeper.apiserver.bench import bench_apiserver

    _emit(asyncio.run(bench_apiserver(objects=objects, clock=SystemClock(), requests=requests)))


@app.command("propagation")
def bench_propagation_cmd(
    templates: Annotated[int, typer.Option(min=1, max=100_000, help="Deployments to propagate")] = 1000,
    clusters: Annotated[int, typer.Option(min=1, max=1000, help="simulated member clusters")] = 10,
    store: Annotated[str | None, typer.Option(help="store URL (default: a throwaway sqlite file)")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="no progress lines on stderr")] = False,
    profile: Annotated[Path | None, typer.Option(help=PROFILE_HELP)] = None,
) -> None:
    """Templates until every Work is applied and Healthy: Works/s through the whole pipeline."""
    from fleetkeeper.cmd.bench_propagation import bench_propagation

    progress = _progress(quiet)
    measure = _profiler(profile, progress)
    with tempfile.TemporaryDirectory(prefix="fleetkeeper-bench-") as tmp:
        url = store or f"sqlite:///{Path(tmp) / 'bench.db'}"
        _emit(_with_profile(asyncio.run(bench_propagation(
            templates=templates, clusters=clusters, store_url=url, clock=SystemClock(), progress=progress,
            measure=measure)), profile))


@app.command("failover")
def bench_failover_cmd(
    bindings: Annotated[int, typer.Option(min=1, max=1_000_000,
                                          help="Divided workloads (3 replicas each)")] = 10_000,
    clusters: Annotated[int, typer.Option(min=3, max=1000, help="simulated member clusters")] = 100,
    store: Annotated[str | None, typer.Option(help="store URL (default: a throwaway sqlite file)")] = None,
    limit: Annotated[float, typer.Option(min=1.0,
                                         help="seconds each phase may take before giving up")] = 900.0,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="no progress lines on stderr")] = False,
    profile: Annotated[Path | None, typer.Option(help=PROFILE_HELP)] = None,
    failover_readiness: Annotated[bool, typer.Option(
        help="run the failover-readiness controller too (the plane's option; off by default)")] = False,
) -> None:
    """A shared cluster goes down: time until every binding is rescheduled and re-applied elsewhere."""
    from fleetkeeper.cmd.bench_failover import bench_failover

    progress = _progress(quiet)
    measure = _profiler(profile, progress)
    with tempfile.TemporaryDirectory(prefix="fleetkeeper-bench-") as tmp:
        url = store or f"sqlite:///{Path(tmp) / 'bench.db'}"
        _emit(_with_profile(asyncio.run(bench_failover(
            bindings=bindings, clusters=clusters, store_url=url, clock=SystemClock(), limit=limit,
            progress=progress, measure=measure, readiness=failover_readiness)), profile))
