"""The etcd backend's layout and feed decoding: URLs, keys, values, revisions, marks (no etcd needed)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import orjson
import pytest

from fleetkeeper import errors
from fleetkeeper.api.scheme import GroupKind
from fleetkeeper.clock import SystemClock
from fleetkeeper.store import open_store
from fleetkeeper.store.backend import Change, Key, Record
from fleetkeeper.store.etcd_feed import Presence, Retention, decode_events
from fleetkeeper.store.etcd_layout import (
    SLOTS,
    TXN_CHANGES,
    Layout,
    decode_mark,
    decode_record,
    encode_mark,
    encode_value,
    etcd_revision,
    grpc_target,
    parse_endpoints,
    prefix_end,
    restamp,
    store_revision,
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


def _record(revision: int, name: str = "a") -> Record:
    obj = {"metadata": {"name": name, "resourceVersion": str(revision)}, "spec": {"x": 1}}
    return Record.of(obj, revision)


@pytest.mark.parametrize(("etcd_rev", "slot", "revision"), [
    (1, 0, 0), (2, 0, 1024), (2, 1, 1025), (7, 126, 6270), (1_000_000, 5, 999_999 * 1024 + 5),
], ids=["the empty keyspace is revision 0", "the first transaction", "its second change",
        "the last slot a transaction uses", "a large etcd revision"])
def test_store_revisions_are_etcd_revisions_times_slots_plus_the_slot(etcd_rev: int, slot: int,
                                                                      revision: int) -> None:
    assert store_revision(etcd_rev, slot) == revision
    assert etcd_revision(revision) == etcd_rev and revision % SLOTS == slot


def test_store_revisions_increase_with_etcd_revision_then_slot() -> None:
    ordered = [(e, s) for e in range(2, 6) for s in range(TXN_CHANGES)]
    revisions = [store_revision(e, s) for e, s in ordered]
    assert revisions == sorted(set(revisions))
    assert [(etcd_revision(r), r % SLOTS) for r in revisions] == ordered
    assert TXN_CHANGES < SLOTS


def test_a_value_whose_stamp_matches_mod_revision_is_used_as_is() -> None:
    value = encode_value(_record(6 * SLOTS + 5))
    assert value.startswith(b"6149\n{")
    record = decode_record(value, 7)  # etcd revision 7, slot 5
    assert record.revision == 6149 and record.raw == value[5:]


@pytest.mark.parametrize(("value", "revision"), [
    (encode_value(_record(3 * SLOTS + 6)), 9 * SLOTS + 6),
    (orjson.dumps(_record(6).obj), 9 * SLOTS),
], ids=["a stamp from another etcd revision keeps its slot", "plain JSON without a stamp is slot 0"])
def test_a_value_is_restamped_from_mod_revision(value: bytes, revision: int) -> None:
    record = decode_record(value, 10)
    assert record.revision == revision
    assert record.obj["metadata"]["resourceVersion"] == str(revision) and record.obj["spec"] == {"x": 1}


def test_restamp_changes_the_record_in_place() -> None:
    record = _record(3)
    restamp(record, 5)
    assert record.revision == 5 and record.copy()["metadata"]["resourceVersion"] == "5"
    unchanged = record.raw
    restamp(record, 5)
    assert record.raw is unchanged


def test_the_revision_key_carries_the_top_slot_and_every_deleted_final_state() -> None:
    finals = [(b"/fleetkeeper/apps/Deployment/default/a", encode_value(_record(2049, "a"))),
              (b"/fleetkeeper//ConfigMap/x/with\nnewline 1 2", encode_value(_record(2050, "b"))),
              (b"/fleetkeeper/apps/Deployment/default/c", b"")]
    mark = decode_mark(encode_mark(4, finals))
    assert mark.top == 4 and mark.deleted == dict(finals)
    assert decode_mark(encode_mark(0)) == (0, {})
    assert encode_mark(2) == b"2\n"


@pytest.mark.parametrize("value", [b"", b"{}", b"7\ngarbage", b"3\n12 99999\nshort"],
                         ids=["empty", "not framed", "an unframed tail", "a truncated entry"])
def test_a_revision_key_value_not_written_by_encode_mark_reads_without_deletes(value: bytes) -> None:
    mark = decode_mark(value)
    assert mark.deleted == {} and mark.top in (0, 3, 7)


def _event(key: bytes, value: bytes, mod: int, *, version: int = 1, delete: bool = False,
           prev: tuple[bytes, int] | None = None) -> SimpleNamespace:
    prev_value, prev_mod = prev or (b"", 0)
    return SimpleNamespace(kv=SimpleNamespace(key=key, value=value, mod_revision=mod, version=version),
                           prev_kv=SimpleNamespace(value=prev_value, mod_revision=prev_mod),
                           type=1 if delete else 0)


def test_a_transaction_deleting_several_objects_decodes_each_with_its_final_state_and_slot() -> None:
    layout = Layout()
    keys = [layout.key(Key("apps", "Deployment", "default", n)) for n in ("a", "b", "c")]
    old = [encode_value(_record(store_revision(3, i), n)) for i, n in enumerate("abc")]
    final = [encode_value(_record(store_revision(9, i), n)) for i, n in enumerate("abc")]
    put = encode_value(_record(store_revision(9, 3), "d"))
    events = [
        _event(keys[0], b"", 9, delete=True, prev=(old[0], 3)),
        _event(keys[1], b"", 9, delete=True, prev=(old[1], 3)),
        _event(keys[2], b"", 9, delete=True, prev=(old[2], 3)),
        _event(layout.key(Key("apps", "Deployment", "default", "d")), put, 9),
        _event(layout.revision_key, encode_mark(3, list(zip(keys, final, strict=True))), 9, version=5),
        _event(keys[0], encode_value(_record(store_revision(10, 0), "a")), 10),
        _event(layout.revision_key, encode_mark(0), 10, version=6),
    ]
    changes = decode_events(layout, events)
    assert [(c.type, c.key.name, c.revision) for c in changes] == [
        ("DELETED", "a", 8 * SLOTS), ("DELETED", "b", 8 * SLOTS + 1), ("DELETED", "c", 8 * SLOTS + 2),
        ("ADDED", "d", 8 * SLOTS + 3), ("ADDED", "a", 9 * SLOTS)]
    assert [c.record.raw for c in changes[:3]] == [f.partition(b"\n")[2] for f in final]
    assert [c.prev.revision for c in changes[:3] if c.prev] == [2 * SLOTS, 2 * SLOTS + 1, 2 * SLOTS + 2]


def test_keys_deleted_outside_the_store_take_their_place_as_slot() -> None:
    layout = Layout()
    keys = [layout.key(Key("", "ConfigMap", "x", n)) for n in ("a", "b")]
    events = [_event(k, b"", 5, delete=True, prev=(orjson.dumps(_record(0, n).obj), 4))
              for k, n in zip(keys, "ab", strict=True)]
    changes = decode_events(layout, events)
    assert [(c.type, c.revision, c.record.obj["metadata"]["resourceVersion"]) for c in changes] == [
        ("DELETED", 4 * SLOTS, str(4 * SLOTS)), ("DELETED", 4 * SLOTS + 1, str(4 * SLOTS + 1))]


def _changes(*sizes: tuple[int, int]) -> list[Change]:
    """``count`` changes in each (etcd revision, count)."""
    return [Change("ADDED", Key("", "ConfigMap", "x", f"{e}-{s}"), _record(store_revision(e, s)), None)
            for e, count in sizes for s in range(count)]


def test_retention_keeps_the_last_changes_and_the_revision_before_them() -> None:
    retention = Retention(keep=5, slack=0, head=1)
    assert retention.due(0) is None
    retention.seen(_changes((2, 3), (3, 3), (4, 1)))
    assert retention.due(0) is None  # 7 changes: dropping etcd revision 2 would leave 4
    retention.seen(_changes((5, 3)))
    # revisions 3-5 hold the last 7 changes (4 and 5 alone only 4); 2 stays too: a watch may resume from it
    assert retention.base == 2 and retention.due(0) == 1
    retention.compacted()
    assert retention.due(1) is None
    retention.seen(_changes((6, 1)))
    assert retention.base == 3 and retention.due(1) == 2  # revisions 4-6 now hold 5


def test_retention_waits_for_slack_and_assumes_a_change_per_revision_it_did_not_see() -> None:
    retention = Retention(keep=10, slack=2, head=100)
    assert retention.base == 90 and retention.due(0) == 89
    retention.compacted()
    retention.seen(_changes(*((r, 1) for r in range(101, 113))))
    assert retention.base == 102 and retention.due(89) is None  # two changes dropped: within the slack
    retention.seen(_changes((113, 1)))
    assert retention.due(89) == 102
    retention.restart(500)
    assert retention.base == 490 and retention.due(102) == 489


def _named(kind: str, namespace: str, name: str, deleted: bool = False) -> Change:
    return Change("DELETED" if deleted else "ADDED", Key("", kind, namespace, name), _record(1, name), None)


def test_presence_lists_a_space_once_and_follows_the_feed_from_that_revision() -> None:
    presence = Presence(budget=100)
    space = ("", "ConfigMap", "x")
    assert presence.lookup(Key(*space, "a")) is None
    assert presence.begin(space) and not presence.begin(space)  # loading: one list at a time
    presence.seen([_named("ConfigMap", "x", "b"), _named("ConfigMap", "x", "a", deleted=True),
                   _named("ConfigMap", "y", "c")])  # delivered while the list was read
    presence.finish(space, ["a", "z"])
    assert [presence.lookup(Key(*space, n)) for n in "abz"] == [False, True, True]
    assert presence.lookup(Key("", "ConfigMap", "y", "c")) is None and not presence.begin(space)
    presence.seen([_named("ConfigMap", "x", "z", deleted=True), _named("ConfigMap", "x", "a")])
    assert [presence.lookup(Key(*space, n)) for n in "abz"] == [True, True, False] and len(presence) == 2


def test_presence_keeps_no_large_space_and_no_more_names_than_its_budget() -> None:
    presence = Presence(budget=8)  # a space may hold 2
    large, growing = ("", "Secret", "x"), ("", "Secret", "y")
    assert presence.begin(large)
    presence.finish(large, ["a", "b", "c"])
    assert presence.lookup(Key(*large, "a")) is None and not presence.begin(large)  # remembered as large
    listed_in_part = ("", "Secret", "z")
    assert presence.begin(listed_in_part)
    presence.finish(listed_in_part, ["a", "b"], more=True)
    assert presence.lookup(Key(*listed_in_part, "a")) is None and not presence.begin(listed_in_part)
    assert presence.begin(growing)
    presence.finish(growing, ["a"])
    presence.seen([_named("Secret", "y", "b"), _named("Secret", "y", "c")])
    assert presence.lookup(Key(*growing, "a")) is None and not presence.begin(growing)
    spaces = [("", "ConfigMap", f"n{i}") for i in range(5)]
    for space in spaces:
        assert presence.begin(space)
        presence.finish(space, ["a", "b"])
    assert len(presence) == 8 and presence.lookup(Key(*spaces[0], "a")) is None  # the oldest went
    assert all(presence.lookup(Key(*space, "a")) for space in spaces[1:])
    presence.clear()
    assert len(presence) == 0 and presence.begin(large) and presence.lookup(Key(*spaces[4], "a")) is None


def test_presence_ignores_a_list_begun_before_it_was_cleared() -> None:
    presence = Presence(budget=100)
    space = ("", "ConfigMap", "x")
    assert presence.begin(space)
    presence.clear()  # the feed lost its place: the list was read at a revision it no longer follows
    presence.finish(space, [])
    assert presence.lookup(Key(*space, "a")) is None


def test_the_throwaway_etcd_says_when_the_binary_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="etcd-server"):
        EtcdServer(tmp_path / "etcd")
