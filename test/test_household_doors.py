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
