"""``fleetkeeper interpret``: what its input files may hold.

Files are UTF-8 YAML whose mappings name each key once (exit 2 otherwise, naming the file);
a ``--status-file`` holding only ``null`` passes nil, as Karmada's test vectors'
``statusItems: null`` does.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from fleetkeeper.cli.interpret import app

runner = CliRunner()

CUSTOMIZATION = """\
apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata:
  name: status-items
spec:
  target:
    apiVersion: apps.example.io/v1
    kind: Workload
  customizations:
    statusAggregation:
      luaScript: |
        function AggregateStatus(desiredObj, statusItems)
          if statusItems == nil then
            desiredObj.status = {items = "nil"}
          else
            desiredObj.status = {items = type(statusItems) .. " of " .. #statusItems}
          end
          return desiredObj
        end
    healthInterpretation:
      luaScript: |
        function InterpretHealth(observedObj)
          return observedObj.status ~= nil
        end
"""
WORKLOAD = "apiVersion: apps.example.io/v1\nkind: Workload\nmetadata: {name: shop, namespace: retail}\n"
ITEM = {"clusterName": "member1", "status": {"ready": 1}, "applied": True}


@pytest.fixture()
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "ric.yaml").write_text(CUSTOMIZATION)
    (tmp_path / "workload.yaml").write_text(WORKLOAD)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def aggregated(*status_args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = runner.invoke(app, ["-f", "ric.yaml", "--operation", "aggregateStatus",
                                 "--desired-file", "workload.yaml", *status_args], input=stdin)
    if result.exit_code != 0:
        return result.exit_code, result.stdout, result.stderr
    [document] = [d for d in yaml.safe_load_all(result.stdout) if d is not None]
    return 0, str(document["status"]["items"]), result.stderr


@pytest.mark.parametrize(("content", "seen"), [
    pytest.param("null\n", "nil", id="a lone null is nil"),
    pytest.param("---\n~\n", "nil", id="a lone ~ after a document marker is nil"),
    pytest.param("[]\n", "table of 0", id="an empty list is an empty table"),
    pytest.param("", "table of 0", id="an empty file is an empty table"),
    pytest.param(yaml.safe_dump([ITEM, {**ITEM, "clusterName": "member2"}]), "table of 2",
                 id="a list of items"),
    pytest.param(yaml.safe_dump_all([ITEM, ITEM]), "table of 2", id="one item per document"),
])
def test_status_items_reach_the_script(files: Path, content: str, seen: str) -> None:
    (files / "status.yaml").write_text(content)
    assert aggregated("--status-file", "status.yaml") == (0, seen, "")


def test_without_a_status_file_the_script_gets_nil(files: Path) -> None:
    assert aggregated() == (0, "nil", "")


def test_null_from_stdin_is_nil_too(files: Path) -> None:
    assert aggregated("--status-file", "-", stdin="null\n") == (0, "nil", "")


def test_the_help_says_what_nil_is() -> None:
    result = runner.invoke(app, ["--help"], env={"COLUMNS": "200", "TERMINAL_WIDTH": "200"})
    assert result.exit_code == 0
    text = " ".join(result.stdout.split())
    assert "without it, or with a file holding only null, the script gets nil" in text


@pytest.mark.parametrize("flag", ["-f", "--observed-file", "--status-file"])
def test_a_file_that_is_not_utf8_exits_2(files: Path, flag: str) -> None:
    (files / "latin1.yaml").write_bytes(WORKLOAD.encode() + b"# caf\xe9\n")
    args = {"-f": ["-f", "latin1.yaml", "--check"],
            "--observed-file": ["-f", "ric.yaml", "--operation", "interpretHealth",
                                "--observed-file", "latin1.yaml"],
            "--status-file": ["-f", "ric.yaml", "--operation", "aggregateStatus",
                              "--desired-file", "workload.yaml", "--status-file", "latin1.yaml"]}[flag]
    result = runner.invoke(app, args)
    assert (result.exit_code, result.stdout) == (2, "")
    offset = len(WORKLOAD.encode()) + 5
    assert result.stderr == (
        f"error: latin1.yaml: cannot read: not UTF-8 text (byte 0xe9 at offset {offset})\n")


def test_a_customization_naming_a_key_twice_exits_2(files: Path) -> None:
    kind = "kind: ResourceInterpreterCustomization\n"
    (files / "ric.yaml").write_text(CUSTOMIZATION.replace(kind, kind + "kind: X\n"))
    result = runner.invoke(app, ["-f", "ric.yaml", "--check"])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.startswith(
        'error: ric.yaml: invalid YAML: mapping key "kind" already defined at line 2')


def test_an_object_naming_a_key_twice_exits_2(files: Path) -> None:
    (files / "observed.yaml").write_text(WORKLOAD + "metadata: {name: other}\n")
    result = runner.invoke(app, ["-f", "ric.yaml", "--operation", "interpretHealth",
                                 "--observed-file", "observed.yaml"])
    assert (result.exit_code, result.stdout) == (2, "")
    assert 'observed.yaml: invalid YAML: mapping key "metadata" already defined at line 3' in result.stderr
