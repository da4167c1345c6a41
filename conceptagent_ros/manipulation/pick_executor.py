"""Carrying out a grasp plan on an arm: pre-grasp, approach, close, lift, verify; on a miss or a
slip the next candidate, a bounded number of times. Every failure ends with a named code.

The arm is a Protocol (any driver: PyBullet, Cartesian set-points, FollowJointTrajectory plus a
gripper action) that moves the hand frame of manipulation/hand_frame.py and opens and closes the hand.
Verification uses only what a robot has: the finger gap after closing (above the empty-hand gap:
something is between the fingers) and the object's perceived position after the lift (it moved up
with the hand).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from conceptagent_ros.manipulation.grasp_planner import GraspCandidate, GraspPlan
from conceptagent_ros.manipulation.robot_spec import GripperSpec


class Arm(Protocol):
    def move_hand(self, position: np.ndarray, rotation: np.ndarray, speed: float = 1.0) -> bool:
        """Drive the hand frame to the pose; True if it got there."""

    def open_hand(self) -> None: ...

    def close_hand(self) -> float:
        """Close on whatever is between the fingers; the gap left (metres)."""

    def finger_gap(self) -> float: ...

    def fingers_feel(self) -> bool | None:
        """Whether both closed fingers press on something: a gripper's grasp sense (a stall short of
        closed, a finger's force; a simulator's contacts); None where the hand cannot tell."""


ObjectLocator = Callable[[], "np.ndarray | None"]  # the object's perceived centre now, None if unseen


@dataclass(frozen=True)
class PickConfig:
    max_attempts: int = 3
    approach_distance: float = 0.10  # the pre-grasp stands this far back along the approach
    lift: float = 0.20
    gap_tolerance: float = 0.002  # above the empty-hand gap by this much: something is held
    lifted_fraction: float = 0.5  # the object must rise at least this share of the lift
    # A camera that cannot see into the raised hand (a mast camera behind the arm: the hand hides
    # what it holds) loses the object after the lift; True: the fingers' feel (Arm.fingers_feel) and
    # the gap then say whether it is held (the gap alone only for a hand that cannot feel)
    unseen_after_lift_is_held: bool = False


@dataclass(frozen=True)
class PickResult:
    success: bool
    code: str  # "" on success, else a manipulation failure code
    message: str
    attempts: int
    grasp: GraspCandidate | None = None


class PickExecutor:
    def __init__(self, arm: Arm, gripper: GripperSpec, config: PickConfig | None = None):
        self.arm, self.gripper = arm, gripper
        self.config = config or PickConfig()

    def pick(self, plan: GraspPlan, locate: ObjectLocator) -> PickResult:
        cfg = self.config
        before = locate()
        last = PickResult(False, "NO_GRASP_FOUND", "no grasp candidate to try", 0)
        for attempt, grasp in enumerate(plan.candidates[:cfg.max_attempts], 1):
            outcome = self._try(grasp, before, attempt, locate)
            if outcome.success:
                return outcome
            last = outcome
            self._back_off(grasp)
        return PickResult(False, last.code, f"{last.message} (after {last.attempts} attempt"
                                            f"{'s' if last.attempts != 1 else ''})", last.attempts, last.grasp)

    def _try(self, grasp: GraspCandidate, before: np.ndarray | None, attempt: int,
             locate: ObjectLocator) -> PickResult:
        arm, cfg = self.arm, self.config
        arm.open_hand()
        if not arm.move_hand(grasp.pre_grasp(cfg.approach_distance), grasp.rotation):
            return PickResult(False, "UNREACHABLE", "the arm did not reach the pre-grasp", attempt, grasp)
        if not arm.move_hand(grasp.position, grasp.rotation, speed=0.5):
            return PickResult(False, "COLLISION", "the hand was stopped on its way in", attempt, grasp)
        gap = arm.close_hand()
        if gap <= self.gripper.empty_gap + cfg.gap_tolerance:
            return PickResult(False, "NOT_HELD", f"the hand closed on nothing (gap {gap * 1000:.1f} mm)", attempt, grasp)
        arm.move_hand(grasp.position + np.array([0.0, 0.0, cfg.lift]), grasp.rotation, speed=0.5)
        if arm.finger_gap() <= self.gripper.empty_gap + cfg.gap_tolerance:
            return PickResult(False, "SLIPPED", "the object slipped out during the lift", attempt, grasp)
        after = locate()
        if after is None and cfg.unseen_after_lift_is_held:
            feel = arm.fingers_feel()
            if feel is False:
                return PickResult(False, "SLIPPED", "the fingers feel nothing between them after the lift (the camera "
                                                    "does not see into the raised hand)", attempt, grasp)
            felt = "the fingers feel it" if feel else "this hand cannot feel, so the gap alone says so"
            return PickResult(True, "", f"held (gap {arm.finger_gap() * 1000:.1f} mm; {felt}; the camera does not "
                                        "see into the raised hand)", attempt, grasp)
        if before is not None and (after is None or after[2] - before[2] < cfg.lifted_fraction * cfg.lift):
            rose = "is no longer seen" if after is None else f"rose {100 * (after[2] - before[2]):.1f} cm"
            return PickResult(False, "SLIPPED", f"the object {rose} while the hand rose {100 * cfg.lift:.0f} cm",
                              attempt, grasp)
        return PickResult(True, "", f"held (gap {arm.finger_gap() * 1000:.1f} mm)", attempt, grasp)

    def _back_off(self, grasp: GraspCandidate) -> None:
        """Let go and withdraw along the approach, out of the way of the next try."""
        self.arm.open_hand()
        self.arm.move_hand(grasp.pre_grasp(self.config.approach_distance) + np.array([0.0, 0.0, 0.05]), grasp.rotation)
