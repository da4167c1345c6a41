"""A VoxPoser observation from object boxes: how a real robot feeds `detect()` from a scene graph.

Perception (or any scene-graph source) reports each object as an oriented box. The map programs
want points, so each box becomes the points of its surface on a regular lattice (spacing about
one voxel), rotated by the box's orientation; the top face's normal is the object's normal.
No ROS here: ros/conversions/voxposer.py reads the SceneGraph message into `ObjectBox`es.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from conceptagent_ros.voxposer.api import ObjectCloud, SceneSnapshot, VoxelGrid


@dataclass(frozen=True)
class ObjectBox:
    name: str
    centre: tuple[float, float, float]  # world metres
    size: tuple[float, float, float]  # extents along the box's own axes, metres
    quaternion: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 1.0)  # x, y, z, w


def rotation_matrix(quaternion: tuple[float, float, float, float]) -> np.ndarray:
    x, y, z, w = np.asarray(quaternion, dtype=float) / (np.linalg.norm(quaternion) or 1.0)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def box_surface_points(box: ObjectBox, spacing: float) -> np.ndarray:
    """Points on the six faces of `box`, at most `spacing` apart (a flat box still gets its faces)."""
    half = np.maximum(np.asarray(box.size, dtype=float) / 2, 1e-4)
    axes = [np.linspace(-h, h, max(2, int(np.ceil(2 * h / spacing)) + 1)) for h in half]
    faces = []
    for axis in range(3):
        a, b = [axes[k] for k in range(3) if k != axis]
        aa, bb = np.meshgrid(a, b, indexing="ij")
        for sign in (-1.0, 1.0):
            face = np.empty((aa.size, 3))
            face[:, axis] = sign * half[axis]
            face[:, [k for k in range(3) if k != axis]] = np.stack([aa.ravel(), bb.ravel()], axis=1)
            faces.append(face)
    local = np.concatenate(faces)
    return local @ rotation_matrix(box.quaternion).T + np.asarray(box.centre, dtype=float)


def snapshot_from_boxes(boxes: list[ObjectBox], grid: VoxelGrid, ee_position: tuple[float, float, float],
                        ee_quaternion: tuple[float, float, float, float], gripper_closed: float,
                        table_lower: tuple[float, float, float], table_upper: tuple[float, float, float]) -> SceneSnapshot:
    """Boxes whose centre is not finite are left out (a perception glitch must not poison the maps)."""
    spacing = float(np.min(grid.resolution))
    objects = []
    for box in boxes:
        if not (np.all(np.isfinite(box.centre)) and np.all(np.isfinite(box.size)) and np.all(np.isfinite(box.quaternion))):
            continue
        up = rotation_matrix(box.quaternion) @ np.array([0.0, 0.0, 1.0])
        normal = tuple(float(v) for v in (up if up[2] >= 0 else -up))
        objects.append(ObjectCloud(box.name, box_surface_points(box, spacing), normal))  # type: ignore[arg-type]
    return SceneSnapshot(grid, tuple(sorted(objects, key=lambda o: o.name)), ee_position, ee_quaternion,
                         float(gripper_closed >= 0.5), table_lower, table_upper)
