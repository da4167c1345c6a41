"""What swinging a hinged door needs of the household body (doors.DoorBody), assembled from the
body's roles: what the camera sees (sight), where the base stands and drives (stance), the grip on a
handle (grip) and the arm. HingedDoors is handed this, not the whole body."""
from __future__ import annotations

from collections.abc import Callable, Collection, Mapping

import numpy as np

from conceptagent_ros.bodies.household.grip import Grip
from conceptagent_ros.bodies.household.mobile_arm import MobileArm
from conceptagent_ros.bodies.household.sight import Sight
from conceptagent_ros.bodies.household.stance import Stance
from conceptagent_ros.navigation.pybullet_base import PyBulletBase
from conceptagent_ros.scene.geometry import Pose2D
from conceptagent_ros.world.robot_description import FOOTPRINT_RADIUS


class HouseholdDoorBody:
    """doors.DoorBody over the household body's parts. `shoulder`: where the arm's shoulder is now
    (the body's: it follows the base and the torso)."""

    footprint_radius = FOOTPRINT_RADIUS

    def __init__(self, arm: MobileArm, base: PyBulletBase, sight: Sight, stance: Stance, grip: Grip,
                 kinds: Mapping[str, str], shoulder: Callable[[], np.ndarray]):
        self.arm, self.base, self.sight, self.stance, self.grip = arm, base, sight, stance, grip
        self._doors = frozenset(oid for oid, kind in kinds.items() if kind == "door")
        self._shoulder = shoulder

    def door_ids(self) -> Collection[str]:
        return self._doors

    def base_pose(self) -> Pose2D:
        """Where the robot believes its base stands (localization's estimate, with it on)."""
        return self.base.believed

    def hand_position(self) -> np.ndarray:
        return np.asarray(self.arm.hand_pose()[0], dtype=float)

    def shoulder(self) -> np.ndarray:
        return self._shoulder()

    def door_points(self, target: str, tuck: bool = True) -> np.ndarray:
        """The points the camera sees of a container's door, with the head at each of LOOK_TILTS;
        with `tuck`, the arm tucked out of the view first."""
        if tuck:
            self.stance.tuck()
        return self.sight.door_points(target, self.grip.door_link(target))

    def closed_front(self, target: str) -> tuple[np.ndarray, np.ndarray]:
        return self.stance.closed_front(target)

    def stand_before(self, target: str, standoff: float) -> bool:
        return self.stance.stand_before(target, standoff)

    def free_for_base(self, x: float, y: float) -> bool:
        return self.stance.free_for_base(x, y)

    def drive_to(self, x: float, y: float, yaw: float) -> bool:
        return self.stance.drive_to(x, y, yaw)

    def sense_obstacles(self) -> None:
        self.stance.sense_obstacles()

    def grip_door(self, target: str) -> bool:
        return self.grip.grip_door(target)

    def let_go_of_door(self) -> None:
        self.grip.let_go_of_door()

    def rest(self) -> None:
        self.arm.rest()

    def settle(self) -> None:
        self.arm.step(120)
