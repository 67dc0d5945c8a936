"""The etcd backend's layout: URLs, keys, key ranges, values and revision stamps (no etcd needed)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from fleetkeeper import errors
from fleetkeeper.api.scheme import GroupKind
from fleetkeeper.clock import SystemClock
from fleetkeeper.store import open_store
from fleetkeeper.store.backend import Key, Record
from fleetkeeper.store.etcd_layout import (
    Layout,
    decode_record,
    encode_value,
    grpc_target,
    parse_endpoints,
    prefix_end,
    restamp,
)
from fleetkeeper.store.etcd_testing import EtcdServer, free_port

DEPLOY = GroupKind("apps", "Deployment")


@pytest.mark.parametrize(("location", "endpoints"), [
    ("127.0.0.1:23790", [("127.0.0.1", 23790)]),
    ("localhost", [("localhost", 2379)]),
    ("10.0.0.1:1,10.0.0.2:2,10.0.0.3", [("10.0.0.1", 1), ("10.0.0.2", 2), ("10.0.0.3", 2379)]),
    ("[::1]:23790", [("::1", 23790)]),
    ("127.0.0.1:23790/", [("127.0.0.1", 23790)]),
], ids=["host and port", "the port defaults to 2379", "several endpoints", "an IPv6 literal",
        "a trailing slash is ignored"])
def test_endpoints_are_parsed_from_the_url(location: str, endpoints: list[tuple[str, int]]) -> None:
    assert parse_endpoints(location) == endpoints


@pytest.mark.parametrize(("url", "message"), [
    ("etcd://", "at least one endpoint"),
    ("etcd://127.0.0.1:http", "bad port"),
    ("etcd://127.0.0.1:70000", "bad port"),
    ("etcd://:2379", "without a host"),
    ("etcd://127.0.0.1:2379?timeout=3", "unknown etcd store option"),
    ("etcd://127.0.0.1:2379?prefix=relative", "must be an absolute path"),
    ("etcd://etcd-a:2379,etcd-b:2379", "must be IP addresses"),
    ("etcd://10.0.0.1:2379,[::1]:2379", "all IPv4 or all IPv6"),
], ids=["no endpoint", "a port that is not a number", "a port out of range", "a port without a host",
        "an unknown option", "a relative prefix", "several host names", "mixed address families"])
def test_bad_etcd_urls_raise_a_clear_value_error(url: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        open_store(url, clock=SystemClock())


def test_an_unreachable_etcd_is_a_connection_error_naming_it() -> None:
    port = free_port()  # nothing listens there
    with pytest.raises(ConnectionError, match=f"cannot reach etcd at 127.0.0.1:{port}"):
        open_store(f"etcd://127.0.0.1:{port}", clock=SystemClock())


@pytest.mark.parametrize(("endpoints", "target"), [
    ([("127.0.0.1", 1)], "127.0.0.1:1"),
    ([("etcd.local", 2379)], "etcd.local:2379"),
    ([("::1", 5)], "[::1]:5"),
    ([("10.0.0.1", 1), ("10.0.0.2", 2)], "ipv4:10.0.0.1:1,10.0.0.2:2"),
    ([("::1", 1), ("::2", 2)], "ipv6:[::1]:1,[::2]:2"),
], ids=["one address", "one host name", "one IPv6 address", "several IPv4 addresses",
        "several IPv6 addresses"])
def test_grpc_targets(endpoints: list[tuple[str, int]], target: str) -> None:
    assert grpc_target(endpoints) == target


@pytest.mark.parametrize(("key", "raw"), [
    (Key("apps", "Deployment", "default", "web"), b"/fleetkeeper/apps/Deployment/default/web"),
    (Key("", "ConfigMap", "default", "settings"), b"/fleetkeeper//ConfigMap/default/settings"),
    (Key("cluster.karmada.io", "Cluster", "", "member1"),
     b"/fleetkeeper/cluster.karmada.io/Cluster//member1"),
    (Key("", "Secret", "x", "a/b"), b"/fleetkeeper//Secret/x/a/b"),
], ids=["a namespaced object", "the core group leaves its segment empty",
        "a cluster-scoped object leaves the namespace empty", "the name is the rest of the key"])
def test_keys_round_trip(key: Key, raw: bytes) -> None:
    layout = Layout()
    assert layout.key(key) == raw
    assert layout.decode(raw) == key


def test_the_revision_key_and_foreign_keys_are_no_objects() -> None:
    layout = Layout("/custom/")
    assert layout.revision_key == b"/custom/.revision"
    assert layout.decode(layout.revision_key) is None
    assert layout.decode(b"/custom/\xff\xfe") is None
    with pytest.raises(errors.BadRequest):
        layout.key(Key("apps", "Deployment", "a/b", "x"))


@pytest.mark.parametrize(("namespace", "after", "expected"), [
    (None, None, (b"/fleetkeeper/apps/Deployment/", b"/fleetkeeper/apps/Deployment0")),
    ("b", None, (b"/fleetkeeper/apps/Deployment/b/", b"/fleetkeeper/apps/Deployment/b0")),
    (None, ("b", "x"), (b"/fleetkeeper/apps/Deployment/b/x\x00", b"/fleetkeeper/apps/Deployment0")),
    ("b", ("a", "x"), (b"/fleetkeeper/apps/Deployment/b/", b"/fleetkeeper/apps/Deployment/b0")),
    ("b", ("c", "x"), None),
    ("a/b", None, None),
], ids=["a whole kind", "one namespace", "after a position", "after a position in an earlier namespace",
        "after a position in a later namespace", "a namespace with a slash holds nothing"])
def test_key_ranges(namespace: str | None, after: tuple[str, str] | None,
                    expected: tuple[bytes, bytes] | None) -> None:
    assert Layout().range(DEPLOY, namespace, after) == expected


def test_prefix_end_is_the_first_key_past_the_prefix() -> None:
    assert prefix_end(b"/a/") == b"/a0"
    assert prefix_end(b"a\xff") == b"b"
    assert prefix_end(b"\xff") == b"\x00"


def _record(revision: int) -> Record:
    obj = {"metadata": {"name": "a", "resourceVersion": str(revision)}, "spec": {"x": 1}}
    return Record.of(obj, revision)


def test_a_value_whose_stamp_matches_mod_revision_is_used_as_is() -> None:
    value = encode_value(_record(6))
    assert value.startswith(b"6\n{")
    record = decode_record(value, 7)  # etcd revision 7 is store revision 6
    assert record.revision == 6 and record.raw == value[2:]


@pytest.mark.parametrize("value", [encode_value(_record(6)), orjson.dumps(_record(6).obj)],
                         ids=["a stale stamp", "plain JSON without a stamp"])
def test_a_value_is_restamped_from_mod_revision(value: bytes) -> None:
    record = decode_record(value, 10)
    assert record.revision == 9
    assert record.obj["metadata"]["resourceVersion"] == "9" and record.obj["spec"] == {"x": 1}


def test_restamp_changes_the_record_in_place() -> None:
    record = _record(3)
    restamp(record, 5)
    assert record.revision == 5 and record.copy()["metadata"]["resourceVersion"] == "5"
    unchanged = record.raw
    restamp(record, 5)
    assert record.raw is unchanged


def test_the_throwaway_etcd_says_when_the_binary_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="etcd-server"):
        EtcdServer(tmp_path / "etcd")
