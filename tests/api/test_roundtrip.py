"""Every example object of the spec and the seeds loads and dumps back to itself.

``data/valid`` holds the YAML examples meant to be valid objects of our kinds, copied
verbatim (a ``# source:`` line says where from). ``data/invalid`` holds seed examples
written against proposals that were never built (or whose text lost its indentation);
each names in a ``# rejected-at:`` line the field path the error must point at.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from fleetkeeper import errors
from fleetkeeper.api import SCHEME

DATA = Path(__file__).parent / "data"
VALID = sorted((DATA / "valid").glob("*.yaml"))
INVALID = sorted((DATA / "invalid").glob("*.yaml"))


def _load(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc is not None]


def _missing(dumped: Any, original: Any, path: str = "") -> list[str]:
    """Paths where ``dumped`` lacks or changes something ``original`` has."""
    if isinstance(original, dict):
        if not isinstance(dumped, dict):
            return [path or "<root>"]
        out: list[str] = []
        for key, value in original.items():
            sub = f"{path}.{key}" if path else str(key)
            out += [sub] if key not in dumped else _missing(dumped[key], value, sub)
        return out
    if isinstance(original, list):
        if not isinstance(dumped, list) or len(dumped) != len(original):
            return [path]
        return [p for i, item in enumerate(original) for p in _missing(dumped[i], item, f"{path}[{i}]")]
    return [] if dumped == original else [f"{path}: {original!r} became {dumped!r}"]


def test_there_are_examples_to_check() -> None:
    assert len(VALID) >= 7
    assert len(INVALID) >= 7


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_example_dumps_every_field_it_was_given(path: Path) -> None:
    for doc in _load(path):
        obj = SCHEME.decode(doc)
        assert _missing(obj.to_dict(), doc) == []


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_example_reloads_from_its_own_dump_unchanged(path: Path) -> None:
    for doc in _load(path):
        obj = SCHEME.decode(doc)
        again = SCHEME.decode(obj.to_dict())
        assert again == obj
        assert again.to_dict() == obj.to_dict()


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_example_decodes_to_its_registered_typed_kind(path: Path) -> None:
    for doc in _load(path):
        obj = SCHEME.decode(doc)
        info = SCHEME.lookup(doc["apiVersion"], doc["kind"])
        assert info is not None and type(obj) is info.model


def _rejected_at(path: Path) -> str:
    for line in path.read_text().splitlines():
        if line.startswith("# rejected-at:"):
            return line.split(":", 1)[1].strip()
    raise AssertionError(f"{path.name} has no '# rejected-at:' line")


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.stem)
def test_seed_example_of_an_unbuilt_shape_is_rejected_naming_the_field(path: Path) -> None:
    (doc,) = _load(path)
    with pytest.raises(errors.Invalid) as caught:
        SCHEME.decode(doc)
    assert _rejected_at(path) in [cause.field for cause in caught.value.causes]
    assert _rejected_at(path) in str(caught.value)
