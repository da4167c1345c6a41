"""Carrying out an opening or closing plan (articulation_planner) on an arm: grasp the handle (or
the front's edge), follow the waypoints, let go and withdraw; or, for a push, close the fingers,
bring their tips to the front, drive in and withdraw."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from conceptagent_ros.manipulation.articulation_planner import ArticulationPlan
from conceptagent_ros.manipulation.pick_executor import Arm

APPROACH = 0.08  # the hand comes in along its approach from this far back, and leaves as far


def carry_out(arm: Arm, plan: ArticulationPlan, speed: float = 0.3, approach: float = APPROACH,
              hold: Callable[[], object] | None = None, release: Callable[[], object] | None = None) -> bool:
    """False when the hand did not reach the handle (nothing was moved); True once the motion was made.
    Whether the drawer or door really moved is for the caller to measure. `hold` is called once the
    fingers have closed on the handle, `release` before they open (a body's assisted grip)."""
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
        if hold is not None:
            hold()
    try:
        last = _follow(arm, plan, speed)
    finally:
        if not pushing and release is not None:
            release()
    if not pushing:
        arm.open_hand()
    arm.move_hand(last[0] - last[1][:, 2] * approach, last[1])
    return True


def _follow(arm: Arm, plan: ArticulationPlan, speed: float) -> tuple[np.ndarray, np.ndarray]:
    """The hand along the plan's waypoints; the pose it got to. An arm that keeps straight lines
    stops at the first step it misses: a joint-space move from there swung the hand back through a
    drawer pulled 20 cm out and shut it again. Any other goes on past a miss, as it always has."""
    straight = getattr(arm, "move_hand_straight", None)
    if straight is not None:
        return follow_until_missed(straight, plan, speed)
    for point, rotation in zip(plan.waypoints, plan.rotations):
        arm.move_hand(point, rotation, speed=speed)
    return plan.waypoints[-1], plan.rotations[-1]


def follow_until_missed(move: Callable[..., bool], plan: ArticulationPlan, speed: float) -> tuple[np.ndarray, np.ndarray]:
    """`move(point, rotation, speed=)` through the plan's waypoints from its grasp, stopping at the
    first it misses; the pose (position, rotation) the hand last reached."""
    last = (plan.grasp_position, plan.grasp_rotation)
    for point, rotation in zip(plan.waypoints, plan.rotations):
        if not move(point, rotation, speed=speed):
            break
        last = (point, rotation)
    return last
