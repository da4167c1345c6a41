"""The arm's joint-space path planner (manipulation/joint_path) in a two-joint space with walls: the
judge samples every segment of the returned path itself, ten times finer than the planner checks."""
from __future__ import annotations

import numpy as np

from conceptagent_ros.manipulation.joint_path import JointPathConfig, plan_joint_path

LOWER, UPPER = [-3.0, -3.0], [3.0, 3.0]


def wall_with_a_gap(q: np.ndarray) -> bool:
    """Free unless inside the wall 0.5 < q0 < 1.0, which is open only for 2.0 < q1 < 2.6."""
    inside_wall = 0.5 < q[0] < 1.0
    return not (inside_wall and not 2.0 < q[1] < 2.6)


def segments_free(path: list[np.ndarray], free, resolution: float = 0.002) -> bool:
    for a, b in zip(path, path[1:]):
        n = max(1, int(np.ceil(float(np.abs(b - a).max()) / resolution)))
        if not all(free(a + (b - a) * (k / n)) for k in range(n + 1)):
            return False
    return True


def test_the_path_goes_round_a_wall_through_its_gap() -> None:
    start, goal = np.array([0.0, 0.0]), np.array([1.5, 0.0])
    path = plan_joint_path(start, goal, wall_with_a_gap, LOWER, UPPER, JointPathConfig(max_samples=4000))
    assert path is not None
    assert np.allclose(path[0], start) and np.allclose(path[-1], goal)
    assert len(path) > 2  # the straight line crosses the wall
    assert segments_free(path, wall_with_a_gap)
    assert max(q[1] for q in path) > 2.0  # up to the gap: there is no other way across


def test_open_space_gives_the_straight_line() -> None:
    path = plan_joint_path([0.0, 0.0], [0.4, -2.0], wall_with_a_gap, LOWER, UPPER)
    assert path is not None and len(path) == 2


def test_a_goal_inside_the_wall_has_no_path() -> None:
    assert plan_joint_path([0.0, 0.0], [0.7, 0.0], wall_with_a_gap, LOWER, UPPER) is None


def test_a_closed_wall_is_not_crossed() -> None:
    def closed(q: np.ndarray) -> bool:
        return not 0.5 < q[0] < 1.0

    assert plan_joint_path([0.0, 0.0], [1.5, 0.0], closed, LOWER, UPPER, JointPathConfig(max_samples=300)) is None
