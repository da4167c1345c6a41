"""Where the household body stands to open a hinged door (bodies/household/doors.door_stance), from the
door as seen: beside its swing, on free floor, facing the handle's arc."""
from __future__ import annotations

import math

import numpy as np
import pytest

from conceptagent_ros.bodies.household.doors import PUSH_STANCE, STANCE, door_stance
from conceptagent_ros.manipulation.articulation_planner import DoorFrame

# a 70 cm door hinged at the origin, its handle toward +x, opening toward -y (the robot's side)
DOOR = DoorFrame(np.array([0.0, 0.0, 0.9]), np.array([1.0, 0.0, 0.0]), np.array([0.0, -1.0, 0.0]), 0.7, -1.0)
RADIUS = 0.22


def test_the_base_stands_beside_the_swing_facing_the_handles_arc_where_the_floor_is_free() -> None:
    x, y, yaw = door_stance(DOOR, lambda x, y: True, RADIUS)
    assert (x, y) == pytest.approx((STANCE[0], -STANCE[1]))
    handle_at_40 = np.array([0.63 * math.cos(math.radians(40)), -0.63 * math.sin(math.radians(40))])
    bearing = math.atan2(handle_at_40[1] - y, handle_at_40[0] - x)
    assert abs(math.remainder(yaw - bearing, 2 * math.pi)) < math.radians(5)


def test_where_the_spot_is_taken_the_nearest_free_one_clear_of_the_swing_is_chosen() -> None:
    def free(x: float, y: float) -> bool:
        return x < 0.7  # furniture east of x = 0.7

    x, y, _ = door_stance(DOOR, free, RADIUS)
    assert x < 0.7 and math.hypot(x, y) >= DOOR.width + RADIUS + 0.05  # outside the swept quarter circle
    assert math.dist((x, y), (STANCE[0], -STANCE[1])) <= 0.25 * math.sqrt(2) + 1e-9


def test_no_free_spot_near_the_door_gives_none() -> None:
    assert door_stance(DOOR, lambda x, y: False, RADIUS) is None
    assert door_stance(DOOR, lambda x, y: True, RADIUS, PUSH_STANCE) is not None


def test_how_far_a_door_turned_is_read_from_where_the_hand_holding_its_handle_is() -> None:
    """The hand took the handle 5 cm out of the shut door's face, 0.65 m from the hinge; the door
    turned 35 degrees and the hand with it, round the hinge: 35 degrees, whatever the door looks
    like half open (a noisy look once read 54)."""
    from conceptagent_ros.bodies.household.doors import turned_by

    door = DoorFrame(np.array([1.0, 2.0, 0.9]), np.array([1.0, 0.0, 0.0]), np.array([0.0, -1.0, 0.0]), 0.7, -1.0)
    grasped = door.hinge + 0.65 * door.along + 0.05 * door.out
    turn = math.radians(35.0)
    # turned 35 degrees about the hinge, out of the front: x along, y out of it
    along, out = 0.65 * math.cos(turn) - 0.05 * math.sin(turn), 0.65 * math.sin(turn) + 0.05 * math.cos(turn)
    hand = door.hinge + along * door.along + out * door.out
    assert math.degrees(turned_by(door, grasped, hand)) == pytest.approx(35.0, abs=0.01)
    assert turned_by(door, grasped, grasped) == pytest.approx(0.0, abs=1e-9)
