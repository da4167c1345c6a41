"""Plain geometry for the robot side, free of ROS: nominal object boxes, yaw quaternions, and the
pose a mobile base should drive to so that its arm reaches an object (the Nav2 adapter's goal)."""
from __future__ import annotations

import math
from dataclasses import dataclass

from conceptagent_ros.scene.model import SceneObject

# The embedded world has no meshes: boxes by kind, metres (x, y, z).
FURNITURE_SIZE = (0.8, 0.6, 0.9)
ITEM_SIZE = (0.12, 0.12, 0.12)


def nominal_size(obj: SceneObject) -> tuple[float, float, float]:
    """Furniture and appliances (receptacles you cannot carry) are big; things you can pick are small."""
    if obj.has("pickupable"):
        return ITEM_SIZE
    return FURNITURE_SIZE


def yaw_to_quaternion(yaw: float) -> tuple[float, float, float, float]:
    """(x, y, z, w) of a rotation about z."""
    return (0.0, 0.0, math.sin(yaw / 2.0), math.cos(yaw / 2.0))


def quaternion_to_yaw(x: float, y: float, z: float, w: float) -> float:
    return math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))


@dataclass(frozen=True)
class Pose2D:
    x: float
    y: float
    yaw: float


def approach_pose(
    target: tuple[float, float],
    size: tuple[float, float, float],
    robot: tuple[float, float],
    standoff: float = 0.35,
) -> Pose2D:
    """Where the base should stop to work on an object: on the line from the object towards the
    robot, just outside the object's box (half its planar diagonal) plus a standoff, facing it.

    Coming from the robot's side keeps the path short and the object in front of the camera; when
    the robot stands on the object's centre the approach comes from -x.
    """
    dx, dy = robot[0] - target[0], robot[1] - target[1]
    norm = math.hypot(dx, dy)
    ux, uy = (dx / norm, dy / norm) if norm > 1e-6 else (-1.0, 0.0)
    clearance = 0.5 * math.hypot(size[0], size[1]) + standoff
    x, y = target[0] + ux * clearance, target[1] + uy * clearance
    return Pose2D(x, y, math.atan2(target[1] - y, target[0] - x))


def nearest_in_footprint(centre: tuple[float, float], size: tuple[float, float], yaw: float,
                         point: tuple[float, float]) -> tuple[float, float]:
    """The point of a box's footprint (its middle, x and y extent, turned by yaw) nearest `point`:
    where an arm reaching for some of it measures to (a robot at one end of a long counter is near
    the counter, though its middle is out of reach)."""
    c, s = math.cos(yaw), math.sin(yaw)
    dx, dy = point[0] - centre[0], point[1] - centre[1]
    along, across = c * dx + s * dy, -s * dx + c * dy  # in the box's own axes
    along = min(max(along, -size[0] / 2), size[0] / 2)
    across = min(max(across, -size[1] / 2), size[1] / 2)
    return centre[0] + c * along - s * across, centre[1] + s * along + c * across
