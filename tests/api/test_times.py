"""RFC 3339 timestamps as the API writes and reads them."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from fleetkeeper.api.base import format_time, parse_time

RFC3339_Z = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{6})?Z$")


def test_whole_seconds_leave_out_the_fraction() -> None:
    assert format_time(datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)) == "2026-01-02T03:04:05Z"


def test_microseconds_are_written_in_full() -> None:
    assert format_time(datetime(2026, 1, 2, 3, 4, 5, 120, tzinfo=UTC)) == "2026-01-02T03:04:05.000120Z"


def test_other_offsets_and_naive_times_become_utc() -> None:
    east = timezone(timedelta(hours=2))
    assert format_time(datetime(2026, 1, 2, 3, 4, 5, tzinfo=east)) == "2026-01-02T01:04:05Z"
    assert format_time(datetime(2026, 1, 2, 3, 4, 5)) == "2026-01-02T03:04:05Z"  # naive: taken as UTC


@given(st.datetimes(min_value=datetime(1970, 1, 1), max_value=datetime(9999, 1, 1),
                    timezones=st.sampled_from([UTC, timezone(timedelta(hours=-7, minutes=-30))])))
def test_round_trip(value: datetime) -> None:
    text = format_time(value)
    assert RFC3339_Z.match(text), text
    assert parse_time(text) == value
