-- The sandbox customization scripts run in (loaded once per Lua runtime by lua.py).
--
-- This chunk runs with the full Lua 5.4 standard library. It captures what it needs in locals,
-- installs the instruction-count hook while `debug` is still reachable, and returns a small kit
-- of functions only the host can call. Customization scripts never see the real globals: every
-- call runs the compiled script in a fresh environment built by new_env(), holding Karmada's
-- whitelist (base functions, table, string, math, os.time/os.date, require("kube")) plus the
-- Lua 5.1 compatibility shims gopher-lua users rely on.
--
-- Limits. `S.budget` is decremented every STEP instructions (and by C functions in proportion to
-- the bytes or elements they touch); below zero the script stops. `S.deadline` (from the host's
-- injected clock) is checked every CLOCK_EVERY of those points: reading the clock is a call into
-- the host, which must take Python's lock, so it is kept rare (a script running in a worker thread
-- then seldom waits for the event loop, nor makes it wait). A stop cannot be swallowed: pcall and
-- xpcall re-raise it. Memory is bounded by the runtime's allocator (lupa max_memory). What leaves
-- the sandbox is bounded too: error messages are cut at MESSAGE_LIMIT bytes, and kit.check refuses
-- a value whose JSON encoding would exceed the byte limit it is given.

local host, STEP, STRING_LIMIT, PATTERN_LIMIT, MESSAGE_LIMIT = ...
local CLOCK_EVERY = 16

local sethook, setupvalue = debug.sethook, debug.setupvalue
local error, pcall, xpcall, select, type, next = error, pcall, xpcall, select, type, next
local ipairs, tostring, tonumber, assert = ipairs, tostring, tonumber, assert
local rawget, load, getmetatable = rawget, load, getmetatable
local str, tbl, math = string, table, math
local pack, unpack = table.pack, table.unpack
local floor, mtype, huge = math.floor, math.type, math.huge
local sfmt, ssub = string.format, string.sub
local utf8len = utf8.len

local S = { armed = false, budget = 0, exhausted = false, deadline = false }
local BUDGET = "instruction budget exceeded"
local DEADLINE = "time limit exceeded"

local function stop(reason)
  S.exhausted = reason
  error(reason, 0)
end

local ticks = 0
sethook(function()
  if not S.armed then return end
  local left = S.budget - STEP
  S.budget = left
  if left < 0 then stop(BUDGET) end
  if S.deadline then
    ticks = ticks + 1
    if ticks >= CLOCK_EVERY then
      ticks = 0
      if host.now() > S.deadline then stop(DEADLINE) end
    end
  end
end, "", STEP)

-- Work done inside C functions does not count as instructions: charge it explicitly.
local function charge(n)
  if S.armed then
    local left = S.budget - n
    S.budget = left
    if left < 0 then stop(BUDGET) end
  end
end

local function rethrow(...)
  if S.exhausted then error(S.exhausted, 0) end
  return ...
end

local function safe_pcall(f, ...) return rethrow(pcall(f, ...)) end

-- A message handler runs before the error unwinds; after a stop raised inside the hook, hooks
-- are still disabled at that point, so the script's handler must not run at all.
local function safe_xpcall(f, handler, ...)
  local function guarded(...)
    if S.exhausted then return S.exhausted end
    return handler(...)
  end
  return rethrow(xpcall(f, guarded, ...))
end

local function copy(t)
  local c = {}
  for k, v in next, t do c[k] = v end
  return c
end

-- Lua 5.1 prints numbers with "%.14g": 3.0 prints as "3".
local function compat_tostring(v)
  if mtype(v) == "float" then return sfmt("%.14g", v) end
  return tostring(v)
end

------------------------------------------------------------------------------ pairs
-- Lua 5.4 walks hash keys in an order that changes from one runtime to the next (string hashes
-- are seeded at random); gopher-lua walks them in insertion order. Neither can be copied (Lua 5.4
-- records no insertion order, and building a table with a constructor or storing a new key in it
-- runs nothing the sandbox could hook, short of a metatable on every table), so pairs walks keys
-- sorted (numbers, then strings): the same script gives the same result on every run, which
-- deterministic simulation needs.
local TYPE_RANK = { boolean = 1, number = 2, string = 3 }

local function key_less(a, b)
  local ta, tb = type(a), type(b)
  if ta ~= tb then return (TYPE_RANK[ta] or 9) < (TYPE_RANK[tb] or 9) end
  if ta == "number" or ta == "string" then return a < b end
  if ta == "boolean" then return (not a) and b end
  return tostring(a) < tostring(b)
end

local function sorted_pairs(t)
  if type(t) ~= "table" then
    error("bad argument #1 to 'pairs' (table expected, got " .. type(t) .. ")", 2)
  end
  local keys, n = {}, 0
  for k in next, t do
    n = n + 1
    keys[n] = k
  end
  charge(n * 8)
  tbl.sort(keys, key_less)
  local i = 0
  return function()
    while i < n do
      i = i + 1
      local k = keys[i]
      local v = rawget(t, k)
      if v ~= nil then return k, v end
    end
    return nil
  end, t, nil
end

------------------------------------------------------------------------------ string
local function unsupported(name)
  return function()
    error("The Lua function string." .. name .. " is not supported by Karmada. If you believe this "
      .. "function is essential for your use case, please submit an issue to let us know why you need it.", 2)
  end
end

local function check_string(s)
  if type(s) == "string" then
    local n = #s
    if n > STRING_LIMIT then
      error(sfmt("string length %d exceeds the maximum allowed input string length %d in Karmada lua "
        .. "string lib, please check your lua script.", n, STRING_LIMIT), 3)
    end
    charge(n // 8)
  end
end

-- Number of repetition items (* + - and %b) outside character classes: each can make the
-- matcher backtrack over the whole subject.
local function repetitions(p)
  local count, i, n = 0, 1, #p
  while i <= n do
    local c = ssub(p, i, i)
    if c == "%" then
      local nxt = ssub(p, i + 1, i + 1)
      if nxt == "b" then count = count + 1; i = i + 4 else i = i + 2 end
    elseif c == "[" then
      i = i + 1
      if ssub(p, i, i) == "^" then i = i + 1 end
      if ssub(p, i, i) == "]" then i = i + 1 end
      while i <= n and ssub(p, i, i) ~= "]" do
        if ssub(p, i, i) == "%" then i = i + 1 end
        i = i + 1
      end
      i = i + 1
    elseif (c == "*" or c == "+" or c == "-") and i > 1 then
      count = count + 1
      i = i + 1
    else
      i = i + 1
    end
  end
  return count
end

local function check_pattern(s, p, plain)
  check_string(s)
  check_string(p)
  if plain or type(s) ~= "string" or type(p) ~= "string" then return end
  local n = #s
  local cost = (ssub(p, 1, 1) == "^") and 1 or (n + 1)
  for j = 1, repetitions(p) do
    cost = cost * (n + j) / j
    if cost > PATTERN_LIMIT then
      error(sfmt("pattern %q has too many repetitions for a subject of %d bytes (worst case %.3g steps)",
        p, n, cost), 3)
    end
  end
end

local function strings_checked(f)
  return function(...)
    for i = 1, select("#", ...) do check_string((select(i, ...))) end
    return f(...)
  end
end

local SAFE_STRING = {
  byte = strings_checked(str.byte), char = strings_checked(str.char), format = strings_checked(str.format),
  len = strings_checked(str.len), lower = strings_checked(str.lower), upper = strings_checked(str.upper),
  reverse = strings_checked(str.reverse), sub = strings_checked(str.sub),
  find = function(s, p, init, plain) check_pattern(s, p, plain); return str.find(s, p, init, plain) end,
  match = function(s, p, init) check_pattern(s, p, false); return str.match(s, p, init) end,
  gmatch = function(s, p) check_pattern(s, p, false); return str.gmatch(s, p) end,
  rep = unsupported("rep"), gsub = unsupported("gsub"), dump = unsupported("dump"),
}
SAFE_STRING.gfind = SAFE_STRING.gmatch
getmetatable("").__index = SAFE_STRING

------------------------------------------------------------------------------ table
local SAFE_TABLE = {
  concat = function(t, sep, i, j)
    charge(#t)
    local r = tbl.concat(t, sep, i, j)
    charge(#r // 8)
    return r
  end,
  insert = function(t, ...) charge(#t // 8); return tbl.insert(t, ...) end,
  remove = function(t, ...) charge(#t // 8); return tbl.remove(t, ...) end,
  sort = function(t, cmp) local n = #t; charge(n * 8); return tbl.sort(t, cmp) end,
  unpack = function(t, i, j)
    local first, last = i or 1, j or #t
    charge(last - first)
    return unpack(t, first, last)
  end,
  pack = pack,
  getn = function(t) return #t end,
  maxn = function(t)
    local m = 0
    for k in next, t do if type(k) == "number" and k > m then m = k end end
    return m
  end,
}

------------------------------------------------------------------------------ math
local SAFE_MATH = copy(math)
SAFE_MATH.pow = function(x, y) return x ^ y end
SAFE_MATH.mod = math.fmod
SAFE_MATH.log10 = function(x) return math.log(x, 10) end
SAFE_MATH.ldexp = function(m, e) return m * 2.0 ^ e end
SAFE_MATH.frexp = function(x)
  if x == 0 or x ~= x or x == huge or x == -huge then return x, 0 end
  local e = floor(math.log(math.abs(x), 2)) + 1
  local m = x / 2.0 ^ e
  if math.abs(m) >= 1 then m, e = m / 2, e + 1 elseif math.abs(m) < 0.5 then m, e = m * 2, e - 1 end
  return m, e
end
SAFE_MATH.cosh = function(x) return (math.exp(x) + math.exp(-x)) / 2 end
SAFE_MATH.sinh = function(x) return (math.exp(x) - math.exp(-x)) / 2 end
SAFE_MATH.tanh = function(x) local a, b = math.exp(x), math.exp(-x); return (a - b) / (a + b) end
SAFE_MATH.atan2 = math.atan

------------------------------------------------------------------------------ os (injected clock)
-- Host functions answer (true, value) or (false, message); `checked` raises the message at the
-- script's call site. Callers keep the value in a local before returning it: a tail call would
-- drop the script's frame and with it the line number of the error.
local function checked(ok, value)
  if not ok then error(value, 3) end
  return value
end

local SAFE_OS = {
  time = function(t)
    if t ~= nil and type(t) ~= "table" then
      error("bad argument #1 to 'time' (table expected, got " .. type(t) .. ")", 2)
    end
    local value
    if t == nil then
      value = checked(host.os_time(false))
    else
      value = checked(host.os_time(true, t.year, t.month, t.day, t.hour, t.min, t.sec))
    end
    return value
  end,
  date = function(format, when)
    local ok, a, b, c, d, e, f, g, h = host.os_date(format or "%c", when)
    if not ok then error(a, 2) end
    if b == nil then return a end
    return { year = a, month = b, day = c, hour = d, min = e, sec = f, wday = g, yday = h, isdst = false }
  end,
}

------------------------------------------------------------------------------ kube library
local KUBE = {
  resourceAdd = function(...)
    local value = checked(host.resource_add(...))
    return value
  end,
  accuratePodRequirements = function(...)
    if select("#", ...) ~= 1 then error("getPodRequirements only accepts one argument", 2) end
    local template = ...
    if type(template) ~= "table" then error("bad argument #1 to 'accuratePodRequirements' (table expected, got "
      .. type(template) .. ")", 2) end
    local value = checked(host.accurate_pod_requirements(template))
    return value
  end,
  getPodDependencies = function(...)
    if select("#", ...) ~= 2 then error("getPodDependencies only accepts two argument", 2) end
    local template, namespace = ...
    if type(template) ~= "table" then error("bad argument #1 to 'getPodDependencies' (table expected, got "
      .. type(template) .. ")", 2) end
    if namespace == nil then namespace = "default" end
    if type(namespace) == "number" then namespace = compat_tostring(namespace) end
    if type(namespace) ~= "string" then error("bad argument #2 to 'getPodDependencies' (string expected, got "
      .. type(namespace) .. ")", 2) end
    local value = checked(host.get_pod_dependencies(template, namespace))
    return value
  end,
  getResourceQuantity = function(...)
    if select("#", ...) ~= 1 then error("getResourceQuantity only accepts one argument", 2) end
    local value = checked(host.get_resource_quantity(...))
    return value
  end,
}

------------------------------------------------------------------------------ environments
local STUBBED = { "collectgarbage", "dofile", "getfenv", "getmetatable", "load", "loadfile", "loadstring",
  "rawequal", "rawget", "rawset", "setfenv", "setmetatable", "module", "newproxy" }

local BASE = {
  assert = assert, error = error, ipairs = ipairs, next = next, pairs = sorted_pairs, pcall = safe_pcall,
  print = function() end, -- scripts have no output channel; print is accepted and ignored
  select = select, tonumber = tonumber, tostring = compat_tostring, type = type,
  unpack = SAFE_TABLE.unpack, xpcall = safe_xpcall, _VERSION = "Lua 5.1",
}
for _, name in ipairs(STUBBED) do
  BASE[name] = function()
    error("call function " .. name .. " is not supported in karmada customized resourceinterpreter.", 2)
  end
end

local function new_env()
  local env = copy(BASE)
  env.string, env.table, env.math, env.os = copy(SAFE_STRING), copy(SAFE_TABLE), copy(SAFE_MATH), copy(SAFE_OS)
  local loaded = { string = env.string, table = env.table, math = env.math, os = env.os }
  local package = {
    preload = { kube = function() return copy(KUBE) end },
    loaded = loaded,
    loadlib = function() error("loadlib is not supported", 2) end,
  }
  env.package, loaded.package = package, package
  env.require = function(name)
    local value = rawget(loaded, name)
    if value ~= nil then return value end
    local loader = package.preload[name]
    if loader == nil then
      error(sfmt("module '%s' not found:\n\tno field package.preload['%s']", tostring(name), tostring(name)), 2)
    end
    value = loader(name)
    if value == nil then value = true end
    loaded[name] = value
    return value
  end
  env._G = env
  math.randomseed(0)
  return env
end

------------------------------------------------------------------------------ host kit
local function message(err)
  if type(err) ~= "string" then
    if mtype(err) then err = compat_tostring(err) else return "(error object is a " .. type(err) .. " value)" end
  end
  local n = #err
  if n > MESSAGE_LIMIT then
    local cut = MESSAGE_LIMIT -- at a character boundary: never before a UTF-8 continuation byte
    while cut > 0 and (str.byte(err, cut + 1) & 0xC0) == 0x80 do cut = cut - 1 end
    err = ssub(err, 1, cut) .. sfmt(" ... (%d more bytes)", n - cut)
  end
  if utf8len(err) == nil then err = sfmt("%q", err) end
  return err
end

local kit = { state = S }

function kit.compile(text, name)
  local chunk, err = load(text, name, "t", {})
  if not chunk then return false, message(err) end
  return true, chunk
end

local function too_large(max_bytes)
  return sfmt("the result exceeds the size limit of %d bytes (encoded as JSON)", max_bytes)
end

-- Run one call; a string result longer than max_bytes fails here, before the host decodes it
-- (tables are measured by kit.check).
function kit.run(chunk, fname, nret, max_bytes, ...)
  local env = new_env()
  setupvalue(chunk, 1, env)
  local ok, err = pcall(chunk)
  if not ok then return false, message(err) end
  local fn = rawget(env, fname)
  if fn == nil then return false, "not found function " .. fname end
  if type(fn) ~= "function" then return false, fname .. " is not a function: " .. type(fn) end
  local results = pack(pcall(fn, ...))
  if not results[1] then return false, message(results[2]) end
  for i = 2, nret + 1 do
    local value = results[i]
    if type(value) == "string" and #value + 2 > max_bytes then return false, too_large(max_bytes) end
  end
  return true, unpack(results, 2, nret + 1)
end

-- Refuse what the JSON encoder Karmada uses refuses, before the host reads a result; and a
-- value whose compact JSON encoding would exceed max_bytes (measured while walking, so the walk
-- stops as soon as the limit is passed; string escapes are not counted).
function kit.check(value, max_depth, max_bytes)
  local seen, size = {}, 0
  local function add(n)
    size = size + n
    if size > max_bytes then error(too_large(max_bytes), 0) end
  end
  local function walk(v, depth)
    local kind = type(v)
    if kind == "string" then
      add(#v + 2)
      if utf8len(v) == nil then error("cannot encode a string that is not valid UTF-8 to JSON", 0) end
      return
    elseif kind == "number" then
      if v ~= v or v == huge or v == -huge then error("json: unsupported value: " .. compat_tostring(v), 0) end
      add(#compat_tostring(v))
      return
    elseif kind == "boolean" or kind == "nil" then
      add(5)
      return
    elseif kind ~= "table" then
      error("cannot encode " .. kind .. " to JSON", 0)
    end
    if depth > max_depth then error("cannot encode tables nested deeper than " .. max_depth .. " levels", 0) end
    if seen[v] then error("cannot encode recursively nested tables to JSON", 0) end
    seen[v] = true
    add(2)
    local first = next(v)
    if first == nil then return end
    local numeric = mtype(first) ~= nil
    local count = 0
    for k, item in next, v do
      if numeric then
        if type(k) ~= "number" then error("cannot encode mixed or invalid key types", 0) end
        if mtype(k) ~= "integer" then error("cannot encode sparse array", 0) end
        add(1)
      elseif type(k) ~= "string" then
        error("cannot encode mixed or invalid key types", 0)
      else
        add(#k + 4)
      end
      count = count + 1
      walk(item, depth + 1)
    end
    if numeric then
      for i = 1, count do
        if rawget(v, i) == nil then error("cannot encode sparse array", 0) end
      end
    end
  end
  walk(value, 0)
  return true
end

function kit.collect()
  collectgarbage("collect")
end

return kit
