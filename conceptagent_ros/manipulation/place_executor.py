"""Putting a held object down where the place planner said: the hand carries the object so that
the object's bottom centre (as seen in the hand) comes over the spot, descends to the release
height, opens and withdraws. Every failure ends with a named code."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from conceptagent_ros.manipulation.failures import ManipulationError
from conceptagent_ros.manipulation.pick_executor import Arm
from conceptagent_ros.manipulation.place_planner import PlacePose
from conceptagent_ros.manipulation.robot_spec import GripperSpec

ABOVE = 0.10  # the hand comes in this far above the release pose, and leaves as far


@dataclass(frozen=True)
class HeldObject:
    """What the hand holds, from its points as seen in the hand: where its bottom centre is, and
    its footprint radius and height (what the place planner needs)."""

    bottom_centre: np.ndarray
    footprint_radius: float
    height: float

    @classmethod
    def from_points(cls, points: np.ndarray) -> HeldObject:
        if len(points) < 10:
            raise ManipulationError("NOT_HELD", "the object in the hand is not seen (fewer than 10 points)")
        centre = points[:, :2].mean(axis=0)
        radius = float(np.linalg.norm(points[:, :2] - centre, axis=1).max())
        bottom = float(points[:, 2].min())
        return cls(np.array([centre[0], centre[1], bottom]), radius, float(points[:, 2].max() - bottom))


@dataclass(frozen=True)
class PlaceResult:
    success: bool
    code: str
    message: str


def place(arm: Arm, gripper: GripperSpec, hand_position: np.ndarray, hand_rotation: np.ndarray, held: HeldObject,
          spot: PlacePose, gap_tolerance: float = 0.002) -> PlaceResult:
    """Carry the held object from the hand's pose to `spot`, let go, withdraw."""
    offset = np.asarray(hand_position, dtype=float) - held.bottom_centre  # hand relative to the object's bottom
    release = spot.position + offset
    if not arm.move_hand(release + np.array([0.0, 0.0, ABOVE]), hand_rotation):
        return PlaceResult(False, "UNREACHABLE", "the arm did not reach above the place")
    if arm.finger_gap() <= gripper.empty_gap + gap_tolerance:
        return PlaceResult(False, "SLIPPED", "the object fell out of the hand on the way")
    if not arm.move_hand(release, hand_rotation, speed=0.4):
        return PlaceResult(False, "COLLISION", "the hand was stopped on its way down")
    arm.open_hand()
    arm.move_hand(release + np.array([0.0, 0.0, ABOVE]), hand_rotation)
    return PlaceResult(True, "", "released")
