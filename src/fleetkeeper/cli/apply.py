"""``fleetkeeper apply -f FILE`` and ``fleetkeeper delete KIND NAME``.

``apply`` reads every YAML document of every file (``-f`` repeats; ``-`` is stdin) and
applies each with **server-side apply** (field manager ``fleetkeeper-cli``, forced): the
API server creates what is absent and merges what the file says into what exists, the
way ``kubectl apply --server-side`` does. It prints one line per object, kubectl-style
(``deployment.apps/nginx created``, ``configured`` or ``unchanged`` — judged on the
object's content, not on its resourceVersion, which status writers move on). Documents are
checked before anything is sent — a file that cannot be read, invalid YAML, or a
document without ``apiVersion``/``kind``/``metadata.name`` stops the command with exit 2
naming the file and the document. A ``List`` (what ``kubectl get -o yaml`` prints for
several objects) stands for its items, each checked and named ``items[i]``. The API
server's verdict on each object (admission and validation) is printed as it comes; the
command exits 2 if any object was invalid, 1 if any other write failed. Namespaced objects
without a namespace go to ``-n`` or the kubeconfig context's namespace.

``delete`` deletes one object by kind and name (``-n`` for namespaced kinds); objects
with finalizers linger until their controllers let go (``--wait`` waits for that).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml

from fleetkeeper import errors
from fleetkeeper.api import yamlload
from fleetkeeper.api.meta import Resource
from fleetkeeper.api.scheme import SCHEME, ResourceInfo, split_api_version
from fleetkeeper.cli import connect, kinds


@dataclass(frozen=True)
class Document:
    """One object of an input file, where it came from, and its kind."""

    where: str
    body: dict[str, Any]
    info: ResourceInfo | None

    @property
    def model(self) -> type[Resource]:
        return self.info.model if self.info else SCHEME.model_for(self.body["apiVersion"], self.body["kind"])

    @property
    def namespaced(self) -> bool:
        return self.info.namespaced if self.info else True

    def label(self) -> str:
        group = split_api_version(self.body["apiVersion"])[0]
        plural = self.info.singular if self.info else str(self.body["kind"]).lower()
        return f"{plural}.{group}/{self.body['metadata']['name']}" if group else \
            f"{plural}/{self.body['metadata']['name']}"


def _read(path: str) -> str:
    try:
        return sys.stdin.read() if path == "-" else Path(path).read_text("utf-8")
    except OSError as exc:
        raise connect.BadInput(f"-f {path}: cannot read: {exc.strerror or exc}") from None


def read_documents(files: list[str]) -> list[Document]:
    """Every non-empty document of ``files``, checked (see the module notes)."""
    found: list[Document] = []
    for path in files:
        try:
            docs = list(yaml.safe_load_all(_read(path)))
        except yaml.YAMLError as exc:
            raise connect.BadInput(f"-f {path}: invalid YAML: {exc}") from None
        for index, doc in enumerate(docs, start=1):
            if doc is None:
                continue
            where = f"{path}: document {index}"
            try:
                items = yamlload.list_items(doc)
            except ValueError as exc:
                raise connect.BadInput(f"{where}: {exc}") from None
            if items is None:
                found.append(_document(where, doc))
            else:
                found.extend(_document(f"{where}: items[{i}]", item) for i, item in enumerate(items))
    if not found:
        raise connect.BadInput(f"-f {', '.join(files)}: no objects to apply")
    return found


def _document(where: str, doc: Any) -> Document:
    """One object of a file (or of a List's items), checked."""
    if not isinstance(doc, dict):
        raise connect.BadInput(f"{where}: expected an object with apiVersion, kind and metadata")
    for key in ("apiVersion", "kind"):
        if not isinstance(doc.get(key), str) or not doc[key]:
            raise connect.BadInput(f"{where}: {key}: Required value")
    meta = doc.get("metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str) or not meta["name"]:
        raise connect.BadInput(f"{where}: metadata.name: Required value")
    return Document(where, doc, SCHEME.lookup(doc["apiVersion"], doc["kind"]))


async def apply_one(client: Any, doc: Document, namespace: str) -> str:
    """Server-side apply one document; ``created``, ``configured`` or ``unchanged``."""
    body = dict(doc.body)
    meta = dict(body["metadata"])
    if doc.namespaced:
        meta["namespace"] = meta.get("namespace") or namespace
        ns = meta["namespace"]
    else:
        meta.pop("namespace", None)
        ns = ""
    body["metadata"] = meta
    try:
        before: dict[str, Any] | None = _content((await client.get(doc.model, meta["name"], ns)).to_dict())
    except errors.NotFound:
        before = None
    after = await client.patch(doc.model, meta["name"], ns, patch=body, patch_type="apply")
    if before is None:
        return "created"
    return "unchanged" if _content(after.to_dict()) == before else "configured"


def _content(obj: dict[str, Any]) -> dict[str, Any]:
    """What a user applies: the object without status and write bookkeeping (versions, managers)."""
    meta = {k: v for k, v in (obj.get("metadata") or {}).items()
            if k not in ("resourceVersion", "managedFields", "generation")}
    return {**{k: v for k, v in obj.items() if k != "status"}, "metadata": meta}


def apply(
    filename: Annotated[list[str], typer.Option(
        "--filename", "-f", help="YAML file(s) to apply; - reads stdin", show_default=False)],
    namespace: Annotated[str | None, typer.Option(
        "--namespace", "-n", help="namespace for objects without one [default: the kubeconfig context's]",
        show_default=False)] = None,
    kubeconfig: connect.KubeconfigOption = None,
) -> None:
    """Create or update objects from YAML files (server-side apply)."""
    try:
        docs = read_documents(filename)
    except connect.BadInput as exc:
        connect.die(str(exc), 2)

    async def action(session: connect.Session) -> int:
        worst = 0
        for doc in docs:
            try:
                verdict = await apply_one(session.client, doc, namespace or session.namespace)
            except (errors.Invalid, errors.BadRequest) as exc:
                typer.echo(f"{doc.where}: {connect.server_error(exc)}", err=True)
                worst = 2
                continue
            except errors.InternalError:
                raise  # the server is unreachable: stop here
            except errors.ApiError as exc:
                typer.echo(f"{doc.where}: {connect.server_error(exc)}", err=True)
                worst = max(worst, 1)
                continue
            typer.echo(f"{doc.label()} {verdict}")
        return worst

    code = connect.run(kubeconfig, action)
    if code:
        raise typer.Exit(code)


def delete(
    kind: Annotated[str, typer.Argument(help="kind: cluster, rb, pp, deploy, …", show_default=False)],
    name: Annotated[str, typer.Argument(help="object name", show_default=False)],
    namespace: Annotated[str | None, typer.Option("--namespace", "-n", help="namespace [default: the "
                                                  "kubeconfig context's]", show_default=False)] = None,
    wait: Annotated[bool, typer.Option(help="wait until the object is gone (finalizers done)")] = False,
    timeout: Annotated[str, typer.Option(help="how long --wait waits")] = "60s",
    kubeconfig: connect.KubeconfigOption = None,
) -> None:
    """Delete one object."""
    try:
        info = kinds.resolve(kind)
    except kinds.UnknownKind as exc:
        raise typer.BadParameter(str(exc), param_hint="KIND") from None
    limit = connect.duration(timeout, "--timeout")

    async def action(session: connect.Session) -> None:
        ns = (namespace or session.namespace) if info.namespaced else ""
        await session.client.delete(info.model, name, ns)
        if wait:
            await wait_gone(session, info.model, name, ns, limit)
        typer.echo(f'{info.singular} "{name}" deleted')

    connect.run(kubeconfig, action)


async def wait_gone(session: connect.Session, model: type[Resource], name: str, namespace: str,
                    limit: float) -> None:
    """Poll until the object is gone; :class:`connect.Failed` after ``limit`` seconds."""

    async def gone() -> bool | None:
        try:
            await session.client.get(model, name, namespace)
        except errors.NotFound:
            return True
        return None

    await connect.poll(session, gone, limit, f'{model.KIND} "{name}" still exists after {limit:g}s (its '
                       "finalizers are still running; `fleetkeeper describe` may say why)")


__all__ = ["Document", "apply", "apply_one", "delete", "read_documents", "wait_gone"]
