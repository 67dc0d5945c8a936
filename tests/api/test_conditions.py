"""``set_condition``: meta.SetStatusCondition semantics (spec §2.1.1)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from fleetkeeper.api import conditions
from fleetkeeper.api.meta import Condition

T0 = datetime(2026, 1, 1, 10, 0, tzinfo=UTC)
T1 = datetime(2026, 1, 1, 10, 5, tzinfo=UTC)
NOW = datetime(2026, 1, 1, 11, 0, tzinfo=UTC)


def cond(status: str, *, t: datetime | None = None, reason: str = "R", message: str = "m",
         gen: int | None = None, type_: str = "Ready") -> Condition:
    return Condition(type=type_, status=status, reason=reason, message=message,
                     last_transition_time=t, observed_generation=gen)


@pytest.mark.parametrize(("existing", "new", "expected"), [
    pytest.param([], cond("True"), cond("True", t=NOW),
                 id="a new condition without a time is stamped now"),
    pytest.param([], cond("True", t=T1), cond("True", t=T1),
                 id="a new condition keeps the time it was given"),
    pytest.param([cond("True", t=T0)], cond("False", reason="X", message="down"),
                 cond("False", t=NOW, reason="X", message="down"),
                 id="a status change without a time moves the transition time to now"),
    pytest.param([cond("True", t=T0)], cond("False", t=T1), cond("False", t=T1),
                 id="a status change uses the supplied transition time"),
    pytest.param([cond("True", t=T0)], cond("True", t=T1, reason="Y", message="again", gen=4),
                 cond("True", t=T0, reason="Y", message="again", gen=4),
                 id="the same status keeps the old transition time but takes reason message and generation"),
])
def test_set_condition(existing: list[Condition], new: Condition, expected: Condition) -> None:
    assert conditions.set_condition(existing, new, NOW) == [expected]


def test_set_condition_leaves_other_types_and_the_input_untouched() -> None:
    other = cond("True", t=T0, type_="CompleteAPIEnablements")
    ready = cond("True", t=T0)
    before = [other, ready]
    after = conditions.set_condition(before, cond("False"), NOW)
    assert after[0] is other
    assert after[1].status == "False"
    assert before[1].status == "True"


def test_set_condition_accepts_no_list() -> None:
    assert conditions.set_condition(None, cond("True"), NOW) == [cond("True", t=NOW)]


@pytest.mark.parametrize(("items", "type_", "true"), [
    pytest.param([cond("True")], "Ready", True, id="a True condition is true"),
    pytest.param([cond("Unknown")], "Ready", False, id="an Unknown condition is not true"),
    pytest.param([], "Ready", False, id="a missing condition is not true"),
    pytest.param(None, "Ready", False, id="no conditions at all is not true"),
])
def test_is_condition_true(items: list[Condition] | None, type_: str, true: bool) -> None:
    assert conditions.is_condition_true(items, type_) is true


def test_get_and_remove_condition() -> None:
    items = [cond("True"), cond("False", type_="Scheduled")]
    assert conditions.get_condition(items, "Scheduled") is items[1]
    assert conditions.get_condition(items, "FullyApplied") is None
    assert conditions.remove_condition(items, "Ready") == [items[1]]
