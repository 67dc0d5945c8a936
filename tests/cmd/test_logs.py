"""``--log-format``: text or JSON lines on stderr, one line per event, with the reconcile id;
every long-running command takes the flag, and a bad value is a usage error naming it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog
import yaml
from typer.testing import CliRunner

from fleetkeeper.clock import VirtualClock
from fleetkeeper.cmd import logs
from fleetkeeper.cmd.main import app
from fleetkeeper.cmd.simulate import PlaneFactory
from fleetkeeper.simulation import scenario
from fleetkeeper.simulation.driver import run_scenario

STORY = Path(__file__).resolve().parents[2] / "examples" / "seed-blog-member1-down.yaml"
COMMANDS = ("up", "apiserver", "controller-manager", "scheduler", "agent", "member-sim", "detector",
            "traffic")


@pytest.fixture(autouse=True)
def restore_logging() -> Iterator[None]:
    yield
    structlog.reset_defaults()


def story() -> scenario.Scenario:
    return scenario.parse(yaml.safe_load(STORY.read_text()))


def test_json_lines_parse_and_carry_the_reconcile_id(capsys: pytest.CaptureFixture[str]) -> None:
    clock = VirtualClock()
    logs.configure(level="info", clock=clock, fmt="json")
    outcome = run_scenario(story(), PlaneFactory("memory://"), clock=clock)
    assert outcome.passed
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) > 10
    events = [json.loads(line) for line in lines]  # every line is one JSON object
    assert all({"event", "level", "ts"} <= event.keys() for event in events)
    reconciles = [e for e in events if "reconcile_id" in e]
    assert reconciles, "lines logged inside a reconcile carry its id"
    assert all(e["reconcile_id"].startswith(e["controller"] + "#") for e in reconciles)
    assert not [e for e in events if "exception" in e], "a traceback in a failover that has no bug"


def test_a_bug_is_one_json_line_with_its_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    logs.configure(level="info", fmt="json")
    log: structlog.typing.FilteringBoundLogger = structlog.get_logger("fleetkeeper")
    try:
        raise KeyError("spec")
    except KeyError as exc:
        log.error("reconcile failed; retrying with backoff", reconcile_id="binding-controller#7",
                  exc_info=exc)
    (line,) = capsys.readouterr().err.splitlines()
    event = json.loads(line)
    assert event["reconcile_id"] == "binding-controller#7"
    assert "Traceback" in event["exception"] and "KeyError: 'spec'" in event["exception"]


def test_text_stays_the_default(capsys: pytest.CaptureFixture[str]) -> None:
    logs.configure(level="info")
    structlog.get_logger("fleetkeeper").info("controller starting", controller="scheduler")
    err = capsys.readouterr().err
    assert "controller starting" in err and "controller=scheduler" in err


@pytest.mark.parametrize("command", COMMANDS)
def test_every_long_running_command_takes_the_flag(command: str) -> None:
    result = CliRunner().invoke(app, [command, "--help"], terminal_width=200)
    assert "--log-format" in result.output, result.output


@pytest.mark.parametrize("command", ["up", "traffic", "detector", "member-sim"])
def test_a_bad_format_is_a_usage_error_naming_the_flag(command: str) -> None:
    extra = {"detector": ["--cluster-name", "m1", "--kubeconfig", "/nonexistent", "--karmada-kubeconfig",
                          "/nonexistent"], "member-sim": ["--port", "0"]}.get(command, [])
    result = CliRunner().invoke(app, [command, *extra, "--log-format", "yaml"])
    assert result.exit_code == 2, result.output
    assert "--log-format" in result.output and "text, json" in result.output
