"""What every controller is built from, and which clusters it serves.

Controllers are built from the spec each module declares
(:class:`~fleetkeeper.runtime.spec.ControllerSpec`); everything they may touch comes in
:class:`Context` — the typed client, the Clock, the Options, the member pool, the resource
interpreter, and the services a plane's controllers share: the sink their Events and
timeline entries are written through (a recorder factory over it) and the caches of the
member clusters' managed objects. The wiring layer (``cmd``) builds it, so no controller
reaches for a global or a backend.

:class:`Scope` says which member clusters a controller instance serves. The control
plane serves every ``Push`` cluster; a Pull agent runs the *same* controllers scoped
to its own cluster (Karmada's agent runs cluster-status, execution and work-status
for its member). Controllers filter clusters and execution namespaces with
``ctx.scope.serves(...)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fleetkeeper.api import cluster as cluster_api
from fleetkeeper.api import constants
from fleetkeeper.client.interface import Client
from fleetkeeper.clock import Clock
from fleetkeeper.interpreter import Interpreter
from fleetkeeper.members.interface import MemberPool
from fleetkeeper.options import Options
from fleetkeeper.runtime.member_objects import MemberObjects
from fleetkeeper.runtime.recorder import Recorder, Sink


@dataclass(frozen=True)
class Scope:
    """The control plane (``agent_cluster=None``) serves Push clusters; an agent, its own."""

    agent_cluster: str | None = None

    @property
    def is_agent(self) -> bool:
        return self.agent_cluster is not None

    def serves(self, cluster: cluster_api.Cluster) -> bool:
        """Whether this instance probes/applies for ``cluster``."""
        if self.agent_cluster is None:
            return cluster.spec.sync_mode == "Push"
        return cluster.name == self.agent_cluster

    def serves_namespace(self, namespace: str, clusters: dict[str, cluster_api.Cluster]) -> bool:
        """Whether Works in execution namespace ``namespace`` are this instance's to apply."""
        try:
            name = constants.cluster_of_execution_namespace(namespace)
        except ValueError:
            return False
        if self.agent_cluster is not None:
            return name == self.agent_cluster
        found = clusters.get(name)
        return found is not None and found.spec.sync_mode == "Push"


@dataclass
class Context:
    """Dependencies handed to every controller's factory."""

    client: Client
    clock: Clock
    options: Options
    members: MemberPool
    interpreter: Interpreter
    #: where every recorder of the plane writes (one per client: records keep their order)
    sink: Sink
    #: the managed objects in the members, watched once for every controller of the plane
    member_objects: MemberObjects
    scope: Scope = field(default_factory=Scope)

    def recorder(self, component: str) -> Recorder:
        """A recorder writing Events and timeline entries as ``component``."""
        return Recorder(self.sink, self.clock, component)


__all__ = ["Context", "Scope"]
