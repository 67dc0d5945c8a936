"""``/healthz``, ``/livez`` and ``/readyz`` list their checks as kube-apiserver does, answer
anyone, and answer one check at a time under ``/readyz/<check>``."""

from __future__ import annotations

import pytest

from .helpers import Api


@pytest.mark.parametrize("endpoint, checks", [
    ("livez", ["ping", "etcd"]),
    ("readyz", ["ping", "etcd", "shutdown"]),
    ("healthz", ["ping", "etcd"]),
], ids=["livez lists ping and etcd", "readyz adds shutdown", "healthz lists ping and etcd"])
async def test_verbose_lists_every_check_then_the_verdict(api: Api, endpoint: str, checks: list[str]) -> None:
    response = await api.http.get(f"/{endpoint}", params={"verbose": ""})
    assert response.status_code == 200
    assert response.text == "".join(f"[+]{name} ok\n" for name in checks) + f"{endpoint} check passed\n"
    assert (await api.http.get(f"/{endpoint}")).text == "ok"


async def test_each_check_answers_alone_and_an_unknown_one_is_404(api: Api) -> None:
    for name in ("ping", "etcd", "shutdown"):
        response = await api.http.get(f"/readyz/{name}")
        assert (response.status_code, response.text) == (200, "ok")
    assert (await api.http.get("/livez/etcd")).text == "ok"
    assert (await api.http.get("/livez/shutdown")).status_code == 404
    assert (await api.http.get("/readyz/nothing")).status_code == 404


async def test_excluded_checks_and_unknown_exclusions_are_reported(api: Api) -> None:
    params: list[tuple[str, str | int | float | bool | None]] = [
        ("verbose", "1"), ("exclude", "etcd"), ("exclude", "nope")]
    response = await api.http.get("/readyz", params=params)
    assert response.status_code == 200
    assert response.text == ('[+]ping ok\n[+]etcd excluded: ok\n[+]shutdown ok\n'
                             'warn: some health checks cannot be excluded: no matches for ["nope"]\n'
                             'readyz check passed\n')


async def test_a_server_shutting_down_is_not_ready_but_alive(api: Api) -> None:
    api.app.close()
    response = await api.http.get("/readyz")
    assert response.status_code == 500
    assert response.text == ("[+]ping ok\n[+]etcd ok\n[-]shutdown failed: reason withheld\n"
                             "readyz check failed\n")
    alone = await api.http.get("/readyz/shutdown")
    assert (alone.status_code, alone.text) == (500, "internal server error: the server is shutting down\n")
    assert (await api.http.get("/livez")).status_code == 200


async def test_anyone_may_ask(api: Api) -> None:
    async with api.client(None) as anonymous:
        for path in ("/livez?verbose", "/readyz?verbose", "/readyz/etcd", "/healthz/ping"):
            assert (await anonymous.get(path)).status_code == 200, path
