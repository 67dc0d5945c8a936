"""LogThrottle: the first of a repeated outcome is said, then one per interval with the count
held back; another outcome, or forgetting the topic, is said at once; memory is bounded."""

from __future__ import annotations

import pytest

from fleetkeeper.clock import VirtualClock
from fleetkeeper.runtime.throttle import LogThrottle


class Ticking(VirtualClock):
    """A clock moved by hand (no loop needed)."""

    def __init__(self) -> None:
        super().__init__()
        self.now_s = 0.0

    def monotonic(self) -> float:
        return self.now_s


@pytest.mark.parametrize(("steps", "said"), [
    ([(0, "A"), (1, "A"), (2, "A"), (61, "A")], [0, None, None, 2]),
    ([(0, "A"), (1, "B"), (2, "B")], [0, 0, None]),
    ([(0, "A"), (59, "A"), (60, "A"), (61, "A"), (120, "A")], [0, None, 1, None, 1]),
], ids=["repeats within a minute are held back and counted on the next line",
        "another outcome is said at once", "one line per interval"])
def test_which_lines_are_said(steps: list[tuple[float, str]], said: list[int | None]) -> None:
    clock = Ticking()
    throttle = LogThrottle(clock, every=60)
    answers = []
    for at, what in steps:
        clock.now_s = at
        answers.append(throttle.admit("key", what))
    assert answers == said


def test_forgetting_a_topic_and_the_bound() -> None:
    clock = Ticking()
    throttle = LogThrottle(clock, every=60, limit=2)
    assert throttle.admit("a", "X") == 0
    assert throttle.admit("a", "X") is None
    throttle.forget("a")
    assert throttle.admit("a", "X") == 0, "a topic forgotten is said at once"
    throttle.admit("b", "X")
    throttle.admit("c", "X")  # over the limit: "a", the oldest, is forgotten
    assert throttle.admit("a", "X") == 0
    assert throttle.admit("c", "X") is None
