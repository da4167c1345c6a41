"""Furniture placed as real homes place it: against a wall, its back to the wall and its front to
the room, with room in front of it for a robot to stand and a door to swing, and clear of the
passages between rooms; a kitchen's counters, sink, stove and base cabinets side by side along one
wall; tables free-standing with room to walk round them. A hinged door turns on the edge nearer the
wall beside it, as a fridge in a corner is hung; where no wall is near, either edge."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from conceptagent_ros.world.generation.rules import PieceRule, RoomRule

WALL_MARGIN = 0.02  # metres between a piece's back and its room's bound
PIECE_GAP = 0.06  # metres between two pieces side by side (a camera sees the gap)
FRONT_CLEARANCE = 0.9  # metres clear in front of every piece: where the robot stands to use it
DOOR_SWING_EXTRA = 0.15  # a hinged door's swing needs its width and this much in front
SWING_SIDE = 0.35  # metres clear to each side of a hinged door's front: the robot stands beside the swing
WALK_ROUND = 0.75  # metres clear round a free-standing table (the base is 0.44 m across)
HINGED = {"fridge", "freezer", "cabinet", "microwave", "oven"}
NEAR_WALL = 0.35  # a door's edge this close to a wall beside it is hung there


@dataclass(frozen=True)
class Rect:
    x0: float
    y0: float
    x1: float
    y1: float

    def grown(self, margin: float) -> Rect:
        return Rect(self.x0 - margin, self.y0 - margin, self.x1 + margin, self.y1 + margin)

    def overlaps(self, other: Rect) -> bool:
        return self.x0 < other.x1 and other.x0 < self.x1 and self.y0 < other.y1 and other.y0 < self.y1

    def within(self, other: Rect) -> bool:
        return self.x0 >= other.x0 - 1e-9 and self.y0 >= other.y0 - 1e-9 and self.x1 <= other.x1 + 1e-9 \
            and self.y1 <= other.y1 + 1e-9

    @property
    def centre(self) -> tuple[float, float]:
        return (self.x0 + self.x1) / 2, (self.y0 + self.y1) / 2


@dataclass(frozen=True)
class Piece:
    category: str
    room: str
    footprint: Rect
    height: float
    faces: str | None  # "+x", "-x", "+y", "-y"; None: used from every side (a table)
    hinge: str | None = None  # "left" or "right" as seen from its front, for a hinged door


# wall -> (the direction its pieces face, the axis the wall runs along)
WALLS = {"south": ("+y", 0), "north": ("-y", 0), "west": ("+x", 1), "east": ("-x", 1)}
FACE_VECTORS = {"+x": (1.0, 0.0), "-x": (-1.0, 0.0), "+y": (0.0, 1.0), "-y": (0.0, -1.0)}


def _draw(rng: np.random.Generator, span: tuple[float, float]) -> float:
    return round(float(rng.uniform(*span)), 2)


def _on_wall(room: Rect, wall: str, along: float, width: float, depth: float) -> Rect:
    m = WALL_MARGIN
    if wall == "south":
        return Rect(along, room.y0 + m, along + width, room.y0 + m + depth)
    if wall == "north":
        return Rect(along, room.y1 - m - depth, along + width, room.y1 - m)
    if wall == "west":
        return Rect(room.x0 + m, along, room.x0 + m + depth, along + width)
    return Rect(room.x1 - m - depth, along, room.x1 - m, along + width)


def _front_zone(footprint: Rect, faces: str, deep: float, side: float) -> Rect:
    fx, fy = FACE_VECTORS[faces]
    if fy > 0:
        return Rect(footprint.x0 - side, footprint.y1, footprint.x1 + side, footprint.y1 + deep)
    if fy < 0:
        return Rect(footprint.x0 - side, footprint.y0 - deep, footprint.x1 + side, footprint.y0)
    if fx > 0:
        return Rect(footprint.x1, footprint.y0 - side, footprint.x1 + deep, footprint.y1 + side)
    return Rect(footprint.x0 - deep, footprint.y0 - side, footprint.x0, footprint.y1 + side)


def hinge_side(footprint: Rect, faces: str, room: Rect, rng: np.random.Generator) -> str:
    """The edge a door hangs on, as seen from in front of it: the one nearer a wall beside it, where
    one is within NEAR_WALL (so the door opens away from the wall), else drawn."""
    fx, fy = FACE_VECTORS[faces]
    right = (-fy, fx)  # seen from the room, facing the front, the right hand points this way
    if right[0] != 0:
        low_gap, high_gap = footprint.x0 - room.x0, room.x1 - footprint.x1
        right_is_high = right[0] > 0
    else:
        low_gap, high_gap = footprint.y0 - room.y0, room.y1 - footprint.y1
        right_is_high = right[1] > 0
    right_gap, left_gap = (high_gap, low_gap) if right_is_high else (low_gap, high_gap)
    if min(right_gap, left_gap) <= NEAR_WALL and abs(right_gap - left_gap) > 0.1:
        return "right" if right_gap < left_gap else "left"
    return "right" if rng.random() < 0.5 else "left"


class RoomFurnisher:
    """Places one room's pieces one by one, each where it fits with the room it needs."""

    def __init__(self, room_id: str, bounds: tuple[float, float, float, float], keep_out: list[Rect],
                 rng: np.random.Generator) -> None:
        self.room_id = room_id
        self.room = Rect(*bounds)
        self.rng = rng
        self.pieces: list[Piece] = []
        self.keep_out = list(keep_out)  # passages to other rooms, and the space in front of placed pieces

    def _free(self, footprint: Rect, zone: Rect | None) -> bool:
        if not footprint.within(self.room):
            return False
        if any(footprint.overlaps(p.footprint.grown(PIECE_GAP)) for p in self.pieces):
            return False
        if any(footprint.overlaps(k) for k in self.keep_out):
            return False
        if zone is not None and (not zone.within(self.room) or any(zone.overlaps(p.footprint) for p in self.pieces)):
            return False
        return True

    def _wall_spots(self, width: float) -> list[tuple[str, float]]:
        spots: list[tuple[str, float]] = []
        for wall, (_, axis) in WALLS.items():
            lo, hi = (self.room.x0, self.room.x1) if axis == 0 else (self.room.y0, self.room.y1)
            steps = int((hi - lo - width - 2 * WALL_MARGIN) / 0.05)
            spots += [(wall, round(lo + WALL_MARGIN + 0.05 * k, 3)) for k in range(steps + 1)]
        order = self.rng.permutation(len(spots))
        return [spots[i] for i in order]

    def against_wall(self, rules: list[PieceRule]) -> list[Piece]:
        """Pieces side by side along one wall (one piece, or a kitchen run), or [] where none fits."""
        sizes = [(_draw(self.rng, r.width), _draw(self.rng, r.depth), _draw(self.rng, r.height)) for r in rules]
        total = sum(w for w, _, _ in sizes) + PIECE_GAP * (len(sizes) - 1)
        depth = max(d for _, d, _ in sizes)
        hinged = [w for r, (w, _, _) in zip(rules, sizes) if r.category in HINGED]
        deep = max([FRONT_CLEARANCE] + [w + DOOR_SWING_EXTRA for w in hinged])
        side = SWING_SIDE if hinged else 0.0
        for wall, along in self._wall_spots(total):
            faces, axis = WALLS[wall]
            block = _on_wall(self.room, wall, along, total, depth)
            zone = _front_zone(block, faces, deep, side)
            if not self._free(block, zone):
                continue
            placed: list[Piece] = []
            at = along
            for rule, (w, d, h) in zip(rules, sizes):
                footprint = _on_wall(self.room, wall, at, w, d)
                hinge = hinge_side(footprint, faces, self.room, self.rng) if rule.category in HINGED else None
                placed.append(Piece(rule.category, self.room_id, footprint, h, faces, hinge))
                at += w + PIECE_GAP
            self.pieces += placed
            self.keep_out.append(_front_zone(block, faces, FRONT_CLEARANCE, 0.0))
            return placed
        return []

    def free_standing(self, rule: PieceRule) -> Piece | None:
        """A table in the open, WALK_ROUND clear of walls, pieces and the space in front of them."""
        w, d, h = _draw(self.rng, rule.width), _draw(self.rng, rule.depth), _draw(self.rng, rule.height)
        long_x = (self.room.x1 - self.room.x0) >= (self.room.y1 - self.room.y0)
        sx, sy = (w, d) if long_x else (d, w)
        inner = self.room.grown(-WALK_ROUND)
        if inner.x1 - inner.x0 < sx or inner.y1 - inner.y0 < sy:
            return None
        xs = np.arange(inner.x0, inner.x1 - sx + 1e-9, 0.05)
        ys = np.arange(inner.y0, inner.y1 - sy + 1e-9, 0.05)
        candidates = [(float(x), float(y)) for x in xs for y in ys]
        centre = self.room.centre
        # nearest the room's middle first, as a table usually stands; ties broken by the draw
        jitter = self.rng.uniform(0, 0.3, len(candidates))
        order = np.argsort([abs(x + sx / 2 - centre[0]) + abs(y + sy / 2 - centre[1]) + j
                            for (x, y), j in zip(candidates, jitter)])
        for i in order:
            x, y = candidates[i]
            footprint = Rect(round(x, 3), round(y, 3), round(x + sx, 3), round(y + sy, 3))
            room_round = footprint.grown(WALK_ROUND)
            if any(room_round.overlaps(p.footprint) for p in self.pieces) or \
                    any(footprint.overlaps(k) for k in self.keep_out):
                continue
            piece = Piece(rule.category, self.room_id, footprint, h, None)
            self.pieces.append(piece)
            self.keep_out.append(room_round)
            return piece
        return None


def furnish_room(room_id: str, bounds: tuple[float, float, float, float], rule: RoomRule, keep_out: list[Rect],
                 rng: np.random.Generator) -> list[Piece] | None:
    """The room's pieces: its run first (the largest thing to fit), then its furniture in the order
    the rules list it, each piece drawn with its chance. An optional piece that fits nowhere is left
    out; where a piece every such room has (chance 1: a bedroom's bed) fits nowhere, None."""
    furnisher = RoomFurnisher(room_id, bounds, keep_out, rng)
    run = [r for r in rule.run if rng.random() < r.chance]
    while run and not furnisher.against_wall(run):
        if run[-1].chance >= 1.0:
            return None
        run = run[:-1]  # a shorter run where the whole one fits on no wall
    for piece in rule.furniture:
        if rng.random() >= piece.chance:
            continue
        placed = furnisher.free_standing(piece) if piece.middle else furnisher.against_wall([piece])
        if not placed and piece.chance >= 1.0:
            return None
    return furnisher.pieces
