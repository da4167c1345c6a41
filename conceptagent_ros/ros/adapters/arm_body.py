"""A real arm as the manipulation skills' body (manipulation/arm_skills.ArmBody): what it sees is
the perception node's fused map (perception/get_object_points: each object's points and label),
its hand moves through an arm adapter (ros/adapters/arm_controllers.py: Cartesian set-points or
FollowJointTrajectory) and a GripperCommand gripper (manipulation_hand.py), and whether a grasp is
within reach is asked of the arm's URDF (voxposer/kinematics.py) before the arm moves.

Drawers are the objects perception labels "drawer"; the floor the cabinet stands on is not known
on a real robot, so a low handle is approached level (floor_z None in the skills).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.spatial.transform import Rotation

from conceptagent_ros.manipulation.arm_skills import Clouds
from conceptagent_ros.manipulation.failures import ManipulationError
from conceptagent_ros.manipulation.hand_frame import parse_tool_axes, tool_rotation
from conceptagent_ros.manipulation.pick_executor import Arm
from conceptagent_ros.ros.adapters.base_pose import to_root
from conceptagent_ros.ros.adapters.manipulation_hand import Gripper, RosHand
from conceptagent_ros.ros.conversions.clouds import cloud_xyz
from conceptagent_ros.ros.futures import wait_done
from conceptagent_ros.srv import GetObjectPoints


@dataclass(frozen=True)
class ArmBodyConfig:
    points_service: str = "perception/get_object_points"
    tool_axes: tuple[str, str, str] = ("-y", "x", "z")  # the tool link's axes as hand-frame axes (the Panda's)
    tool_offset: float = 0.02  # metres along the approach from the hand frame's origin to the tool link
    settle_s: float = 0.5  # after a release or a drawer's move, before looking again
    wait_s: float = 5.0  # for the perception service
    reach_m: float = 0.01  # a grasp is within reach when the URDF's IK lands this close...
    reach_deg: float = 10.0  # ...and turned this little from it


class RosArmBody:
    def __init__(self, node: Any, arm: Any, gripper: Gripper, kinematics: Any, home_joints: list[float],
                 config: ArmBodyConfig = ArmBodyConfig(), group: Any = None, points_client: Any = None,
                 base: Any = None):
        """`base`: where the kinematics' root stands in the planning frame (ros/adapters/base_pose.py),
        for the reach check of an arm on a mobile base; None: the root is the planning frame."""
        self.node, self.arm, self.gripper, self.kinematics = node, arm, gripper, kinematics
        self.base = base
        self.home_joints, self.config = list(home_joints), config
        self._axes = parse_tool_axes(config.tool_axes)
        self.points = points_client or node.create_client(GetObjectPoints, config.points_service, callback_group=group)
        self.labels: dict[str, str] = {}  # what perception called each object at the last look

    def drawers(self) -> set[str]:
        return {oid for oid, label in self.labels.items() if label == "drawer"}

    def look(self) -> Clouds:
        c = self.config
        if not self.points.wait_for_service(timeout_sec=c.wait_s):
            raise ManipulationError("NOT_SEEN", f"no answer from {c.points_service}: is the perception node running?")
        future = self.points.call_async(GetObjectPoints.Request())
        if not wait_done(future, c.wait_s):
            raise ManipulationError("NOT_SEEN", f"{c.points_service} did not answer within {c.wait_s:.0f} s")
        reply = future.result()
        self.labels = dict(zip(reply.ids, reply.labels))
        clouds = {oid: cloud_xyz(cloud) for oid, cloud in zip(reply.ids, reply.clouds)}
        return {oid: points for oid, points in clouds.items() if len(points)}

    def hand(self) -> Arm:
        return RosHand(self.arm, self.gripper, self.config.tool_axes, self.config.tool_offset)

    def reachable(self, position: np.ndarray, quaternion: np.ndarray) -> bool:
        """The URDF's IK from the home joints, checked by its forward kinematics."""
        rotation = Rotation.from_quat(quaternion).as_matrix()
        target = np.asarray(position, dtype=float) + rotation[:, 2] * self.config.tool_offset
        tool_quaternion = Rotation.from_matrix(tool_rotation(rotation, self._axes)).as_quat()
        if self.base is not None:  # as the base stands now
            target, tool_quaternion = to_root(self.base.pose(), target, tool_quaternion)
        tool = Rotation.from_quat(tool_quaternion)
        joints = self.kinematics.inverse(target, tool_quaternion, self.home_joints)
        reached, turned = self.kinematics.forward(joints)
        off = (Rotation.from_quat(turned).inv() * tool).magnitude()
        return bool(np.linalg.norm(np.asarray(reached) - target) <= self.config.reach_m
                    and off <= np.radians(self.config.reach_deg))

    def finger_gap(self) -> float:
        return self.gripper.gap

    def settle(self) -> None:
        time.sleep(self.config.settle_s)

    def rest(self) -> None:
        self.arm.reset_to_default_pose()

    def stop(self) -> None:
        self.arm.stop()
