"""The arm's posture between skills: whether it stands tucked, and a hand drawn out of what it
touches before it is tucked. A door's push that did not reach left the hand under the worktop over
a base unit; the tuck's joint-space move jammed it there, and every drive after it stopped on its
first step against the counter (moderate_03, 06). A thing lifted inside a fridge beside its wall
had the tuck drag the fridge 18 cm toward the base (the move's path may keep the contacts its start
has), and the drives after it stopped against the fridge (moderate_19): a hand whose held thing is
near something is drawn back first as well. Where no free path to the tucked posture is found even
then, the arm still goes straight in joint space, and drags what is in its way (the apple lifted
from the back of the apartment's fridge shoved the fridge 10 cm, moderate_09)."""
from __future__ import annotations

from collections.abc import Collection

import numpy as np

from conceptagent_ros.bodies.household.mobile_arm import MobileArm
from conceptagent_ros.navigation.pybullet_base import TUCKED
from conceptagent_ros.scene.geometry import Pose2D
from conceptagent_ros.world.robot_description import ARM_JOINTS, FOOTPRINT_RADIUS

TUCKED_WITHIN = 0.1  # radians each joint may stand off the tucked posture for the arm to count as tucked
FREE_HAND_BACK = 0.3  # metres a hand that touches something is drawn back toward the mast before a tuck, at most
FREE_HAND_UP = 0.1  # metres it is then raised, where it still touches


def at_tucked(arm: MobileArm) -> bool:
    """The arm stands tucked (its wrist's roll aside: Stance.carry_within_footprint turns it)."""
    now = dict(zip(ARM_JOINTS, arm.joint_angles()))
    return all(abs(now[name] - angle) <= TUCKED_WITHIN for name, angle in TUCKED.items() if name != "wrist_3_joint")


def free_hand(arm: MobileArm, base: Pose2D, carried: Collection[int]) -> None:
    """A hand that touches something (what it carries aside), or holds a thing near something, is
    drawn straight back toward the mast of the base standing at `base`, level and turned as it is
    (FREE_HAND_BACK at most), then up."""
    if not (arm.hand_touches(carried) or arm.held_near()):
        return
    position, rotation = arm.hand_pose()[0], arm.hand_rotation()
    towards = np.array([base.x, base.y]) - position[:2]
    distance = float(np.linalg.norm(towards))
    back = min(FREE_HAND_BACK, max(0.0, distance - FOOTPRINT_RADIUS))
    if back > 0.0:
        arm.move_hand_straight(position + np.append(towards / distance * back, 0.0), rotation, speed=0.3)
    if arm.hand_touches(carried) or arm.held_near():
        arm.move_hand_straight(arm.hand_pose()[0] + np.array([0.0, 0.0, FREE_HAND_UP]), arm.hand_rotation(), speed=0.3)
