"""HAProxy configuration and runtime commands for route tables (pure text)."""

from __future__ import annotations

from fleetkeeper.traffic import haproxy_config as config
from fleetkeeper.traffic.routes import Backend, Route, RouteTable


def table(*, blocked: tuple[str, ...] = (), port1: int = 7001,
          clusters: tuple[str, ...] = ("member1", "member2")) -> RouteTable:
    ports = {"member1": port1, "member2": 7002, "member3": 7003}
    backends = tuple(Backend(c, "127.0.0.1", ports[c], blocked=c in blocked) for c in clusters)
    return RouteTable((
        Route("default/shop", "shop.example.com", "/api", "Exact", "default/api", backends),
        Route("default/shop", "*.example.com", "/static/", "Prefix", "default/web", backends[:1]),
        Route("default/shop", "", "/", "Prefix", "default/web", backends),
    ))


def test_the_configuration_routes_in_table_order() -> None:
    text = config.render(table(blocked=("member2",)), bind="127.0.0.1:8080", admin_socket="/run/admin.sock")
    lines = [line.strip() for line in text.splitlines()]
    assert "stats socket /run/admin.sock mode 600 level admin expose-fd listeners" in lines
    assert "bind 127.0.0.1:8080" in lines
    assert [line for line in lines if line.startswith(("acl", "use_backend"))] == [
        "acl h0 req.hdr(host),field(1,:) -m str -i shop.example.com",
        "acl p0 path -m str /api",
        "use_backend r0_default_api if h0 p0",
        "acl h1 req.hdr(host),field(1,:) -m end -i .example.com",
        "acl p1 path -m str /static",
        "acl p1 path -m beg /static/",
        "use_backend r1_default_web if h1 p1",
        "use_backend r2_default_web",
    ]
    assert "server member1 127.0.0.1:7001" in lines
    assert "server member2 127.0.0.1:7002 disabled" in lines


def test_blocking_and_moving_are_runtime_commands_on_one_layout() -> None:
    before, after = table(), table(blocked=("member1",), port1=7100)
    assert config.layout(before) == config.layout(after)
    assert config.commands(config.states(before), config.states(after)) == [
        "set server r0_default_api/member1 addr 127.0.0.1 port 7100",
        "set server r0_default_api/member1 state maint",
        "set server r1_default_web/member1 addr 127.0.0.1 port 7100",
        "set server r1_default_web/member1 state maint",
        "set server r2_default_web/member1 addr 127.0.0.1 port 7100",
        "set server r2_default_web/member1 state maint",
    ]
    assert config.commands(config.states(after), config.states(after)) == []
    unblocked = config.commands(config.states(after), config.states(table(port1=7100)))
    assert unblocked[0] == "set server r0_default_api/member1 state ready"


def test_a_new_cluster_changes_the_layout() -> None:
    assert config.layout(table()) != config.layout(table(clusters=("member1", "member2", "member3")))
