"""Kubernetes name formats and the field-error collector."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from fleetkeeper import errors
from fleetkeeper.api import validation

Check = Callable[[str], list[str]]


@pytest.mark.parametrize(("check", "value", "valid"), [
    pytest.param(validation.dns1123_label, "member-1", True, id="a label with a dash is a DNS label"),
    pytest.param(validation.dns1123_label, "a.b", False, id="a dot is not allowed in a DNS label"),
    pytest.param(validation.dns1123_label, "A", False, id="upper case is not allowed in a DNS label"),
    pytest.param(validation.dns1123_label, "-a", False, id="a DNS label does not start with a dash"),
    pytest.param(validation.dns1123_label, "a" * 64, False, id="a DNS label has at most 63 characters"),
    pytest.param(validation.dns1123_subdomain, "nginx.v1-a", True, id="dots are allowed in a subdomain"),
    pytest.param(validation.dns1123_subdomain, "a..b", False, id="empty subdomain parts are not allowed"),
    pytest.param(validation.qualified_name, "cluster.karmada.io/not-ready", True,
                 id="a prefixed qualified name"),
    pytest.param(validation.qualified_name, "App_Name.v1", True,
                 id="a qualified name allows _ . and capitals"),
    pytest.param(validation.qualified_name, "a/b/c", False, id="a qualified name has at most one slash part"),
    pytest.param(validation.qualified_name, "/a", False, id="a qualified name prefix is not empty"),
    pytest.param(validation.qualified_name, "Bad_Prefix/a", False,
                 id="a qualified name prefix is a subdomain"),
    pytest.param(validation.qualified_name, "x" * 64, False, id="a qualified name part has at most 63 chars"),
    pytest.param(validation.label_value, "", True, id="an empty label value is valid"),
    pytest.param(validation.label_value, "a b", False, id="a label value has no spaces"),
    pytest.param(validation.path_segment_name, "system:controller:tom", True,
                 id="colons are allowed in a path segment name"),
    pytest.param(validation.path_segment_name, "a%b", False, id="a percent sign is not allowed in a name"),
])
def test_name_formats(check: Check, value: str, valid: bool) -> None:
    assert (check(value) == []) is valid


def test_field_errors_raise_one_invalid_with_every_cause() -> None:
    errs = validation.FieldErrors()
    errs.raise_if_any(kind="Cluster", name="m")
    errs.invalid("spec.a", -1, "must be greater than or equal to 0")
    errs.required("spec.b")
    errs.not_supported("spec.c", "X", ["A", "B"])
    with pytest.raises(errors.Invalid) as caught:
        errs.raise_if_any(kind="Cluster", name="m", group="cluster.karmada.io")
    assert [(c.field, c.reason) for c in caught.value.causes] == [
        ("spec.a", "FieldValueInvalid"), ("spec.b", "FieldValueRequired"),
        ("spec.c", "FieldValueNotSupported")]
    assert caught.value.message.startswith('Cluster "m" is invalid: spec.a: Invalid value: -1: must be')
    assert '"X": supported values: "A", "B"' in caught.value.message
