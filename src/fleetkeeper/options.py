"""Control-plane options: one value shared by the CLI, scenario ``settings`` and every
controller.

Names are the CLI flags in snake_case (``--cluster-failure-threshold`` →
``cluster_failure_threshold``); scenario files use them in camelCase
(``clusterFailureThreshold``). Defaults are Karmada's (``cmd/controller-manager/app/options``) except
where fleetkeeper's safety-first failover defaults differ (docs/architecture.md, Failover safety): NoExecute
eviction is on, eviction is unthrottled by default, a default ClusterTaintPolicy is
installed, and a partition circuit breaker pauses evictions.
Durations are seconds (floats).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any

_DURATION = re.compile(r"^(\d+(?:\.\d+)?)(ms|s|m|h)$")
_UNIT = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(value: Any) -> float:
    """``"250ms"``, ``"10s"``, ``"5m"``, ``"1h"`` (or a bare number of seconds) → seconds."""
    if isinstance(value, bool):
        raise ValueError(f"expected a duration like 10s, 5m, 250ms; got {value!r}")
    if isinstance(value, int | float):
        if value < 0:
            raise ValueError(f"duration must not be negative, got {value!r}")
        return float(value)
    if isinstance(value, str):
        text = value.strip()
        parts = re.findall(r"\d+(?:\.\d+)?(?:ms|s|m|h)", text)
        if parts and "".join(parts) == text:
            total = 0.0
            for part in parts:
                match = _DURATION.match(part)
                assert match is not None
                total += float(match.group(1)) * _UNIT[match.group(2)]
            return total
    raise ValueError(f"expected a duration like 10s, 5m, 250ms or 1h30m; got {value!r}")


def format_duration(seconds: float) -> str:
    """Inverse of :func:`parse_duration` for display (``90`` → ``"1m30s"``)."""
    if seconds < 1 and seconds != 0:
        return f"{round(seconds * 1000)}ms"
    whole = int(seconds)
    frac = seconds - whole
    h, rem = divmod(whole, 3600)
    m, s = divmod(rem, 60)
    out = (f"{h}h" if h else "") + (f"{m}m" if m else "")
    if s or frac or not out:
        out += f"{s + frac:g}s"
    return out


@dataclass(frozen=True)
class Options:
    """Every tunable of the control plane, with its default."""

    # cluster status (Push) and health
    cluster_status_update_frequency: float = 10.0
    cluster_success_threshold: float = 30.0
    cluster_failure_threshold: float = 30.0
    #: bound on one health probe / status call to a member (a black hole must not stall others)
    cluster_probe_timeout: float = 5.0
    cluster_monitor_period: float = 5.0
    cluster_monitor_grace_period: float = 40.0
    cluster_startup_grace_period: float = 60.0
    # Pull agents
    cluster_lease_duration: float = 40.0
    cluster_lease_renew_interval_fraction: float = 0.25
    # failover
    enable_no_execute_taint_eviction: bool = True
    no_execute_taint_eviction_purge_mode: str = "Gracefully"
    #: evictions per second per worker; 0 = unthrottled (fleetkeeper's default)
    resource_eviction_rate: float = 0.0
    graceful_eviction_timeout: float = 600.0
    default_cluster_taint_policy: bool = True
    #: pause NoExecute evictions while more than this share of clusters is not Ready (0 disables)
    eviction_circuit_breaker_threshold: float = 0.55
    #: keep a FailoverReady condition on every binding (the failover-readiness controller)
    failover_readiness: bool = False
    #: the failure domain readiness assumes lost: cluster, zone or region
    failover_readiness_domain: str = "cluster"
    # service-name-resolution detector (per node of a member)
    detect_period: float = 5.0
    detect_success_threshold: float = 30.0
    detect_failure_threshold: float = 30.0
    #: node reports older than this are ignored by the leader (nothing is written from stale ones)
    detect_stale_threshold: float = 60.0
    # scheduler
    scheduler_name: str = "default-scheduler"
    enable_empty_workload_propagation: bool = False
    # workers and rate limits
    concurrent_syncs: int = 5
    rate_limiter_base_delay: float = 0.005
    rate_limiter_max_delay: float = 1000.0
    rate_limiter_qps: float = 10.0
    rate_limiter_bucket_size: int = 100
    # leader election
    leader_elect: bool = True
    leader_elect_lease_duration: float = 15.0
    leader_elect_renew_deadline: float = 10.0
    leader_elect_retry_period: float = 2.0
    # namespaces
    #: comma-separated regular expressions (each matching a whole name) of the namespaces that are
    #: not propagated to the members (Karmada's ``--skipped-propagating-namespaces``)
    skipped_propagating_namespaces: str = "kube-.*"

    def replace(self, **changes: Any) -> Options:
        return dataclasses.replace(self, **changes)

    @classmethod
    def field_names(cls) -> list[str]:
        return [f.name for f in dataclasses.fields(cls)]


def camel(name: str) -> str:
    """``cluster_failure_threshold`` → ``clusterFailureThreshold``."""
    head, *rest = name.split("_")
    return head + "".join(p.capitalize() for p in rest)


_BY_CAMEL = {camel(f.name): f for f in dataclasses.fields(Options)}
#: the values of ``failover_readiness_domain``
READINESS_DOMAINS = ("cluster", "zone", "region")


def options_from_settings(settings: dict[str, Any], *, path: str = "settings") -> Options:
    """Build Options from camelCase settings (scenario files); ValueError names the field."""
    changes: dict[str, Any] = {}
    for key, value in settings.items():
        fld = _BY_CAMEL.get(key)
        if fld is None:
            known = ", ".join(sorted(_BY_CAMEL))
            raise ValueError(f"{path}.{key}: unknown setting (known: {known})")
        default = fld.default
        try:
            if isinstance(default, bool):
                if not isinstance(value, bool):
                    raise ValueError(f"expected true or false, got {value!r}")
                changes[fld.name] = value
            elif isinstance(default, int) and not isinstance(default, bool):
                if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                    raise ValueError(f"expected a non-negative integer, got {value!r}")
                changes[fld.name] = value
            elif isinstance(default, float):
                changes[fld.name] = _float_setting(fld.name, value)
            else:
                if not isinstance(value, str):
                    raise ValueError(f"expected a string, got {value!r}")
                if fld.name == "skipped_propagating_namespaces":
                    namespace_patterns(value)
                if fld.name == "failover_readiness_domain" and value not in READINESS_DOMAINS:
                    raise ValueError(f"must be one of {', '.join(READINESS_DOMAINS)}, got {value!r}")
                changes[fld.name] = value
        except ValueError as exc:
            raise ValueError(f"{path}.{key}: {exc}") from None
    return Options(**changes)


#: bounds on ``skipped_propagating_namespaces``: how many patterns, and how long each
MAX_NAMESPACE_PATTERNS, MAX_NAMESPACE_PATTERN_LENGTH = 100, 253


def namespace_patterns(value: str) -> tuple[re.Pattern[str], ...]:
    """The regular expressions of a comma-separated list (empty items ignored), each to match
    a whole namespace name; ValueError names the one that does not compile or is too long."""
    items = [item.strip() for item in value.split(",") if item.strip()]
    if len(items) > MAX_NAMESPACE_PATTERNS:
        raise ValueError(f"at most {MAX_NAMESPACE_PATTERNS} patterns, got {len(items)}")
    patterns = []
    for item in items:
        if len(item) > MAX_NAMESPACE_PATTERN_LENGTH:
            raise ValueError(f"a pattern may be at most {MAX_NAMESPACE_PATTERN_LENGTH} characters, "
                             f"got {len(item)}")
        try:
            patterns.append(re.compile(item))
        except re.error as exc:
            raise ValueError(f"{item!r} is not a regular expression: {exc}") from None
    return tuple(patterns)


def _float_setting(name: str, value: Any) -> float:
    if name in (
        "resource_eviction_rate",
        "eviction_circuit_breaker_threshold",
        "cluster_lease_renew_interval_fraction",
        "rate_limiter_qps",
    ):
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise ValueError(f"expected a non-negative number, got {value!r}")
        return float(value)
    return parse_duration(value)


__all__ = ["READINESS_DOMAINS", "Options", "camel", "format_duration", "namespace_patterns",
           "options_from_settings", "parse_duration"]
