"""The declared controllers: every controller module's spec is in the tuple, and the
independence contract of ``.importlinter`` names exactly the controllers the specs declare."""

from __future__ import annotations

import configparser
import importlib
import pkgutil
from pathlib import Path

from fleetkeeper import controllers
from fleetkeeper.cmd.app import SPECS
from fleetkeeper.runtime.context import Scope
from fleetkeeper.runtime.spec import ControllerSpec, Runs

IMPORTLINTER = Path(__file__).resolve().parents[2] / ".importlinter"
INDEPENDENCE = "importlinter:contract:controllers-independent"


def _declaring_modules() -> dict[str, ControllerSpec]:
    """Every module of ``fleetkeeper.controllers`` that declares a spec, with its spec."""
    found = {}
    for info in pkgutil.iter_modules(controllers.__path__, f"{controllers.__name__}."):
        spec = getattr(importlib.import_module(info.name), "SPEC", None)
        if isinstance(spec, ControllerSpec):
            found[info.name] = spec
    return found


def test_every_controller_module_with_a_spec_is_in_the_tuple_in_its_own_module() -> None:
    declared = _declaring_modules()
    assert declared, "the controllers declare specs"
    assert all(spec in SPECS for spec in declared.values())
    assert all(spec.module == module for module, spec in declared.items())


def test_the_independence_contract_lists_the_controllers_the_specs_declare() -> None:
    config = configparser.ConfigParser()
    config.read(IMPORTLINTER)
    listed = {line.strip() for line in config[INDEPENDENCE]["modules"].splitlines() if line.strip()}
    declared = {spec.module for spec in SPECS if spec.module.startswith(f"{controllers.__name__}.")}
    assert listed == declared


def test_spec_names_are_unique() -> None:
    names = [spec.name for spec in SPECS]
    assert len(names) == len(set(names))


def test_a_pull_agent_runs_status_lease_and_works_only() -> None:
    agent = [spec.name for spec in SPECS if spec.runs.includes(Scope(agent_cluster="member1"))]
    assert agent == ["execution-controller", "work-status-controller", "cluster-status-controller",
                     "cluster-lease"]
    assert all(spec.runs & Runs.PLANE for spec in SPECS if spec.name != "cluster-lease")
