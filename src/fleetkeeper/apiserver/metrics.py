"""kube-apiserver's request metrics: ``apiserver_request_total`` and ``apiserver_request_duration_seconds``.

Every request to a served resource (``/api/v1/…``, ``/apis/{group}/{version}/…``) is
counted with kube-apiserver's labels — ``verb``, ``dry_run``, ``group``, ``version``,
``resource``, ``subresource``, ``scope``, ``component`` and, on the counter, ``code`` —
and its latency observed in kube-apiserver's buckets. The verb is kube-apiserver's
normalized one: ``GET`` of a collection is ``LIST``, with ``?watch`` it is ``WATCH``, a
``PATCH`` with the apply content type is ``APPLY``. The scope is ``resource`` for one
object (and every create), ``namespace`` or ``cluster`` for a collection.

Only paths that name a served resource are labelled (anything else — a typo, a probe —
is not counted), so the label sets are bounded by the scheme. A watch is timed until
its response starts, not for as long as it streams. Durations are intervals of the
server's injected clock. The labels come from the target the request's handler resolved
(a request refused before it got there, say for its credentials, is resolved for them).
"""

from __future__ import annotations

from collections.abc import Mapping

from prometheus_client import Counter, Histogram

from fleetkeeper.apiserver.request import APPLY_PATCH, Target

LABELS = ["verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component"]
BUCKETS = (0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45,
           60)

REQUESTS = Counter("apiserver_request_total",
                   "Counter of apiserver requests broken out for each verb, dry run value, group, version, "
                   "resource, scope, component, and HTTP response code.", [*LABELS, "code"])
DURATION = Histogram("apiserver_request_duration_seconds",
                     "Response latency distribution in seconds for each verb, dry run value, group, version, "
                     "resource, subresource, scope and component.", LABELS, buckets=BUCKETS)

Labels = tuple[str, str, str, str, str, str, str, str]


def labels_of(target: Target, method: str, query: Mapping[str, str], content_type: str) -> Labels:
    """kube-apiserver's labels of a request to ``target`` (as the request's handler resolved it)."""
    if target.name is not None or method == "POST":
        scope = "resource"
    else:
        scope = "namespace" if target.namespace else "cluster"
    verb = method
    if method in ("GET", "HEAD"):
        verb = "GET" if scope == "resource" else "LIST"
        if query.get("watch", "").lower() not in ("", "0", "false"):
            verb = "WATCH"
    elif method == "PATCH" and content_type.split(";")[0].strip() == APPLY_PATCH:
        verb = "APPLY"
    dry_run = "All" if query.get("dryRun") else ""
    info = target.info
    subresource = target.subresource or ""
    return (verb, dry_run, info.group, info.version, info.plural, subresource, scope, "apiserver")


class Children:
    """The counter and histogram children of the label sets seen, bound once each."""

    def __init__(self) -> None:
        self._counters: dict[tuple[Labels, int], Counter] = {}
        self._histograms: dict[Labels, Histogram] = {}

    def observe(self, labels: Labels, code: int, seconds: float) -> None:
        counter = self._counters.get((labels, code))
        if counter is None:
            counter = self._counters[(labels, code)] = REQUESTS.labels(*labels, str(code))
        histogram = self._histograms.get(labels)
        if histogram is None:
            histogram = self._histograms[labels] = DURATION.labels(*labels)
        counter.inc()
        histogram.observe(seconds)


__all__ = ["BUCKETS", "DURATION", "LABELS", "REQUESTS", "Children", "Labels", "labels_of"]
