"""kubectl's Tables from a simulated member's API, as kube-apiserver answers them.

``kubectl get`` asks for ``Accept: application/json;as=Table;g=meta.k8s.io;v=v1``; the member
answers a list, a get and each event of a watch with the columns kubectl prints for the kind
(:mod:`fleetkeeper.api.printing.kube`: a Pod's IP and NODE, a Deployment's IMAGES and SELECTOR
with ``-o wide``, …), ages told on the cluster's clock, and each row's object as
``includeObject`` asks. Without that header the objects come back as they are.
"""

from __future__ import annotations

from dataclasses import dataclass

from starlette.requests import Request

from fleetkeeper.api.printing.columns import Column
from fleetkeeper.api.printing.kube import kube_columns
from fleetkeeper.api.printing.table import include_object, table, wants_table
from fleetkeeper.clock import Clock
from fleetkeeper.members.simulated.objects import Obj
from fleetkeeper.members.simulated.server_discovery import Served


def _revision(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")


@dataclass(frozen=True)
class Printing:
    """How one request wants the objects of ``served``: as they are, or as a Table of ``columns``."""

    served: Served
    clock: Clock
    columns: tuple[Column, ...] | None = None
    include: str = "Metadata"

    @classmethod
    def of(cls, request: Request, served: Served, clock: Clock) -> Printing:
        """What ``request`` asks for (400 for an ``includeObject`` other than None, Metadata or Object)."""
        if not wants_table(request.headers.get("accept")):
            return cls(served, clock)
        include = include_object(request.query_params.get("includeObject"))
        return cls(served, clock, kube_columns(served.group, served.kind), include)

    def one(self, obj: Obj) -> Obj:
        """One object (a get, a watch event's)."""
        return obj if self.columns is None else self._table([obj], _revision(obj))

    def many(self, items: list[Obj], revision: str) -> Obj:
        """A list's answer: ``KindList``, or a Table."""
        if self.columns is not None:
            return self._table(items, revision)
        return {"kind": f"{self.served.kind}List", "apiVersion": self.served.group_version,
                "metadata": {"resourceVersion": revision}, "items": items}

    def _table(self, objects: list[Obj], revision: str) -> Obj:
        return table(self.columns or (), objects, now=self.clock.now(), resource_version=revision,
                     include_object=self.include)


__all__ = ["Printing"]
