"""Webster (Sainte-Laguë) apportionment: how replicas are divided by weight.

Every Divided strategy ends here. Seats are handed out one at a time to the party with
the highest priority ``votes / (2·seats + 1)``; the comparison is IEEE-754 float64
division, which Python's ``float`` reproduces bit for bit, so results equal Karmada's.

Ties are part of the contract, because a tie decides which cluster gets the odd replica:

* equal priorities → the party with **fewer seats** wins (this favours small clusters,
  which is what high availability wants);
* equal seats too → the name decides. The dispenser hashes the resource UID with
  FNV-1a 32-bit: an **odd** hash lets the lexicographically *larger* name win, an even
  hash or an empty UID the *smaller* one. Different workloads therefore break ties in
  different directions, so the odd replicas of many workloads do not all pile up on
  the alphabetically first cluster, yet each workload is deterministic.

The comparison is a strict total order, so a heap pops exactly the party a linear
arg-max would pick; we use ``heapq`` (O(seats · log parties)) because a binding may
spread hundreds of replicas over a hundred clusters.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache

from fleetkeeper.api.constants import fnv1a_32


@dataclass(frozen=True, slots=True)
class Party:
    """One participant of an apportionment: a cluster with its weight and its seats."""

    name: str
    votes: int
    seats: int


def larger_name_wins(uid: str) -> bool:
    """Whether ties between equally seated parties go to the larger name, for this UID.

    That is whether FNV-1a 32 of the UID is odd. Only the lowest bit matters, and it is
    cheap: each step is ``h = (h ^ byte) * prime`` with an odd prime, which keeps the
    parity of ``h ^ byte``; so the final parity is the offset basis's (odd) flipped once
    per odd byte — odd exactly when the byte sum is even (:func:`uid_hash_is_odd` is the
    long way, kept for the tests)."""
    return bool(uid) and sum(uid.encode()) % 2 == 0


def uid_hash_is_odd(uid: str) -> bool:
    """The parity of the full FNV-1a 32 hash (what :func:`larger_name_wins` shortcuts)."""
    return fnv1a_32(uid.encode()) & 1 == 1


def allocate_seats(
    new_seats: int,
    votes: Mapping[str, int],
    initial: Mapping[str, int] | None = None,
    *,
    larger_name_first: bool = False,
) -> list[Party]:
    """Hand out ``new_seats`` more seats by Webster's method; parties sorted by name.

    Parties are every key of ``initial`` (0 votes unless also in ``votes``) plus every
    key of ``votes``. With no party at all the result is empty.
    """
    weights: dict[str, int] = dict.fromkeys(initial or {}, 0)
    weights.update(votes)
    seats = apportion(new_seats, weights, initial, larger_name_first=larger_name_first)
    return [Party(name, weights[name], s) for name, s in seats]


def apportion(new_seats: int, votes: Mapping[str, int], initial: Mapping[str, int] | None = None, *,
              larger_name_first: bool = False) -> list[tuple[str, int]]:
    """:func:`allocate_seats` as ``(name, seats)`` pairs sorted by name (the fast path)."""
    seats: dict[str, int] = dict(initial or {})
    weights: dict[str, int] = dict.fromkeys(seats, 0)
    weights.update(votes)
    for name in weights:
        seats.setdefault(name, 0)
    if new_seats > 0 and weights:
        _distribute(new_seats, weights, seats, larger_name_first)
    return sorted(seats.items())


def _distribute(new_seats: int, weights: dict[str, int], seats: dict[str, int], larger_first: bool) -> None:
    names = sorted(weights, reverse=larger_first)
    # heap entries order exactly as the priority rule: highest priority, fewest seats, name rank
    heap = [(-(weights[n] / (2 * seats[n] + 1)), seats[n], rank, n) for rank, n in enumerate(names)]
    heapq.heapify(heap)
    for _ in range(new_seats):
        _, s, rank, name = heap[0]
        s += 1
        heapq.heapreplace(heap, (-(weights[name] / (2 * s + 1)), s, rank, name))
    for _, s, _, name in heap:
        seats[name] = s


def spread_by_weight(
    replicas: int,
    weights: Iterable[tuple[str, int]],
    uid: str = "",
    initial: Mapping[str, int] | None = None,
) -> list[tuple[str, int]]:
    """Divide ``replicas`` over clusters by weight (Karmada's dispenser), name-sorted.

    With a zero weight sum nothing is dispensed and the initial assignment is returned
    unchanged; the UID picks the name tie-break (see the module notes).
    """
    votes = dict(weights)
    init = dict(initial or {})
    if (replicas == 0 and init) or sum(votes.values()) == 0:
        return list(init.items())
    return apportion(replicas, votes, init, larger_name_first=larger_name_wins(uid))


@lru_cache(maxsize=16384)
def spread_cached(replicas: int, weights: tuple[tuple[str, int], ...], larger_first: bool) -> tuple[
    tuple[str, int], ...
]:
    """:func:`spread_by_weight` without initial seats, memoised on its (hashable) inputs.

    Many workloads share a policy, so the same weights and replica count come back
    again and again; the apportionment is a pure function of them and the tie-break.
    """
    if sum(w for _, w in weights) == 0:
        return ()
    return tuple(apportion(replicas, dict(weights), larger_name_first=larger_first))


__all__ = [
    "Party", "allocate_seats", "apportion", "larger_name_wins", "spread_by_weight", "spread_cached",
    "uid_hash_is_odd",
]
