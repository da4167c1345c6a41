"""Carrying out an opening or closing plan (articulation_planner) on an arm: grasp the handle (or
the front's edge), follow the waypoints, let go and withdraw; or, for a push, close the fingers,
bring their tips to the front, drive in and withdraw."""
from __future__ import annotations

from conceptagent_ros.manipulation.articulation_planner import ArticulationPlan
from conceptagent_ros.manipulation.pick_executor import Arm

APPROACH = 0.08  # the hand comes in along its approach from this far back, and leaves as far


def carry_out(arm: Arm, plan: ArticulationPlan, speed: float = 0.3, approach: float = APPROACH) -> bool:
    """False when the hand did not reach the handle (nothing was moved); True once the motion was made.
    Whether the drawer or door really moved is for the caller to measure."""
    direction = plan.grasp_rotation[:, 2]
    pushing = plan.grip in ("push", "press")  # nothing is held: the closed fingers push or drag
    if pushing:
        arm.close_hand()
    else:
        arm.open_hand()
    if not arm.move_hand(plan.grasp_position - direction * approach, plan.grasp_rotation):
        return False
    if not arm.move_hand(plan.grasp_position, plan.grasp_rotation, speed=0.4):
        return False
    if not pushing:
        arm.close_hand()
    for point, rotation in zip(plan.waypoints, plan.rotations):
        arm.move_hand(point, rotation, speed=speed)
    if not pushing:
        arm.open_hand()
    arm.move_hand(plan.waypoints[-1] - plan.rotations[-1][:, 2] * approach, plan.rotations[-1])
    return True
