"""The arm a skill moves through: each motion is counted and reported, a cancel stops the next one,
and a straight move stays straight where the arm can keep it so (a hand holding a door's handle)."""
from __future__ import annotations

import threading

import numpy as np
import pytest

from conceptagent_ros.manipulation.watched_arm import MotionCanceled, WatchedArm


class RecordingArm:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def move_hand(self, position: np.ndarray, rotation: np.ndarray, speed: float = 1.0) -> bool:
        self.calls.append("move_hand")
        return True

    def open_hand(self) -> None:
        self.calls.append("open_hand")

    def close_hand(self) -> float:
        self.calls.append("close_hand")
        return 0.0

    def finger_gap(self) -> float:
        return 0.0

    def fingers_feel(self) -> bool | None:
        return None


class StraightArm(RecordingArm):
    def move_hand_straight(self, position: np.ndarray, rotation: np.ndarray, speed: float = 1.0) -> bool:
        self.calls.append("move_hand_straight")
        return False  # the line ran out: no other way round is tried


def test_a_straight_move_never_falls_back_to_a_joint_space_move_on_an_arm_that_keeps_lines() -> None:
    arm = StraightArm()
    watched = WatchedArm(arm)  # type: ignore[arg-type]
    assert watched.move_hand_straight(np.zeros(3), np.eye(3)) is False
    assert arm.calls == ["move_hand_straight"] and watched.motions == 1


def test_an_arm_without_straight_moves_moves_as_it_always_does() -> None:
    arm = RecordingArm()
    seen: list[str] = []
    watched = WatchedArm(arm, on_motion=seen.append)  # type: ignore[arg-type]
    assert watched.move_hand_straight(np.zeros(3), np.eye(3)) is True
    assert arm.calls == ["move_hand"] and seen == ["moving the hand"]


def test_a_cancel_stops_the_next_motion_before_it_starts() -> None:
    arm, cancel = StraightArm(), threading.Event()
    watched = WatchedArm(arm, cancel)  # type: ignore[arg-type]
    cancel.set()
    with pytest.raises(MotionCanceled):
        watched.move_hand_straight(np.zeros(3), np.eye(3))
    assert arm.calls == []


class PositionsArm(RecordingArm):
    """Keeps straight lines for `straight_steps` moves, then reaches no further; records where the hand went."""

    def __init__(self, straight_steps: int) -> None:
        super().__init__()
        self.left = straight_steps
        self.targets: list[tuple[str, np.ndarray]] = []

    def move_hand(self, position: np.ndarray, rotation: np.ndarray, speed: float = 1.0) -> bool:
        self.targets.append(("move_hand", np.asarray(position, dtype=float)))
        return True

    def move_hand_straight(self, position: np.ndarray, rotation: np.ndarray, speed: float = 1.0) -> bool:
        self.targets.append(("straight", np.asarray(position, dtype=float)))
        self.left -= 1
        return self.left >= 0


def test_a_drawer_pull_stops_where_the_straight_steps_give_out_and_backs_off_from_there() -> None:
    """A joint-space move past the last straight step swung the hand back through a drawer pulled
    20 cm out and shut it again: the pull ends at the first step the arm misses, and the hand
    leaves from where it got to, not from the pull's planned end."""
    from conceptagent_ros.manipulation.articulation_executor import APPROACH, carry_out
    from conceptagent_ros.manipulation.articulation_planner import ArticulationPlan

    approach = np.array([1.0, 0.0, 0.0])  # into the front
    rotation = np.column_stack([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], approach])
    grasp = np.array([0.8, 0.0, 0.7])
    waypoints = tuple(grasp - approach * 0.02 * k for k in range(1, 16))  # a 30 cm pull in 2 cm steps
    plan = ArticulationPlan("drawer", "open", grasp, rotation, waypoints, tuple(rotation for _ in waypoints), "handle",
                            distance=0.30)
    arm = PositionsArm(straight_steps=5)
    assert carry_out(arm, plan) is True
    straight = [p for kind, p in arm.targets if kind == "straight"]
    assert len(straight) == 6  # five steps kept, the sixth missed, none tried after it
    last_move = arm.targets[-1]
    assert last_move[0] == "move_hand"
    assert last_move[1] == pytest.approx(waypoints[4] - approach * APPROACH)  # backed off from the fifth step
