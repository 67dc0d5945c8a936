"""The resource interpreter: Karmada's operations on resource templates of any kind.

The controllers, the scheduler and the CLI ask the interpreter what they cannot know about an
arbitrary kind: how many replicas it has and what each needs, how to write a cluster's share back,
which member-side fields to keep, how to reflect and aggregate status, whether it is healthy, and
what it depends on. Answers come from ResourceInterpreterCustomization Lua scripts first, then the
native rules for Kubernetes kinds, then defaults (see :mod:`.core`).

Public API::

    from fleetkeeper import interpreter
    interp = interpreter.Interpreter(customizations)       # wire dicts or models
    interp.interpret_health(obj)                          # -> bool
    interp.get_replicas(obj)                              # -> (int, requirements | None)
    await interp.aio(awaiting_io).retain(desired, observed)  # on the event loop: Lua off it

Modules: :mod:`.core` (façade), :mod:`.aio` (the operations awaited), :mod:`.lanes` (a thread and
a Lua runtime per customization), :mod:`.operation` (names), :mod:`.customization` (merging RICs),
:mod:`.declarative` (script conventions), :mod:`.lua` (the sandbox, the only lupa importer),
:mod:`.convert` (empty-table repair), :mod:`.kube` (the ``kube`` Lua library),
:mod:`.native` (built-in rules), :mod:`.fields`; Kubernetes quantities are
:mod:`fleetkeeper.api.quantity`'s.
"""

from fleetkeeper.interpreter.aio import AsyncInterpreter
from fleetkeeper.interpreter.core import Interpreter
from fleetkeeper.interpreter.customization import Customization, InvalidCustomization, Script, conflicts
from fleetkeeper.interpreter.lanes import Busy
from fleetkeeper.interpreter.lua import Limits
from fleetkeeper.interpreter.operation import Operation

__all__ = [
    "AsyncInterpreter", "Busy", "Customization", "Interpreter", "InvalidCustomization", "Limits", "Operation",
    "Script", "conflicts",
]
