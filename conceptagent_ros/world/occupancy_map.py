"""The occupancy grid of an exported world at the robot base's height, in map_server's format
(a PGM image and its YAML: what Nav2's map_server and the embedded navigator read).

A cell is free when it lies inside a room or a doorway and nothing that stands within the base's
height band covers any of it; everything else (walls, furniture, outside the house) is occupied.
The grid holds obstacles as they are: a planner inflates them by its robot's footprint, as Nav2's
costmap does.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from conceptagent_ros.scene.house_geometry import Box
from conceptagent_ros.scene.model import Scene
from conceptagent_ros.world.floor_plan import WALL_THICKNESS, FloorPlan
from conceptagent_ros.world.sdf_world import HANDLE_PROUD

RESOLUTION = 0.05  # metres per cell
BASE_BAND = (0.02, 0.40)  # metres above the floor: what the base (and its lidar) can run into
MARGIN = 0.5  # metres of map beyond the house on every side
FREE, OCCUPIED = 254, 0  # PGM values (trinary mode: 0 occupied, 254 free)


@dataclass(frozen=True)
class OccupancyMap:
    occupied: np.ndarray  # bool, rows from the map's bottom (y = origin y) up
    resolution: float
    origin: tuple[float, float]  # world (x, y) of the lower-left corner of cell (0, 0)

    def cell_of(self, x: float, y: float) -> tuple[int, int]:
        return int(np.floor((y - self.origin[1]) / self.resolution)), int(np.floor((x - self.origin[0]) / self.resolution))

    def centre_of(self, row: int, col: int) -> tuple[float, float]:
        return (self.origin[0] + (col + 0.5) * self.resolution, self.origin[1] + (row + 0.5) * self.resolution)


def _fill(grid: np.ndarray, origin: tuple[float, float], res: float, x0: float, y0: float, x1: float, y1: float,
          value: bool) -> None:
    """Every cell that the rectangle touches (a cell partly covered by an obstacle is not free)."""
    c0 = int(np.floor((x0 - origin[0]) / res + 1e-9))
    c1 = int(np.ceil((x1 - origin[0]) / res - 1e-9))
    r0 = int(np.floor((y0 - origin[1]) / res + 1e-9))
    r1 = int(np.ceil((y1 - origin[1]) / res - 1e-9))
    grid[max(r0, 0):max(r1, 0), max(c0, 0):max(c1, 0)] = value


def _fill_inside(grid: np.ndarray, origin: tuple[float, float], res: float, x0: float, y0: float, x1: float,
                 y1: float) -> None:
    """Free: only the cells wholly inside the rectangle."""
    c0 = int(np.ceil((x0 - origin[0]) / res - 1e-9))
    c1 = int(np.floor((x1 - origin[0]) / res + 1e-9))
    r0 = int(np.ceil((y0 - origin[1]) / res - 1e-9))
    r1 = int(np.floor((y1 - origin[1]) / res + 1e-9))
    grid[max(r0, 0):max(r1, 0), max(c0, 0):max(c1, 0)] = False


def occupancy_map(scene: Scene, plan: FloorPlan, boxes: dict[str, Box], resolution: float = RESOLUTION) -> OccupancyMap:
    xs = [v for r in scene.rooms.values() for v in (r.bounds[0], r.bounds[2])]
    ys = [v for r in scene.rooms.values() for v in (r.bounds[1], r.bounds[3])]
    origin = (min(xs) - MARGIN, min(ys) - MARGIN)
    cols = int(np.ceil((max(xs) + MARGIN - origin[0]) / resolution))
    rows = int(np.ceil((max(ys) + MARGIN - origin[1]) / resolution))
    occupied = np.ones((rows, cols), dtype=bool)
    for room in scene.rooms.values():
        _fill_inside(occupied, origin, resolution, *room.bounds)
    for door in plan.doorways:
        lo, hi = door.span()
        reach = 2 * WALL_THICKNESS + 0.3  # across the walls of both rooms and the gap between them
        c = door.centre[1 - door.axis]
        if door.axis == 0:
            _fill_inside(occupied, origin, resolution, lo, c - reach, hi, c + reach)
        else:
            _fill_inside(occupied, origin, resolution, c - reach, lo, c + reach, hi)
    for wall in plan.walls:
        _fill(occupied, origin, resolution, wall.x0, wall.y0, wall.x1, wall.y1, True)
    low, high = BASE_BAND
    for box in boxes.values():
        bottom, top = box.center[2] - box.size[2] / 2, box.center[2] + box.size[2] / 2
        if (top < low or bottom > high) and not box.hung:  # a wall unit: the mast, taller, runs into it
            continue
        grow = HANDLE_PROUD if box.container else 0.0  # a door's or drawer's handle stands out of its front
        hx, hy = box.size[0] / 2 + grow, box.size[1] / 2 + grow
        _fill(occupied, origin, resolution, box.center[0] - hx, box.center[1] - hy, box.center[0] + hx,
              box.center[1] + hy, True)
    return OccupancyMap(occupied, resolution, origin)


def write_map(grid: OccupancyMap, pgm: Path, yaml_path: Path) -> None:
    """map_server's pair: a binary PGM (top row first: image rows run down, the map's y runs up)
    and its YAML."""
    image = np.where(grid.occupied, OCCUPIED, FREE).astype(np.uint8)[::-1]
    rows, cols = image.shape
    pgm.write_bytes(f"P5\n# conceptagent world export\n{cols} {rows}\n255\n".encode() + image.tobytes())
    yaml_path.write_text(
        f"image: {pgm.name}\nmode: trinary\nresolution: {grid.resolution}\n"
        f"origin: [{grid.origin[0]:.3f}, {grid.origin[1]:.3f}, 0.0]\nnegate: 0\noccupied_thresh: 0.65\n"
        "free_thresh: 0.25\n")
