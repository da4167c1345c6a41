"""Where the household body stands to open a hinged door (bodies/household/door_geometry.door_stance), from the
door as seen: beside its swing, on free floor, facing the handle's arc; and to push one shut
(shut_stances), and the shut door's frame from a door seen open (frame_of_open_door)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from conceptagent_ros.bodies.household.door_geometry import (
    PUSH_STANCE,
    STANCE,
    door_stance,
    door_turn_seen,
    frame_of_open_door,
    shut_stances,
)
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


def _door_at(angle: float, radius: float) -> np.ndarray:
    return DOOR.at(angle, radius)[:2]


def test_the_base_stands_to_push_a_door_shut_clear_of_every_place_the_door_passes() -> None:
    """Every spot offered is free, out of the way of the door wherever the sweep takes it, and
    within the arm's reach of the whole sweep; the first is the one whose furthest point is nearest."""
    start, end, radius, reach = math.radians(92), math.radians(50), 0.42, (0.28, 0.68)
    stances = shut_stances(DOOR, start, end, radius, reach, lambda x, y: True, RADIUS)
    assert len(stances) >= 3
    sweep = [_door_at(a, radius) for a in np.linspace(end, start, 30)]
    furthest = []
    for x, y, yaw in stances:
        spot = np.array([x, y])
        to_hand = [float(np.linalg.norm(p - spot)) for p in sweep]
        assert reach[0] - 0.01 <= min(to_hand) and max(to_hand) <= reach[1] + 0.01
        for angle in np.linspace(end, start, 30):  # the door, hinge to free edge, at each place it passes
            for share in np.linspace(0.0, 1.0, 15):
                assert float(np.linalg.norm(_door_at(angle, share * DOOR.width) - spot)) >= RADIUS + 0.03
        middle = _door_at((start + end) / 2, radius)
        assert abs(math.remainder(yaw - math.atan2(middle[1] - y, middle[0] - x), 2 * math.pi)) < 1e-6
        furthest.append(max(to_hand))
    assert furthest[0] == pytest.approx(min(furthest), abs=0.01)


def test_no_free_spot_to_push_a_door_shut_from_gives_none() -> None:
    assert shut_stances(DOOR, math.radians(92), math.radians(50), 0.42, (0.28, 0.68), lambda x, y: False, RADIUS) == []
    # the hinge's side walled off (x < 0) and the room in front only: still some spot, none behind the wall
    spots = shut_stances(DOOR, math.radians(92), math.radians(50), 0.42, (0.28, 0.68), lambda x, y: x > 0.05, RADIUS)
    assert spots and all(x > 0.05 for x, _, _ in spots)


@pytest.mark.parametrize("degrees", [30.0, 60.0, 89.0])
def test_a_door_seen_open_gives_the_frame_it_had_shut(degrees: float) -> None:
    """The door's points as seen open (its face, 2 cm of noise), the front's middle and the way out of
    it from the map: the hinge at the end nearer the front, the door lying shut toward the front's
    middle, as wide as seen."""
    rng = np.random.default_rng(3)
    angle = math.radians(degrees)
    shares, heights = rng.uniform(0.0, 1.0, 600), rng.uniform(0.1, 1.7, 600)
    points = np.array([[*(DOOR.at(angle, s * DOOR.width)[:2]), h] for s, h in zip(shares, heights)])
    points[:, :2] += rng.normal(0.0, 0.005, (600, 2))
    front_middle = DOOR.hinge + DOOR.along * DOOR.width / 2
    frame = frame_of_open_door(points, front_middle, DOOR.out)
    assert frame.hinge[:2] == pytest.approx(DOOR.hinge[:2], abs=0.03)
    assert frame.along == pytest.approx(DOOR.along, abs=1e-9)
    assert frame.out == pytest.approx(DOOR.out, abs=1e-9)
    assert frame.width == pytest.approx(DOOR.width, abs=0.04)
    assert frame.turn == DOOR.turn
    # how far it stands open, from the seen door's long axis, its 3 cm edge seen too
    edge = np.array([[*(DOOR.at(angle, DOOR.width) + DOOR.outer(angle) * t)[:2], h]
                     for t, h in zip(rng.uniform(-0.03, 0.0, 150), rng.uniform(0.1, 1.7, 150))])
    assert math.degrees(door_turn_seen(np.vstack([points, edge]), frame)) == pytest.approx(degrees, abs=2.0)
