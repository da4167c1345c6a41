"""Where the household body stands to swing a hinged door, and the door's frame and turn as seen:
pure geometry on the door as the mast camera sees it (articulation_planner.DoorFrame) and the
costmap's `free(x, y)`, with no simulator (bodies/household/doors uses it)."""
from __future__ import annotations

import math

import numpy as np

from conceptagent_ros.manipulation.articulation_planner import DoorFrame

# metres from the hinge along the closed door and out of its front: where the base stands to pull the
# handle (beside the door's swing on the handle's side), and to push the door on (before the opening,
# clear of the rest of the swing, the door's free edge within easy reach)
STANCE = (0.8, 0.7)
PUSH_STANCE = (0.55, 0.95)
STANCE_FACING = math.radians(40.0)  # the base faces the handle's arc this far open: the pull and the push in front
STANCE_SEARCH = 0.25  # metres round STANCE searched for a free spot
SHUT_STANCE_CLEAR = 0.04  # metres the base's edge keeps clear of the door wherever the shut sweeps it
SHUT_STANCE_GRID = 0.05  # metres between the spots tried for the base
SHUT_STANCES_APART = 0.3


def door_stance(door: DoorFrame, free: object, footprint_radius: float,
                at: tuple[float, float] = STANCE, aim: np.ndarray | None = None) -> tuple[float, float, float] | None:
    """Where the base stands to swing the door (x, y, yaw): `at` from the hinge (along the closed
    door, out of its front), or the nearest spot to it within STANCE_SEARCH that `free(x, y)`
    allows and that the swept door misses, facing `aim` (by default the handle's arc at STANCE_FACING)."""
    steps = np.arange(-STANCE_SEARCH, STANCE_SEARCH + 1e-9, 0.05)
    offsets = sorted(((a, b) for a in steps for b in steps), key=lambda ab: math.hypot(*ab))
    clear = door.width + footprint_radius + 0.05
    if aim is None:
        aim = door.at(STANCE_FACING, 0.9 * door.width)  # on the handle's arc, roughly
    for da, db in offsets:
        a, b = at[0] + da, at[1] + db
        if math.hypot(a, b) < clear or b <= footprint_radius:
            continue
        spot = door.hinge + a * door.along + b * door.out
        if free(float(spot[0]), float(spot[1])):  # type: ignore[operator]
            return float(spot[0]), float(spot[1]), math.atan2(float(aim[1] - spot[1]), float(aim[0] - spot[0]))
    return None


def frame_of_open_door(points: np.ndarray, front_middle: np.ndarray, out: np.ndarray) -> DoorFrame:
    """The door's frame as it stood shut, from the door as seen open, whoever opened it (its handle
    may face away): its hinge is the end of the door as seen nearer the front's plane, and shut it
    lies across the front from there toward the front's middle (the map's `front_middle` and
    `out`). It turns about a line at the middle height of what is seen of it."""
    p = np.asarray(points, dtype=float)
    flat = p[:, :2] - p[:, :2].mean(axis=0)
    direction = _long_axis(p)  # the seen door's line
    along_line = flat @ direction
    ends = [p[:, :2].mean(axis=0) + direction * float(np.percentile(along_line, q)) for q in (2, 98)]
    out2 = np.asarray(out, dtype=float)[:2] / max(float(np.linalg.norm(np.asarray(out, dtype=float)[:2])), 1e-9)
    hinge2, free2 = sorted(ends, key=lambda e: float((e - front_middle[:2]) @ out2))
    across = np.array([-out2[1], out2[0]])
    across = across if float((front_middle[:2] - hinge2) @ across) >= 0 else -across
    hinge = np.array([hinge2[0], hinge2[1], float(np.median(p[:, 2]))])
    along, normal = np.array([across[0], across[1], 0.0]), np.array([out2[0], out2[1], 0.0])
    turn = float(np.sign(np.cross(along, normal)[2]))
    return DoorFrame(hinge, along, normal, float(np.linalg.norm(free2 - hinge2)), turn)


def shut_stances(door: DoorFrame, start: float, end: float, radius: float, reach: tuple[float, float],
                 free: object, footprint_radius: float) -> list[tuple[float, float, float]]:
    """Where the base may stand (x, y, yaw), best first, to sweep the door shut from `start` to
    `end` with the hand `radius` from the hinge: spots the costmap allows (`free(x, y)`), clear of
    the door wherever the sweep takes it, from which every point of the sweep is within `reach`
    (nearest, furthest) of the base's middle; the one whose furthest is least first, then others
    at least SHUT_STANCES_APART from those before them, each facing the sweep's middle. The spots
    on the hinge's side of the door are never swept: a person stands there and pushes the door away."""
    angles = np.linspace(end, start, 12)
    sweep = np.array([door.at(a, radius)[:2] for a in angles])
    edges = np.array([door.at(a, door.width)[:2] for a in angles])
    hinge = door.hinge[:2]
    middle = door.at((start + end) / 2, radius)
    span = door.width + reach[1] + footprint_radius
    steps = np.arange(-span, span + 1e-9, SHUT_STANCE_GRID)
    found: list[tuple[float, np.ndarray]] = []
    for dx in steps:
        for dy in steps:
            spot = hinge + np.array([dx, dy])
            to_hand = np.linalg.norm(sweep - spot, axis=1)
            if float(to_hand.max()) > reach[1] or float(to_hand.min()) < reach[0]:
                continue
            if _nearest_on_door(spot, hinge, edges) < footprint_radius + SHUT_STANCE_CLEAR:
                continue
            if free(float(spot[0]), float(spot[1])):  # type: ignore[operator]
                found.append((float(to_hand.max()), spot))
    chosen: list[np.ndarray] = []
    for _, spot in sorted(found, key=lambda f: f[0]):
        if all(float(np.linalg.norm(spot - other)) >= SHUT_STANCES_APART for other in chosen):
            chosen.append(spot)
    return [(float(x), float(y), math.atan2(float(middle[1] - y), float(middle[0] - x))) for x, y in chosen]


def _nearest_on_door(spot: np.ndarray, hinge: np.ndarray, edges: np.ndarray) -> float:
    """The least distance from `spot` to the door (hinge to free edge) at any of its positions."""
    runs = edges - hinge
    share = np.clip(((spot - hinge) @ runs.T) / np.maximum((runs * runs).sum(axis=1), 1e-12), 0.0, 1.0)
    nearest = hinge + share[:, None] * runs
    return float(np.linalg.norm(nearest - spot, axis=1).min())


def door_turn_seen(points: np.ndarray, door: DoorFrame) -> float:
    """How far (radians, 0 to pi/2) a door stands open, from the long horizontal axis of its points as
    seen against the shut door's `along`: a door is far wider than thick, so the axis is its width
    whatever faces of it are seen. (It was written for a microwave's door read as 45 degrees open
    at 19; that misreading was the microwave itself, shoved and turned 23 degrees by the push, and
    door_opening's plane read it the same: no case is known where the two differ.)"""
    direction = _long_axis(np.asarray(points, dtype=float))
    return float(math.atan2(abs(float(direction @ door.out[:2])), abs(float(direction @ door.along[:2]))))


def _long_axis(points: np.ndarray) -> np.ndarray:
    """The horizontal direction along which the points spread most (unit, 2-D)."""
    flat = points[:, :2] - points[:, :2].mean(axis=0)
    return np.linalg.svd(flat, full_matrices=False)[2][0]
