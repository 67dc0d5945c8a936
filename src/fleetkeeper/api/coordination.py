"""Lease (``coordination.k8s.io/v1``): heartbeats of pull agents and leader election.

A pull-mode agent renews ``karmada-cluster/<cluster>`` (holder = the cluster name);
the cluster controller reads a newer ``renewTime`` as a heartbeat. Control-plane
components elect leaders on Leases in ``karmada-system``.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from fleetkeeper.api.base import Model
from fleetkeeper.api.core import MicroTime
from fleetkeeper.api.meta import Resource
from fleetkeeper.api.scheme import register


class LeaseSpec(Model):
    holder_identity: str | None = None
    lease_duration_seconds: int | None = None
    acquire_time: MicroTime | None = None
    renew_time: MicroTime | None = None
    lease_transitions: int | None = None
    strategy: str | None = None
    preferred_holder: str | None = None


@register
class Lease(Resource):
    API_VERSION: ClassVar[str] = "coordination.k8s.io/v1"
    KIND: ClassVar[str] = "Lease"
    PLURAL: ClassVar[str] = "leases"
    HAS_STATUS: ClassVar[bool] = False

    spec: LeaseSpec = Field(default_factory=LeaseSpec)


__all__ = ["Lease", "LeaseSpec"]
