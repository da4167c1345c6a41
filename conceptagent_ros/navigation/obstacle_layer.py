"""What the lidar sees that the map does not have, as Nav2's obstacle layer keeps it: each scan marks
the cells its beams end in and clears the cells they pass through, over the static map (walls and
furniture, which no scan clears). A cabinet door the robot opened stands out into the room where the
map has free floor; driven through, it stopped the base (BLOCKED) on the way to the next thing.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from conceptagent_ros.world.occupancy_map import OccupancyMap


@dataclass
class ObstacleLayer:
    """Marked cells over `static`; `update` with each scan, `occupancy()` for the costmap."""

    static: OccupancyMap
    # a hit this near a static obstacle is that obstacle, seen (its surface falls in the free cell
    # beside it by the ranges' noise): marked, it narrowed every passage by a cell each side, and
    # the apartment's counter had no approach pose left
    same_as_map: float = 0.075
    marked: np.ndarray = field(init=False)
    _to_static: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        from scipy import ndimage

        self.marked = np.zeros_like(self.static.occupied, dtype=bool)
        self._to_static = ndimage.distance_transform_edt(~self.static.occupied) * self.static.resolution

    def update(self, origin: tuple[float, float], ends: np.ndarray, hit: np.ndarray) -> None:
        """One scan from `origin` (x, y in the map's frame): beams ending at `ends` (N x 2), `hit`
        where a beam came back there (else it ran out of range: it clears and marks nothing at its end)."""
        grid = self.static
        shape = self.marked.shape
        cleared: list[np.ndarray] = []
        for end in ends:
            length = float(np.hypot(end[0] - origin[0], end[1] - origin[1]))
            steps = max(1, int(length / (grid.resolution / 2)))
            t = np.arange(steps) / steps  # up to the end, not on it
            xs, ys = origin[0] + (end[0] - origin[0]) * t, origin[1] + (end[1] - origin[1]) * t
            cleared.append(np.column_stack([np.floor((ys - grid.origin[1]) / grid.resolution),
                                            np.floor((xs - grid.origin[0]) / grid.resolution)]).astype(int))
        if cleared:
            cells = np.concatenate(cleared)
            inside = (cells[:, 0] >= 0) & (cells[:, 0] < shape[0]) & (cells[:, 1] >= 0) & (cells[:, 1] < shape[1])
            cells = cells[inside]
            self.marked[cells[:, 0], cells[:, 1]] = False
        marks = ends[hit]
        if len(marks):
            rows = np.floor((marks[:, 1] - grid.origin[1]) / grid.resolution).astype(int)
            cols = np.floor((marks[:, 0] - grid.origin[0]) / grid.resolution).astype(int)
            inside = (rows >= 0) & (rows < shape[0]) & (cols >= 0) & (cols < shape[1])
            rows, cols = rows[inside], cols[inside]
            new = self._to_static[rows, cols] > self.same_as_map
            self.marked[rows[new], cols[new]] = True

    def occupancy(self) -> OccupancyMap:
        """The static map with what the scans marked."""
        return OccupancyMap(self.static.occupied | self.marked, self.static.resolution, self.static.origin)
