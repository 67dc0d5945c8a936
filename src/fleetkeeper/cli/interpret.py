"""``fleetkeeper interpret``: run a ResourceInterpreterCustomization locally, like ``karmadactl interpret``.

Before a customization goes to the control plane, its author runs a rule against sample objects::

    fleetkeeper interpret -f customization.yaml --check
    fleetkeeper interpret -f customization.yaml --operation interpretHealth --observed-file observed.yaml
    fleetkeeper interpret -f customization.yaml --operation retain \\
        --desired-file desired.yaml --observed-file observed.yaml
    fleetkeeper interpret -f customization.yaml --operation aggregateStatus \\
        --desired-file desired.yaml --status-file status.yaml
    fleetkeeper interpret -f customization.yaml --operation reviseReplica \\
        --desired-file desired.yaml --desired-replica 2

Only the scripts in the given files run (no native rules), exactly as karmadactl does, and the
results print as YAML documents headed ``# [i/n] <name>:``. ``-`` reads a file from stdin.

Exit codes: 0 success; 1 the script failed (the Lua error is printed); 2 bad input — unreadable
or invalid YAML, a malformed customization, a missing rule or argument — with a message naming
the file and the field.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer
import yaml

from fleetkeeper import errors
from fleetkeeper.api import yamlload
from fleetkeeper.interpreter import Interpreter, InvalidCustomization, Operation
from fleetkeeper.interpreter.customization import KIND, Customization

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)

_ONE_OBJECT = (Operation.INTERPRET_REPLICA, Operation.INTERPRET_COMPONENT, Operation.REVISE_REPLICA,
               Operation.INTERPRET_STATUS, Operation.INTERPRET_HEALTH, Operation.INTERPRET_DEPENDENCY,
               Operation.AGGREGATE_STATUS)


class BadInput(Exception):
    """Input the command cannot use; the message names the file and field."""


def _load(path: str) -> list[Any]:
    """Every YAML document of ``path`` (``-``: stdin), ``None`` for an empty or ``null`` one."""
    try:
        return yamlload.read_all(path)
    except yamlload.Unreadable as exc:
        raise BadInput(str(exc)) from None


def _documents(path: str) -> list[Any]:
    return [doc for doc in _load(path) if doc is not None]


def _customizations(paths: list[str]) -> list[Customization]:
    found = []
    for path in paths:
        for index, doc in enumerate(_documents(path)):
            where = path if index == 0 else f"{path} (document {index + 1})"
            if not isinstance(doc, dict) or doc.get("kind") != KIND:
                kind = doc.get("kind") if isinstance(doc, dict) else type(doc).__name__
                raise BadInput(f"{where}: kind: not a {KIND}, got {kind!r}")
            try:
                found.append(Customization.parse(doc))
            except InvalidCustomization as exc:
                raise BadInput(f"{where}: {exc}") from None
    if not found:
        raise BadInput(f"{', '.join(paths)}: no {KIND} found")
    return found


def _object(path: str | None, flag: str) -> dict[str, Any] | None:
    if path is None:
        return None
    docs = _documents(path)
    if len(docs) != 1:
        raise BadInput(f"{path}: {flag}: expected exactly one object, found {len(docs)}")
    obj = docs[0]
    if not isinstance(obj, dict) or not obj.get("apiVersion") or not obj.get("kind"):
        raise BadInput(f"{path}: {flag}: an object needs apiVersion and kind")
    return obj


def _status_items(path: str | None) -> list[Any] | None:
    """The statusItems argument: ``None`` (nil in Lua) without a file or for a lone ``null``
    document, as Karmada's test vectors pass ``statusItems: null``; otherwise the list."""
    if path is None:
        return None
    docs = _load(path)
    if docs == [None]:
        return None
    items: list[Any] = []
    for doc in (d for d in docs if d is not None):
        items.extend(doc if isinstance(doc, list) else [doc])
    for index, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("clusterName", ""), str):
            raise BadInput(f"{path}: item {index + 1}: expected an AggregatedStatusItem "
                           "{clusterName, status, applied, health}")
    return items


def _pick(desired: dict[str, Any] | None, observed: dict[str, Any] | None) -> dict[str, Any]:
    if desired is None and observed is None:
        raise BadInput("--desired-file, --observed-file: one of them is required")
    if desired is not None and observed is not None:
        raise BadInput("--desired-file, --observed-file: you can not specify both")
    return desired if desired is not None else observed  # type: ignore[return-value]


def _run(interp: Interpreter, op: Operation, args: dict[str, Any]) -> list[tuple[str, Any]]:
    desired, observed = args["desired"], args["observed"]
    if op is Operation.RETAIN:
        if desired is None or observed is None:
            raise BadInput("--desired-file, --observed-file: retain needs both")
        _require(interp, op, desired)
        return [("retained", interp.retain(desired, observed))]
    obj = _pick(desired, observed)
    _require(interp, op, obj)
    if op is Operation.INTERPRET_REPLICA:
        replicas, requires = interp.get_replicas(obj)
        return [("replica", replicas), ("requires", requires)]
    if op is Operation.INTERPRET_COMPONENT:
        return [("components", interp.get_components(obj))]
    if op is Operation.REVISE_REPLICA:
        return [("revised", interp.revise_replica(obj, args["replicas"]))]
    if op is Operation.INTERPRET_STATUS:
        return [("status", interp.reflect_status(obj))]
    if op is Operation.AGGREGATE_STATUS:
        return [("aggregatedStatus", interp.aggregate_status(obj, args["items"]))]
    if op is Operation.INTERPRET_HEALTH:
        return [("healthy", interp.interpret_health(obj))]
    return [("dependencies", interp.get_dependencies(obj))]


def _require(interp: Interpreter, op: Operation, obj: dict[str, Any]) -> None:
    api_version, kind = str(obj["apiVersion"]), str(obj["kind"])
    if not interp.has_customization(api_version, kind, op):
        raise BadInput(f"spec.customizations.{op.field}: no script for {api_version} {kind} "
                       "in the given customizations (rule is not enabled)")


def _print(results: list[tuple[str, Any]]) -> None:
    for index, (name, value) in enumerate(results, start=1):
        typer.echo("---")
        typer.echo(f"# [{index}/{len(results)}] {name}:")
        text = yaml.safe_dump(value, sort_keys=True, default_flow_style=False)
        typer.echo(text.removesuffix("...\n").rstrip("\n"))


def interpret(
    filename: Annotated[list[str], typer.Option(
        "--filename", "-f", help="Files with ResourceInterpreterCustomization objects (YAML or JSON).")],
    operation: Annotated[str | None, typer.Option(
        help="The rule to run: retain, interpretReplica, interpretComponent, reviseReplica, "
             "interpretStatus, aggregateStatus, interpretHealth, interpretDependency.")] = None,
    check: Annotated[bool, typer.Option(
        "--check", help="Validate the customizations and compile their scripts.")] = False,
    desired_file: Annotated[str | None, typer.Option(
        help="The desiredObj argument (a file, or -).")] = None,
    observed_file: Annotated[str | None, typer.Option(
        help="The observedObj argument (a file, or -).")] = None,
    status_file: Annotated[str | None, typer.Option(
        help="The statusItems argument (a file, or -); without it, or with a file holding only "
             "null, the script gets nil.")] = None,
    desired_replica: Annotated[int, typer.Option(help="The desiredReplica argument.")] = 0,
) -> None:
    """Validate a customization, or run one of its rules on sample objects."""
    try:
        results = _execute(filename, operation, check=check, desired_file=desired_file,
                           observed_file=observed_file, status_file=status_file,
                           replicas=desired_replica)
    except BadInput as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    except errors.InterpreterError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    if results is not None:
        _print(results)


def _execute(filename: list[str], operation: str | None, *, check: bool, desired_file: str | None,
             observed_file: str | None, status_file: str | None,
             replicas: int) -> list[tuple[str, Any]] | None:
    customizations = _customizations(filename)
    interp = Interpreter()
    try:
        interp.set_customizations(customizations)
    except errors.ScriptError as exc:
        raise BadInput(f"{', '.join(filename)}: {exc}") from None
    if check:
        names = ", ".join(c.name for c in customizations)
        typer.echo(f"{len(customizations)} customization(s) valid: {names}")
        return None
    if operation is None:
        raise BadInput("--operation: required unless --check is given")
    try:
        op = Operation.parse(operation)
    except errors.InterpreterError as exc:
        raise BadInput(f"--operation: {exc}") from None
    if op not in (Operation.RETAIN, *_ONE_OBJECT):
        raise BadInput(f"--operation: {operation!r} has no customization rule")
    args = {"desired": _object(desired_file, "--desired-file"),
            "observed": _object(observed_file, "--observed-file"),
            "items": _status_items(status_file), "replicas": replicas}
    return _run(interp, op, args)


app.command("interpret")(interpret)
