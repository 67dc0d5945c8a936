"""``fleetkeeper whatif``: if these clusters fail now, where does every workload go?

The question is answered before the failure, by the parts that would answer it during
one (:mod:`fleetkeeper.readiness.whatif`): the taint policies, the circuit breaker, the
taint-manager's rules and the scheduler with its estimator. Against the running plane
(over the API, the kubeconfig's) or offline on files — the inputs ``fleetkeeper
schedule`` takes: Clusters with their status, and bindings or resource templates with
the policies that claim them, several per file::

    fleetkeeper whatif --down member1
    fleetkeeper whatif --region eu-west -o json
    fleetkeeper whatif --down member1,member2 -f clusters.yaml -f apps.yaml
    fleetkeeper whatif --each region          # the N+1 matrix: each region failing alone

Offline, a binding without ``spec.clusters`` (and every template) is first placed by the
scheduler on the healthy fleet; a Cluster without a ``Ready`` condition counts as Ready;
the ClusterTaintPolicies of the files apply, else the default one
(``fleetkeeper-default-not-ready``).

One row per workload placed on a failed cluster: where its replicas run before and
after, the replicas left Pending for lack of room, and what stops it — ``homeless`` (no
cluster takes the evicted replicas: the old copy stays), ``blocked`` (the circuit
breaker pauses evictions), ``tolerated`` (forever, or for ``movesAfterSeconds``).

Against the plane the answer needs the whole fleet: a token that may not list the Clusters,
the ResourceBindings and ClusterResourceBindings of every namespace and the
ClusterTaintPolicies is told which of them it lacks (RBAC), rather than given an answer
about part of the fleet.

Exit codes: 0 every workload keeps all its replicas; 3 some would be homeless, short of
replicas or blocked; 2 bad input (a message naming the flag, file or field); 1 the
plane cannot be reached, or the token may not read the fleet.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Annotated, Any

import typer
import yaml

from fleetkeeper import errors
from fleetkeeper.api import conditions, constants
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.matching import resource_selectors_priority
from fleetkeeper.api.policy import PropagationPolicy
from fleetkeeper.api.taintpolicy import ClusterTaintPolicy
from fleetkeeper.api.work import Binding
from fleetkeeper.cli import connect
from fleetkeeper.cli.schedule import BadInput, Inputs, binding_of, read_inputs
from fleetkeeper.clock import SystemClock
from fleetkeeper.controllers.cluster_status_rules import health_of, observed_ready
from fleetkeeper.controllers.default_policy import default_taint_policy
from fleetkeeper.options import Options
from fleetkeeper.readiness import assess
from fleetkeeper.readiness import whatif as core
from fleetkeeper.readiness.live import read_fleet
from fleetkeeper.scheduler.core import Scheduler
from fleetkeeper.scheduler.snapshot import snapshot_of

OUTPUTS = ("table", "json", "yaml")
#: exit code when some workload would not keep all its replicas
SHORT = 3
#: at most this many clusters named in --down (a fleet this large is out of what one command names)
MAX_DOWN = 1000


# --------------------------------------------------------------------------- offline inputs


def offline_fleet(paths: list[str], *, threshold: float, now: datetime) -> core.Fleet:
    """The fleet the files describe, every workload placed (see the module notes)."""
    found = read_inputs(paths)
    if not found.clusters:
        raise BadInput("no Cluster in the files: give the member clusters with their status")
    policies = [(where, t) for where, t in found.templates if t.get("kind") == "ClusterTaintPolicy"]
    found.templates = [(where, t) for where, t in found.templates if t.get("kind") != "ClusterTaintPolicy"]
    clusters = [_ready(c, now) for c in found.clusters]
    snapshot = snapshot_of(clusters)
    scheduler = Scheduler()
    bindings = [_placed(b, where, snapshot, scheduler, now) for where, b in _bindings(found)]
    taint_policies = [_taint_policy(t, where) for where, t in policies] or [default_taint_policy()]
    return core.Fleet(clusters, bindings, taint_policies, threshold=threshold)


def _ready(cluster: Cluster, now: datetime) -> Cluster:
    """A cluster the file gives without a Ready condition is taken as Ready."""
    if conditions.get_condition(cluster.status.conditions, constants.COND_READY) is not None:
        return cluster
    ready = observed_ready(health_of(200))
    status = cluster.status.model_copy(update={
        "conditions": conditions.set_condition(cluster.status.conditions, ready, now)})
    return cluster.model_copy(update={"status": status})


def _bindings(found: Inputs) -> list[tuple[str, Binding]]:
    """The bindings given, and one per template (built with the policy that claims it)."""
    out = list(found.bindings)
    for where, template in found.templates:
        policy = _claiming(found, template)
        if policy is None:
            raise BadInput(f"{where}: no PropagationPolicy or ClusterPropagationPolicy in the files selects "
                           f"{template['kind']} {template['metadata']['name']!r}")
        out.append((where, binding_of(Inputs(templates=[(where, template)], policies=[policy]))))
    return out


def _claiming(found: Inputs, template: dict[str, Any]) -> tuple[str, Any] | None:
    """The policy that claims ``template``: a PropagationPolicy of its namespace before a
    ClusterPropagationPolicy, the most specific selector first, then by name."""
    namespace = template["metadata"].get("namespace") or "default"
    ranked = []
    for where, policy in found.policies:
        namespaced = isinstance(policy, PropagationPolicy)
        if namespaced and (policy.metadata.namespace or namespace) != namespace:
            continue
        priority = resource_selectors_priority(policy.spec.resource_selectors, template)
        if priority:
            ranked.append(((not namespaced, -int(priority), policy.name), (where, policy)))
    return min(ranked, key=lambda r: r[0])[1] if ranked else None


def _placed(binding: Binding, where: str, snapshot: Any, scheduler: Scheduler, now: datetime) -> Binding:
    """The binding as the scheduler leaves it: its own ``spec.clusters`` if it has some, else placed now."""
    if binding.spec.placement is None:
        raise BadInput(f"{where}: spec.placement: Required value")
    if binding.spec.clusters:
        return core.applied(binding, [(t.name, t.replicas) for t in binding.spec.clusters])
    outcome = scheduler.schedule_binding(binding.spec, binding.status, snapshot, now)
    if outcome.error is not None:
        raise BadInput(f"{where}: the scheduler cannot place {core.binding_key(binding)} on the fleet before "
                       f"the failure: {outcome.error}")
    return core.applied(binding, outcome.clusters or [])


def _taint_policy(doc: dict[str, Any], where: str) -> ClusterTaintPolicy:
    try:
        return ClusterTaintPolicy.from_dict(doc)
    except errors.Invalid as exc:
        raise BadInput(f"{where}: {exc.message}") from None


# --------------------------------------------------------------------------- the failure


def failed_clusters(fleet: core.Fleet, down: list[str], *, region: str | None, zone: str | None,
                    provider: str | None) -> list[str]:
    """The clusters named by ``--down`` and those of ``--region``, ``--zone``, ``--provider``."""
    names = [n.strip() for value in down for n in value.split(",") if n.strip()]
    if len(names) > MAX_DOWN:
        raise BadInput(f"--down: at most {MAX_DOWN} clusters")
    unknown = [n for n in names if n not in fleet.clusters]
    if unknown:
        raise BadInput(f"--down: no cluster named {', '.join(map(repr, unknown))} "
                       f"(clusters: {', '.join(sorted(fleet.clusters)) or 'none'})")
    for flag, value in (("--region", region), ("--zone", zone), ("--provider", provider)):
        if value is None:
            continue
        found = fleet.in_domain(**{flag[2:]: value})
        if not found:
            raise BadInput(f"{flag}: no cluster is in {flag[2:]} {value!r}")
        names += found
    if not names:
        raise BadInput("name the failure: --down CLUSTER[,CLUSTER…], --region, --zone or --provider")
    return sorted(set(names))


# --------------------------------------------------------------------------- output


def _placement(placement: dict[str, int]) -> str:
    return ",".join(f"{name}:{n}" for name, n in sorted(placement.items())) or "-"


def _state(w: core.Workload) -> str:
    if w.blocked:
        return "blocked"
    if w.homeless:
        return "homeless"
    if w.moves_after_seconds is None:
        return "tolerated"
    state = "short" if w.short else "moved" if w.moved else "kept"
    return f"{state} after {w.moves_after_seconds:g}s" if w.moves_after_seconds else state


def render(report: core.Report, output: str) -> str:
    """The report as a table, JSON or YAML."""
    data = report.as_dict()
    if output == "json":
        return json.dumps(data, indent=2)
    if output == "yaml":
        return yaml.safe_dump(data, sort_keys=False).rstrip("\n")
    lines = [("BINDING", "BEFORE", "AFTER", "PENDING", "STATE")]
    lines += [(w.binding, _placement(dict(w.before)), _placement(dict(w.after)), str(w.pending_replicas),
               _state(w)) for w in report.workloads]
    widths = [max(len(line[i]) for line in lines) for i in range(4)]
    table = ["   ".join([*(cell.ljust(widths[i]) for i, cell in enumerate(line[:4])), line[4]])
             for line in lines]
    s = data["summary"]
    verb = "fails" if len(report.down) == 1 else "fail"
    table.append(f"if {', '.join(report.down)} {verb}: {s['moved']} moved, {s['short']} short, "
                 f"{s['homeless']} homeless, {s['blocked']} blocked")
    return "\n".join(table)


Matrix = list[tuple[str, core.Report]]


def render_each(by: str, matrix: Matrix, output: str) -> str:
    """The N+1 matrix: per failure domain, what its loss alone would do."""
    data = {"each": by, "domains": [{"domain": domain, "down": list(report.down), "summary": report.summary()}
                                    for domain, report in matrix]}
    if output == "json":
        return json.dumps(data, indent=2)
    if output == "yaml":
        return yaml.safe_dump(data, sort_keys=False).rstrip("\n")
    lines: list[list[str]] = [[by.upper(), "CLUSTERS", "MOVED", "SHORT", "HOMELESS", "BLOCKED"]]
    for domain, report in matrix:
        s = report.summary()
        lines.append([domain, ",".join(report.down), *(str(s[k]) for k in ("moved", "short", "homeless",
                                                                            "blocked"))])
    widths = [max(len(line[i]) for line in lines) for i in range(6)]
    return "\n".join("   ".join(cell.ljust(widths[i]) for i, cell in enumerate(line)).rstrip()
                     for line in lines)


def whatif(
    down: Annotated[list[str] | None, typer.Option(
        "--down", show_default=False,
        help="clusters that fail (comma-separated, or repeat the flag)")] = None,
    region: Annotated[str | None, typer.Option(help="every cluster of this region fails")] = None,
    zone: Annotated[str | None, typer.Option(help="every cluster of this zone fails")] = None,
    provider: Annotated[str | None, typer.Option(help="every cluster of this provider fails")] = None,
    each: Annotated[str | None, typer.Option(
        help="the N+1 matrix: each cluster, zone or region failing alone", show_default=False)] = None,
    filename: Annotated[list[str] | None, typer.Option(
        "--filename", "-f", show_default=False,
        help="offline: clusters and bindings, or templates and policies (YAML; - = stdin)")] = None,
    output: Annotated[str, typer.Option("--output", "-o", help="table, json or yaml")] = "table",
    threshold: Annotated[float, typer.Option(
        "--eviction-circuit-breaker-threshold",
        help="the plane's circuit breaker threshold (evictions pause above this share of failed clusters)")
    ] = Options().eviction_circuit_breaker_threshold,
    kubeconfig: connect.KubeconfigOption = None,
) -> None:
    """Say where every workload would go if these clusters failed now."""
    if output not in OUTPUTS:
        connect.die(f"--output: must be one of {', '.join(OUTPUTS)}, not {output!r}", 2)
    if not 0 <= threshold <= 1:
        connect.die("--eviction-circuit-breaker-threshold: must be between 0 and 1", 2)
    if each is not None and each not in assess.DOMAINS:
        connect.die(f"--each: must be one of {', '.join(assess.DOMAINS)}, not {each!r}", 2)
    if each is not None and (down or region or zone or provider):
        connect.die("--each: give it alone, without --down, --region, --zone or --provider", 2)
    now = SystemClock().now()

    def answer(fleet: core.Fleet) -> Matrix:
        if each is not None:
            return assess.each(fleet, each, now)
        named = failed_clusters(fleet, down or [], region=region, zone=zone, provider=provider)
        return [("", core.whatif(fleet, named, now))]

    if filename:
        try:
            matrix = answer(offline_fleet(filename, threshold=threshold, now=now))
        except BadInput as exc:
            connect.die(str(exc), 2)
    else:
        async def live(session: connect.Session) -> Matrix:
            try:
                return answer(await read_fleet(session.client, threshold=threshold))
            except BadInput as exc:
                raise connect.BadInput(str(exc)) from None
            except errors.Forbidden as exc:
                raise connect.Failed(
                    "whatif reads the whole fleet — the Clusters, the ResourceBindings and "
                    "ClusterResourceBindings of every namespace, the ClusterTaintPolicies — and this token "
                    f"may not: {exc.message}. Ask for a ClusterRoleBinding that lets it list them, or answer "
                    "offline with -f FILE") from None

        matrix = connect.run(kubeconfig, live)
    typer.echo(render_each(each, matrix, output) if each is not None else render(matrix[0][1], output))
    if not all(report.whole for _, report in matrix):
        raise typer.Exit(SHORT)


__all__ = ["failed_clusters", "offline_fleet", "render", "render_each", "whatif"]
