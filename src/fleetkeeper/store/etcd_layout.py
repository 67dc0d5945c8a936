"""How the ``etcd://`` backend lays the store out in etcd: URLs, keys, values, revisions.

Pure functions and one small class, no etcd client: :mod:`.etcd` does the I/O.

**Keys.** One key per object, ``<prefix>/<group>/<Kind>/<namespace>/<name>`` — the core
group and cluster-scoped objects leave their segment empty, which keeps the mapping exact
and reversible without a table of special names::

    /fleetkeeper/apps/Deployment/default/web
    /fleetkeeper//ConfigMap/default/settings              (core group)
    /fleetkeeper/cluster.karmada.io/Cluster//member1       (cluster-scoped)

so a kind, or a kind in one namespace, is one key range. Lists come back in etcd's key
order, which is (namespace, name) order except that ``ns-x/…`` sorts before ``ns/…``
(``-`` and ``.`` are below ``/``) — the order kube-apiserver on etcd has too; continue
tokens follow the same order, so pages still cover a list exactly once.

**The revision key** ``<prefix>/.revision`` is written by every transaction of the store
(last in the transaction), so its ``mod_revision`` is the store's revision — the last
change under the prefix, whoever made it — readable with one request, and every change
shows up in a prefix watch together with an event on this key. Its value is empty,
except for a delete, where it carries the object's final state (the object key itself
has no value any more), so a watcher gets the DELETED object exactly as the writer
built it — e.g. with the last finalizer removed.

**Values** are the object's JSON behind a one-line header holding the resourceVersion
the JSON carries: ``b"17\\n{...}"``. The façade stamps the revision it expects a write
to get before sending it; etcd decides the real one. When another process wrote in
between, the two differ and a reader re-stamps the JSON from ``mod_revision`` — the
header makes the common case (they agree) a comparison instead of a parse.

**Revisions.** etcd numbers an empty keyspace 1 and its first write 2; the store
contract numbers them 0 and 1. ``resourceVersion`` is therefore ``mod_revision - 1``,
the same constant in every process, so all of them agree on every object's version.
"""

from __future__ import annotations

import ipaddress

import orjson

from fleetkeeper import errors
from fleetkeeper.api.scheme import GroupKind
from fleetkeeper.store.backend import Key, Record

#: etcd revision = store revision + OFFSET (etcd's empty keyspace is at revision 1)
OFFSET = 1
DEFAULT_PORT = 2379
DEFAULT_PREFIX = "/fleetkeeper"
REVISION_KEY = ".revision"


def parse_endpoints(location: str) -> list[tuple[str, int]]:
    """``host[:port][,host[:port]…]`` → [(host, port)] (IPv6 literals in brackets)."""
    endpoints: list[tuple[str, int]] = []
    for part in location.strip("/").split(","):
        part = part.strip()
        if not part:
            continue
        host, port = part, DEFAULT_PORT
        if part.startswith("["):
            host, _, rest = part[1:].partition("]")
            if rest:
                port = _port(rest.removeprefix(":"), location)
        elif part.count(":") == 1:
            host, _, text = part.partition(":")
            port = _port(text, location)
        if not host:
            raise ValueError(f"etcd store URL has an endpoint without a host: {location!r}")
        endpoints.append((host, port))
    if not endpoints:
        raise ValueError("etcd store URL needs at least one endpoint: etcd://host:port[,host:port…]")
    return endpoints


def _port(text: str, location: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise ValueError(f"etcd store URL has a bad port {text!r} in {location!r}")
    return int(text)


def grpc_target(endpoints: list[tuple[str, int]]) -> str:
    """The gRPC target for the endpoints; several IP literals become one multi-address target."""
    if len(endpoints) == 1:
        host, port = endpoints[0]
        return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    versions = set()
    for host, _ in endpoints:
        try:
            versions.add(ipaddress.ip_address(host).version)
        except ValueError:
            raise ValueError("several etcd endpoints must be IP addresses (gRPC resolves one name only): "
                             + ",".join(h for h, _ in endpoints)) from None
    if versions == {4}:
        return "ipv4:" + ",".join(f"{h}:{p}" for h, p in endpoints)
    if versions == {6}:
        return "ipv6:" + ",".join(f"[{h}]:{p}" for h, p in endpoints)
    raise ValueError("etcd endpoints must be all IPv4 or all IPv6 addresses")


def prefix_end(prefix: bytes) -> bytes:
    """The first key after every key starting with ``prefix`` (etcd's ``range_end``)."""
    chars = bytearray(prefix)
    for i in reversed(range(len(chars))):
        if chars[i] < 0xFF:
            chars[i] += 1
            return bytes(chars[: i + 1])
    return b"\x00"  # every key


class Layout:
    """Where the objects of one store live: key encoding and decoding under a prefix."""

    def __init__(self, prefix: str = DEFAULT_PREFIX) -> None:
        if not prefix.startswith("/") or prefix.rstrip("/") == "":
            raise ValueError(f"etcd key prefix must be an absolute path like /fleetkeeper, got {prefix!r}")
        self.root = (prefix.rstrip("/") + "/").encode()
        self.revision_key = self.root + REVISION_KEY.encode()
        self.end = prefix_end(self.root)

    def key(self, key: Key) -> bytes:
        """The etcd key of an object (``BadRequest`` if a segment would be ambiguous)."""
        group, kind, namespace, name = key
        if "/" in group or "/" in kind or "/" in namespace:
            raise errors.BadRequest(f"group, kind and namespace may not contain '/': {key}")
        return self.root + f"{group}/{kind}/{namespace}/{name}".encode()

    def decode(self, raw_key: bytes) -> Key | None:
        """The object key of an etcd key under the prefix (``None`` for the revision key)."""
        try:
            parts = raw_key[len(self.root):].decode().split("/", 3)
        except UnicodeDecodeError:
            return None  # not written by a store
        return Key(*parts) if len(parts) == 4 else None

    def range(
        self, gk: GroupKind, namespace: str | None, after: tuple[str, str] | None
    ) -> tuple[bytes, bytes] | None:
        """``[start, end)`` of one kind (in one namespace), strictly after ``after``; ``None``: empty."""
        if "/" in gk.group or "/" in gk.kind or (namespace is not None and "/" in namespace):
            return None
        base = self.root + f"{gk.group}/{gk.kind}/".encode()
        if namespace is not None:
            base += f"{namespace}/".encode()
        start, end = base, prefix_end(base)
        if after is not None:
            start = max(start, self.root + f"{gk.group}/{gk.kind}/{after[0]}/{after[1]}".encode() + b"\x00")
        return (start, end) if start < end else None


def encode_value(record: Record) -> bytes:
    """The stored value of a record: its stamped revision, a newline, its JSON."""
    return b"%d\n" % record.revision + record.raw


def decode_record(value: bytes, etcd_revision: int) -> Record:
    """The record a stored value holds at ``etcd_revision`` (its ``mod_revision``)."""
    newline = value.find(b"\n")
    revision = etcd_revision - OFFSET
    raw = value[newline + 1:]
    if newline < 0 or value[:newline] != b"%d" % revision:
        raw = restamp_raw(raw, revision)
    return Record(raw, revision)


def restamp_raw(raw: bytes, revision: int) -> bytes:
    """``raw`` JSON with ``metadata.resourceVersion`` set to ``revision``."""
    obj = orjson.loads(raw)
    obj["metadata"]["resourceVersion"] = str(revision)
    return orjson.dumps(obj)


def restamp(record: Record, revision: int) -> None:
    """Give ``record`` the revision etcd assigned (in place: the façade still holds it)."""
    if record.revision != revision:
        record.raw = restamp_raw(record.raw, revision)
        record.revision = revision
        record.drop_cache()


__all__ = [
    "DEFAULT_PORT", "DEFAULT_PREFIX", "OFFSET", "REVISION_KEY", "Layout", "decode_record", "encode_value",
    "grpc_target", "parse_endpoints", "prefix_end", "restamp", "restamp_raw",
]
