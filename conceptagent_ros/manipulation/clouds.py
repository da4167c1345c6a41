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


def robust_sigma(values: np.ndarray) -> float:
    """A robust standard deviation: 1.4826 times the median absolute deviation from the median (the
    standard deviation of normally scattered values, grains far off it aside)."""
    return float(1.4826 * np.median(np.abs(values - np.median(values))))


def _ring_below(thing: np.ndarray, around: np.ndarray, ring: float) -> np.ndarray:
    """The points `around` within `ring` of `thing`'s footprint's box and no higher than its lowest
    point (plus 5 mm): what it rests on, and past a table's edge the floor."""
    lo, hi = thing[:, :2].min(axis=0) - ring, thing[:, :2].max(axis=0) + ring
    lowest = float(np.nanmin(thing[:, 2]))
    inside = np.all((around[:, :2] >= lo) & (around[:, :2] <= hi), axis=1) & (around[:, 2] <= lowest + 0.005)
    return around[inside]


def support_height(thing: np.ndarray, around: np.ndarray, ring: float = 0.06, min_points: int = 20) -> float | None:
    """The top of what `thing` rests on, from the points `around` it: those within `ring` of its
    footprint's box and no higher than its lowest point, at their 90th percentile in height (the
    surface's top, not the floor past a table's edge); None where fewer than `min_points` are
    there. A thin thing seen from above shows its top alone, so its own lowest point is its top:
    a hand kept above that cannot take a remote off a table."""
    if not len(thing) or not len(around):
        return None
    below = _ring_below(thing, around, ring)
    if len(below) < min_points:
        return None
    return min(float(np.nanmin(thing[:, 2])), float(np.percentile(below[:, 2], 90)))


SURFACE_WINDOW = 0.02  # metres below a support's top within which its own points lie (the floor is far lower)


def support_spread(thing: np.ndarray, around: np.ndarray, support_z: float, ring: float = 0.06,
                   min_points: int = 20) -> float:
    """How far depth noise scatters the support's points round `thing` (metres, a robust standard
    deviation, robust_sigma); 0 where too few are seen."""
    if not len(thing) or not len(around):
        return 0.0
    below = _ring_below(thing, around, ring)
    z = below[below[:, 2] >= support_z - SURFACE_WINDOW, 2]
    if len(z) < min_points:
        return 0.0
    return robust_sigma(z)


NOISE_SIGMAS = 2.0  # the top's points scatter this many standard deviations of depth noise down


def with_sides_to_support(thing: np.ndarray, support_z: float, spacing: float = 0.004, seen_within: float = 0.01,
                          noise: float = 0.0) -> np.ndarray:
    """`thing` with walls from the outline of its footprint (its convex hull seen from above) down
    to `support_z`, where its own points leave its sides unseen: a camera above a remote or a book
    lying flat sees its top alone, and a top without sides gives the fingers nothing to close on;
    cameras above a table see a plate's 1-2 cm sides at a grazing angle, in a few points whose
    normals give no two contacts that face each other. A thing resting on a support stands on its
    footprint, so its sides go down to the support. A stretch of the outline with points of the
    thing's lower half within `seen_within` of it was seen, and gets no wall. With depth `noise` (a
    standard deviation, metres) the lower half is taken NOISE_SIGMAS of it lower: the top's own
    points scatter down into it at a plate's edge, and a plate 12 mm thick under 3 mm of noise has
    no side seen apart from its top, so it gets its walls all round."""
    from scipy.spatial import ConvexHull, QhullError, cKDTree

    if len(thing) < 3:
        return thing
    top = float(np.nanmax(thing[:, 2]))
    height = top - support_z
    if height < 0.005:
        return thing
    xy = thing[:, :2]
    low = xy[thing[:, 2] <= support_z + 0.5 * height - NOISE_SIGMAS * noise]  # its lower half, where it was seen
    try:
        hull = xy[ConvexHull(xy).vertices]
    except QhullError:  # a line of points: no footprint to stand on
        return thing
    walls = []
    footprint, lower = cKDTree(xy), cKDTree(low) if len(low) else None
    for a, b in zip(hull, np.roll(hull, -1, axis=0)):
        steps = max(1, int(np.ceil(np.linalg.norm(b - a) / spacing)))
        along = a + (b - a) * (np.arange(steps) / steps)[:, None]
        if lower is not None:
            along = along[lower.query(along)[0] > seen_within]
        if not len(along):
            continue
        # each wall point up to the height of the thing's points nearest it
        nearest = footprint.query(along)[1]
        for point, up_to in zip(along, thing[nearest, 2]):
            zs = np.arange(support_z + spacing / 2, up_to, spacing)
            walls.append(np.column_stack([np.repeat(point[None, :], len(zs), axis=0), zs]))
    return np.concatenate([thing, *walls]) if walls else thing


def as_resting(thing: np.ndarray, around: np.ndarray) -> tuple[np.ndarray, float | None]:
    """A thing's points for a grasp, as it rests on what it stands on: the support's height (the
    surface seen round it, else no lower than its lowest point seen) and its points with the sides
    it hides filled down to that (with_sides_to_support). Every pick plans on this (the bodies'
    arm skills, the grasp bench)."""
    if not len(thing):
        return thing, None
    support = support_height(thing, around)
    if support is None:
        lowest = float(np.nanmin(thing[:, 2]))
        return with_sides_to_support(thing, lowest), lowest
    return with_sides_to_support(thing, support, noise=support_spread(thing, around, support)), support
