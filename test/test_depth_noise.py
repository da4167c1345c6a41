"""The RGB-D noise model (perception/depth_noise.py) on synthetic depth images: the spread it adds
matches Nguyen et al.'s sigma_z, grows with distance squared and toward grazing angles, and the
pixels a real camera loses (grazing surfaces, the far side of depth edges) come back as NaN."""
from __future__ import annotations

import math

import numpy as np
import pytest

from conceptagent_ros.perception.depth_noise import DepthNoise, incidence
from conceptagent_ros.perception.frames import Intrinsics

CAMERA = Intrinsics.from_fov(160, 120, 60.0)


def _wall(distance: float, tilt_deg: float = 0.0) -> np.ndarray:
    """Depth of a plane `distance` m ahead, turned `tilt_deg` about the camera's vertical axis."""
    u = np.arange(CAMERA.width, dtype=float)
    x = (u - CAMERA.cx) / CAMERA.fx  # ray direction's x per unit z
    t = math.tan(math.radians(tilt_deg))
    # plane: z = distance + t * x_world  ->  along the ray (x z, z): z = distance / (1 - t x)
    row = distance / (1.0 - t * x)
    return np.tile(row, (CAMERA.height, 1))


def _published_sigma(z: float, theta: float) -> float:
    return 0.0012 + 0.0019 * (z - 0.4) ** 2 + 0.0001 / math.sqrt(z) * theta ** 2 / (math.pi / 2 - theta) ** 2


@pytest.mark.parametrize("distance", [1.0, 2.0, 3.5])
def test_the_spread_on_a_wall_faced_square_on_is_the_published_one(distance: float) -> None:
    depth = _wall(distance)
    noisy = DepthNoise().apply(depth, CAMERA, np.random.default_rng(0))
    middle = noisy[20:-20, 20:-20]
    assert np.isfinite(middle).all()
    measured = float(np.std(middle - depth[20:-20, 20:-20]))
    assert measured == pytest.approx(_published_sigma(distance, 0.0), rel=0.1)


def test_the_spread_grows_toward_grazing_and_a_grazing_surface_is_lost() -> None:
    rng = np.random.default_rng(1)
    square = np.nanstd(DepthNoise().apply(_wall(1.5), CAMERA, rng) - _wall(1.5))
    slanted_depth = _wall(1.5, 60.0)
    slanted = DepthNoise().apply(slanted_depth, CAMERA, rng)
    # the lateral shift reads a neighbour's depth too, which on a slanted wall differs
    assert np.nanstd(slanted[:, 60:100] - slanted_depth[:, 60:100]) > 2 * square
    # a wall turned 85 degrees: at the image's middle the ray meets it 85 degrees off its normal
    centre = slice(int(CAMERA.cx) - 2, int(CAMERA.cx) + 3)
    angle = incidence(_wall(1.5, 85.0), CAMERA)[10:-10, centre]
    assert np.all(angle > math.radians(82))
    assert np.isnan(DepthNoise().apply(_wall(1.5, 85.0), CAMERA, rng)[10:-10, centre]).all()


def test_the_far_side_of_a_depth_edge_and_what_was_never_seen_come_back_empty() -> None:
    depth = _wall(2.0)
    depth[:, 80:] = 1.0  # a box's edge at column 80, 1 m nearer
    depth[:5, :] = np.nan  # nothing seen at the top
    noisy = DepthNoise().apply(depth, CAMERA, np.random.default_rng(2))
    assert np.isnan(noisy[:5]).all()
    assert np.isnan(noisy[10:-10, 79]).mean() > 0.8  # the far pixel beside the edge
    assert np.isfinite(noisy[10:-10, 40:70]).all() and np.isfinite(noisy[10:-10, 90:150]).all()


def test_the_same_seed_gives_the_same_image() -> None:
    a = DepthNoise().apply(_wall(2.0), CAMERA, np.random.default_rng(3))
    b = DepthNoise().apply(_wall(2.0), CAMERA, np.random.default_rng(3))
    assert np.array_equal(a, b, equal_nan=True)
