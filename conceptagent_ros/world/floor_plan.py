"""Walls and doorways from a scene's rooms: the scene file names rooms as rectangles and says
nothing of walls or doors, so the exported world puts a wall just outside every room's edge and a
doorway wherever two rooms meet, in a stretch of their shared edge where no furniture stands in the
way of a robot passing through (nearest the middle, 1 m wide where there is room, else as wide as
the widest such stretch).

Rooms in the built-in scenes meet with a 10 cm gap between their bounds; the two rooms' walls fill
it. A room's inside stays free: furniture stands up to its bounds.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from conceptagent_ros.scene.house_geometry import Box
from conceptagent_ros.scene.model import Room, Scene

WALL_THICKNESS = 0.05  # each room's own wall, outward of its bounds
WALL_HEIGHT = 2.2
DOOR_WIDTH = 1.0
PASSAGE_DEPTH = 0.8  # metres into each room that a doorway needs clear of furniture
MEET_GAP = 0.3  # rooms whose bounds are this close meet
MIN_SHARED = 0.6  # metres of shared edge two rooms need for a doorway


@dataclass(frozen=True)
class Doorway:
    rooms: tuple[str, str]
    centre: tuple[float, float]
    width: float
    axis: int  # 0: the shared edge runs along x (the rooms meet north/south), 1: along y

    def span(self) -> tuple[float, float]:
        """The doorway's extent along its edge."""
        c = self.centre[self.axis]
        return c - self.width / 2, c + self.width / 2


@dataclass(frozen=True)
class Wall:
    """A box standing on the floor: its footprint from (x0, y0) to (x1, y1)."""

    x0: float
    y0: float
    x1: float
    y1: float
    height: float = WALL_HEIGHT

    @property
    def centre(self) -> tuple[float, float, float]:
        return ((self.x0 + self.x1) / 2, (self.y0 + self.y1) / 2, self.height / 2)

    @property
    def size(self) -> tuple[float, float, float]:
        return (self.x1 - self.x0, self.y1 - self.y0, self.height)


@dataclass(frozen=True)
class FloorPlan:
    walls: tuple[Wall, ...]
    doorways: tuple[Doorway, ...]


def shared_edge(a: Room, b: Room) -> tuple[int, float, float, float] | None:
    """Where rooms a and b meet: (axis the edge runs along, the edge's coordinate across it, start,
    end), or None."""
    ax0, ay0, ax1, ay1 = a.bounds
    bx0, by0, bx1, by1 = b.bounds
    for gap, coordinate, lo, hi, axis in (
        (bx0 - ax1, (ax1 + bx0) / 2, max(ay0, by0), min(ay1, by1), 1),
        (ax0 - bx1, (bx1 + ax0) / 2, max(ay0, by0), min(ay1, by1), 1),
        (by0 - ay1, (ay1 + by0) / 2, max(ax0, bx0), min(ax1, bx1), 0),
        (ay0 - by1, (by1 + ay0) / 2, max(ax0, bx0), min(ax1, bx1), 0),
    ):
        if -1e-6 <= gap <= MEET_GAP and hi - lo >= MIN_SHARED:
            return axis, coordinate, lo, hi
    return None


def _open_runs(axis: int, coordinate: float, lo: float, hi: float, furniture: list[Box],
               step: float = 0.05) -> list[tuple[float, float]]:
    """Stretches of the shared edge whose passage (PASSAGE_DEPTH into each room) no furniture
    blocks, as (start, end) along the edge."""
    runs: list[tuple[float, float]] = []
    start: float | None = None
    positions = [lo + WALL_THICKNESS + k * step for k in range(int((hi - lo - 2 * WALL_THICKNESS) / step) + 1)]
    for s in positions:
        blocked = False
        for box in furniture:
            c_along, c_across = (box.center[0], box.center[1]) if axis == 0 else (box.center[1], box.center[0])
            h_along, h_across = (box.size[0] / 2, box.size[1] / 2) if axis == 0 else (box.size[1] / 2, box.size[0] / 2)
            if abs(c_along - s) < h_along + step / 2 and abs(c_across - coordinate) < h_across + PASSAGE_DEPTH:
                blocked = True
                break
        if not blocked and start is None:
            start = s
        if blocked and start is not None:
            runs.append((start, s - step))
            start = None
    if start is not None:
        runs.append((start, positions[-1]))
    return [(a - step / 2, b + step / 2) for a, b in runs]


def meeting_edges(rooms: Iterable[Room]) -> Iterator[tuple[Room, Room, tuple[int, float, float, float]]]:
    """Every two rooms that meet (in id order) with the edge they share (shared_edge)."""
    ordered = sorted(rooms, key=lambda r: r.id)
    for i, a in enumerate(ordered):
        for b in ordered[i + 1:]:
            edge = shared_edge(a, b)
            if edge is not None:
                yield a, b, edge


def doorways(scene: Scene, furniture: list[Box]) -> list[Doorway]:
    """One doorway between every two rooms that meet: DOOR_WIDTH wide in the open stretch of their
    shared edge nearest its middle that has room for it, else as wide as the widest open stretch
    (furniture lines the wall: a narrow door, or none a robot fits through)."""
    found: list[Doorway] = []
    for a, b, (axis, coordinate, lo, hi) in meeting_edges(scene.rooms.values()):
        middle = (lo + hi) / 2
        runs = _open_runs(axis, coordinate, lo, hi, furniture)
        if not runs:
            runs = [(middle - 0.05, middle + 0.05)]
        wide = [r for r in runs if r[1] - r[0] >= DOOR_WIDTH]
        if wide:
            r0, r1 = min(wide, key=lambda r: abs(min(max(middle, r[0] + DOOR_WIDTH / 2), r[1] - DOOR_WIDTH / 2) - middle))
            along, width = min(max(middle, r0 + DOOR_WIDTH / 2), r1 - DOOR_WIDTH / 2), DOOR_WIDTH
        else:
            r0, r1 = max(runs, key=lambda r: (r[1] - r[0], -abs((r[0] + r[1]) / 2 - middle)))
            along, width = (r0 + r1) / 2, r1 - r0
        centre = (along, coordinate) if axis == 0 else (coordinate, along)
        found.append(Doorway((a.id, b.id), (round(centre[0], 3), round(centre[1], 3)), round(width, 3), axis))
    return found


def _cut(lo: float, hi: float, holes: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The interval [lo, hi] less the holes."""
    pieces = [(lo, hi)]
    for h0, h1 in holes:
        pieces = [p for a, b in pieces for p in ((a, min(b, h0)), (max(a, h1), b)) if p[1] - p[0] > 1e-6]
    return pieces


def floor_plan(scene: Scene, furniture: list[Box]) -> FloorPlan:
    """Each room's four walls, just outside its bounds, with the doorways cut out of them."""
    doors = doorways(scene, furniture)
    t = WALL_THICKNESS
    walls: list[Wall] = []
    for room in sorted(scene.rooms.values(), key=lambda r: r.id):
        x0, y0, x1, y1 = room.bounds
        mine = [d for d in doors if room.id in d.rooms]
        # (axis the wall runs along, its fixed coordinate's strip, start, end)
        for axis, strip, lo, hi in ((0, (y0 - t, y0), x0 - t, x1 + t), (0, (y1, y1 + t), x0 - t, x1 + t),
                                    (1, (x0 - t, x0), y0 - t, y1 + t), (1, (x1, x1 + t), y0 - t, y1 + t)):
            holes = [d.span() for d in mine
                     if d.axis == axis and abs(d.centre[1 - axis] - (strip[0] + strip[1]) / 2) <= MEET_GAP]
            for a, b in _cut(lo, hi, holes):
                walls.append(Wall(a, strip[0], b, strip[1]) if axis == 0 else Wall(strip[0], a, strip[1], b))
    return FloorPlan(tuple(walls), tuple(doors))
