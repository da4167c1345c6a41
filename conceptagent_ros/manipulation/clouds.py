"""Point-cloud steps the planners share: cleaning what a depth camera gives, surface normals and
plane fits through open3d, cropping and thinning the surroundings."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from conceptagent_ros.manipulation.failures import ManipulationError

MIN_OBJECT_POINTS = 10


def clean(points: object, what: str = "object", required: bool = True) -> np.ndarray:
    """(N, 3) float64 without NaN or infinite rows. An unusable object cloud is EMPTY_CLOUD; the
    surroundings (`required=False`) may be empty."""
    array = np.asarray(points, dtype=float) if points is not None else np.zeros((0, 3))
    if array.size == 0:
        array = np.zeros((0, 3))
    if array.ndim != 2 or array.shape[1] != 3:
        raise ManipulationError("EMPTY_CLOUD", f"the {what} cloud must be N x 3 points, got shape {array.shape}")
    finite = array[np.isfinite(array).all(axis=1)]
    if required and len(finite) < MIN_OBJECT_POINTS:
        dropped = len(array) - len(finite)
        raise ManipulationError("EMPTY_CLOUD", f"the {what} cloud has {len(finite)} usable points "
                                               f"({dropped} NaN or infinite dropped); at least {MIN_OBJECT_POINTS} needed")
    return finite


def voxel_thin(points: np.ndarray, voxel: float) -> np.ndarray:
    """One point per occupied voxel (its first), for the collision checks: they need coverage, not density."""
    if len(points) == 0 or voxel <= 0:
        return points
    keys = np.floor(points / voxel).astype(np.int64)
    _, first = np.unique(keys, axis=0, return_index=True)
    return points[np.sort(first)]


def near(points: np.ndarray, centre: np.ndarray, radius: float) -> np.ndarray:
    if len(points) == 0:
        return points
    return points[np.linalg.norm(points - centre, axis=1) <= radius]


def outward_normals(points: np.ndarray, neighbours: int = 16) -> np.ndarray:
    """Unit surface normals (open3d, from each point's nearest neighbours), turned to face away from
    the cloud's centre: a seen surface's normal points toward free space."""
    import open3d as o3d

    cloud = o3d.geometry.PointCloud(o3d.utility.Vector3dVector(points))
    cloud.estimate_normals(o3d.geometry.KDTreeSearchParamKNN(knn=min(neighbours, max(3, len(points) - 1))))
    normals = np.asarray(cloud.normals)
    outward = points - points.mean(axis=0)
    flip = np.einsum("ij,ij->i", normals, outward) < 0
    normals[flip] *= -1
    return normals


def _ransac_plane(o3d: Any, points: np.ndarray, threshold: float) -> tuple[np.ndarray, list[int]]:
    """open3d's RANSAC plane, repeatable: seeded, and on one thread. Open3D 0.20 runs its iterations
    on every core and, seed or not, which of several equally good planes wins depends on which
    thread finishes first: the same points gave one of three planes from call to call, and a body's
    run in a house could not be repeated (a door's front 1e-5 rad off became an open door or a
    refused one)."""
    threads = o3d.utility.get_max_threads()
    o3d.utility.set_max_threads(1)
    try:
        o3d.utility.random.seed(0)
        cloud = o3d.geometry.PointCloud(o3d.utility.Vector3dVector(points))
        model, index = cloud.segment_plane(threshold, 3, 200)
    finally:
        o3d.utility.set_max_threads(threads)
    return np.asarray(model), list(index)


@dataclass(frozen=True)
class Plane:
    normal: np.ndarray  # unit, pointing up (toward +z where it has any z)
    offset: float  # normal . p + offset = 0 on the plane
    inliers: np.ndarray  # the points on it

    def height(self, points: np.ndarray) -> np.ndarray:
        """Signed distance of each point above the plane."""
        return points @ self.normal + self.offset


def fit_plane(points: np.ndarray, threshold: float = 0.005, min_inliers: int = 20,
              max_tilt_deg: float | None = None, tries: int = 4) -> Plane | None:
    """The largest plane through `points` (open3d RANSAC, seeded); None if there is none of
    `min_inliers` points, or (with max_tilt_deg) none within that angle of horizontal among the
    `tries` largest."""
    import open3d as o3d

    if len(points) < max(3, min_inliers):
        return None
    remaining = points
    for _ in range(tries):  # a wall can outnumber the floor: look past tilted planes a few times
        if len(remaining) < max(3, min_inliers):
            return None
        model, index = _ransac_plane(o3d, remaining, threshold)
        if len(index) < min_inliers:
            return None
        normal = np.asarray(model[:3], dtype=float)
        scale = float(np.linalg.norm(normal))
        normal, offset = normal / scale, float(model[3]) / scale
        if normal[2] < 0:
            normal, offset = -normal, -offset
        tilt = float(np.degrees(np.arccos(np.clip(normal[2], -1.0, 1.0))))
        inliers = remaining[np.asarray(index)]
        if max_tilt_deg is None or tilt <= max_tilt_deg:
            return Plane(normal, offset, inliers)
        keep = np.ones(len(remaining), dtype=bool)
        keep[np.asarray(index)] = False
        remaining = remaining[keep]
    return None
