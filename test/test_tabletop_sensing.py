"""The tabletop's fixed cameras with realistic sensing (`--sensing realistic` for the grasp, place and
drawer suites): each camera's depth goes through the RGB-D noise model before its points are made.
Judged against the points PyBullet renders without it."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pybullet")

from conceptagent_ros.bodies.tabletop.grasp_world import GraspWorld  # noqa: E402
from conceptagent_ros.perception.depth_noise import DepthNoise  # noqa: E402


def _clouds(sensing: str) -> dict[str, np.ndarray]:
    world = GraspWorld(["shape:box:0", "shape:cylinder_upright:0"], seed=3, sensing=sensing)
    try:
        return world.perceive()
    finally:
        world.close()


def test_realistic_depth_moves_each_point_by_millimetres_and_leaves_holes_but_no_nan_points() -> None:
    ideal, noisy = _clouds("ideal"), _clouds("realistic")
    assert set(noisy) == set(ideal)
    for name, cloud in noisy.items():
        assert np.isfinite(cloud).all(), name  # a pixel the camera returns nothing for gives no point
    thing = next(n for n in ideal if n.startswith("shape:box"))
    # fewer points (edge shadows, grazing rays), each near the rendered surface: the model's axial
    # noise at the cameras' 0.6-1.2 m is 1-3 mm (a look is the median of five frames), not centimetres
    assert len(noisy[thing]) < len(ideal[thing])
    from scipy.spatial import cKDTree

    gaps, _ = cKDTree(ideal[thing]).query(noisy[thing])
    assert 0.0003 < float(np.median(gaps)) < 0.005
    assert float(np.percentile(gaps, 95)) < 0.02


def test_the_tabletop_cameras_noise_is_seeded_by_the_world() -> None:
    first, again = _clouds("realistic"), _clouds("realistic")
    for name in first:
        np.testing.assert_array_equal(first[name], again[name])
    assert DepthNoise().axial_scale == 1.0  # the published model, unscaled
