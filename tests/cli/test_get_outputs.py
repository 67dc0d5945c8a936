"""``fleetkeeper get`` with kubectl's ``-o jsonpath=``, ``-o custom-columns=`` and ``-w``, against the
real API server: exact output, kubectl's words for bad specs, and a watch that prints each change."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import threading
import time

import pytest

from fleetkeeper.cli import kinds
from fleetkeeper.cli.output import cell, relaxed, sprint, tabulate

from .test_commands import Cli
from .test_commands import cli as cli  # the real-server fixture, shared

NS = "outputs"
CONFIGS = f"""\
apiVersion: v1
kind: Namespace
metadata: {{name: {NS}}}
---
apiVersion: v1
kind: ConfigMap
metadata: {{name: alpha, namespace: {NS}, labels: {{tier: web, app: shop}}}}
data: {{k: one}}
---
apiVersion: v1
kind: ConfigMap
metadata: {{name: beta, namespace: {NS}}}
data: {{k: two, extra: x}}
"""


@pytest.fixture(scope="module")
def seeded(cli: Cli) -> Cli:
    cli.ok("apply", "-f", "-", stdin=CONFIGS)
    return cli


def test_jsonpath_prints_the_template_for_the_list_or_the_object(seeded: Cli) -> None:
    assert seeded.ok("get", "cm", "-n", NS, "-o", "jsonpath={.items[*].metadata.name}") == "alpha beta"
    assert seeded.ok("get", "cm", "alpha", "-n", NS, "-o", "jsonpath={.data.k}") == "one"
    assert seeded.ok("get", "cm", "alpha", "-n", NS, "-o", "jsonpath={.data.absent}") == ""
    ranged = '{range .items[*]}{.metadata.name}={.data.k}{"\\n"}{end}'
    assert seeded.ok("get", "cm", "-n", NS, "-o", f"jsonpath={ranged}") == "alpha=one\nbeta=two\n"


def test_custom_columns_print_as_kubectl_lays_them_out(seeded: Cli) -> None:
    printed = seeded.ok("get", "cm", "-n", NS, "-o",
                        "custom-columns=NAME:.metadata.name,KEY:data.k,LABELS:{.metadata.labels},X:{.spec.x}")
    assert printed == (
        "NAME      KEY       LABELS                   X\n"
        "alpha     one       map[app:shop tier:web]   <none>\n"
        "beta      two       <none>                   <none>\n")


@pytest.mark.parametrize(("output", "message"), [
    ("custom-columns=NAME", "unexpected custom-columns spec: NAME, expected <header>:<json-path-expr>"),
    ("custom-columns=", "custom-columns format specified but no custom columns given"),
    ("jsonpath=", "template format specified but no template given"),
    ("jsonpath={.items[", "error parsing jsonpath {.items["),
    ("custom-columns=A:{.a}{.b}", "unexpected path string"),
], ids=["a column without a path", "no columns", "no template", "a broken template", "two actions"])
def test_bad_output_specs_exit_2_in_kubectl_words(seeded: Cli, output: str, message: str) -> None:
    done = seeded.run("get", "cm", "-n", NS, "-o", output)
    assert done.exit_code == 2 and message in done.output, done.output


def _change_later(cli: Cli, pause: float) -> threading.Thread:
    """Patch beta three times, ``pause`` seconds apart, from another thread (and event loop)."""
    model = kinds.resolve("cm").model

    async def change() -> None:
        client = cli.client()
        try:
            for value in ("three", "four", "five"):
                await asyncio.sleep(pause)
                await client.patch(model, "beta", NS, patch={"data": {"k": value}})
        finally:
            await client.aclose()

    thread = threading.Thread(target=lambda: asyncio.run(change()), daemon=True)
    thread.start()
    return thread


def test_watch_prints_the_listing_then_each_change_until_the_timeout(seeded: Cli) -> None:
    thread = _change_later(seeded, 0.7)
    started = time.monotonic()
    printed = seeded.ok("get", "cm", "beta", "-n", NS, "-w", "--request-timeout", "4s", "-o",
                        'jsonpath={.data.k}{"\\n"}')
    thread.join(10)
    assert 3.5 <= time.monotonic() - started < 15
    lines = printed.splitlines()
    assert lines[-3:] == ["three", "four", "five"] and lines[0] in ("two", "three"), lines
    rows = seeded.ok("get", "cm", "-n", NS, "-w", "--request-timeout", "1s").splitlines()
    assert rows[0].split() == ["NAME", "DATA", "AGE"]  # kubectl's columns for ConfigMaps
    assert [r.split()[0] for r in rows[1:]] == ["alpha", "beta"]


def test_ctrl_c_ends_a_watch_quietly(seeded: Cli) -> None:
    # as from a terminal: Ctrl-C is not ignored (a suite started in the background by a
    # non-interactive shell would otherwise pass SIGINT on as ignored)
    process = subprocess.Popen([sys.executable, "-m", "fleetkeeper.cmd.main", "get", "cm", "-n", NS, "-w",
                                "--kubeconfig", str(seeded.kubeconfig)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    guard = threading.Timer(30, process.kill)  # a hung watch fails the test instead of hanging it
    guard.start()
    try:
        assert process.stdout is not None
        first = [process.stdout.readline() for _ in range(3)]  # the header and two rows
        assert [line.split()[0] for line in first] == ["NAME", "alpha", "beta"]
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=20)
    finally:
        guard.cancel()
        if process.poll() is None:
            process.kill()
            process.wait(10)
    assert process.returncode == 0 and "Traceback" not in err, err


# --------------------------------------------------------------------------- pure rules


@pytest.mark.parametrize(("path", "template"), [
    (".a.b", "{.a.b}"), ("a.b", "{.a.b}"), ("{.a.b}", "{.a.b}"), ("{a.b}", "{.a.b}"), ("", ""),
])
def test_relaxed_paths_as_kubectl_reads_them(path: str, template: str) -> None:
    assert relaxed(path) == template


def test_cells_print_values_as_go_does() -> None:
    obj = {"a": [1, 2.5, True, None, "x"], "m": {"z": {"y": 1}, "b": []}}
    assert cell("{.a[*]}", obj) == "1,2.5,true,<nil>,x"
    assert cell("{.m}", obj) == "map[b:[] z:map[y:1]]"
    assert cell("{.nothing}", obj) == "<none>"
    assert sprint([1.0e21, "a b"]) == "[1e+21 a b]"


def test_tab_writer_layout() -> None:
    assert tabulate([["A", "LONGER-HEADER", "C"], ["1", "2", "3"]]) == (
        "A         LONGER-HEADER   C\n1         2               3")
