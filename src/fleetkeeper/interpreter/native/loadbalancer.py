"""Native AggregateStatus for Service and Ingress: the fleet's load-balancer addresses (spec B.2.4).

Each member cluster's LoadBalancer Service (or Ingress) gets its own addresses; the template shows
all of them, each address once. Entries are grouped by (hostname, ip, ipMode) — Ingress by
(hostname, ip) — the ports of a group are the union of its members' ports (distinct by port,
protocol and error), and everything is sorted so the result does not depend on cluster order:

* ports by port, then protocol, then error, a missing error first;
* entries with a hostname before those without, hostnames ascending, then IP ascending, then
  ipMode ascending with a missing ipMode last.

A Service that is not of type LoadBalancer is returned untouched. The new status holds only the
load balancer, which drops other status fields (Karmada's behaviour).
"""

from __future__ import annotations

import functools
from typing import Any

from fleetkeeper.interpreter import fields
from fleetkeeper.interpreter.native.aggregate import Items, member_statuses, replace_status

Obj = dict[str, Any]


def _port_key(port: Obj) -> tuple[int, str, int, str]:
    error = port.get("error")
    return (fields.get_int(port, "port"), str(port.get("protocol") or ""),
            0 if error is None else 1, "" if error is None else str(error))


def _entry_order(a: Obj, b: Obj, *, with_ip_mode: bool) -> int:
    """Karmada's comparator, as a ``cmp`` function (-1 when ``a`` sorts first)."""
    ha, hb = a.get("hostname") or "", b.get("hostname") or ""
    if ha != hb:
        if not hb:
            return -1
        if not ha:
            return 1
        return -1 if ha < hb else 1
    ia, ib = a.get("ip") or "", b.get("ip") or ""
    if ia != ib:
        return -1 if ia < ib else 1
    if not with_ip_mode:
        return 0
    ma, mb = a.get("ipMode"), b.get("ipMode")
    if ma == mb:
        return 0
    if mb is None:
        return -1
    if ma is None:
        return 1
    return -1 if str(ma) < str(mb) else 1


def dedupe_and_sort(ingresses: list[Any], *, with_ip_mode: bool) -> list[Obj]:
    """Merge load-balancer ingress entries that share an address; see the module notes."""
    groups: dict[tuple[str, str, Any], Obj] = {}
    ports: dict[tuple[str, str, Any], dict[tuple[int, str, int, str], Obj]] = {}
    for entry in ingresses:
        if not isinstance(entry, dict):
            continue
        key = (entry.get("hostname") or "", entry.get("ip") or "",
               entry.get("ipMode") if with_ip_mode else None)
        merged = {k: fields.deep(v) for k, v in entry.items() if k != "ports"}
        groups[key] = merged
        bucket = ports.setdefault(key, {})
        for port in fields.get_list(entry, "ports"):
            if isinstance(port, dict):
                bucket.setdefault(_port_key(port), fields.deep(port))
    out = []
    for key, merged in groups.items():
        if ports[key]:
            merged["ports"] = [ports[key][k] for k in sorted(ports[key])]
        out.append(merged)
    order = functools.partial(_entry_order, with_ip_mode=with_ip_mode)
    return sorted(out, key=functools.cmp_to_key(order))


def _aggregate(obj: Obj, items: Items, *, with_ip_mode: bool) -> Obj:
    collected: list[Any] = []
    for _, status in member_statuses(items):
        collected.extend(fields.get_list(status, "loadBalancer", "ingress"))
    merged = dedupe_and_sort(collected, with_ip_mode=with_ip_mode)
    balancer: Obj = {"ingress": merged} if merged else {}
    return replace_status(obj, {"loadBalancer": balancer})


def aggregate_service(obj: Obj, items: Items) -> Obj:
    """A LoadBalancer Service shows every member's addresses."""
    if fields.get_str(obj, "spec", "type") != "LoadBalancer":
        return obj
    return _aggregate(obj, items, with_ip_mode=True)


def aggregate_ingress(obj: Obj, items: Items) -> Obj:
    """An Ingress shows every member's addresses."""
    return _aggregate(obj, items, with_ip_mode=False)
