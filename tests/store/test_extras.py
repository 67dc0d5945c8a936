"""Without the ``etcd`` extra installed, every path that needs it says what to install and exits 2.

The extra's libraries (``grpc``, ``aetcd``) are made unimportable in a child process by a
``sitecustomize`` on its ``PYTHONPATH`` — as in an environment where only ``pip install .``
ran — and the real commands are run there.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

FLEETKEEPER = [sys.executable, "-m", "fleetkeeper.cmd.main"]
MESSAGE = "etcd support needs: pip install 'fleetkeeper[etcd]'"
BLOCK = """\
import sys


class _NotInstalled:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in ("grpc", "aetcd"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _NotInstalled())
"""


@pytest.fixture
def without_extra(tmp_path: Path) -> dict[str, str]:
    """The environment of a child process that cannot import the etcd extra's libraries."""
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(BLOCK)
    return {**os.environ, "PYTHONPATH": str(tmp_path / "site"), "XDG_STATE_HOME": str(tmp_path / "xdg"),
            "KUBECONFIG": ""}


def test_the_child_really_lacks_the_extra(without_extra: dict[str, str]) -> None:
    done = subprocess.run([sys.executable, "-c", "import grpc"], env=without_extra, capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 1 and "No module named 'grpc'" in done.stderr


@pytest.mark.parametrize("args", [
    ["up", "--store", "etcd://127.0.0.1:2379", "--port", "0"],
    ["apiserver", "--store", "etcd://127.0.0.1:2379", "--port", "0"],
    ["controller-manager", "--store", "etcd://127.0.0.1:2379"],
    ["scheduler", "--store", "etcd://127.0.0.1:2379"],
    ["bench", "store", "--backend", "etcd"],
    ["bench", "store", "--store", "etcd://127.0.0.1:2379"],
], ids=["up", "apiserver", "controller-manager", "scheduler", "bench store --backend", "bench store --store"])
def test_an_etcd_store_without_the_extra_says_what_to_install_and_exits_2(
        args: list[str], without_extra: dict[str, str], tmp_path: Path) -> None:
    if args[0] in ("up", "apiserver"):
        args = [*args, "--state-dir", str(tmp_path / "state")]
    done = subprocess.run([*FLEETKEEPER, *args], env=without_extra, capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 2, done.stderr
    assert MESSAGE in done.stderr and "Traceback" not in done.stderr, done.stderr
