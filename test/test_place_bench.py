"""Pick and place on the physical Panda, small: an object picked and put into the tray, judged on
PyBullet's ground truth; the judge itself on an object never moved; and the place executor's
carrying arithmetic against a recording arm."""
from __future__ import annotations

import numpy as np
import pytest

from conceptagent_ros.manipulation.failures import ManipulationError
from conceptagent_ros.manipulation.place_executor import HeldObject, hand_turn_along, place
from conceptagent_ros.manipulation.place_planner import PlacePose
from conceptagent_ros.manipulation.robot_spec import load_robot_spec


class RecordingArm:
    def __init__(self) -> None:
        self.moves: list[np.ndarray] = []
        self.opened = False

    def move_hand(self, position: np.ndarray, rotation: np.ndarray, speed: float = 1.0) -> bool:
        self.moves.append(np.asarray(position, dtype=float))
        return True

    def open_hand(self) -> None:
        self.opened = True

    def close_hand(self) -> float:
        return 0.05

    def finger_gap(self) -> float:
        return 0.0 if self.opened else 0.05


def test_the_object_is_carried_so_that_its_bottom_centre_lands_on_the_spot() -> None:
    gripper = load_robot_spec("panda").gripper
    held = HeldObject.from_points(np.array([[0.5 + dx, 0.1 + dy, 0.2 + dz] for dx in (-0.02, 0.02)
                                            for dy in (-0.02, 0.02) for dz in (0.0, 0.04, 0.08)] * 2))
    assert held.bottom_centre == pytest.approx([0.5, 0.1, 0.2]) and held.height == pytest.approx(0.08)
    arm = RecordingArm()
    hand = np.array([0.5, 0.1, 0.27])  # 7 cm above the object's bottom
    spot = PlacePose(np.array([0.45, -0.27, 0.02]), 0.008, 0.05, True, 0.035)
    done = place(arm, gripper, hand, np.eye(3), held, spot)
    assert done.success and arm.opened
    release = arm.moves[1]
    assert release == pytest.approx([0.45, -0.27, 0.02 + 0.07])  # the bottom centre on the spot
    assert arm.moves[0][2] > release[2] and arm.moves[2][2] > release[2]  # in from above, out upward


def test_a_turn_on_the_way_turns_the_hand_about_the_object() -> None:
    """Into a drawer the hand's long side goes along the opening: the hand and the object in it turn
    about the vertical through the object, and its bottom centre still lands on the spot."""
    gripper = load_robot_spec("panda").gripper
    held = HeldObject(np.array([0.5, 0.1, 0.2]), 0.02, 0.04)
    down_closing_x = np.array([[1.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, -1.0]])  # approach down, closing along x
    turn = hand_turn_along(down_closing_x, np.array([0.0, 1.0]))
    assert abs(turn) == pytest.approx(np.pi / 2)
    assert hand_turn_along(down_closing_x, np.array([-1.0, 0.0])) == pytest.approx(0.0)  # either way along will do
    arm = RecordingArm()
    spot = PlacePose(np.array([0.7, 0.3, 0.18]), 0.17, 0.03, False, None)
    hand = np.array([0.53, 0.1, 0.27])  # 3 cm off the object's centre along x
    assert place(arm, gripper, hand, down_closing_x, held, spot, turn=turn).success
    release = arm.moves[1]
    assert release[:2] == pytest.approx([0.7, 0.3 + 0.03 * np.sign(turn)])  # the offset turned a quarter
    assert release[2] == pytest.approx(0.18 + 0.07)


def test_an_unseen_held_object_is_not_held() -> None:
    with pytest.raises(ManipulationError) as failure:
        HeldObject.from_points(np.zeros((3, 3)))
    assert failure.value.code == "NOT_HELD"


def test_an_object_is_picked_and_put_into_the_tray() -> None:
    pytest.importorskip("pybullet")
    from conceptagent_ros.evaluation.place_bench import run_place_episode

    episode = run_place_episode("cube", 0)
    assert episode.success and episode.code == "" and episode.message == "in the tray", episode


def test_the_judge_says_an_object_on_the_table_is_not_in_the_tray() -> None:
    pytest.importorskip("pybullet")
    from conceptagent_ros.bodies.tabletop.grasp_world import GraspWorld
    from conceptagent_ros.evaluation.place_bench import TRAY, judge_placed

    world = GraspWorld(["cube"], 0, tray=TRAY)
    try:
        placed, why = judge_placed(world, "cube", TRAY)
        assert not placed and "outside the tray" in why
    finally:
        world.close()
