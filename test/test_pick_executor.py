"""The pick executor's verdicts on a stand-in arm: what the finger gap and the camera say after the
lift decide held, SLIPPED or NOT_HELD (manipulation/pick_executor.py)."""
from __future__ import annotations

import numpy as np

from conceptagent_ros.manipulation.grasp_planner import GraspCandidate, GraspPlan
from conceptagent_ros.manipulation.hand_frame import hand_frame
from conceptagent_ros.manipulation.pick_executor import PickConfig, PickExecutor
from conceptagent_ros.manipulation.robot_spec import load_robot_spec


class StandInArm:
    """Goes wherever it is sent; closes on a thing `thing` metres wide, which stays in the hand
    unless `drops` (then the fingers close fully during the lift)."""

    def __init__(self, thing: float, drops: bool = False):
        self.thing, self.drops, self.gap, self.lifted = thing, drops, 0.08, False

    def move_hand(self, position: np.ndarray, rotation: np.ndarray, speed: float = 1.0) -> bool:
        self.lifted = bool(position[2] > 0.15)
        if self.lifted and self.drops:
            self.gap = 0.0
        return True

    def open_hand(self) -> None:
        self.gap = 0.08

    def close_hand(self) -> float:
        self.gap = self.thing
        return self.gap

    def finger_gap(self) -> float:
        return self.gap


def _plan() -> GraspPlan:
    down = hand_frame(np.array([0.0, 0.0, -1.0]), np.array([1.0, 0.0, 0.0]))
    return GraspPlan((GraspCandidate(np.array([0.5, 0.0, 0.03]), down, 0.03, 1.0, "top", 1.0, 0.02),), 1)


def test_a_thing_the_camera_loses_in_the_raised_hand_is_held_only_where_the_body_says_it_cannot_see_there() -> None:
    gripper = load_robot_spec("conceptagent_mm").gripper
    arm = StandInArm(thing=0.03)

    def unseen_once_lifted() -> np.ndarray | None:
        return None if arm.lifted else np.array([0.5, 0.0, 0.03])

    strict = PickExecutor(arm, gripper, PickConfig(max_attempts=1)).pick(_plan(), unseen_once_lifted)
    assert not strict.success and strict.code == "SLIPPED" and "no longer seen" in strict.message
    trusting = PickExecutor(arm, gripper, PickConfig(max_attempts=1, unseen_after_lift_is_held=True))
    assert trusting.pick(_plan(), unseen_once_lifted).success
    # the gap still rules: fingers that closed fully during the lift held nothing, seen or not
    dropped = PickExecutor(StandInArm(thing=0.03, drops=True), gripper,
                           PickConfig(max_attempts=1, unseen_after_lift_is_held=True)).pick(_plan(), lambda: None)
    assert not dropped.success and dropped.code == "SLIPPED"
