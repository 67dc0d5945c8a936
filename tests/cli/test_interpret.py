"""``fleetkeeper interpret``: karmadactl's flags, YAML output, and exit codes (0 ok, 1 script, 2 input)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from fleetkeeper.cli.interpret import app

DATA = Path(__file__).parents[1] / "interpreter" / "data" / "workload"
RIC = str(DATA / "customization.yaml")
DESIRED = str(DATA / "desired.yaml")
OBSERVED = str(DATA / "observed.yaml")
STATUS = str(DATA / "status.yaml")

runner = CliRunner()


def invoke(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args), input=stdin)
    return result.exit_code, result.stdout, result.stderr


def documents(output: str) -> dict[str, object]:
    """``--- / # [i/n] name: / value`` blocks → {name: value}."""
    out: dict[str, object] = {}
    for block in output.split("---\n")[1:]:
        header, _, body = block.partition("\n")
        out[header.split("] ", 1)[1].rstrip(":")] = yaml.safe_load(body)
    return out


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        pytest.param(
            ["--operation", "interpretReplica", "--desired-file", DESIRED],
            {"replica": 4, "requires": {"resourceRequest": {"cpu": "250m", "memory": "512Mi"}}},
            id="interpretReplica prints the replica count and requirements",
        ),
        pytest.param(
            ["--operation", "interpretHealth", "--observed-file", OBSERVED],
            {"healthy": False},
            id="interpretHealth prints whether the object is healthy",
        ),
        pytest.param(
            ["--operation", "interpretStatus", "--observed-file", OBSERVED],
            {"status": {"readyReplicas": 1, "replicas": 2, "observedGeneration": 3, "generation": 3}},
            id="interpretStatus prints the reflected status",
        ),
        pytest.param(
            ["--operation", "interpretDependency", "--desired-file", DESIRED],
            {
                "dependencies": [
                    {"apiVersion": "v1", "kind": "ConfigMap", "namespace": "retail", "name": "shop-config"},
                    {"apiVersion": "v1", "kind": "ServiceAccount", "namespace": "retail", "name": "shop"},
                ]
            },
            id="interpretDependency prints the references",
        ),
    ],
)
def test_rules_print_their_results_as_yaml(args: list[str], expected: dict[str, object]) -> None:
    code, out, err = invoke("-f", RIC, *args)
    assert (code, err) == (0, "")
    assert documents(out) == expected


def test_the_output_is_headed_like_karmadactls() -> None:
    code, out, _ = invoke("-f", RIC, "--operation", "interpretHealth", "--observed-file", OBSERVED)
    assert code == 0
    assert out == "---\n# [1/1] healthy:\nfalse\n"


def test_revise_replica_uses_desired_replica() -> None:
    code, out, _ = invoke(
        "-f", RIC, "--operation", "reviseReplica", "--desired-file", DESIRED, "--desired-replica", "2"
    )
    assert code == 0
    revised = documents(out)["revised"]
    assert isinstance(revised, dict) and revised["spec"]["replicas"] == 2


def test_retain_needs_desired_and_observed() -> None:
    code, out, _ = invoke(
        "-f", RIC, "--operation", "retain", "--desired-file", DESIRED, "--observed-file", OBSERVED
    )
    assert code == 0
    retained = documents(out)["retained"]
    assert isinstance(retained, dict) and retained["spec"]["paused"] is True


def test_aggregate_status_reads_status_items_from_stdin() -> None:
    code, out, _ = invoke(
        "-f",
        RIC,
        "--operation",
        "aggregateStatus",
        "--desired-file",
        DESIRED,
        "--status-file",
        "-",
        stdin=Path(STATUS).read_text(),
    )
    assert code == 0
    aggregated = documents(out)["aggregatedStatus"]
    assert isinstance(aggregated, dict)
    assert aggregated["status"] == {"readyReplicas": 3, "replicas": 4, "clusters": "member1,member2,member3"}


def test_check_validates_and_compiles_the_customizations() -> None:
    code, out, _ = invoke("-f", RIC, "--check")
    assert (code, out) == (0, "1 customization(s) valid: declarative-configuration-workload\n")


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


BROKEN = """apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata: {name: broken}
spec:
  target: {apiVersion: apps.example.io/v1, kind: Workload}
  customizations:
    healthInterpretation:
      luaScript: |
        function InterpretHealth(obj)
          return obj.status.ready > 0
        end
"""


def test_a_script_error_exits_1_with_the_lua_error(tmp_path: Path) -> None:
    observed = write(
        tmp_path, "observed.yaml", "apiVersion: apps.example.io/v1\nkind: Workload\nmetadata: {name: w}\n"
    )
    code, out, err = invoke(
        "-f",
        write(tmp_path, "ric.yaml", BROKEN),
        "--operation",
        "interpretHealth",
        "--observed-file",
        observed,
    )
    assert (code, out) == (1, "")
    assert "broken.healthInterpretation:2: attempt to index a nil value (field 'status')" in err


@pytest.mark.parametrize(
    ("files", "args", "message"),
    [
        pytest.param(
            {"ric.yaml": "kind: [unclosed"},
            ["--check"],
            "ric.yaml: invalid YAML",
            id="a customization file that is not YAML",
        ),
        pytest.param(
            {"ric.yaml": "apiVersion: v1\nkind: ConfigMap\n"},
            ["--check"],
            "ric.yaml: kind: not a ResourceInterpreterCustomization",
            id="a file holding another kind",
        ),
        pytest.param(
            {
                "ric.yaml": BROKEN.replace(
                    "target: {apiVersion: apps.example.io/v1, kind: Workload}", "target: {kind: Workload}"
                )
            },
            ["--check"],
            "ric.yaml: spec.target.apiVersion: required value is missing",
            id="a target without apiVersion",
        ),
        pytest.param(
            {"ric.yaml": BROKEN.replace("end\n", "")},
            ["--check"],
            "broken.healthInterpretation:",
            id="a script with a syntax error",
        ),
        pytest.param(
            {},
            ["--operation", "interpretHealth", "--observed-file", "missing.yaml"],
            "missing.yaml: cannot read",
            id="a missing object file",
        ),
        pytest.param(
            {},
            ["--operation", "interpretHealth"],
            "--desired-file, --observed-file: one of them is required",
            id="no object at all",
        ),
        pytest.param(
            {},
            ["--operation", "interpretHealth", "--observed-file", OBSERVED, "--desired-file", DESIRED],
            "you can not specify both",
            id="two objects where one is expected",
        ),
        pytest.param(
            {},
            ["--operation", "retain", "--desired-file", DESIRED],
            "retain needs both",
            id="retain without the observed object",
        ),
        pytest.param(
            {},
            ["--operation", "dance", "--desired-file", DESIRED],
            "--operation: operation 'dance'",
            id="an unknown operation",
        ),
        pytest.param({}, [], "--operation: required", id="no operation and no --check"),
        pytest.param(
            {"obj.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"},
            ["--operation", "interpretHealth", "--observed-file", "obj.yaml"],
            "spec.customizations.healthInterpretation: no script for v1 ConfigMap",
            id="an object whose kind the customization does not target",
        ),
        pytest.param(
            {"obj.yaml": "kind: Workload\n"},
            ["--operation", "interpretHealth", "--observed-file", "obj.yaml"],
            "obj.yaml: --observed-file: an object needs apiVersion and kind",
            id="an object without apiVersion",
        ),
        pytest.param(
            {"status.yaml": "- just a string\n"},
            ["--operation", "aggregateStatus", "--desired-file", DESIRED, "--status-file", "status.yaml"],
            "status.yaml: item 1: expected an AggregatedStatusItem",
            id="a status file with a bad item",
        ),
    ],
)
def test_bad_input_exits_2_naming_the_file_and_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, str], args: list[str], message: str
) -> None:
    for name, text in files.items():
        write(tmp_path, name, text)
    monkeypatch.chdir(tmp_path)
    ric = "ric.yaml" if "ric.yaml" in files else RIC
    code, out, err = invoke("-f", ric, *args)
    assert (code, out) == (2, "")
    assert message in err


def test_the_command_function_can_be_registered_on_another_app() -> None:
    import typer

    from fleetkeeper.cli.interpret import interpret

    root = typer.Typer()
    root.command("interpret")(interpret)

    @root.command()
    def version() -> None:
        """Another command, so the root dispatches by name."""

    result = runner.invoke(root, ["interpret", "-f", RIC, "--check"])
    assert result.exit_code == 0
