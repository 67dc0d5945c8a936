"""Where fleetkeeper keeps its local state, and which kubeconfig a command uses.

``fleetkeeper up`` keeps everything it needs to come back after a restart in one
*state directory*: the sqlite store, the PKI, the tokens and the admin kubeconfig it
writes for kubectl. Without ``--state-dir`` that is a per-user directory following the
XDG base-directory rules — ``$XDG_STATE_HOME/fleetkeeper``, else
``~/.local/state/fleetkeeper`` — so ``fleetkeeper up`` and the other commands find
each other with no flags at all.

The commands that talk to a control plane (``get``, ``describe``, ``apply`` …) pick
their kubeconfig like kubectl does (:func:`resolve_kubeconfigs`): ``--kubeconfig``, else
the files of ``$KUBECONFIG`` merged, else ``<default state dir>/kubeconfig`` merged with
``~/.kube/config``; ``--context`` picks a context of what was merged.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

APP_DIR = "fleetkeeper"
#: names of the files ``fleetkeeper up`` keeps in its state directory
KUBECONFIG_FILE = "kubeconfig"
STORE_FILE = "state.db"
PKI_DIR = "pki"
LOCK_FILE = "up.lock"


class NoKubeconfig(Exception):
    """No kubeconfig was given and none was found; the message says where we looked."""


def default_state_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_STATE_HOME/fleetkeeper``, else ``~/.local/state/fleetkeeper``."""
    environ = os.environ if env is None else env
    base = environ.get("XDG_STATE_HOME", "").strip()
    if base and Path(base).is_absolute():
        return Path(base) / APP_DIR
    home = environ.get("HOME", "").strip()
    root = Path(home) if home else Path.home()
    return root / ".local" / "state" / APP_DIR


def agent_kubeconfig_name(cluster: str) -> str:
    """File name of the kubeconfig of the Pull agent of ``cluster`` (in the state directory)."""
    return f"agent-{cluster}.kubeconfig"


def resolve_kubeconfig(explicit: Path | None, env: Mapping[str, str] | None = None) -> Path:
    """The kubeconfig to use (see the module notes); raises :class:`NoKubeconfig`."""
    if explicit is not None:
        if not explicit.is_file():
            raise NoKubeconfig(f"--kubeconfig {explicit}: no such file")
        return explicit
    environ = os.environ if env is None else env
    listed = [Path(p) for p in environ.get("KUBECONFIG", "").split(os.pathsep) if p.strip()]
    for path in listed:
        if path.is_file():
            return path
    fallback = default_state_dir(environ) / KUBECONFIG_FILE
    if fallback.is_file():
        return fallback
    looked = [str(p) for p in listed] + [str(fallback)]
    raise NoKubeconfig(
        "no kubeconfig found (looked at " + ", ".join(looked) + "): pass --kubeconfig FILE, set "
        "KUBECONFIG, or start the control plane with `fleetkeeper up`, which writes " + str(fallback))


def kube_config(env: Mapping[str, str] | None = None) -> Path:
    """kubectl's own default, ``~/.kube/config``."""
    environ = os.environ if env is None else env
    home = environ.get("HOME", "").strip()
    return (Path(home) if home else Path.home()) / ".kube" / "config"


def resolve_kubeconfigs(explicit: Path | None, env: Mapping[str, str] | None = None) -> list[Path]:
    """The kubeconfig files to merge, as kubectl picks them, with the plane's own file first when
    nothing is named: ``--kubeconfig``; else every existing file of ``$KUBECONFIG``; else the
    state directory's kubeconfig (``fleetkeeper up`` writes it, and its context is current) and
    ``~/.kube/config``, those that exist — so ``--context`` reaches the contexts of either.
    Raises :class:`NoKubeconfig`."""
    if explicit is not None:
        return [resolve_kubeconfig(explicit, env)]
    environ = os.environ if env is None else env
    listed = [Path(p) for p in environ.get("KUBECONFIG", "").split(os.pathsep) if p.strip()]
    found = [path for path in dict.fromkeys(listed) if path.is_file()]
    if found:
        return found
    fallbacks = [default_state_dir(environ) / KUBECONFIG_FILE, kube_config(environ)]
    found = [path for path in fallbacks if path.is_file()]
    if found:
        return found
    looked = [str(p) for p in [*listed, *fallbacks]]
    raise NoKubeconfig(
        "no kubeconfig found (looked at " + ", ".join(looked) + "): pass --kubeconfig FILE, set "
        "KUBECONFIG, or start the control plane with `fleetkeeper up`, which writes " + str(fallbacks[0]))


__all__ = [
    "KUBECONFIG_FILE", "LOCK_FILE", "PKI_DIR", "STORE_FILE", "NoKubeconfig",
    "agent_kubeconfig_name", "default_state_dir", "kube_config", "resolve_kubeconfig", "resolve_kubeconfigs",
]
