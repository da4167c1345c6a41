"""What the robot perceives in one step: the objects in view and its own state.

The embedded world produces these directly; the perception pipeline (RGB-D -> detections ->
3D objects) produces the same type from sensors.
"""
from __future__ import annotations

from dataclasses import dataclass

from conceptagent_ros.scene.model import RobotState, SceneObject


@dataclass(frozen=True)
class Observation:
    robot: RobotState
    objects: tuple[SceneObject, ...]
    # Receptacles whose whole contents were in view: an object believed in one of them but not
    # observed has been moved, and the belief forgets where it is.
    receptacles_seen_inside: tuple[str, ...] = ()
    searched: tuple[str, ...] = ()
