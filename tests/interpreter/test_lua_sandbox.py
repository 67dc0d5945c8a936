"""The Lua sandbox: hostile scripts end in ScriptError and the runtime keeps working; Karmada's
calling conventions, 5.1 compatibility and conversion rules hold."""

from __future__ import annotations

from typing import Any

import pytest

from fleetkeeper import errors
from fleetkeeper.interpreter.lua import Limits, LuaSandbox

from .conftest import FAST, FixedClock, TickingClock


@pytest.fixture
def sandbox() -> LuaSandbox:
    return LuaSandbox(clock=FixedClock(), limits=FAST)


def call(sandbox: LuaSandbox, body: str, *args: Any, results: int = 1) -> list[Any]:
    values = sandbox.call(body, "F", list(args), results=results, name="test")
    for value in values:
        assert value.error is None, value.error
    return [value.value for value in values]


def still_works(sandbox: LuaSandbox) -> None:
    assert call(sandbox, "function F(x) return x.a + 1 end", {"a": 41}) == [42]


HOSTILE = [
    pytest.param("function F() while true do end end", "instruction budget", id="an endless loop"),
    pytest.param(
        "function F() while true do pcall(function() while true do end end) end end",
        "instruction budget",
        id="an endless loop that catches the stop with pcall",
    ),
    pytest.param(
        "function F() return xpcall(function() while true do end end, function() while true do end end) end",
        "instruction budget",
        id="an endless loop whose error handler loops too",
    ),
    pytest.param(
        "function F() local t = {} for i = 1, 1e12 do t[i] = i end end",
        "memory limit",
        id="a table that grows without end",
    ),
    pytest.param(
        "function F() local s = 'x' while true do s = s .. s end end",
        "memory limit",
        id="a string that doubles without end",
    ),
    pytest.param(
        "function F() local function f() return 1 + f() end return f() end", "test", id="unbounded recursion"
    ),
    pytest.param(
        "function F() return string.rep('x', 1e9) end", "string.rep is not supported", id="string.rep"
    ),
    pytest.param(
        "function F() return ('x'):rep(1e9) end",
        "string.rep is not supported",
        id="string.rep through the string metatable",
    ),
    pytest.param(
        "function F() return string.gsub('x', 'x', 'y') end", "string.gsub is not supported", id="string.gsub"
    ),
    pytest.param("function F() return string.dump(F) end", "string.dump is not supported", id="string.dump"),
    pytest.param(
        "function F() return os.execute('true') end",
        "attempt to call a nil value (field 'execute')",
        id="os.execute",
    ),
    pytest.param(
        "function F() return os.getenv('HOME') end",
        "attempt to call a nil value (field 'getenv')",
        id="os.getenv",
    ),
    pytest.param(
        "function F() return io.open('/etc/passwd') end",
        "attempt to index a nil value (global 'io')",
        id="io.open",
    ),
    pytest.param("function F() return require('io') end", "module 'io' not found", id="require of io"),
    pytest.param(
        "function F() return require('socket') end", "module 'socket' not found", id="require of a C module"
    ),
    pytest.param(
        "function F() return package.loadlib('libc.so.6', 'system') end",
        "loadlib is not supported",
        id="package.loadlib",
    ),
    pytest.param(
        "function F() return load('return 1')() end", "call function load is not supported", id="load"
    ),
    pytest.param(
        "function F() return loadstring('return 1')() end",
        "call function loadstring is not supported",
        id="loadstring",
    ),
    pytest.param(
        "function F() return dofile('/etc/passwd') end", "call function dofile is not supported", id="dofile"
    ),
    pytest.param(
        "function F() return debug.getinfo(1) end",
        "attempt to index a nil value (global 'debug')",
        id="the debug library",
    ),
    pytest.param(
        "function F() return collectgarbage('count') end",
        "call function collectgarbage is not supported",
        id="collectgarbage",
    ),
    pytest.param(
        "function F() return setmetatable({}, {__gc = F}) end",
        "call function setmetatable is not supported",
        id="setmetatable",
    ),
    pytest.param(
        "function F() local mt = getmetatable('') mt.__index = {} end",
        "call function getmetatable is not supported",
        id="getmetatable on strings",
    ),
    pytest.param(
        "function F() return rawset(_G, 'x', 1) end", "call function rawset is not supported", id="rawset"
    ),
    pytest.param(
        "function F() return python.eval('1') end",
        "attempt to index a nil value (global 'python')",
        id="the python bridge",
    ),
    pytest.param(
        "function F() return coroutine.create(F) end",
        "attempt to index a nil value (global 'coroutine')",
        id="coroutines",
    ),
    pytest.param(
        "function F() local s = 'x' for i = 1, 21 do s = s .. s end return s:upper() end",
        "exceeds the maximum allowed input string length",
        id="a string argument over 1 MB",
    ),
    pytest.param(
        "function F() return string.find(string.format('%099d', 1), '.-.-.-.-.-x') end",
        "too many repetitions",
        id="a pattern that backtracks catastrophically",
    ),
    pytest.param(
        "function F() error({}) end", "error object is a table value", id="an error that is not a string"
    ),
    pytest.param("function F() error('\\255') end", "test", id="an error message that is not UTF-8"),
]


@pytest.mark.parametrize(("body", "message"), HOSTILE)
def test_a_hostile_script_ends_in_a_script_error_and_the_runtime_survives(
    sandbox: LuaSandbox, body: str, message: str
) -> None:
    with pytest.raises(errors.ScriptError, match=message.replace("(", r"\(").replace(")", r"\)")):
        sandbox.call(body, "F", [], results=1, name="test")
    still_works(sandbox)


def test_the_default_budget_stops_an_endless_loop() -> None:
    sandbox = LuaSandbox(clock=FixedClock())
    with pytest.raises(errors.ScriptError, match="instruction budget of 300000000 exceeded"):
        sandbox.call("function F() while true do end end", "F", [], results=1)
    still_works(sandbox)


def test_the_injected_clocks_deadline_stops_a_long_script() -> None:
    sandbox = LuaSandbox(clock=TickingClock(), limits=Limits(instructions=10**12, seconds=1.0))
    with pytest.raises(errors.ScriptError, match=r"time limit of 1\.0 s exceeded"):
        sandbox.call("function F() while true do end end", "F", [], results=1)


def test_a_clock_that_stands_still_never_ends_a_script_by_deadline(sandbox: LuaSandbox) -> None:
    with pytest.raises(errors.ScriptError, match="instruction budget"):
        sandbox.call("function F() while true do end end", "F", [], results=1)


def test_a_syntax_error_names_the_script_and_line(sandbox: LuaSandbox) -> None:
    with pytest.raises(
        errors.ScriptError, match=r"^ric\.healthInterpretation:3: unexpected symbol near 'end'"
    ):
        sandbox.check("function F()\n  local x = {\nend", name="ric.healthInterpretation")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        pytest.param("x = 1", "not found function F", id="a script without the function"),
        pytest.param("F = 3", "F is not a function: number", id="a script whose global is not a function"),
        pytest.param("function F() error('boom') end", "test:1: boom", id="a runtime error with its line"),
    ],
)
def test_function_lookup_and_runtime_errors(sandbox: LuaSandbox, body: str, message: str) -> None:
    with pytest.raises(errors.ScriptError, match=message):
        sandbox.call(body, "F", [], results=1, name="test")


def test_top_level_code_runs_on_every_call_in_a_fresh_environment(sandbox: LuaSandbox) -> None:
    script = "count = (count or 0) + 1\nfunction F() return count end"
    assert [call(sandbox, script) for _ in range(3)] == [[1], [1], [1]]


def test_a_script_is_compiled_once(sandbox: LuaSandbox) -> None:
    for _ in range(3):
        call(sandbox, "function F() return 1 end")
    call(sandbox, "function F() return 2 end")
    assert sandbox.compiled_scripts == 2


def test_one_script_cannot_change_another_scripts_libraries(sandbox: LuaSandbox) -> None:
    call(sandbox, "function F() string.upper = nil; table.insert = nil; return 1 end")
    assert call(sandbox, "function F() local t = {} table.insert(t, 'a') return string.upper(t[1]) end") == [
        "A"
    ]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        pytest.param("function F() return unpack({1, 2, 3}) end", [1, 2, 3], id="unpack is a global"),
        pytest.param(
            "function F() return table.getn({1, 2, 3}), table.maxn({1, 2, 3}), 0 end",
            [3, 3, 0],
            id="table.getn and table.maxn exist",
        ),
        pytest.param(
            "function F() return tostring(3.0), tostring(10 / 2), tostring(0.5) end",
            ["3", "5", "0.5"],
            id="tostring prints integral floats like Lua 5.1",
        ),
        pytest.param(
            "function F() return math.pow(2, 10), math.mod(7, 3), math.log10(1000) end",
            [1024, 1, 3],
            id="the Lua 5.1 math functions exist",
        ),
        pytest.param(
            "function F() local out = {} for w in string.gfind('a b', '%a') do out[#out + 1] = w end "
            "return out[1], out[2], _VERSION end",
            ["a", "b", "Lua 5.1"],
            id="string.gfind and _VERSION",
        ),
        pytest.param(
            "function F() return ('AbC'):lower(), ('x'):upper(), #('abc') end",
            ["abc", "X", 3],
            id="string methods work on string values",
        ),
    ],
)
def test_lua_5_1_compatibility(sandbox: LuaSandbox, body: str, expected: list[Any]) -> None:
    assert call(sandbox, body, results=len(expected)) == expected


def test_null_drops_object_keys_and_array_elements(sandbox: LuaSandbox) -> None:
    script = "function F(o) return o.gone == nil, #o.list, o.list[2] end"
    assert call(sandbox, script, {"gone": None, "list": [1, None, 2]}, results=3) == [True, 2, 2]


def test_numbers_keep_their_integer_values(sandbox: LuaSandbox) -> None:
    assert call(sandbox, "function F(o) return {a = o.n, b = o.n / 2, c = o.f} end", {"n": 4, "f": 1.5}) == [
        {"a": 4, "b": 2, "c": 1.5}
    ]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        pytest.param(
            "function F() return {1, nil, 3} end", "cannot encode sparse array", id="a sparse array"
        ),
        pytest.param(
            "function F() return {[1] = 'a', x = 'b'} end",
            "cannot encode mixed or invalid key types",
            id="mixed keys",
        ),
        pytest.param(
            "function F() local t = {} t.self = t return t end",
            "cannot encode recursively nested tables",
            id="a cycle",
        ),
        pytest.param(
            "function F() local a = {} return {a, a} end",
            "cannot encode recursively nested tables",
            id="the same table reached twice",
        ),
        pytest.param("function F() return {f = F} end", "cannot encode function to JSON", id="a function"),
        pytest.param("function F() return {n = 0/0} end", "unsupported value", id="not a number"),
        pytest.param(
            "function F() return {s = '\\255'} end", "not valid UTF-8", id="a string that is not UTF-8"
        ),
    ],
)
def test_results_that_karmadas_encoder_refuses(sandbox: LuaSandbox, body: str, message: str) -> None:
    (value,) = sandbox.call(body, "F", [], results=1)
    assert value.type == "table"
    assert value.error is not None and message in value.error


def test_os_time_and_os_date_read_the_injected_clock(sandbox: LuaSandbox) -> None:
    script = (
        "function F() return os.time(), os.date('!%Y-%m-%d'), os.date('*t').year, "
        "os.time({year = 2026, month = 1, day = 2, hour = 0}) end"
    )
    assert call(sandbox, script, results=4) == [1767225600, "2026-01-01", 2026, 1767312000]


def test_the_kube_library_is_the_only_module(sandbox: LuaSandbox) -> None:
    script = (
        "local kube = require('kube') function F() return type(kube.resourceAdd), require('kube') == kube end"
    )
    assert call(sandbox, script, results=2) == ["function", True]


def test_pairs_walks_keys_in_sorted_order_so_results_are_deterministic(sandbox: LuaSandbox) -> None:
    script = """function F()
  local t = {zeta = 1, alpha = 2, mid = 3, [2] = 'b', [1] = 'a'}
  local seen = {}
  for k in pairs(t) do seen[#seen + 1] = tostring(k) end
  return table.concat(seen, ",")
end"""
    assert call(sandbox, script) == ["1,2,alpha,mid,zeta"]


def test_pairs_skips_fields_cleared_during_the_walk(sandbox: LuaSandbox) -> None:
    script = """function F()
  local t = {a = 1, b = 2, c = 3}
  local seen = {}
  for k in pairs(t) do seen[#seen + 1] = k; t.b = nil end
  return table.concat(seen, ",")
end"""
    assert call(sandbox, script) == ["a,c"]
