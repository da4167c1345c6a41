"""Scene-graph boxes as VoxPoser observations: points on each face, rotated, NaN boxes dropped."""
from __future__ import annotations

import numpy as np

from conceptagent_ros.voxposer.api import VoxelGrid
from conceptagent_ros.voxposer.box_scene import ObjectBox, box_surface_points, snapshot_from_boxes

GRID = VoxelGrid((0.0, -0.5, 0.0), (1.0, 0.5, 1.0), 100)


def test_surface_points_cover_every_face_of_a_rotated_box():
    yaw = np.pi / 4
    box = ObjectBox("tray", (0.5, 0.0, 0.1), (0.2, 0.1, 0.02), (0.0, 0.0, np.sin(yaw / 2), np.cos(yaw / 2)))
    points = box_surface_points(box, 0.01)
    # back in the box's own frame every point lies on the surface, and each face is reached
    c, s = np.cos(-yaw), np.sin(-yaw)
    local = (points - box.centre) @ np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]]).T
    half = np.array(box.size) / 2
    assert np.all(np.abs(local) <= half + 1e-9)
    assert np.all(np.isclose(np.abs(local), half).any(axis=1))
    for axis in range(3):
        for sign in (-1, 1):
            assert np.any(np.isclose(local[:, axis], sign * half[axis]))
    gaps = np.linalg.norm(np.diff(np.unique(np.round(local[:, 0], 6))))
    assert gaps > 0 and np.max(np.diff(np.unique(np.round(local[:, 0], 6)))) <= 0.01 + 1e-9


def test_snapshot_from_boxes_detects_by_name_and_drops_non_finite_boxes():
    boxes = [ObjectBox("blue block", (0.6, 0.1, 0.02), (0.04, 0.04, 0.04)),
             ObjectBox("ghost", (float("nan"), 0.0, 0.0), (0.1, 0.1, 0.1))]
    snapshot = snapshot_from_boxes(boxes, GRID, (0.4, 0.0, 0.3), (1.0, 0.0, 0.0, 0.0), 0.0, (0.25, -0.35, 0.0),
                                   (0.75, 0.35, 0.0))
    assert snapshot.names() == ["blue block"]
    cloud = snapshot.objects[0]
    assert np.allclose(cloud.points.mean(axis=0), (0.6, 0.1, 0.02), atol=1e-6)
    assert np.allclose(cloud.normal, (0.0, 0.0, 1.0))
