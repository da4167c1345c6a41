"""Paths for a round base on an occupancy map (world/occupancy_map.py, or any map_server map read
into one): cells nearer an obstacle than the base's radius are impassable, cells within the
inflation band cost more the nearer they are (as Nav2's inflation layer makes them), and the
cheapest route is scikit-image's minimum-cost path (`skimage.graph.route_through_array`), then
shortened where a straight line stays clear.

Failures are named: NO_PATH (the goal, or the start, has no free cell within tolerance, or nothing
joins them).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import ndimage

from conceptagent_ros.navigation.errors import NavigationError
from conceptagent_ros.world.occupancy_map import OccupancyMap


@dataclass(frozen=True)
class Costmap:
    grid: OccupancyMap
    clearance: np.ndarray  # metres from each cell's centre to the nearest occupied cell's
    cost: np.ndarray  # per cell; inf where the base does not fit
    radius: float
    regions: np.ndarray  # connected free space: cells of one label join; 0 where the base does not fit

    def free(self, row: int, col: int) -> bool:
        inside = 0 <= row < self.cost.shape[0] and 0 <= col < self.cost.shape[1]
        return inside and bool(np.isfinite(self.cost[row, col]))


def costmap(grid: OccupancyMap, radius: float, inflation: float = 0.45, weight: float = 8.0) -> Costmap:
    """Impassable within `radius` (plus half a cell, for the cells' corners) of an obstacle; within
    `inflation` the cost rises toward the obstacle."""
    clearance = ndimage.distance_transform_edt(~grid.occupied) * grid.resolution
    blocked = clearance < radius + grid.resolution / 2
    near = np.clip((inflation - clearance) / max(inflation - radius, 1e-6), 0.0, 1.0)
    cost = 1.0 + weight * near * near
    cost[blocked] = np.inf
    regions, _ = ndimage.label(~blocked, structure=np.ones((3, 3)))
    return Costmap(grid, clearance, cost, radius, regions)


@dataclass(frozen=True)
class PlannedPath:
    waypoints: tuple[tuple[float, float], ...]  # world (x, y), start first, the goal last
    length: float

    @property
    def goal(self) -> tuple[float, float]:
        return self.waypoints[-1]


def nearest_free(cm: Costmap, x: float, y: float, tolerance: float) -> tuple[int, int] | None:
    """The free cell nearest (x, y) within `tolerance` metres, or None."""
    row, col = cm.grid.cell_of(x, y)
    if cm.free(row, col):
        return row, col
    reach = int(math.ceil(tolerance / cm.grid.resolution))
    r0, c0 = max(row - reach, 0), max(col - reach, 0)
    window = np.isfinite(cm.cost[r0:row + reach + 1, c0:col + reach + 1])
    if not window.any():
        return None
    rows, cols = np.nonzero(window)
    d2 = (rows + r0 - row) ** 2 + (cols + c0 - col) ** 2
    best = int(np.argmin(d2))
    if d2[best] * cm.grid.resolution ** 2 > tolerance ** 2:
        return None
    return int(rows[best] + r0), int(cols[best] + c0)


def line_clear(cm: Costmap, a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Every cell on the straight line from cell a to cell b is free."""
    from skimage.draw import line

    rr, cc = line(a[0], a[1], b[0], b[1])
    return bool(np.isfinite(cm.cost[rr, cc]).all())


ESCAPE_TOLERANCE = 0.6  # metres a base with no free space within its start tolerance looks for some


def plan_path(cm: Costmap, start: tuple[float, float], goal: tuple[float, float], start_tolerance: float = 0.3,
              goal_tolerance: float = 0.3) -> PlannedPath:
    from skimage.graph import route_through_array

    first = nearest_free(cm, *start, tolerance=start_tolerance)
    if first is None:
        # hemmed in by what the costmap grew round the base (a door it opened beside it, a lidar's
        # sweep of a counter): out to the nearest free spot further off, as a recovery backs out; the
        # drive's own collision checks stop it where that way is not clear (moderate_08: six
        # navigate_to calls refused where the base stood)
        first = nearest_free(cm, *start, tolerance=ESCAPE_TOLERANCE)
    if first is None:
        raise NavigationError("NO_PATH", f"the base at ({start[0]:.2f}, {start[1]:.2f}) has no free space around it")
    last = nearest_free(cm, *goal, tolerance=goal_tolerance)
    if last is None:
        raise NavigationError("NO_PATH", f"no free spot for the base within {goal_tolerance:.2f} m of "
                                         f"({goal[0]:.2f}, {goal[1]:.2f})")
    try:
        cells, _ = route_through_array(cm.cost, first, last, fully_connected=True, geometric=True)
    except ValueError:
        raise NavigationError("NO_PATH", f"nothing joins ({start[0]:.2f}, {start[1]:.2f}) to "
                                         f"({goal[0]:.2f}, {goal[1]:.2f}) for a base of radius {cm.radius:.2f} m") from None
    kept = [cells[0]]
    i = 0
    while i < len(cells) - 1:  # as far along the route as a straight line stays clear, each time
        j = i + 1
        while j + 1 < len(cells) and line_clear(cm, cells[i], cells[j + 1]):
            j += 1
        kept.append(cells[j])
        i = j
    points = [cm.grid.centre_of(r, c) for r, c in kept]
    points[0] = start if cm.free(*cm.grid.cell_of(*start)) else points[0]
    length = sum(math.dist(a, b) for a, b in zip(points, points[1:]))
    return PlannedPath(tuple(points), length)
