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
