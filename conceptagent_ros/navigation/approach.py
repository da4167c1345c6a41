"""Where the base should stand to work on an object: scene/geometry.approach_pose's rule (on the
line from the object toward the robot, outside the object's box by a standoff, facing it), but on
the map: the pose must be free for the base, joined to where the robot stands, with no wall between
it and the object; when the line toward the robot does not give one (a wall, other furniture), the
other sides are tried, nearest the robot first, then further out (see approach_goal). `away_from`
asks for another stance than one that failed: headings near the failed one are not tried."""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from conceptagent_ros.navigation.errors import NavigationError
from conceptagent_ros.navigation.path_planner import Costmap, nearest_free
from conceptagent_ros.scene.geometry import Pose2D
from conceptagent_ros.world.floor_plan import Wall


def _through_wall(a: tuple[float, float], b: tuple[float, float], walls: Sequence[Wall], step: float = 0.025) -> bool:
    """Does the straight line from a to b cross a wall? (Furniture does not hide what stands on it
    from a camera on a mast; a wall does.)"""
    steps = max(2, int(math.dist(a, b) / step))
    for k in range(steps + 1):
        x, y = a[0] + (b[0] - a[0]) * k / steps, a[1] + (b[1] - a[1]) * k / steps
        if any(w.x0 <= x <= w.x1 and w.y0 <= y <= w.y1 for w in walls):
            return True
    return False


@dataclass(frozen=True)
class Approach:
    pose: Pose2D
    distance: float  # metres from the base's centre to the object's middle
    within_reach: bool  # the arm reaches the object from there (else: as near as the base could get)


def approach_goal(cm: Costmap, walls: Sequence[Wall], target: tuple[float, float], size: tuple[float, float, float],
                  robot: tuple[float, float], standoff: float = 0.35, reach: float = 0.9,
                  farthest: float = 1.6, side: float | None = None,
                  away_from: tuple[float, float] | None = None) -> Approach:
    """A free pose `standoff` outside the object's box (out of the side it faces), or further out
    while the object's middle stays within `reach` of the base (at least 25 cm further), facing it, with no wall between it
    and the object, in the free space the robot stands in (not a pocket it cannot drive to). Where
    furniture keeps the base further off (a thing at the back of a counter behind a cabinet), the
    nearest such pose within `farthest` of the object's middle, marked as not within reach. With
    `side` (a heading from the object's middle: a cabinet's front, that opens), that side is tried
    first instead of the robot's. `away_from` (a heading from the object's middle, and an angle): no
    pose whose heading from the object is within that angle of that heading, for another stance
    than the one a skill failed from (the nearest such pose, as above)."""
    half = 0.5 * math.hypot(size[0], size[1])
    here = nearest_free(cm, *robot, tolerance=0.3)
    region = cm.regions[here] if here is not None else 0
    toward = math.atan2(robot[1] - target[1], robot[0] - target[0]) if math.dist(robot, target) > 1e-6 else math.pi
    if side is not None:  # the side it is worked from (a cabinet's front), whatever side the robot is on
        toward = side
    turns = sorted((k * math.pi / 12 for k in range(-12, 12)), key=abs)  # the robot's side first
    for extra in np.arange(0.0, max(reach - standoff, farthest - half - standoff) + 1e-9, cm.grid.resolution):
        for turn in turns:
            a = toward + turn
            if away_from is not None and abs(math.remainder(a - away_from[0], 2 * math.pi)) < away_from[1] - 1e-9:
                continue
            # out of the box's side that way (a sofa's long side is near its middle, its ends far),
            # not out of the circle round its corners: 55 cm off a 2 m sofa's front was out of reach
            edge = _to_box_edge(size, a)
            spread = max(0.25, reach - edge - standoff)
            if extra > max(spread, farthest - edge - standoff) + 1e-9:
                continue
            x = target[0] + math.cos(a) * (edge + standoff + extra)
            y = target[1] + math.sin(a) * (edge + standoff + extra)
            row, col = cm.grid.cell_of(x, y)
            if cm.free(row, col) and (region == 0 or cm.regions[row, col] == region) \
                    and not _through_wall((x, y), target, walls):
                pose = Pose2D(x, y, math.atan2(target[1] - y, target[0] - x))
                return Approach(pose, math.dist((x, y), target), bool(extra <= spread + 1e-9))
    elsewhere = " other than the one that failed" if away_from is not None else ""
    raise NavigationError("NO_PATH", f"no free spot{elsewhere} within {max(half + standoff + reach, farthest):.2f} m of the "
                                     f"object at ({target[0]:.2f}, {target[1]:.2f}) that sees it")


def _to_box_edge(size: tuple[float, float, float], angle: float) -> float:
    """From the middle of a box (axis-aligned, `size` across) to its edge, heading `angle`."""
    c, s = abs(math.cos(angle)), abs(math.sin(angle))
    return min(size[0] / 2 / c if c > 1e-9 else math.inf, size[1] / 2 / s if s > 1e-9 else math.inf)
