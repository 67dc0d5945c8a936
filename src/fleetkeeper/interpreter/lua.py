"""Running customization scripts: Lua 5.4 (lupa) in a sandbox, bounded in work, time and memory.

Karmada runs ResourceInterpreterCustomization scripts in gopher-lua (Lua 5.1 semantics) with a
whitelisted library set; scripts written for it must run here unchanged. This is the only module
that imports lupa. The Lua side of the sandbox is ``sandbox.lua`` (read it with this file).

Design:

* **One runtime per sandbox**, guarded by a lock (a Lua state is not thread-safe). Hostile input
  cannot corrupt it: after a memory error the runtime is discarded and rebuilt on the next call.
* **Compile once.** Scripts are compiled by text (and chunk name) into an LRU cache. Each call
  runs the compiled chunk in a *fresh* environment — top-level code runs on every call, as in
  Karmada, but nothing leaks between calls or between customizations.
* **Whitelist, not blacklist.** A script sees only Karmada's globals: base functions with the
  unsafe ones replaced by stubs that raise, ``table``, ``math``, a ``string`` without
  ``rep``/``gsub``/``dump`` and with a 1 MB argument limit, ``os.time``/``os.date`` on the
  injected clock, and ``require`` that knows only ``kube``. There is no ``io``, ``debug``,
  ``load``, ``coroutine``; Python objects are unreachable (an attribute filter guards the few
  host callbacks the sandbox holds privately).
* **Bounded.** A count hook, installed before ``debug`` is hidden, charges an instruction budget;
  C functions charge for the bytes they touch; the injected clock's deadline is checked at every
  16th of those points (reading it calls into Python; it never fires on virtual time). ``pcall``
  cannot swallow a stop. Memory is capped by lupa's allocator. What comes out is bounded too: a
  value whose JSON encoding exceeds ``Limits.result_bytes`` (``Limits.object_bytes`` for a whole
  object, and for what a script hands to the ``kube`` library) is refused while Lua measures it,
  before any Python value is built; error messages are cut at ``Limits.message_bytes``. Every
  failure surfaces as :class:`fleetkeeper.errors.ScriptError`.
* **Deterministic.** ``pairs`` walks keys in sorted order (Lua 5.4 hash order changes between
  runtimes; gopher-lua's insertion order cannot be reproduced), ``math.random`` is reseeded per
  call, and ``os.time``/``os.date`` read the injected clock.
* **Karmada's conversions.** Arguments go in with JSON semantics (``null`` drops the key or the
  array element). Results come back through the checks of Karmada's JSON encoder (no sparse
  arrays, no mixed keys, no table reached twice, no functions); the empty-table repair is in
  :mod:`.convert`.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from importlib import resources
from typing import Any

import lupa.lua54 as lupa

from fleetkeeper import errors
from fleetkeeper.api import limits
from fleetkeeper.clock import Clock, SystemClock
from fleetkeeper.interpreter import kube

_STEP = 1000


@dataclass(frozen=True)
class Limits:
    """How much one script call may consume."""

    #: Lua VM instructions (plus charged C work); 300 M is roughly one second of work.
    instructions: int = 300_000_000
    #: Seconds on the injected clock (Karmada's timeout); None disables the deadline.
    seconds: float | None = 1.0
    #: Bytes the whole Lua runtime may allocate.
    memory: int = 64 * 1024 * 1024
    #: Longest string a ``string`` function accepts (Karmada's limit).
    string_bytes: int = 1_000_000
    #: Worst-case matcher steps a pattern may imply before it is refused.
    pattern_steps: float = 1e9
    #: Deepest table nesting a result may have.
    max_depth: int = 100
    #: Largest result (its compact JSON encoding) of a call that answers with a value: a reflected
    #: status, replicas and their requirements, components, dependencies, health.
    result_bytes: int = 512 * 1024
    #: Largest result of a call that answers with a whole object (Retain, ReviseReplica,
    #: AggregateStatus), and largest value a script hands to the ``kube`` library: a stored object's limit.
    object_bytes: int = limits.MAX_OBJECT_BYTES
    #: Longest error message a script's failure carries (the rest is cut).
    message_bytes: int = 1024
    #: Compiled scripts kept.
    cache_size: int = 256


@dataclass(frozen=True)
class LuaValue:
    """One value a script returned: its Lua type and its wire value (or why it has none)."""

    type: str
    value: Any = None
    error: str | None = None


def _deny(obj: object, attr: object, is_setting: bool) -> object:
    raise AttributeError(f"access to attribute {attr!r} of a host object is not allowed")


class LuaSandbox:
    """Compiles and runs customization scripts; see the module notes."""

    def __init__(self, *, clock: Clock | None = None, limits: Limits | None = None) -> None:
        self.clock: Clock = clock or SystemClock()
        self.limits = limits or Limits()
        self._lock = threading.RLock()
        self._runtime: Any = None
        self._kit: Any = None
        self._cache: OrderedDict[tuple[str, str], Any] = OrderedDict()

    # ------------------------------------------------------------------ public
    @property
    def compiled_scripts(self) -> int:
        """How many compiled scripts the cache holds."""
        return len(self._cache)

    def check(self, script: str, *, name: str = "luaScript") -> None:
        """Compile ``script`` without running it; raise ScriptError on a syntax error."""
        with self._lock:
            self._compile(script, name)

    def call(self, script: str, function: str, args: Sequence[Any], *, results: int,
             name: str = "luaScript", max_bytes: int | None = None) -> list[LuaValue]:
        """Run ``script``, call its global ``function`` with ``args``, return ``results`` values.

        A returned value larger than ``max_bytes`` encoded (default ``limits.result_bytes``) fails
        the call (a string) or carries the error (a table).
        """
        limit = self.limits.result_bytes if max_bytes is None else max_bytes
        with self._lock:
            chunk = self._compile(script, name)
            state = self._kit.state
            try:
                lua_args = [self._to_lua(arg) for arg in args]
                state["budget"], state["exhausted"] = self.limits.instructions, False
                seconds = self.limits.seconds
                state["deadline"] = self.clock.monotonic() + seconds if seconds is not None else False
                state["armed"] = True
                try:
                    out = self._kit.run(chunk, function, results, limit, *lua_args)
                finally:
                    state["armed"] = False
                if not out[0]:
                    raise self._failure(name, out[1])
                return [self._value(v, limit) for v in out[1:1 + results]]
            except lupa.LuaMemoryError:
                self._discard()
                raise errors.ScriptError(
                    f"{name}: memory limit of {self.limits.memory} bytes exceeded") from None
            except lupa.LuaError as exc:
                raise self._failure(name, str(exc)) from None
            except UnicodeDecodeError:
                raise errors.ScriptError(
                    f"{name}: the result holds a string that is not valid UTF-8") from None

    # ------------------------------------------------------------------ runtime
    def _ensure(self) -> Any:
        if self._kit is None:
            runtime = lupa.LuaRuntime(register_eval=False, register_builtins=False,
                                      unpack_returned_tuples=True, attribute_filter=_deny,
                                      max_memory=self.limits.memory)
            source = resources.files("fleetkeeper.interpreter").joinpath("sandbox.lua").read_text("utf-8")
            host = runtime.table_from({
                "now": self.clock.monotonic,
                "os_time": self._host(self._os_time, convert=False),
                "os_date": self._os_date,
                "resource_add": self._host(kube.resource_add),
                "accurate_pod_requirements": self._host(kube.accurate_pod_requirements),
                "get_pod_dependencies": self._host(kube.get_pod_dependencies),
                "get_resource_quantity": self._host(kube.get_resource_quantity),
            })
            self._runtime = runtime
            self._kit = runtime.execute(source, host, _STEP, self.limits.string_bytes,
                                        self.limits.pattern_steps, self.limits.message_bytes,
                                        name="=sandbox", mode="t")
        return self._kit

    def _discard(self) -> None:
        """Drop the runtime (after a memory error); the next call builds a fresh one."""
        self._runtime = self._kit = None
        self._cache.clear()

    def _compile(self, script: str, name: str) -> Any:
        kit = self._ensure()
        key = (name, script)
        if key in self._cache:
            self._cache.move_to_end(key)
            chunk = self._cache[key]
        else:
            ok, chunk = kit.compile(script, "=" + name)
            if not ok:
                chunk = errors.ScriptError(f"{chunk}")
            self._cache[key] = chunk
            while len(self._cache) > self.limits.cache_size:
                self._cache.popitem(last=False)
        if isinstance(chunk, errors.ScriptError):
            raise chunk
        return chunk

    def _failure(self, name: str, message: object) -> errors.ScriptError:
        state = self._kit.state if self._kit is not None else None
        reason = state["exhausted"] if state is not None else False
        text = str(message).split("\nstack traceback:", 1)[0]
        if reason == "instruction budget exceeded":
            return errors.ScriptError(f"{name}: instruction budget of {self.limits.instructions} exceeded "
                                      "(endless loop?)")
        if reason == "time limit exceeded":
            return errors.ScriptError(f"{name}: time limit of {self.limits.seconds} s exceeded")
        if text == "not enough memory":
            self._discard()
            return errors.ScriptError(f"{name}: memory limit of {self.limits.memory} bytes exceeded")
        return errors.ScriptError(text if text.startswith(name) else f"{name}: {text}")

    # ------------------------------------------------------------------ conversions
    def _to_lua(self, value: Any) -> Any:
        cleaned = _clean(value)
        if isinstance(cleaned, dict | list):
            return self._runtime.table_from(cleaned, recursive=True)
        return cleaned

    def _from_lua(self, value: Any, max_bytes: int) -> Any:
        """A Lua value as a wire value; raises ScriptError when Karmada's encoder would refuse it
        or its encoding exceeds ``max_bytes``."""
        if lupa.lua_type(value) is not None:
            try:
                self._kit.check(value, self.limits.max_depth, max_bytes)
            except lupa.LuaError as exc:
                raise errors.ScriptError(str(exc).split("\nstack traceback:", 1)[0]) from None
        return _walk(value)

    def _value(self, value: Any, max_bytes: int) -> LuaValue:
        kind = lupa.lua_type(value) or _python_lua_type(value)
        if kind in ("table", "nil", "boolean", "number", "string"):
            try:
                return LuaValue(kind, self._from_lua(value, max_bytes))
            except errors.ScriptError as exc:
                return LuaValue(kind, None, str(exc))
        return LuaValue(kind, None, f"cannot encode {kind} to JSON")

    def _host(self, function: Callable[..., Any], *, convert: bool = True) -> Callable[..., tuple[Any, ...]]:
        """A host callback: wire-value arguments, ``(ok, value-or-message)`` result, never raises."""

        def call(*args: Any) -> tuple[Any, ...]:
            try:
                limit = self.limits.object_bytes
                values = [self._from_lua(a, limit) for a in args] if convert else list(args)
                return True, self._to_lua(function(*values))
            except (errors.FleetkeeperError, ValueError, TypeError, OverflowError) as exc:
                return False, str(exc)

        return call

    # ------------------------------------------------------------------ os.time / os.date
    def _os_time(self, has_table: bool, *parts: Any) -> int:
        if not has_table:
            return int(self.clock.now().timestamp())
        year, month, day, hour, minute, second = (list(parts) + [None] * 6)[:6]
        for field, value in (("day", day), ("month", month), ("year", year)):
            if value is None:
                raise errors.InterpreterError(f"field '{field}' missing in date table")
        months = int(year) * 12 + int(month) - 1
        when = datetime(months // 12, months % 12 + 1, 1, tzinfo=UTC) + timedelta(
            days=int(day) - 1, hours=12 if hour is None else int(hour),
            minutes=int(minute or 0), seconds=int(second or 0))
        return int(when.timestamp())

    def _os_date(self, fmt: Any, when: Any = None) -> tuple[Any, ...]:
        try:
            moment = self.clock.now() if when is None else datetime.fromtimestamp(float(when), UTC)
            text = str(fmt)
            text = text[1:] if text.startswith("!") else text
            if text.startswith("*t"):
                moment = moment.astimezone(UTC)
                return (True, moment.year, moment.month, moment.day, moment.hour, moment.minute,
                        moment.second, moment.isoweekday() % 7 + 1, moment.timetuple().tm_yday)
            return True, moment.astimezone(UTC).strftime(text)
        except (ValueError, TypeError, OverflowError, OSError) as exc:
            return False, f"bad argument to 'date' ({exc})"


def _clean(value: Any) -> Any:
    """Wire value → what goes into Lua: ``None`` dropped, integral floats as integers."""
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value if v is not None]
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**63:
        return float(value)
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise errors.InterpreterError(f"cannot pass a {type(value).__name__} to Lua")


def _walk(value: Any) -> Any:
    """Convert a checked Lua value (a tree: no cycles, valid keys) into dicts and lists."""
    if lupa.lua_type(value) != "table":
        if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
            return int(value)
        return value
    items = list(value.items())
    if not items:
        return []
    if isinstance(items[0][0], str):
        return {key: _walk(item) for key, item in items}
    return [_walk(item) for _, item in sorted(items, key=lambda pair: pair[0])]


def _python_lua_type(value: object) -> str:
    if value is None:
        return "nil"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str | bytes):
        return "string"
    return "userdata"
