"""Arm kinematics from a URDF through PyBullet (DIRECT, no physics stepped): inverse kinematics for a
joint-space controller, forward kinematics to read the end effector back from joint states.

A joint-trajectory controller (ros2_control's joint_trajectory_controller, FollowJointTrajectory)
takes joint positions, while VoxPoser plans end-effector waypoints; this is the bridge. The
default is pybullet_data's Franka Panda, the arm of the paper's simulation.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.voxposer.physics_client import PhysicsClient


@dataclass(frozen=True)
class KinematicsConfig:
    urdf: str = "franka_panda/panda.urdf"  # a path, or one under pybullet_data
    ee_link: str = "panda_grasptarget"
    joint_names: tuple[str, ...] = tuple(f"panda_joint{i}" for i in range(1, 8))


class PybulletKinematics(PhysicsClient):
    def __init__(self, config: KinematicsConfig | None = None) -> None:
        self.config = config or KinematicsConfig()
        p = self.connect()
        try:
            self.robot = p.loadURDF(self.config.urdf, useFixedBase=True, physicsClientId=self.client)
        except p.error as exc:
            p.disconnect(physicsClientId=self.client)
            raise ConceptAgentError(f"cannot load the arm's URDF {self.config.urdf!r}: {exc}") from None
        by_name: dict[str, int] = {}
        links: dict[str, int] = {}
        for index in range(p.getNumJoints(self.robot, physicsClientId=self.client)):
            info = p.getJointInfo(self.robot, index, physicsClientId=self.client)
            by_name[info[1].decode()] = index
            links[info[12].decode()] = index
        missing = [name for name in self.config.joint_names if name not in by_name]
        if missing or self.config.ee_link not in links:
            self.close()
            raise ConceptAgentError(f"{self.config.urdf}: no joint(s) {missing} or link {self.config.ee_link!r}")
        self.joints = [by_name[name] for name in self.config.joint_names]
        self.ee = links[self.config.ee_link]
        # IK returns one value per movable joint, in joint-index order
        movable = [i for i in range(p.getNumJoints(self.robot, physicsClientId=self.client))
                   if p.getJointInfo(self.robot, i, physicsClientId=self.client)[2] != p.JOINT_FIXED]
        self._ik_slots = [movable.index(j) for j in self.joints]

    def _set(self, positions: Sequence[float]) -> None:
        for joint, angle in zip(self.joints, positions):
            self.p.resetJointState(self.robot, joint, float(angle), physicsClientId=self.client)

    def forward(self, positions: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
        """End-effector position (m) and quaternion (x, y, z, w) for the joint positions."""
        self._set(positions)
        state = self.p.getLinkState(self.robot, self.ee, computeForwardKinematics=True, physicsClientId=self.client)
        return np.asarray(state[4]), np.asarray(state[5])

    def inverse(self, position: Sequence[float], quaternion: Sequence[float], seed: Sequence[float]) -> np.ndarray:
        """Joint positions reaching the pose, searched from `seed` (the arm's present joints)."""
        self._set(seed)
        solution = self.p.calculateInverseKinematics(self.robot, self.ee, list(position), list(quaternion),
                                                     maxNumIterations=200, residualThreshold=1e-5,
                                                     physicsClientId=self.client)
        return np.asarray([solution[i] for i in self._ik_slots])
