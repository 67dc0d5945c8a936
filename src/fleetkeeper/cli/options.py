"""Control-plane :class:`~fleetkeeper.options.Options` as command-line flags.

Every tunable of the control plane is one flag named after its field in kebab-case
(``cluster_monitor_grace_period`` → ``--cluster-monitor-grace-period``), the same names
scenario files use in camelCase. Rather than repeating some thirty parameters on every
command that runs controllers (``up``, ``controller-manager``, ``scheduler``,
``agent``), :func:`with_options` adds them to a typer command's signature and hands the
command one validated ``options: Options``. Flags left out keep their defaults, so a
new Options field becomes a flag everywhere without touching the commands.

Durations take ``250ms``, ``10s``, ``5m``, ``1h30m`` or plain seconds. A bad value exits
with code 2 and a message naming the flag, like every other usage error.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable, Iterable
from typing import Annotated, Any, TypeVar

import typer

from fleetkeeper.options import Options, camel, format_duration, options_from_settings

F = TypeVar("F", bound=Callable[..., Any])
PANEL = "Control-plane options"

#: one line of help per field
HELP: dict[str, str] = {
    "detect_period": "how often each node's detector resolves kubernetes.default",
    "detect_success_threshold": "how long resolution must work before the condition turns True",
    "detect_failure_threshold": "how long resolution must fail before the condition turns False",
    "detect_stale_threshold": "node reports older than this are ignored",
    "cluster_status_update_frequency": "how often each Push cluster is probed",
    "cluster_success_threshold": "how long probes must succeed before a cluster turns Ready",
    "cluster_failure_threshold": "how long probes must fail before a cluster turns NotReady",
    "cluster_probe_timeout": "bound on one probe or status call to a member",
    "cluster_monitor_period": "how often Pull clusters' heartbeats (Leases) are checked",
    "cluster_monitor_grace_period": "a Pull cluster turns Ready=Unknown this long after its last heartbeat",
    "cluster_startup_grace_period": "grace for a Pull cluster that never reported",
    "cluster_lease_duration": "Pull agents: lease duration (renewed every duration × fraction)",
    "cluster_lease_renew_interval_fraction": "Pull agents: renew interval as a share of the lease duration",
    "enable_no_execute_taint_eviction": "evict workloads from clusters with untolerated NoExecute taints",
    "no_execute_taint_eviction_purge_mode": "purge mode of taint evictions: Gracefully, Directly or Never",
    "resource_eviction_rate": "evictions per second per worker (0: unthrottled)",
    "graceful_eviction_timeout": "how long an eviction task may wait for the replacement",
    "default_cluster_taint_policy": "install the default ClusterTaintPolicy (NoExecute on Ready≠True)",
    "eviction_circuit_breaker_threshold": "pause evictions while more than this share of clusters fails "
                                          "(0 disables)",
    "failover_readiness": "keep a FailoverReady condition on every binding: does it survive the loss of "
                          "any one failure domain?",
    "failover_readiness_domain": "the failure domain failover readiness assumes lost: cluster, zone or "
                                 "region",
    "scheduler_name": "the scheduler name this scheduler serves",
    "enable_empty_workload_propagation": "propagate workloads scaled to zero replicas",
    "concurrent_syncs": "workers per controller",
    "rate_limiter_base_delay": "first retry delay after a failed reconcile",
    "rate_limiter_max_delay": "longest retry delay",
    "rate_limiter_qps": "overall retry rate limit (per second)",
    "rate_limiter_bucket_size": "overall retry burst",
    "leader_elect": "elect one leader among replicas before running controllers",
    "leader_elect_lease_duration": "leader election: lease duration",
    "leader_elect_renew_deadline": "leader election: renew deadline",
    "leader_elect_retry_period": "leader election: retry period",
    "skipped_propagating_namespaces": "comma-separated regular expressions of namespaces not propagated "
                                      "to the members (default, karmada-system, karmada-cluster and "
                                      "karmada-es-* never are)",
}
#: float fields that are plain numbers, not durations
NUMBERS = frozenset({"resource_eviction_rate", "eviction_circuit_breaker_threshold",
                     "cluster_lease_renew_interval_fraction", "rate_limiter_qps"})


def flag(name: str) -> str:
    """``cluster_monitor_grace_period`` → ``--cluster-monitor-grace-period``."""
    return "--" + name.replace("_", "-")


def _default_value(name: str, default: Any) -> Any:
    """The flag's default as typed on the command line (durations as ``10s``)."""
    if isinstance(default, float):
        return f"{default:g}" if name in NUMBERS else format_duration(default)
    return default


def _parameter(name: str, default: Any) -> inspect.Parameter:
    common: dict[str, Any] = {"help": HELP.get(name, name.replace("_", " ")), "rich_help_panel": PANEL}
    if isinstance(default, bool):
        decls = (f"{flag(name)}/--no-{name.replace('_', '-')}",)
        annotation: Any = Annotated[bool, typer.Option(*decls, **common)]
    elif isinstance(default, int):
        annotation = Annotated[int, typer.Option(flag(name), min=0, metavar="N", **common)]
    else:
        metavar = "NUMBER" if name in NUMBERS else ("DURATION" if isinstance(default, float) else "TEXT")
        annotation = Annotated[str, typer.Option(flag(name), metavar=metavar, **common)]
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=_default_value(name, default),
                             annotation=annotation)


def parse(values: dict[str, Any], base: Options | None = None) -> Options:
    """Options from flag values (``None`` = not given); ``typer.BadParameter`` names the flag."""
    changes: dict[str, Any] = {}
    for name, value in values.items():
        if value is None:
            continue
        if isinstance(value, str) and name in NUMBERS:
            try:
                value = float(value)
            except ValueError:
                raise typer.BadParameter(f"expected a number, got {value!r}", param_hint=flag(name)) from None
        try:
            parsed = options_from_settings({camel(name): value})
        except ValueError as exc:
            message = str(exc).split(": ", 1)[-1]
            raise typer.BadParameter(message, param_hint=flag(name)) from None
        changes[name] = getattr(parsed, name)
    return (base or Options()).replace(**changes)


def with_options(*, only: Iterable[str] | None = None, exclude: Iterable[str] = (),
                 base: Options | None = None) -> Callable[[F], F]:
    """Decorator: the command gets one flag per Options field and receives ``options: Options``.

    ``only`` keeps just the named fields and ``exclude`` leaves some out (a command that has
    its own flag for them, or for which they mean nothing); ``base`` supplies other defaults.
    """
    kept = None if only is None else frozenset(only)
    skipped = frozenset(exclude)
    unknown = ((kept or frozenset()) | skipped) - set(Options.field_names())
    if unknown:
        raise ValueError(f"not Options fields: {sorted(unknown)}")
    fields = [f for f in dataclasses.fields(Options)
              if f.name not in skipped and (kept is None or f.name in kept)]

    def decorate(func: F) -> F:
        signature = inspect.signature(func, eval_str=True)
        if "options" not in signature.parameters:
            raise TypeError(f"{func.__name__} must take an `options` parameter")
        clash = {f.name for f in fields} & set(signature.parameters)
        if clash:
            raise TypeError(f"{func.__name__}: parameters shadow Options fields: {sorted(clash)}")
        own = [p for p in signature.parameters.values() if p.name != "options"]

        @functools.wraps(func)
        def command(**kwargs: Any) -> Any:
            values = {f.name: kwargs.pop(f.name, None) for f in fields}
            return func(**kwargs, options=parse(values, base))

        params = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in own]
        defaults = base or Options()
        params += [_parameter(f.name, getattr(defaults, f.name)) for f in fields]
        command.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
        return command  # type: ignore[return-value]

    return decorate


__all__ = ["HELP", "NUMBERS", "PANEL", "flag", "parse", "with_options"]
