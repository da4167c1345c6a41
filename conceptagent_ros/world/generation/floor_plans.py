"""Rooms cut from a house's rectangle: the rectangle is split, again and again, in proportion to the
areas of the rooms on either side (guillotine cuts, the simplest of ProcTHOR's floor plans), along
whichever side and between whichever rooms leave no room narrow. Rooms that share a cut meet with
a GAP between their bounds, which their walls fill (world/floor_plan puts a doorway where two rooms meet)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

GAP = 0.1  # metres between the bounds of two rooms that meet, as in the built-in houses
MIN_SIDE = 2.4  # metres: no room narrower than this (a robot turns and furniture stands in it)


@dataclass(frozen=True)
class RoomCut:
    category: str
    bounds: tuple[float, float, float, float]

    @property
    def sides(self) -> tuple[float, float]:
        x0, y0, x1, y1 = self.bounds
        return x1 - x0, y1 - y0


def _halves(bounds: tuple[float, ...], share: float, axis: int) -> tuple[tuple[float, ...], tuple[float, ...]]:
    x0, y0, x1, y1 = bounds
    if axis == 0:  # the cut runs north-south, at an x
        cut = round((x0 + share * (x1 - x0)) / 0.05) * 0.05
        return (x0, y0, cut - GAP / 2, y1), (cut + GAP / 2, y0, x1, y1)
    cut = round((y0 + share * (y1 - y0)) / 0.05) * 0.05
    return (x0, y0, x1, cut - GAP / 2), (x0, cut + GAP / 2, x1, y1)


def _split(bounds: tuple[float, ...], rooms: list[tuple[str, float]]) -> list[RoomCut]:
    """The guillotine cuts of `bounds` into `rooms` (in their order) whose narrowest room is widest."""
    if len(rooms) == 1:
        return [RoomCut(rooms[0][0], tuple(round(v, 2) for v in bounds))]  # type: ignore[arg-type]
    total = sum(a for _, a in rooms)
    best: list[RoomCut] | None = None
    for k in range(1, len(rooms)):
        share = sum(a for _, a in rooms[:k]) / total
        for axis in (0, 1):
            first, second = _halves(bounds, share, axis)
            if first[2] <= first[0] or first[3] <= first[1] or second[2] <= second[0] or second[3] <= second[1]:
                continue
            cuts = _split(first, rooms[:k]) + _split(second, rooms[k:])
            if best is None or _narrowest(cuts) > _narrowest(best):
                best = cuts
    assert best is not None
    return best


def _narrowest(cuts: list[RoomCut]) -> float:
    return min(min(c.sides) for c in cuts)


def cut_rooms(rooms: list[tuple[str, float]], rng: np.random.Generator) -> list[RoomCut] | None:
    """Rooms (category, area in square metres), in the order given, cut from one rectangle whose
    sides are drawn in a ratio between 1 and 1.6, by the cuts that leave the narrowest room widest;
    None where a room still comes out narrower than MIN_SIDE (the caller draws again)."""
    total = sum(a for _, a in rooms)
    ratio = float(rng.uniform(1.0, 1.6))
    long_side = math.sqrt(total * ratio)
    width, depth = (long_side, total / long_side) if rng.random() < 0.5 else (total / long_side, long_side)
    cuts = _split((0.0, 0.0, round(width, 1), round(depth, 1)), rooms)
    if any(min(c.sides) < MIN_SIDE for c in cuts):
        return None
    return cuts
