"""A move that crosses a border of the velocity map is split there: each part runs at the speed
of the voxels it crosses (the judge of templates 3 and 11 reads the speed along the hand's trace)."""
from __future__ import annotations

import numpy as np

from conceptagent_ros.voxposer.api import VoxelGrid
from conceptagent_ros.voxposer.executor import Waypoint, speed_changes


def test_a_move_leaving_a_slow_region_speeds_up_where_it_leaves():
    grid = VoxelGrid((0.0, 0.0, 0.0), (1.0, 1.0, 1.0), 100)  # 1 cm voxels
    velocity = np.ones((100, 100, 100))
    velocity[:50] = 0.25  # slow where x < 0.5 m
    start = np.array([0.40, 0.5, 0.5])
    goal = Waypoint(np.array([0.60, 0.5, 0.5]), np.array([1.0, 0, 0, 0]), 1.0, 0.0)
    parts = speed_changes(start, goal, grid, {"velocity": velocity})
    assert [p.speed for p in parts] == [0.25, 1.0]
    assert abs(parts[0].position[0] - 0.5) <= 0.005 + 1e-9  # split at the border, to the step
    assert np.array_equal(parts[-1].position, goal.position) and all(p.gripper == 0.0 for p in parts)


def test_no_velocity_map_or_no_border_leaves_the_move_whole():
    grid = VoxelGrid((0.0, 0.0, 0.0), (1.0, 1.0, 1.0), 100)
    goal = Waypoint(np.array([0.6, 0.5, 0.5]), np.array([1.0, 0, 0, 0]), 1.0, 1.0)
    assert speed_changes(np.array([0.4, 0.5, 0.5]), goal, grid, {}) == [goal]
    uniform = speed_changes(np.array([0.4, 0.5, 0.5]), goal, grid, {"velocity": np.full((100, 100, 100), 2.0)})
    assert len(uniform) == 1 and uniform[0].speed == 2.0
