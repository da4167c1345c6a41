"""Where the robot starts in an exported world: the free spot of the map nearest the scene's start
(its start room's middle) where the base's footprint fits, facing +x."""
from __future__ import annotations

import numpy as np
from scipy import ndimage

from conceptagent_ros.errors import SceneError
from conceptagent_ros.scene.model import Scene
from conceptagent_ros.world.house import House, house
from conceptagent_ros.world.robot_description import FOOTPRINT_RADIUS

SPAWN_CLEARANCE = 0.15  # metres beyond the footprint to anything


def start_pose(scene: Scene | House) -> tuple[float, float, float]:
    """(x, y, yaw) of the base's start in the world frame."""
    home = scene if isinstance(scene, House) else house(scene)
    scene, grid = home.scene, home.grid
    clearance = ndimage.distance_transform_edt(~grid.occupied) * grid.resolution
    fits = clearance >= FOOTPRINT_RADIUS + SPAWN_CLEARANCE
    if not fits.any():
        raise SceneError(f"scene '{scene.name}' has no free spot for the robot's base")
    rows, cols = np.nonzero(fits)
    sx, sy = scene.robot.start_position[0], scene.robot.start_position[1]
    xs = grid.origin[0] + (cols + 0.5) * grid.resolution
    ys = grid.origin[1] + (rows + 0.5) * grid.resolution
    best = int(np.argmin((xs - sx) ** 2 + (ys - sy) ** 2))
    return round(float(xs[best]), 3), round(float(ys[best]), 3), 0.0
