"""Mask + depth -> world points, by hand-computed pinhole geometry; and what bad depth does."""
from __future__ import annotations

import math

import numpy as np
import pytest

from conceptagent_ros.perception.frames import Frame, Intrinsics, look_at, pose_from_quaternion
from conceptagent_ros.perception.geometry import (
    GeometryConfig,
    backproject,
    gravity_aligned_box,
    largest_cluster,
    noisy_mask_points,
    object_points,
    voxel_downsample,
)

K = Intrinsics(width=64, height=48, fx=50.0, fy=50.0, cx=31.5, cy=23.5)


def frame(depth: np.ndarray, pose: np.ndarray | None = None) -> Frame:
    return Frame(rgb=np.zeros((48, 64, 3), np.uint8), depth=depth.astype(np.float32), intrinsics=K,
                 world_T_camera=np.eye(4) if pose is None else pose)


def test_each_pixel_lands_where_the_pinhole_model_puts_it() -> None:
    depth = np.full((48, 64), 2.0)
    mask = np.zeros((48, 64), bool)
    mask[10, 40] = True
    pts = backproject(frame(depth), mask, GeometryConfig(stride=1, edge_erosion=0))
    assert pts.shape == (1, 3)
    np.testing.assert_allclose(pts[0], [(40 - 31.5) * 2.0 / 50.0, (10 - 23.5) * 2.0 / 50.0, 2.0])


def test_camera_pose_moves_points_into_the_world_frame() -> None:
    # A camera 1 m up at x=3 looking along +x: a pixel at the image centre at depth 2 is 2 m ahead
    pose = look_at((3.0, 0.0, 1.0), (4.0, 0.0, 1.0))
    depth = np.full((48, 64), 2.0)
    mask = np.zeros((48, 64), bool)
    mask[23:25, 31:33] = True
    pts = backproject(frame(depth, pose), mask, GeometryConfig(stride=1, edge_erosion=0))
    np.testing.assert_allclose(pts.mean(axis=0), [5.0, 0.0, 1.0], atol=1e-9)


def test_quaternion_pose_is_a_rotation() -> None:
    pose = pose_from_quaternion((1.0, 2.0, 3.0), (0.0, 0.0, math.sin(math.pi / 4), math.cos(math.pi / 4)))
    np.testing.assert_allclose(pose[:3, :3] @ [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], atol=1e-12)
    with pytest.raises(ValueError):
        pose_from_quaternion((0, 0, 0), (0.0, 0.0, 0.0, 0.0))


@pytest.mark.parametrize("bad", [np.nan, np.inf, 0.0, -1.0, 50.0])
def test_invalid_depth_is_dropped(bad: float) -> None:
    depth = np.full((48, 64), 2.0)
    depth[:, :32] = bad
    mask = np.ones((48, 64), bool)
    pts = backproject(frame(depth), mask, GeometryConfig(stride=1, edge_erosion=0))
    assert pts.shape[0] == 48 * 32
    assert np.all(np.isfinite(pts))


def test_all_nan_depth_and_empty_masks_give_no_points() -> None:
    nan_frame = frame(np.full((48, 64), np.nan))
    assert object_points(nan_frame, np.ones((48, 64), bool)).shape == (0, 3)
    assert object_points(frame(np.full((48, 64), 2.0)), np.zeros((48, 64), bool)).shape == (0, 3)


def test_mask_of_the_wrong_size_is_refused() -> None:
    with pytest.raises(ValueError, match="mask is"):
        backproject(frame(np.full((48, 64), 2.0)), np.ones((10, 10), bool))


def test_voxel_downsample_keeps_one_mean_point_per_voxel() -> None:
    pts = np.array([[0.001, 0.001, 0.001], [0.009, 0.009, 0.009], [0.5, 0.5, 0.5]])
    out = voxel_downsample(pts, 0.02)
    assert out.shape == (2, 3)
    assert any(np.allclose(p, [0.005, 0.005, 0.005]) for p in out)


def test_dbscan_keeps_the_object_and_drops_a_fragment_behind_it() -> None:
    rng = np.random.default_rng(0)
    obj = rng.normal([0, 0, 1], 0.01, (200, 3))
    fragment = rng.normal([0, 0, 2.5], 0.01, (20, 3))
    kept = largest_cluster(np.concatenate([obj, fragment]), eps=0.05, min_points=4)
    assert kept.shape[0] == 200 and kept[:, 2].max() < 1.5


def test_gravity_aligned_box_finds_the_yaw_of_a_long_thing() -> None:
    t = np.linspace(-0.5, 0.5, 200)
    yaw = math.radians(30)
    pts = np.stack([t * math.cos(yaw), t * math.sin(yaw), np.zeros_like(t)], axis=1)
    pts = np.concatenate([pts, pts + [0, 0, 0.1]])
    box = gravity_aligned_box(pts)
    assert math.isclose(box.yaw, yaw, abs_tol=1e-6)
    assert math.isclose(box.extent[0], 1.0, abs_tol=1e-6) and box.extent[1] < 1e-6
    assert math.isclose(box.extent[2], 0.1, abs_tol=1e-9)


def test_frame_checks_its_parts() -> None:
    with pytest.raises(ValueError, match="intrinsics"):
        Frame(np.zeros((10, 10, 3), np.uint8), np.zeros((10, 10), np.float32), K, np.eye(4))
    with pytest.raises(ValueError, match="pose"):
        Frame(np.zeros((48, 64, 3), np.uint8), np.zeros((48, 64), np.float32), K, np.full((4, 4), np.nan))


def _image_points(mask: np.ndarray, flying: tuple[int, int]) -> np.ndarray:
    """An image's world points: a flat thing 1 m away where `mask` is set, 1 mm apart, but for one
    pixel of its outline whose depth flew 2 m on down its ray."""
    rows, cols = np.indices(mask.shape)
    points = np.stack([cols * 0.001, rows * 0.001, np.ones(mask.shape)], axis=-1)
    points[flying] = points[flying] * 3.0
    return points


def test_a_noisy_masks_flying_outline_pixel_is_no_part_of_a_small_thing() -> None:
    mask = np.zeros((20, 20), bool)
    mask[5:13, 5:13] = True
    points = _image_points(mask, (5, 9))
    seen = noisy_mask_points(points, mask, item=True)
    assert len(seen) == 36  # the 6 x 6 inside of the 8 x 8 mask
    assert np.ptp(seen[:, 2]) == 0.0 and seen[:, 0].max() < 0.013


def test_a_small_thing_in_a_handful_of_noisy_pixels_gives_no_points() -> None:
    # a held thing behind the fingers, in 3 pixels of one camera: one flew 2 m, and a cluster of
    # three noisy points says nothing of where the thing is
    mask = np.zeros((20, 20), bool)
    mask[5, 5:8] = True
    points = _image_points(mask, (5, 6))
    assert len(noisy_mask_points(points, mask, item=True)) == 0
    assert len(noisy_mask_points(points, mask, item=False)) == 3  # furniture's few pixels are kept as they are
