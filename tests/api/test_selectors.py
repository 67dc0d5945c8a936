"""Label and field selectors behave as Kubernetes' ``labels`` and ``fields`` packages."""

from __future__ import annotations

from typing import Any

import pytest

from fleetkeeper import errors
from fleetkeeper.api.meta import LabelSelector, LabelSelectorRequirement
from fleetkeeper.api.selectors import (
    FieldRequirement,
    Requirement,
    field_selector_matches,
    format_label_requirements,
    label_selector_matches,
    parse_field_selector,
    parse_label_selector,
    requirements_match,
)

LABELS = {"app": "web", "tier": "front", "region": "eu", "replicas": "3", "empty": ""}

MATCH_CASES = [
    ("", True, "an empty selector matches everything"),
    ("app=web", True, "equality matches an equal label"),
    ("app==web", True, "double equals is equality"),
    ("app=db", False, "equality fails on another value"),
    ("missing=x", False, "equality needs the label"),
    ("app!=db", True, "inequality matches another value"),
    ("app!=web", False, "inequality fails on the same value"),
    ("missing!=x", True, "inequality matches an absent label"),
    ("region in (eu,us)", True, "in matches a member of the set"),
    ("region in (us, ap)", False, "in fails outside the set"),
    ("missing in (x)", False, "in needs the label"),
    ("region notin (us)", True, "notin matches outside the set"),
    ("region notin (eu)", False, "notin fails on a member"),
    ("missing notin (x)", True, "notin matches an absent label"),
    ("tier", True, "a bare key means exists"),
    ("missing", False, "exists fails on an absent label"),
    ("!missing", True, "bang means does-not-exist"),
    ("!tier", False, "does-not-exist fails on a present label"),
    ("app=web,tier=front", True, "all requirements must hold"),
    ("app=web,tier=back", False, "one failing requirement fails the selector"),
    ("  app = web ,  tier  ", True, "whitespace around tokens is ignored"),
    ("empty=", True, "an empty value selects the empty label value"),
    ("replicas>2", True, "greater-than compares integers"),
    ("replicas<2", False, "less-than compares integers"),
    ("app>2", False, "greater-than on a non-integer label fails"),
    ("region in (eu,)", True, "a trailing comma inside a set adds the empty value"),
    ("example.com/team=a", False, "prefixed keys parse"),
]


@pytest.mark.parametrize(("text", "expected"), [(t, e) for t, e, _ in MATCH_CASES],
                         ids=[i for _, _, i in MATCH_CASES])
def test_label_selector_string_matches_like_kubernetes(text: str, expected: bool) -> None:
    assert requirements_match(parse_label_selector(text), LABELS) is expected


BAD_LABEL_SELECTORS = [
    ("app=web,", "a trailing comma"),
    ("app in x", "in without parentheses"),
    ("app in ()", "an empty value set"),
    ("app in (a b)", "values not separated by commas"),
    ("app in (a", "an unclosed value set"),
    ("=web", "a missing key"),
    ("app=we b", "two words as a value"),
    ("-bad=x", "a key starting with a dash"),
    ("app=" + "x" * 64, "a value longer than 63 characters"),
    ("app>x", "a non-integer bound"),
    ("app,,tier", "an empty requirement"),
    ("app = (x)", "a parenthesis as a value"),
]


@pytest.mark.parametrize("text", [t for t, _ in BAD_LABEL_SELECTORS], ids=[i for _, i in BAD_LABEL_SELECTORS])
def test_bad_label_selector_syntax_is_a_bad_request(text: str) -> None:
    with pytest.raises(errors.BadRequest):
        parse_label_selector(text)


def test_parsed_requirements_are_values() -> None:
    assert parse_label_selector("a=b,c notin (y,x),!d") == (
        Requirement("a", "=", frozenset({"b"})),
        Requirement("c", "notin", frozenset({"x", "y"})),
        Requirement("d", "!"),
    )


def test_requirements_render_back_to_an_equivalent_string() -> None:
    text = "a=b,c!=d,e in (x,y),f notin (z),g,!h,i>1"
    assert format_label_requirements(parse_label_selector(text)) == text


Expr = tuple[str, Any, list[str] | None]


def _sel(match_labels: dict[str, str] | None = None, *exprs: Expr) -> LabelSelector:
    requirements = [LabelSelectorRequirement(key=k, operator=op, values=v) for k, op, v in exprs]
    return LabelSelector(match_labels=match_labels, match_expressions=requirements or None)


MODEL_CASES = [
    (None, True, "no selector matches everything"),
    (_sel(), True, "an empty selector matches everything"),
    (_sel({"app": "web"}), True, "match labels match equal labels"),
    (_sel({"app": "web", "tier": "back"}), False, "every match label must hold"),
    (_sel(None, ("region", "In", ["eu", "us"])), True, "In matches a member"),
    (_sel(None, ("region", "NotIn", ["eu"])), False, "NotIn fails on a member"),
    (_sel(None, ("missing", "NotIn", ["eu"])), True, "NotIn matches an absent label"),
    (_sel(None, ("tier", "Exists", None)), True, "Exists matches a present label"),
    (_sel(None, ("tier", "DoesNotExist", None)), False, "DoesNotExist fails on a present label"),
    (_sel({"app": "web"}, ("tier", "In", ["front"])), True, "labels and expressions combine"),
    (_sel(None, ("region", "In", [])), False, "In without values is invalid and matches nothing"),
    (_sel(None, ("tier", "Exists", ["x"])), False, "Exists with values is invalid and matches nothing"),
    (_sel({"bad key!": "x"}), False, "an invalid key matches nothing"),
]


@pytest.mark.parametrize(("selector", "expected"), [(s, e) for s, e, _ in MODEL_CASES],
                         ids=[i for _, _, i in MODEL_CASES])
def test_label_selector_model_matches_like_kubernetes(selector: LabelSelector | None, expected: bool) -> None:
    assert label_selector_matches(selector, LABELS) is expected


OBJ = {
    "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
    "spec": {"suspend": False, "replicas": 3, "nested": {"deep": "yes"}},
}

FIELD_CASES = [
    ("", True, "an empty field selector matches everything"),
    ("metadata.name=web", True, "equality on a metadata field"),
    ("metadata.name==web", True, "double equals is equality"),
    ("metadata.name=db", False, "equality fails on another value"),
    ("metadata.namespace!=kube-system", True, "inequality matches another value"),
    ("metadata.namespace!=default", False, "inequality fails on the same value"),
    ("spec.nested.deep=yes", True, "dotted paths reach nested fields"),
    ("spec.missing=", True, "a missing field compares as the empty string"),
    ("spec.missing!=", False, "a missing field is not different from empty"),
    ("spec.suspend=false", True, "booleans compare as true/false"),
    ("spec.replicas=3", True, "numbers compare as their decimal form"),
    ("metadata.name=web,spec.replicas!=3", False, "every field requirement must hold"),
    ("metadata.labels.app=web", True, "label maps are reachable by path"),
]


@pytest.mark.parametrize(("text", "expected"), [(t, e) for t, e, _ in FIELD_CASES],
                         ids=[i for _, _, i in FIELD_CASES])
def test_field_selector_matches_dotted_paths(text: str, expected: bool) -> None:
    assert field_selector_matches(parse_field_selector(text), OBJ) is expected


def test_field_selector_values_may_escape_separators() -> None:
    reqs = parse_field_selector(r"metadata.name=a\,b\=c")
    assert reqs == (FieldRequirement("metadata.name", "a,b=c"),)
    assert field_selector_matches(reqs, {"metadata": {"name": "a,b=c"}})


BAD_FIELD_SELECTORS = [
    ("metadata.name", "a term without an operator"),
    ("=web", "a missing path"),
    ("metadata.name=a=b", "an unescaped equals sign in the value"),
    (r"metadata.name=a\x", "an unknown escape"),
    ("metadata..name=x", "an empty path segment"),
]


@pytest.mark.parametrize("text", [t for t, _ in BAD_FIELD_SELECTORS], ids=[i for _, i in BAD_FIELD_SELECTORS])
def test_bad_field_selector_syntax_is_a_bad_request(text: str) -> None:
    with pytest.raises(errors.BadRequest):
        parse_field_selector(text)
