"""Protobuf request bodies, written here byte by byte in the protobuf wire format: the zero
values the encoding always writes are dropped, unknown fields pass only when zero, and
malformed bodies are refused with the reason. (Real kubectl's bodies: tests/e2e/test_kubectl.py.)"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fleetkeeper import errors
from fleetkeeper.apiserver.protobuf import KINDS, MESSAGES, decode_body

VARINT, LENGTH = 0, 2


def varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # negative numbers: two's complement, ten bytes
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def field(number: int, value: int | bytes | str) -> bytes:
    if isinstance(value, int):
        return varint(number << 3 | VARINT) + varint(value)
    data = value.encode() if isinstance(value, str) else value
    return varint(number << 3 | LENGTH) + varint(len(data)) + data


def entry(key: str, value: str | bytes) -> bytes:
    return field(1, key) + field(2, value)


def body(api_version: str, kind: str, raw: bytes, **envelope: str) -> bytes:
    type_meta = field(1, api_version) + field(2, kind)
    extra = b"".join(field(n, envelope[k]) for n, k in ((3, "encoding"), (4, "content_type"))
                     if k in envelope)
    return b"k8s\x00" + field(1, type_meta) + field(2, raw) + extra


def meta(name: str, namespace: str = "", **more: bytes) -> bytes:
    """ObjectMeta as the encoding writes it: every non-pointer field, set or not."""
    zero_time = b""
    return (field(1, name) + field(2, "") + field(3, namespace) + field(4, "") + field(5, "") + field(6, "")
            + field(7, 0) + field(8, zero_time) + b"".join(more.values()))


def test_a_namespace_as_the_encoding_writes_it_reads_as_its_json() -> None:
    raw = field(1, meta("prod")) + field(2, b"") + field(3, field(1, ""))  # spec {}, status {phase: ""}
    assert decode_body(body("v1", "Namespace", raw)) == {
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "prod"}}


def test_maps_bytes_and_empty_values() -> None:
    raw = (field(1, meta("cfg", "prod", labels=field(11, entry("app", "web"))))
           + field(2, entry("a", "b")) + field(2, entry("empty", "")) + field(3, entry("bin", b"\x00\xff")))
    assert decode_body(body("v1", "ConfigMap", raw)) == {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "cfg", "namespace": "prod", "labels": {"app": "web"}},
        "data": {"a": "b", "empty": ""}, "binaryData": {"bin": "AP8="}}


def deployment(spec: bytes) -> dict[str, Any]:
    return decode_body(body("apps/v1", "Deployment", field(1, meta("web")) + field(2, spec)))


def test_zero_is_kept_where_it_is_a_value_and_dropped_where_it_is_absence() -> None:
    # replicas 0, minReadySeconds 0, paused false, strategy {type: ""}
    spec = field(1, 0) + field(5, 0) + field(7, 0) + field(4, field(1, ""))
    assert deployment(spec)["spec"] == {"replicas": 0}


def test_containers_ports_int_or_string_negative_numbers_and_times() -> None:
    container = field(1, "app") + field(2, "nginx") + field(3, "sleep") + field(3, "1") + field(
        6, field(3, 80) + field(4, "TCP")) + field(8, field(2, entry("cpu", field(1, "250m"))))
    pod = field(2, container) + field(25, -1)  # priority -1: a ten-byte varint
    strategy = field(1, "RollingUpdate") + field(2, field(1, field(1, 1) + field(3, "25%")) + field(
        2, field(2, 2)))
    created = field(8, field(1, 1767225600) + field(2, 500_000_000))
    spec = field(3, field(1, meta("", **{"t": created})) + field(2, pod)) + field(4, strategy)
    decoded = deployment(spec)["spec"]
    assert decoded == {
        "template": {"metadata": {"creationTimestamp": "2026-01-01T00:00:00.500000Z"},
                     "spec": {"containers": [{"name": "app", "image": "nginx", "command": ["sleep", "1"],
                                              "ports": [{"containerPort": 80, "protocol": "TCP"}],
                                              "resources": {"requests": {"cpu": "250m"}}}],
                              "priority": -1}},
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": 2}}}


def test_an_unknown_field_passes_only_as_a_zero_value() -> None:
    zero_status = field(3, field(1, 0) + field(2, 0) + field(4, b""))  # DeploymentStatus, all zero
    assert deployment(field(1, 2) + field(99, 0) + field(98, ""))["spec"] == {"replicas": 2}
    assert decode_body(body("apps/v1", "Deployment", field(1, meta("web")) + zero_status))["metadata"] == {
        "name": "web"}
    with pytest.raises(errors.UnsupportedMediaType, match=r"Deployment.spec: field 99 .*kubectl apply -f"):
        deployment(field(1, 2) + field(99, 7))
    with pytest.raises(errors.UnsupportedMediaType, match=r"Deployment.metadata: field 4"):
        decode_body(body("apps/v1", "Deployment", field(1, field(1, "web") + field(4, "/self/link"))))


@pytest.mark.parametrize(("data", "error", "says"), [
    (b'{"kind": "Namespace"}', errors.BadRequest, r"starts with k8s\\x00"),
    (body("v1", "Namespace", b"\x0a\x05ab"), errors.BadRequest, "truncated"),
    (b"k8s\x00" + b"\x08\xff\xff", errors.BadRequest, "varint"),
    (body("v1", "Namespace", b"\x0b"), errors.BadRequest, "wire type 3"),
    (body("v1", "Namespace", field(1, field(1, b"\xff\xfe"))), errors.BadRequest, "not UTF-8"),
    (body("v1", "Namespace", field(1, field(1, 5))), errors.BadRequest, "not a string"),
    (body("v1", "Pod", field(1, meta("p"))), errors.UnsupportedMediaType, r"Pod \(v1\) is not read"),
    (body("v1", "Namespace", field(1, meta("p")), encoding="gzip"), errors.UnsupportedMediaType, "gzip"),
], ids=["no magic", "truncated", "endless varint", "group wire type", "invalid UTF-8",
        "a number for a string", "a kind not read", "an encoded envelope"])
def test_malformed_or_unread_bodies_are_refused_with_the_reason(data: bytes, error: type[Exception],
                                                                  says: str) -> None:
    with pytest.raises(error, match=says):
        decode_body(data)


def test_every_message_a_field_names_is_in_the_table() -> None:
    scalars = {"string", "bytes", "int", "bool", "time", "intorstr", "quantity", "map"}
    named = {f.kind for fields in MESSAGES.values() for f in fields.values()} - scalars
    assert named <= set(MESSAGES), named - set(MESSAGES)


def read_or_refused(raw: bytes, kind: tuple[str, str]) -> None:
    """The answer is an object of the kind, or a 4xx — never a crash (a 500)."""
    try:
        decoded = decode_body(body(*kind, raw))
    except (errors.BadRequest, errors.UnsupportedMediaType):
        return
    assert (decoded["apiVersion"], decoded["kind"]) == kind


@settings(max_examples=400, deadline=None)
@given(raw=st.binary(max_size=200), kind=st.sampled_from(sorted(KINDS)))
def test_any_bytes_are_read_or_refused_with_a_status(raw: bytes, kind: tuple[str, str]) -> None:
    read_or_refused(raw, kind)


@settings(max_examples=200, deadline=None)
@given(seconds=st.integers(min_value=-(1 << 63), max_value=(1 << 63) - 1),
       nanos=st.integers(min_value=-(1 << 31), max_value=(1 << 31) - 1))
def test_any_time_is_read_or_refused(seconds: int, nanos: int) -> None:
    raw = field(1, meta("x", created=field(8, field(1, seconds) + field(2, nanos))))
    try:
        decode_body(body("v1", "Namespace", raw))
    except errors.BadRequest as exc:
        assert "creationTimestamp" in exc.message


def _wire() -> st.SearchStrategy[bytes]:
    """Well-formed protobuf messages of any shape: random field numbers, numbers, texts and
    nested messages — the bodies a confused or hostile client could send."""
    leaf = st.one_of(st.integers(min_value=-(1 << 63), max_value=(1 << 64) - 1).map(lambda n: ("n", n)),
                     st.text(max_size=12).map(lambda t: ("t", t)))

    def nest(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.lists(st.tuples(st.integers(min_value=1, max_value=45), children), max_size=6).map(
            lambda fields: ("m", fields))

    def encode(value: Any) -> bytes:
        tag, payload = value
        if tag == "n":
            return varint(payload)
        if tag == "t":
            return str(payload).encode()
        return b"".join(field(number, encode(child) if child[0] != "n" else child[1])
                        for number, child in payload)

    return st.recursive(leaf, nest, max_leaves=30).filter(lambda v: v[0] == "m").map(encode)


@settings(max_examples=300, deadline=None)
@given(raw=_wire(), kind=st.sampled_from(sorted(KINDS)))
def test_any_well_formed_message_is_read_or_refused_with_a_status(raw: bytes, kind: tuple[str, str]) -> None:
    read_or_refused(raw, kind)
