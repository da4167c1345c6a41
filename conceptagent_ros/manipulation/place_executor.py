"""Putting a held object down where the place planner said: the hand carries the object so that
the object's bottom centre (as seen in the hand) comes over the spot, descends to the release
height, opens and withdraws. Every failure ends with a named code."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from conceptagent_ros.manipulation.failures import ManipulationError
from conceptagent_ros.manipulation.pick_executor import Arm
from conceptagent_ros.manipulation.place_planner import Footprint, PlacePose
from conceptagent_ros.manipulation.robot_spec import GripperSpec

ABOVE = 0.10  # the hand comes in this far above the release pose, and leaves as far


@dataclass(frozen=True)
class HeldObject:
    """What the hand holds, from its points as seen in the hand: where its bottom centre is, and
    its footprint radius and height (what the place planner needs)."""

    bottom_centre: np.ndarray
    footprint_radius: float
    height: float
    footprint: Footprint | None = None  # its rectangle, for where no circle of footprint_radius fits

    @classmethod
    def from_points(cls, points: np.ndarray) -> HeldObject:
        if len(points) < 10:
            raise ManipulationError("NOT_HELD", "the object in the hand is not seen (fewer than 10 points)")
        footprint, centre = Footprint.fit(points[:, :2])  # the middle of its extent, not the mean of its points
        radius = float(np.linalg.norm(points[:, :2] - centre, axis=1).max())
        bottom = float(points[:, 2].min())
        return cls(np.array([centre[0], centre[1], bottom]), radius, float(points[:, 2].max() - bottom), footprint)


@dataclass(frozen=True)
class PlaceResult:
    success: bool
    code: str
    message: str


def hand_turn_along(hand_rotation: np.ndarray, direction: np.ndarray) -> float:
    """The turn about the vertical (radians, the smaller of the two) that lays the hand's closing
    axis -- its long side, palm and fingers -- along a horizontal `direction`: into a drawer open
    10 cm deep and 20 cm wide, a hand across the opening would strike its front or the cabinet."""
    closing = hand_rotation[:2, 0]
    if float(np.linalg.norm(closing)) < 0.3:  # a hand closing up and down: turning it changes nothing
        return 0.0
    now = float(np.arctan2(closing[1], closing[0]))
    want = float(np.arctan2(direction[1], direction[0]))
    turn = (want - now + np.pi / 2) % np.pi - np.pi / 2  # either way along the direction will do
    return float(turn)


def place(arm: Arm, gripper: GripperSpec, hand_position: np.ndarray, hand_rotation: np.ndarray, held: HeldObject,
          spot: PlacePose, gap_tolerance: float = 0.002, turn: float = 0.0) -> PlaceResult:
    """Carry the held object from the hand's pose to `spot`, let go, withdraw. `turn`: radians about
    the vertical through the object that the hand (and the object with it) turns on the way."""
    offset = np.asarray(hand_position, dtype=float) - held.bottom_centre  # hand relative to the object's bottom
    if turn:
        c, s = np.cos(turn), np.sin(turn)
        about_z = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
        offset, hand_rotation = about_z @ offset, about_z @ hand_rotation
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
