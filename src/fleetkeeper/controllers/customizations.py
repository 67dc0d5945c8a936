"""The customizations controller: ResourceInterpreterCustomization objects → the interpreter.

A user applies a ResourceInterpreterCustomization (Lua scripts for a kind) and the
whole pipeline — the detector's replicas, the binding controller's ReviseReplica, the
work-status controller's health, the binding-status controller's aggregation — must
use it. The interpreter is shared by every controller through the
:class:`~fleetkeeper.runtime.context.Context`, so this controller only has to keep its
set of customizations equal to the objects in the store.

It does so **synchronously, in the informer's handler**: every add, update and delete
recomputes the set from the informer's cache and hands it to
``interpreter.set_customizations``. Handlers run in the informer's task, before the
manager starts any controller for the objects present at start, so no workload is ever
interpreted without the customizations that existed when the control plane started —
a queue in between would leave that to chance. A customization that does not parse
(or whose Lua does not compile) is left out, so one broken object cannot disable the
others; the reconciler then reports it with a ``Warning`` event on the object.
"""

from __future__ import annotations

import structlog

from fleetkeeper import errors
from fleetkeeper.api.config import ResourceInterpreterCustomization
from fleetkeeper.interpreter import Customization, Interpreter
from fleetkeeper.runtime.handler import FuncHandler
from fleetkeeper.runtime.informer import Informer
from fleetkeeper.runtime.reconcile import Request, Result
from fleetkeeper.runtime.recorder import Recorder
from fleetkeeper.runtime.spec import ControllerSpec, Deps, Watch

CONTROLLER_NAME = "resource-interpreter-customization"
REASON_INVALID = "InvalidCustomization"
_log = structlog.get_logger("fleetkeeper.customizations")


def problem_of(interpreter: Interpreter, obj: ResourceInterpreterCustomization) -> str | None:
    """Why the interpreter cannot use ``obj`` (None when it can)."""
    try:
        parsed = Customization.parse(obj.to_dict())
        for operation, text in parsed.scripts.items():
            interpreter.sandbox.check(text, name=f"{parsed.name}.{operation.field}")
    except errors.InterpreterError as exc:
        return str(exc)
    return None


class Customizations:
    """Keeps the interpreter's customizations equal to the objects; reports broken ones."""

    def __init__(self, interpreter: Interpreter, informer: Informer[ResourceInterpreterCustomization],
                 recorder: Recorder) -> None:
        self._interpreter = interpreter
        self._informer = informer
        self._recorder = recorder
        #: name → why the interpreter cannot use it (reported once per problem by the recorder)
        self.invalid: dict[str, str] = {}

    def sync(self, old: ResourceInterpreterCustomization | None = None,
             new: ResourceInterpreterCustomization | None = None) -> None:
        """Hand every usable customization to the interpreter (an informer handler)."""
        usable = []
        invalid: dict[str, str] = {}
        for obj in self._informer.list():
            problem = problem_of(self._interpreter, obj)
            if problem is None:
                usable.append(obj.to_dict())
            else:
                invalid[obj.name] = problem
        self._interpreter.set_customizations(usable)
        self.invalid = invalid
        if invalid:
            _log.warning("customizations left out", invalid=sorted(invalid))

    async def reconcile(self, request: Request) -> Result:
        obj = self._informer.get(request.name)
        problem = self.invalid.get(request.name) if obj is not None else None
        if obj is None or problem is None:
            if obj is not None:
                self._recorder.clear(obj, REASON_INVALID)
            return Result()
        await self._recorder.once(obj, REASON_INVALID, value=problem,
                                  event=("Warning", REASON_INVALID, f"customization not used: {problem}"))
        return Result()


def _new(deps: Deps) -> Customizations:
    informer = deps.informers.informer_for(ResourceInterpreterCustomization)
    recorder = deps.ctx.recorder(CONTROLLER_NAME)
    customizations = Customizations(deps.ctx.interpreter, informer, recorder)
    informer.add_handler(FuncHandler(customizations.sync))
    informer.add_handler(recorder.forgetting())
    return customizations


#: watches ResourceInterpreterCustomizations; sets them on the context's interpreter (and
#: records an event for a customization that cannot be used)
SPEC = ControllerSpec(CONTROLLER_NAME, reconciler=_new, kind=ResourceInterpreterCustomization,
                      watches=(Watch(ResourceInterpreterCustomization),))


__all__ = ["CONTROLLER_NAME", "SPEC", "Customizations", "problem_of"]
