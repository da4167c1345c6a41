"""From a mask and a depth image to a clean world-frame point cloud of one object, and its box.

Back-projection and voxel downsampling are NumPy (no per-pixel Python); DBSCAN, which keeps the
object's largest cluster and drops fragments of whatever lies behind the mask's edge, is open3d's.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from conceptagent_ros.perception.frames import Frame


@dataclass(frozen=True)
class GeometryConfig:
    stride: int = 2  # back-project every n-th pixel of a mask in each direction
    min_depth: float = 0.1
    max_depth: float = 8.0
    voxel: float = 0.02  # metres
    dbscan_eps: float = 0.06  # metres: points closer than this are one surface
    dbscan_min_points: int = 4
    min_points: int = 5  # fewer than this after filtering: not an object
    edge_erosion: int = 1  # pixels dropped along the mask's border, where depth mixes object and background
    # Masks smaller than this (pixels) are neither eroded nor strided: a knife seen from 2 m is a
    # few pixels wide, and losing its edges would lose it
    small_mask: int = 1500


DEFAULT_GEOMETRY = GeometryConfig()


@dataclass(frozen=True)
class OrientedBox:
    """Gravity-aligned box: objects rest on level surfaces, so only yaw is free."""

    center: tuple[float, float, float]
    extent: tuple[float, float, float]  # full lengths along the box's own x, y and the world z
    yaw: float

    @property
    def z_min(self) -> float:
        return self.center[2] - self.extent[2] / 2.0

    @property
    def z_max(self) -> float:
        return self.center[2] + self.extent[2] / 2.0

    def corners(self) -> np.ndarray:
        c, s = math.cos(self.yaw), math.sin(self.yaw)
        rot = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
        half = np.array(self.extent) / 2.0
        signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=float)
        return np.asarray(self.center) + (signs * half) @ rot.T

    def to_json(self) -> dict[str, Any]:
        return {"center": list(self.center), "extent": list(self.extent), "yaw": self.yaw}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> OrientedBox:
        return cls(tuple(data["center"]), tuple(data["extent"]), float(data["yaw"]))  # type: ignore[arg-type]


def erode(mask: np.ndarray, pixels: int) -> np.ndarray:
    """Binary erosion by a square of 2*pixels+1, by shifting (no SciPy needed on the robot)."""
    if pixels <= 0:
        return mask
    out = mask.copy()
    for _ in range(pixels):
        inner = out.copy()
        inner[1:, :] &= out[:-1, :]
        inner[:-1, :] &= out[1:, :]
        inner[:, 1:] &= out[:, :-1]
        inner[:, :-1] &= out[:, 1:]
        out = inner
    return out


def backproject(frame: Frame, mask: np.ndarray, config: GeometryConfig = GeometryConfig()) -> np.ndarray:
    """World-frame points (N x 3, float64) of a mask's pixels with a valid depth, the mask eroded by
    `edge_erosion` first. NaN, infinite, zero and out-of-range depths are dropped; an empty mask
    gives no points."""
    if mask.shape != frame.depth.shape:
        raise ValueError(f"mask is {mask.shape[1]}x{mask.shape[0]}, depth is {frame.depth.shape[1]}x{frame.depth.shape[0]}")
    rows, cols = _mask_bounds(mask)
    if rows is None or cols is None:
        return np.empty((0, 3))
    # Work on the mask's bounding window only: 20 masks of a 640x480 frame cost what their boxes do.
    h, w = mask.shape
    small = int(np.count_nonzero(mask[rows[0]:rows[1], cols[0]:cols[1]])) < config.small_mask
    s = 1 if small else max(1, config.stride)
    e = 0 if small else max(0, config.edge_erosion)
    rows = (max(0, rows[0] - e), min(h, rows[1] + e))  # a margin, so the window's edge erodes like the mask's
    cols = (max(0, cols[0] - e), min(w, cols[1] + e))
    window = erode(mask[rows[0]:rows[1], cols[0]:cols[1]], e)
    sub_mask = window[::s, ::s]
    sub_depth = frame.depth[rows[0]:rows[1]:s, cols[0]:cols[1]:s]
    with np.errstate(invalid="ignore"):
        valid = sub_mask & np.isfinite(sub_depth) & (sub_depth > config.min_depth) & (sub_depth < config.max_depth)
    v, u = np.nonzero(valid)
    if v.size == 0:
        return np.empty((0, 3))
    z = sub_depth[v, u].astype(np.float64)
    u_px = cols[0] + u * s
    v_px = rows[0] + v * s
    k = frame.intrinsics
    cam = np.stack([(u_px - k.cx) * z / k.fx, (v_px - k.cy) * z / k.fy, z], axis=1)
    pose = frame.world_T_camera
    return cam @ pose[:3, :3].T + pose[:3, 3]


def _mask_bounds(mask: np.ndarray) -> tuple[tuple[int, int] | None, tuple[int, int] | None]:
    rows_any = np.flatnonzero(mask.any(axis=1))
    if rows_any.size == 0:
        return None, None
    cols_any = np.flatnonzero(mask.any(axis=0))
    return (int(rows_any[0]), int(rows_any[-1]) + 1), (int(cols_any[0]), int(cols_any[-1]) + 1)


def voxel_downsample(points: np.ndarray, voxel: float) -> np.ndarray:
    """One point per occupied voxel (the mean of the points in it)."""
    if points.shape[0] == 0 or voxel <= 0:
        return points
    _, inverse, counts = np.unique(voxel_keys(points, voxel), return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    sums = np.stack([np.bincount(inverse, weights=points[:, i], minlength=counts.size) for i in range(3)], axis=1)
    return sums / counts[:, None]


_KEY_BITS = 21  # 2^21 voxels a side: 40 km at 2 cm
_KEY_OFFSET = 1 << (_KEY_BITS - 1)


def voxel_keys(points: np.ndarray, voxel: float) -> np.ndarray:
    """One int64 per point naming its voxel (three 21-bit indices packed), for fast set operations."""
    idx = np.floor(points / voxel).astype(np.int64) + _KEY_OFFSET
    idx &= (1 << _KEY_BITS) - 1
    return (idx[:, 0] << (2 * _KEY_BITS)) | (idx[:, 1] << _KEY_BITS) | idx[:, 2]


def largest_cluster(points: np.ndarray, eps: float, min_points: int, coarse_above: int = 600) -> np.ndarray:
    """The biggest DBSCAN cluster (open3d; a grid clustering above `coarse_above` points): a mask's
    edge catches bits of the wall or table behind the object, which lie apart from it in depth."""
    if points.shape[0] < max(min_points, 2):
        return points
    import open3d as o3d  # heavy; only perception needs it

    if points.shape[0] > coarse_above:
        labels = _grid_components(points, eps)
    else:
        cloud = o3d.geometry.PointCloud(o3d.utility.Vector3dVector(points))
        labels = np.asarray(cloud.cluster_dbscan(eps=eps, min_points=min_points, print_progress=False))
    kept = labels[labels >= 0]
    if kept.size == 0:
        return points[:0]
    best = np.bincount(kept).argmax()
    return points[labels == best]


def _grid_components(points: np.ndarray, eps: float) -> np.ndarray:
    """Connected components of the occupied cells of a grid of eps/2 (26-neighbourhood): for a big
    cloud (a table top, thousands of points) what DBSCAN finds, at a fraction of its cost. Points
    whose cells touch are one cluster; fragments more than about eps apart are not."""
    from scipy import ndimage

    cell = eps / 2.0
    idx = np.floor((points - points.min(axis=0)) / cell).astype(np.int64)
    shape = idx.max(axis=0) + 1
    if int(np.prod(shape)) > 8_000_000:  # a cloud spread over a whole room: fall back on DBSCAN's cost
        import open3d as o3d

        cloud = o3d.geometry.PointCloud(o3d.utility.Vector3dVector(points))
        return np.asarray(cloud.cluster_dbscan(eps=eps, min_points=1, print_progress=False))
    grid = np.zeros(tuple(int(v) for v in shape), dtype=bool)
    grid[idx[:, 0], idx[:, 1], idx[:, 2]] = True
    labelled, _ = ndimage.label(grid, structure=np.ones((3, 3, 3), dtype=bool))
    return labelled[idx[:, 0], idx[:, 1], idx[:, 2]].astype(np.int64) - 1


_YAWS = np.radians(np.arange(0.0, 90.0, 5.0))  # a box turned a quarter turn is the same box


def gravity_aligned_box(points: np.ndarray) -> OrientedBox:
    """The smallest-footprint box around points whose yaw is one of every 5 degrees (a square
    thing's outline, or an L-shaped partial view, fools a principal-axis fit)."""
    if points.shape[0] == 0:
        raise ValueError("no points to box")
    xy = points[:, :2]
    mean_xy = xy.mean(axis=0)
    centred = xy - mean_xy
    c, s = np.cos(_YAWS), np.sin(_YAWS)
    # coordinates along each candidate's x and y axes: N x K
    u = centred[:, :1] * c + centred[:, 1:] * s
    v = -centred[:, :1] * s + centred[:, 1:] * c
    u_lo, u_hi, v_lo, v_hi = u.min(axis=0), u.max(axis=0), v.min(axis=0), v.max(axis=0)
    area = (u_hi - u_lo) * (v_hi - v_lo)
    k = int(np.argmin(area + 1e-9 * np.arange(area.size)))  # ties: the smallest yaw
    yaw = float(_YAWS[k])
    mid_u, mid_v = (u_lo[k] + u_hi[k]) / 2.0, (v_lo[k] + v_hi[k]) / 2.0
    center_xy = mean_xy + np.array([c[k] * mid_u - s[k] * mid_v, s[k] * mid_u + c[k] * mid_v])
    z_lo, z_hi = float(points[:, 2].min()), float(points[:, 2].max())
    return OrientedBox((float(center_xy[0]), float(center_xy[1]), (z_lo + z_hi) / 2.0),
                       (float(u_hi[k] - u_lo[k]), float(v_hi[k] - v_lo[k]), z_hi - z_lo), yaw)


def object_points(frame: Frame, mask: np.ndarray, config: GeometryConfig = GeometryConfig()) -> np.ndarray:
    """The whole geometry step for one mask: erode, back-project, downsample, keep the main cluster.
    Returns no points when too few survive (a sliver of mask, a mask on missing depth)."""
    points = backproject(frame, mask, config)
    if points.shape[0] == 0:
        return points
    points = voxel_downsample(points, config.voxel)
    points = largest_cluster(points, config.dbscan_eps, config.dbscan_min_points)
    return points if points.shape[0] >= config.min_points else points[:0]


# with noisy depth: a thing's points are its mask's largest cluster (points this far apart join)
NOISY_CLUSTER_EPS = 0.02
MIN_INNER_PIXELS = 10  # a mask eroded to fewer pixels than this is kept whole


def noisy_mask_points(points: np.ndarray, mask: np.ndarray, item: bool) -> np.ndarray:
    """The points of a thing's pixels as a real depth camera gives them: its mask less the ring at
    its outline (a noisy image's mask edges carry flying pixels, half on what lies behind) where
    MIN_INNER_PIXELS stay, and for a small thing (`item`) the largest cluster of what is left. The
    household's mast camera and the tabletop's cameras see so with realistic sensing. A small thing
    seen in fewer than MIN_INNER_PIXELS pixels gives nothing: so few noisy pixels are no cluster, and
    one of them flying 2 m down its ray made a held thing "1.7 m across"."""
    if item and int(mask.sum()) < MIN_INNER_PIXELS:
        return np.zeros((0, points.shape[-1]))
    inner = erode(mask, 1)
    chosen = points[inner if inner.sum() >= MIN_INNER_PIXELS else mask]
    return largest_cluster(chosen, NOISY_CLUSTER_EPS, 5) if item else chosen
