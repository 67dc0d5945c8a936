"""Webster apportionment and the dispenser: Karmada's ``webstermethod_test.go`` and
``binding_test.go`` (dispenser) cases, inputs and expected seats as tables."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fleetkeeper.scheduler.webster import (
    Party,
    allocate_seats,
    larger_name_wins,
    spread_by_weight,
    uid_hash_is_odd,
)

EMPTY_UID = ""
EVEN_UID = "4858ca61-3ff8-4095-8267-f3d059d8074c"
ODD_UID = "d43fdeeb-d750-4e2b-bee3-64eb94534f4c"
CLASSIC = {"PartyA": 100000, "PartyB": 80000, "PartyC": 30000, "PartyD": 20000}
CLASSIC_ROUNDS = [
    (1, [1, 0, 0, 0]), (2, [1, 1, 0, 0]), (3, [2, 1, 0, 0]), (4, [2, 1, 1, 0]),
    (5, [2, 2, 1, 0]), (6, [2, 2, 1, 1]), (7, [3, 2, 1, 1]), (8, [3, 3, 1, 1]),
]


@pytest.mark.parametrize(("seats", "expected"), CLASSIC_ROUNDS,
                         ids=[f"the classic 230000-voter example after round {n}" for n, _ in CLASSIC_ROUNDS])
def test_classic_example_round_by_round(seats: int, expected: list[int]) -> None:
    result = allocate_seats(seats, CLASSIC)
    assert [(p.name, p.seats) for p in result] == list(zip(sorted(CLASSIC), expected, strict=True))


WEBSTER_CASES = [
    pytest.param(1, {}, None, False, [], id="empty votes give no parties"),
    pytest.param(0, {"PartyA": 100, "PartyB": 200}, None, False,
                 [("PartyA", 100, 0), ("PartyB", 200, 0)], id="zero new seats leave every party at zero"),
    pytest.param(0, {}, None, False, [], id="no votes and no seats give no parties"),
    pytest.param(1, {"PartyA": 3, "PartyB": 1}, {"PartyA": 1, "PartyB": 0}, False,
                 [("PartyA", 3, 1), ("PartyB", 1, 1)],
                     id="equal priority goes to the party with fewer seats"),
    pytest.param(1, {"PartyA": 1, "PartyB": 1}, None, False,
                 [("PartyA", 1, 1), ("PartyB", 1, 0)], id="equal priority and seats go to the smaller name"),
    pytest.param(1, {"PartyA": 1, "PartyB": 1}, None, False,
                 [("PartyA", 1, 1), ("PartyB", 1, 0)],
                     id="an ascending name tie-break favours the smaller name"),
    pytest.param(1, {"PartyA": 1, "PartyB": 1}, None, True,
                 [("PartyA", 1, 0), ("PartyB", 1, 1)],
                     id="a descending name tie-break favours the larger name"),
    pytest.param(2, {"NewParty1": 1, "NewParty2": 1}, {"OldParty": 0}, False,
                 [("NewParty1", 1, 1), ("NewParty2", 1, 1), ("OldParty", 0, 0)],
                 id="a party with no votes gets no new seats"),
    pytest.param(2, {"OldParty": 1, "NewParty": 1}, {"OldParty": 1}, False,
                 [("NewParty", 1, 2), ("OldParty", 1, 1)], id="new and old parties compete for new seats"),
    pytest.param(2, {"PartyA": 100}, {"PartyB": 3}, False,
                 [("PartyA", 100, 2), ("PartyB", 0, 3)], id="an initial party without votes keeps its seats"),
]


@pytest.mark.parametrize(("seats", "votes", "initial", "larger_first", "expected"), WEBSTER_CASES)
def test_allocate_webster_seats(seats: int, votes: dict[str, int], initial: dict[str, int] | None,
                                larger_first: bool, expected: list[tuple[str, int, int]]) -> None:
    result = allocate_seats(seats, votes, initial, larger_name_first=larger_first)
    assert result == [Party(*p) for p in expected]


def test_small_example_gives_the_odd_seat_to_the_largest_party() -> None:
    result = allocate_seats(4, {"Alpha": 1200, "Beta": 900, "Gamma": 400})
    assert {p.name: p.seats for p in result} == {"Alpha": 2, "Beta": 1, "Gamma": 1}


DISPENSER_CASES = [
    pytest.param(6, {"A": 1, "B": 2, "C": 3}, {"A": 1, "B": 2, "C": 3}, EMPTY_UID, {"A": 2, "B": 4, "C": 6},
                 id="scale up by 6 keeps the 1-2-3 proportion"),
    pytest.param(3, {"A": 1, "B": 2, "C": 3}, {"A": 1, "B": 2, "C": 3}, EMPTY_UID, {"A": 2, "B": 3, "C": 4},
                 id="scale up by 3 gives one replica each"),
    pytest.param(2, {"A": 1, "B": 2, "C": 3}, {"A": 1, "B": 2, "C": 3}, EMPTY_UID, {"A": 1, "B": 3, "C": 4},
                 id="scale up by 2 favours the heavier clusters"),
    pytest.param(1, {"A": 2, "B": 1}, None, EMPTY_UID, {"A": 1, "B": 0},
                 id="weights 2 to 1 with one replica"),
    pytest.param(2, {"A": 2, "B": 1}, None, EMPTY_UID, {"A": 1, "B": 1},
                 id="weights 2 to 1 with two replicas"),
    pytest.param(3, {"A": 2, "B": 1}, None, EMPTY_UID, {"A": 2, "B": 1},
                 id="weights 2 to 1 with three replicas"),
    pytest.param(5, {"A": 170, "B": 110, "C": 60}, None, EMPTY_UID, {"A": 2, "B": 2, "C": 1},
                 id="five new replicas over 170-110-60"),
    pytest.param(6, {"A": 170, "B": 110, "C": 60}, None, EMPTY_UID, {"A": 3, "B": 2, "C": 1},
                 id="six new replicas over 170-110-60"),
    pytest.param(5, {"A": 1, "B": 1}, None, ODD_UID, {"A": 2, "B": 3},
                 id="an odd uid hash gives the tie to the larger name"),
    pytest.param(5, {"A": 1, "B": 1}, None, EVEN_UID, {"A": 3, "B": 2},
                 id="an even uid hash gives the tie to the smaller name"),
]


@pytest.mark.parametrize(("replicas", "weights", "initial", "uid", "expected"), DISPENSER_CASES)
def test_dispenser_allocates_by_weight(replicas: int, weights: dict[str, int], initial: dict[str, int] | None,
                                       uid: str, expected: dict[str, int]) -> None:
    assert dict(spread_by_weight(replicas, weights.items(), uid, initial)) == expected


SPREAD_CASES = [
    pytest.param({}, 10, [{}], id="no clusters give an empty result"),
    pytest.param({"member1": 5}, 10, [{"member1": 10}], id="one cluster takes every replica"),
    pytest.param({"member1": 5, "member2": 5, "member3": 5}, 12, [{"member1": 4, "member2": 4, "member3": 4}],
                 id="twelve over three equal clusters"),
    pytest.param({"member1": 5, "member2": 5, "member3": 5}, 10,
                 [{"member1": 4, "member2": 3, "member3": 3}, {"member1": 3, "member2": 4, "member3": 3},
                  {"member1": 3, "member2": 3, "member3": 4}], id="ten over three equal clusters"),
    pytest.param({"member1": 1, "member2": 2, "member3": 3}, 13, [{"member1": 2, "member2": 4, "member3": 7}],
                 id="thirteen over 1-2-3"),
]


@pytest.mark.parametrize(("weights", "total", "acceptable"), SPREAD_CASES)
def test_spread_replicas_by_target_clusters(weights: dict[str, int], total: int,
                                            acceptable: list[dict[str, int]]) -> None:
    assert dict(spread_by_weight(total, weights.items())) in acceptable


@pytest.mark.parametrize(("uid", "larger"), [
    pytest.param(EMPTY_UID, False, id="an empty uid breaks ties toward the smaller name"),
    pytest.param(EVEN_UID, False, id="an even fnv hash breaks ties toward the smaller name"),
    pytest.param(ODD_UID, True, id="an odd fnv hash breaks ties toward the larger name"),
])
def test_uid_parity_picks_the_tie_break(uid: str, larger: bool) -> None:
    assert larger_name_wins(uid) is larger


@given(st.text(max_size=40))
def test_the_parity_shortcut_agrees_with_the_full_hash(uid: str) -> None:
    assert larger_name_wins(uid) is (bool(uid) and uid_hash_is_odd(uid))
