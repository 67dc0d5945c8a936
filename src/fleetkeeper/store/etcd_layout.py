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

**Revisions.** etcd gives a transaction one revision, and the store commits up to
:data:`TXN_CHANGES` changes in one transaction, while the store contract gives every
change its own strictly increasing revision. So each etcd revision owns :data:`SLOTS`
store revisions and a change's ``resourceVersion`` is ::

    (mod_revision - OFFSET) * SLOTS + slot

where ``slot`` is the change's place in its transaction (0, 1, 2 … in the order of the
transaction's operations). etcd numbers an empty keyspace 1, so ``OFFSET = 1`` keeps the
empty store at revision 0; the first change is 1024, a transaction of three changes at
etcd revision 7 holds 6144, 6145 and 6146. Numbers are not consecutive — the contract
asks only that they strictly increase — and every process computes the same ones: the
etcd revision comes from etcd, the slot from the stored value (below). A revision maps
back with :func:`etcd_revision` (``revision // SLOTS + OFFSET``); a watch resumed from
``since`` starts at that etcd revision and skips the changes of it at or below ``since``.

**Values** are the object's JSON behind a one-line header holding the resourceVersion
the JSON carries: ``b"6145\\n{...}"``. The façade stamps the revision it expects a write
to get before sending it (the backend tells it which, see :mod:`.etcd`); etcd decides
the etcd revision. A reader takes the slot from the header (``stamp % SLOTS``) and the
rest from ``mod_revision``: when another process wrote in between the two disagree and
the reader re-stamps the JSON — the header makes the common case (they agree) a
comparison instead of a parse.

**The revision key** ``<prefix>/.revision`` is written by every transaction of the store
(last in the transaction), so its ``mod_revision`` and value give the store's revision —
the last change under the prefix, whoever made it — with one request, and every
transaction shows up in a prefix watch together with an event on this key. Its value
(:func:`encode_mark`) is the highest slot of the transaction on a first line, then for
each object the transaction deletes, a ``<key length> <value length>`` line followed by
the object's etcd key and its final state (a value as above): the deleted key itself has
no value any more, so a watcher gets the DELETED object exactly as the writer built it —
e.g. with the last finalizer removed — however many objects one transaction deletes.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from typing import NamedTuple

import orjson

from fleetkeeper import errors
from fleetkeeper.api.scheme import GroupKind
from fleetkeeper.store.backend import Key, Record

#: etcd's revision of the empty keyspace: store revision 0
OFFSET = 1
#: store revisions per etcd revision (a transaction's changes take consecutive slots)
SLOTS = 1024
#: changes in one transaction at most: etcd's default ``--max-txn-ops`` is 128, one is the revision key
TXN_CHANGES = 127
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


def store_revision(etcd_revision: int, slot: int = 0) -> int:
    """The store revision of the change in ``slot`` of the transaction at ``etcd_revision``."""
    return (etcd_revision - OFFSET) * SLOTS + slot


def etcd_revision(revision: int) -> int:
    """The etcd revision of the transaction holding store revision ``revision``."""
    return revision // SLOTS + OFFSET


def encode_value(record: Record) -> bytes:
    """The stored value of a record: its stamped revision, a newline, its JSON."""
    return b"%d\n" % record.revision + record.raw


def _stamp(value: bytes) -> tuple[int, bytes]:
    """(stamped revision or -1, JSON) of a stored value."""
    newline = value.find(b"\n")
    if 0 < newline <= 20 and value[:newline].isdigit():
        return int(value[:newline]), value[newline + 1:]
    return -1, value  # not written by a store


def decode_record(value: bytes, etcd_revision: int, slot: int = 0) -> Record:
    """The record a stored value holds at ``etcd_revision`` (its ``mod_revision``).

    The slot is the stamp's; ``slot`` is only used for a value without a stamp.
    """
    stamp, raw = _stamp(value)
    if stamp >= 0:
        slot = stamp % SLOTS
    revision = store_revision(etcd_revision, slot)
    if stamp != revision:
        raw = restamp_raw(raw, revision)
    return Record(raw, revision)


def stamp_slot(value: bytes) -> int:
    """The slot a stored value was stamped with (0 without a stamp)."""
    stamp, _ = _stamp(value)
    return stamp % SLOTS if stamp >= 0 else 0


def encode_mark(top: int, deleted: Sequence[tuple[bytes, bytes]] = ()) -> bytes:
    """The revision key's value: the highest slot used, then each deleted (etcd key, final value)."""
    parts = [b"%d\n" % top]
    for key, value in deleted:
        parts.append(b"%d %d\n" % (len(key), len(value)))
        parts.append(key)
        parts.append(value)
    return b"".join(parts)


class Mark(NamedTuple):
    """A decoded revision key value."""

    #: the highest slot of the transaction
    top: int
    #: etcd key → final state of each object the transaction deleted
    deleted: dict[bytes, bytes]


def decode_mark(value: bytes) -> Mark:
    """What :func:`encode_mark` wrote (a value it did not write reads as slot 0, no deletes)."""
    newline = value.find(b"\n")
    head = value[:newline] if newline >= 0 else value
    if not head.isdigit():
        return Mark(0, {})
    deleted: dict[bytes, bytes] = {}
    at = len(value) if newline < 0 else newline + 1
    while at < len(value):
        newline = value.find(b"\n", at)
        sizes = value[at:newline].split(b" ") if newline > at else []
        if len(sizes) != 2 or not all(s.isdigit() for s in sizes):
            break  # not framed by encode_mark: keep what was read
        key_end = newline + 1 + int(sizes[0])
        value_end = key_end + int(sizes[1])
        if value_end > len(value):
            break
        deleted[value[newline + 1:key_end]] = value[key_end:value_end]
        at = value_end
    return Mark(int(head), deleted)


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
    "DEFAULT_PORT", "DEFAULT_PREFIX", "OFFSET", "REVISION_KEY", "SLOTS", "TXN_CHANGES", "Layout", "Mark",
    "decode_mark", "decode_record", "encode_mark", "encode_value", "etcd_revision", "grpc_target",
    "parse_endpoints", "prefix_end", "restamp", "restamp_raw", "stamp_slot", "store_revision",
]
