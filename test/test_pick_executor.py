"""The pick executor's verdicts on a stand-in arm: what the finger gap, the fingers' feel and the
camera say after the lift decide held, SLIPPED or NOT_HELD (manipulation/pick_executor.py)."""
from __future__ import annotations

import numpy as np

from conceptagent_ros.manipulation.grasp_planner import GraspCandidate, GraspPlan
from conceptagent_ros.manipulation.hand_frame import hand_frame
from conceptagent_ros.manipulation.pick_executor import PickConfig, PickExecutor
from conceptagent_ros.manipulation.robot_spec import load_robot_spec


class StandInArm:
    """Goes wherever it is sent; closes on a thing `thing` metres wide, which stays in the hand
    unless `drops` (then the fingers close fully during the lift)."""

    def __init__(self, thing: float, drops: bool = False, feels: bool | None = True):
        self.thing, self.drops, self.gap, self.lifted, self.feels = thing, drops, 0.08, False, feels

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

    def fingers_feel(self) -> bool | None:
        """What the fingers feel: something between them while they hold a gap, unless told otherwise
        (`feels` False: a gap held by the fingers' own stop, nothing between them; None: no sense)."""
        return None if self.feels is None else (self.feels and self.gap > 0.002)


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


def test_unseen_in_the_raised_hand_the_fingers_feel_decides_not_the_gap_alone() -> None:
    gripper = load_robot_spec("conceptagent_mm").gripper
    trusting = PickConfig(max_attempts=1, unseen_after_lift_is_held=True)

    def pick(arm: StandInArm):  # the camera sees the thing until the hand has risen
        return PickExecutor(arm, gripper, trusting).pick(
            _plan(), lambda: None if arm.lifted else np.array([0.5, 0.0, 0.03]))

    felt = pick(StandInArm(thing=0.03))
    assert felt.success and "the fingers feel it" in felt.message
    numb = pick(StandInArm(thing=0.03, feels=False))  # a gap, but nothing between the fingers
    assert not numb.success and numb.code == "SLIPPED" and "feel nothing" in numb.message
    senseless = pick(StandInArm(thing=0.03, feels=None))  # a hand with no sense of touch: the gap, said so
    assert senseless.success and "gap alone" in senseless.message
