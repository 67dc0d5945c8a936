"""``fleetkeeper token create-user NAME [--group G]… [--duration D]``: a kubeconfig for a person.

The token is signed with the plane's key (the Secret ``fleetkeeper-token-signing-key`` in
``karmada-system``, which only the admin may read, so only the admin can run this) and names
the user and its groups; it is valid on every replica until it expires. What the person may
do is what RoleBindings and ClusterRoleBindings grant that user name or those groups::

    fleetkeeper token create-user alice --group platform --duration 8h
    kubectl create clusterrolebinding platform-admins --clusterrole cluster-admin --group platform
    kubectl --kubeconfig ~/.local/state/fleetkeeper/user-alice.kubeconfig get clusters

Such a token cannot be revoked one by one: keep durations short (``--duration``, 24h by
default, a year at most), or remove the bindings it relies on.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

import typer

from fleetkeeper import errors
from fleetkeeper.api.builtin import Secret
from fleetkeeper.apiserver import identity, satokens, write_kubeconfig
from fleetkeeper.apiserver.auth import AGENT_USER_PREFIX
from fleetkeeper.apiserver.rbac import SA_PREFIX
from fleetkeeper.cli import connect, paths
from fleetkeeper.client.rest import read_kubeconfig
from fleetkeeper.clock import SystemClock
from fleetkeeper.cmd import components as parts
from fleetkeeper.options import parse_duration

#: what a user or group name may be (no control characters, bounded)
NAME = re.compile(r"^[^\x00-\x1f\x7f]{1,253}$")
MAX_GROUPS = satokens.MAX_GROUPS


def _check(name: str, groups: list[str]) -> None:
    if not NAME.match(name) or name.startswith((SA_PREFIX, AGENT_USER_PREFIX)):
        raise typer.BadParameter(f"{name!r}: a user name is 1 to 253 printable characters and names neither "
                                 "a ServiceAccount nor a Pull agent (use kubectl create token for those)",
                                 param_hint="NAME")
    if len(groups) > MAX_GROUPS or not all(NAME.match(group) for group in groups):
        raise typer.BadParameter(f"at most {MAX_GROUPS} groups of 1 to 253 printable characters",
                                 param_hint="--group")


def create_user(
    name: Annotated[str, typer.Argument(help="the user name the token stands for", show_default=False)],
    group: Annotated[list[str] | None, typer.Option(help="a group of the user (repeat for more)")] = None,
    duration: Annotated[str, typer.Option(help="how long the token is valid (e.g. 30m, 8h; a year at most)")
                        ] = "24h",
    state_dir: Annotated[Path | None, typer.Option(
        help="the state directory of `fleetkeeper up`: its admin kubeconfig reaches the plane, the user's is "
             "written there [default: $XDG_STATE_HOME/fleetkeeper or ~/.local/state/fleetkeeper]",
        show_default=False)] = None,
) -> None:
    """Sign a token for the person NAME and write STATE_DIR/user-NAME.kubeconfig."""
    groups = list(dict.fromkeys(group or []))
    _check(name, groups)
    try:
        seconds = int(parse_duration(duration))
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--duration") from None
    if not 60 <= seconds <= satokens.MAX_SECONDS:
        raise typer.BadParameter("must be between 1m and a year", param_hint="--duration")
    directory = (state_dir or paths.default_state_dir()).expanduser()
    admin = directory / paths.KUBECONFIG_FILE
    if not admin.is_file():
        parts.fail(f"{directory} holds no control plane (no {paths.KUBECONFIG_FILE}): start `fleetkeeper up` "
                   "there first, or pass --state-dir", 2)

    async def key(session: connect.Session) -> bytes:
        try:
            secret = await session.client.get(Secret, satokens.SIGNING_SECRET, identity.NAMESPACE)
        except errors.NotFound:
            raise connect.Failed(f"secret {identity.NAMESPACE}/{satokens.SIGNING_SECRET} not found: is the "
                                 "plane older than user tokens?") from None
        found = identity.secret_value(secret.to_dict(), "key")
        if not found:
            raise connect.Failed(f"secret {identity.NAMESPACE}/{satokens.SIGNING_SECRET} holds no key")
        return found

    signer = satokens.Signer(connect.run(admin, key), SystemClock(), {})
    token = signer.user_token(name, groups, seconds=seconds)
    creds = read_kubeconfig(admin)
    if creds.ca_pem is None:
        parts.fail(f"{admin}: the cluster has no certificate-authority-data", 2)
    plane = identity.plane_name(creds.ca_pem)
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:100]
    path = write_kubeconfig(directory / f"user-{safe}.kubeconfig", creds.server, creds.ca_pem, token,
                            name=plane, user=f"{plane}-{safe}")
    typer.echo(f"kubeconfig of user {name} (groups: {', '.join(groups) or 'none'}; valid {duration}): {path}")


__all__ = ["create_user"]
