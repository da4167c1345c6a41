"""Greedy value-map path planners: the reference (VoxPoser's public implementation) and a fast one.

Both descend the cost map  normalize(2 * normalize(EDT(not target)) + 1 * normalize(gaussian(avoid)))
from the start voxel: at each step the cheapest of the 124 voxels within two voxels, the voxel left
behind made dearer by one so that the descent does not come back, stopping when no neighbour is
cheaper than the current voxel plus a threshold. Then the path is smoothed (Savitzky-Golay), cut at
a sharp bend, thinned, and ended on a target voxel.

The reference computes the whole 100^3 distance transform and Gaussian filter every replan (~0.15 s
here). The fast planner computes what the descent reads:
- distances to the target set (all pairs for a small target, else a k-d tree over its boundary
  voxels), only in the blocks of 6^3 voxels the descent looks into, kept for the rest of the
  descent; the normaliser (the largest distance in the grid) from a coarse sweep refined around
  its best cells;
- the Gaussian filter as three 1-D passes of scipy's own kernel (mode 'reflect', built once as a
  matrix), the first two over the avoidance map's support only, once per run of equal z-slices
  (a half-space is one slice), the third only where read;
- the overall normaliser from the same sweep;
- the descent itself on flat indices away from the grid's edges, each step reading one
  neighbourhood (the stop check's is the next step's).
Its paths end on the same voxel as the reference's, within 5% of its path cost (tested).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

import numpy as np
from scipy.ndimage import distance_transform_edt, gaussian_filter, gaussian_filter1d
from scipy.signal import savgol_filter
from scipy.spatial import cKDTree
from scipy.spatial.distance import cdist


@dataclass(frozen=True)
class PlannerConfig:
    """VoxPoser's planner settings (its configs/*.yaml)."""

    target_weight: float = 2.0
    obstacle_weight: float = 1.0
    obstacle_sigma: float = 10.0
    stop_threshold: float = 0.001
    max_steps: int = 300
    savgol_window: int = 20
    savgol_polyorder: int = 3
    max_curvature: float = 3.0
    target_spacing: int = 1
    pushing_skip_per_k: int = 5


@dataclass
class PlannedPath:
    raw: np.ndarray  # (n, 3) voxels visited by the descent
    path: np.ndarray  # (m, 3) smoothed, thinned, ending on a target
    seconds: float = 0.0


class PathPlanner(Protocol):
    def optimize(self, start: np.ndarray, target_map: np.ndarray, obstacle_map: np.ndarray,
                 object_centric: bool = False) -> PlannedPath: ...


def normalize_map(values: np.ndarray) -> np.ndarray:
    span = values.max() - values.min()
    return values if span == 0 else (values - values.min()) / span


def neighbour_offsets(size: int, object_centric: bool) -> np.ndarray:
    """The search neighbourhood, sorted lexicographically (the order np.unique gives the reference)."""
    half = int(2 * size / 100)
    r = np.arange(-half, half + 1)
    zs = np.array([0]) if object_centric else r
    grid = np.array(np.meshgrid(r, r, zs, indexing="ij")).reshape(3, -1).T
    grid = grid[np.any(grid != 0, axis=1)]
    return grid[np.lexsort(grid.T[::-1])]


def curvature(path: np.ndarray) -> np.ndarray:
    d1 = np.gradient(path, axis=0)
    d2 = np.gradient(d1, axis=0)
    cross = np.cross(d1, d2)
    with np.errstate(divide="ignore", invalid="ignore"):
        k = np.linalg.norm(cross, axis=1) / np.power(np.sum(d1 * d1, axis=1), 1.5)
    return np.nan_to_num(k)


def postprocess(raw: np.ndarray, targets: np.ndarray, size: int, config: PlannerConfig, object_centric: bool) -> np.ndarray:
    """Smooth, cut at a sharp bend, thin and end on the nearest target voxel (VoxPoser's steps)."""
    path = raw.astype(float)
    window = min(len(path), config.savgol_window)
    if window > 1:
        path = savgol_filter(path, window, min(config.savgol_polyorder, window - 1), axis=0)
    k = curvature(path)
    if len(k) > 5:
        sharp = np.where(k[5:] > config.max_curvature)[0]
        if len(sharp):
            path = path[: max(2, int(0.9 * (sharp[0] + 5)))]
    inner = path[1:-1]
    if len(inner) > 1:
        steps = np.linalg.norm(inner[1:] - inner[:-1], axis=1)
        spacing = int(config.target_spacing * size / 100)
        if steps.sum() > spacing and steps.mean() > 0:
            skip = int(np.round(spacing / steps.mean()))
            if skip > 1:
                inner = inner[::skip]
    path = np.concatenate([path[:1], inner, path[-1:]])
    last = np.clip(path[-1].round(), 0, size - 1).astype(int)
    if len(targets) and not np.any(np.all(targets == last, axis=1)):
        closest = targets[np.argmin(np.linalg.norm(targets - last, axis=1))].astype(float)
        if object_centric:
            closest[2] = last[2]
        path = np.vstack([path, closest])
    if object_centric:
        step = config.pushing_skip_per_k
        path = np.concatenate([path[step:-1:step], path[-1:]])
    return np.clip(path, 0, size - 1)


def target_voxels(target_map: np.ndarray) -> np.ndarray:
    return np.argwhere(target_map == 1)


class ReferencePlanner:
    """VoxPoser's PathPlanner.optimize: full distance transform and Gaussian filter per call."""

    def __init__(self, config: PlannerConfig | None = None) -> None:
        self.config = config or PlannerConfig()

    def costmap(self, target_map: np.ndarray, obstacle_map: np.ndarray) -> np.ndarray:
        c = self.config
        target_cost = normalize_map(distance_transform_edt(1 - target_map))
        obstacle_cost = normalize_map(gaussian_filter(obstacle_map.astype(float), sigma=c.obstacle_sigma))
        return normalize_map(target_cost * c.target_weight + obstacle_cost * c.obstacle_weight)

    def optimize(self, start: np.ndarray, target_map: np.ndarray, obstacle_map: np.ndarray,
                 object_centric: bool = False) -> PlannedPath:
        size = target_map.shape[0]
        cost = self.costmap(target_map, obstacle_map)
        offsets = neighbour_offsets(size, object_centric)
        stop_offsets = neighbour_offsets(size, False)
        current = np.asarray(start).round().astype(int)
        path = [current]
        for _ in range(self.config.max_steps):
            near = np.unique(np.clip(current + offsets, 0, size - 1), axis=0)
            nxt = near[np.argmin(cost[near[:, 0], near[:, 1], near[:, 2]])]
            cost[current[0], current[1], current[2]] += 1
            path.append(nxt)
            current = nxt
            around = np.unique(np.clip(current + stop_offsets, 0, size - 1), axis=0)
            here = cost[current[0], current[1], current[2]]
            if not np.any(cost[around[:, 0], around[:, 1], around[:, 2]] < here + self.config.stop_threshold):
                break
        raw = np.array(path)
        return PlannedPath(raw, postprocess(raw, target_voxels(target_map), size, self.config, object_centric))


@lru_cache(maxsize=8)
def gaussian_matrix(size: int, sigma: float) -> np.ndarray:
    """scipy's 1-D Gaussian filter (mode 'reflect', truncate 4) as a matrix: row i = output voxel i."""
    return gaussian_filter1d(np.eye(size), sigma, axis=0)


class _LazyObstacleCost:
    """The normalised Gaussian-filtered avoidance map, evaluated only at the voxels asked for."""

    def __init__(self, obstacle_map: np.ndarray, sigma: float) -> None:
        size = obstacle_map.shape[0]
        occupied = obstacle_map != 0
        columns = occupied.any(axis=2)  # one pass over the grid; the z span from the support's box only
        xs, ys = np.flatnonzero(columns.any(axis=1)), np.flatnonzero(columns.any(axis=0))
        self.empty = len(xs) == 0
        if self.empty:
            return
        zs = np.flatnonzero(occupied[xs[0]:xs[-1] + 1, ys[0]:ys[-1] + 1].any(axis=(0, 1)))
        lo = [int(xs[0]), int(ys[0]), int(zs[0])]
        hi = [int(xs[-1]) + 1, int(ys[-1]) + 1, int(zs[-1]) + 1]
        k = gaussian_matrix(size, sigma)
        sub = obstacle_map[lo[0]:hi[0], lo[1]:hi[1], lo[2]:hi[2]]
        # Runs of equal z-slices share their x-y filtering: a half-space ("not left of the block")
        # is one slice repeated, so its cost is that of a 2-D filter instead of a full 100^3 one.
        changes = np.flatnonzero(np.any(sub[:, :, 1:] != sub[:, :, :-1], axis=(0, 1))) + 1
        starts = np.concatenate([[0], changes])
        slices = sub[:, :, starts].astype(float)  # (s0, s1, runs)
        a = np.tensordot(k[:, lo[0]:hi[0]], slices, axes=(1, 0))  # (size, s1, runs)
        self.b = np.einsum("jm,imk->ijk", k[:, lo[1]:hi[1]], a, optimize=True)  # (size, size, runs)
        self.kz = np.ascontiguousarray(np.add.reduceat(k[:, lo[2]:hi[2]], starts, axis=1))  # (size, runs)
        # Max of a sum of equal Gaussians with non-negative weights lies inside the support's span
        # along z, so the third pass is needed there only; the minimum is at a corner of the box.
        inside = self.b @ self.kz[lo[2]:hi[2]].T
        corners = np.array([[i, j, m] for i in (0, size - 1) for j in (0, size - 1) for m in (0, size - 1)])
        self.low = float(min(inside.min(), self.raw(corners).min()))
        self.high = float(inside.max())

    def raw(self, voxels: np.ndarray) -> np.ndarray:
        return np.einsum("nk,nk->n", self.b[voxels[:, 0], voxels[:, 1]], self.kz[voxels[:, 2]])

    def __call__(self, voxels: np.ndarray) -> np.ndarray:
        if self.empty:
            return np.zeros(len(voxels))
        values = self.raw(voxels)
        span = self.high - self.low
        return values if span == 0 else (values - self.low) / span


class _LazyTargetCost:
    """normalize(EDT(1 - target)) at the voxels asked for, from a k-d tree over the target's boundary."""

    def __init__(self, target_map: np.ndarray, sweep: np.ndarray) -> None:
        is_target = target_map == 1
        size = target_map.shape[0]
        flat = np.flatnonzero(is_target)
        self.is_target = is_target
        self.targets = np.stack(np.unravel_index(flat, is_target.shape), axis=1) if len(flat) else np.zeros((0, 3), int)
        boundary = np.zeros((0, 3), int)
        if len(flat):
            # boundary voxels within the targets' bounding box (padded by one so edges count)
            lo = np.maximum(self.targets.min(axis=0) - 1, 0)
            hi = np.minimum(self.targets.max(axis=0) + 2, size)
            box = np.zeros(tuple(hi - lo + 2), dtype=bool)
            box[1:-1, 1:-1, 1:-1] = is_target[lo[0]:hi[0], lo[1]:hi[1], lo[2]:hi[2]]
            core = box[1:-1, 1:-1, 1:-1]
            interior = (core & box[:-2, 1:-1, 1:-1] & box[2:, 1:-1, 1:-1] & box[1:-1, :-2, 1:-1] & box[1:-1, 2:, 1:-1]
                        & box[1:-1, 1:-1, :-2] & box[1:-1, 1:-1, 2:])
            boundary = np.argwhere(core & ~interior) + lo
        self.boundary = boundary.astype(float)
        self.tree = cKDTree(boundary) if len(boundary) else None
        self.scale = 1.0
        if self.tree is not None:
            self.scale = max(self._refined_max(sweep, size), 1e-9)

    def distance(self, voxels: np.ndarray) -> np.ndarray:
        if self.tree is None:  # no target voxel: no distance term (the executor refuses such maps before planning)
            return np.zeros(len(voxels))
        if len(self.boundary) <= 64:  # a point or a small region: all pairs beat the tree's traversal
            d = cdist(voxels, self.boundary).min(axis=1)
        else:
            d, _ = self.tree.query(voxels)
        d[self.is_target[voxels[:, 0], voxels[:, 1], voxels[:, 2]]] = 0.0
        return d

    def _refined_max(self, sweep: np.ndarray, size: int) -> float:
        d = self.distance(sweep)
        best = float(d.max())
        for centre in sweep[np.argsort(d)[-4:]]:
            r = np.arange(-5, 6)
            local = np.clip(centre + np.array(np.meshgrid(r, r, r, indexing="ij")).reshape(3, -1).T, 0, size - 1)
            best = max(best, float(self.distance(local).max()))
        return best

    def __call__(self, voxels: np.ndarray) -> np.ndarray:
        return self.distance(voxels) / self.scale


def _sweep(size: int, stride: int = 9) -> np.ndarray:
    r = np.unique(np.concatenate([np.arange(0, size, stride), [size - 1]]))
    return np.array(np.meshgrid(r, r, r, indexing="ij")).reshape(3, -1).T


class _BlockCache:
    """Costs computed a cubic block at a time and kept: the descent's neighbourhoods overlap from step
    to step, and where it wanders (an avoidance map flattening the target's basin) it stays in a few
    blocks, so most steps only read what earlier ones computed."""

    def __init__(self, cost: Callable[[np.ndarray], np.ndarray], size: int, block: int = 10) -> None:
        self.cost, self.size, self.block = cost, size, block
        self.values = np.zeros((size,) * 3)  # calloc'd: pages touched only in computed blocks
        self.done = np.zeros((-(-size // block),) * 3, dtype=bool)
        r = np.arange(block)
        self.local = np.array(np.meshgrid(r, r, r, indexing="ij")).reshape(3, -1).T

    def __call__(self, voxels: np.ndarray) -> np.ndarray:
        blocks = voxels // self.block
        missing = ~self.done[blocks[:, 0], blocks[:, 1], blocks[:, 2]]
        if missing.any():
            self._fill(np.unique(blocks[missing], axis=0))
        return self.values[voxels[:, 0], voxels[:, 1], voxels[:, 2]]

    def ensure(self, x: int, y: int, z: int, radius: int) -> None:
        """Compute the blocks meeting the cube of `radius` around (x, y, z) that are not computed yet."""
        b = self.block
        done = self.done[(x - radius) // b:(x + radius) // b + 1, (y - radius) // b:(y + radius) // b + 1,
                         (z - radius) // b:(z + radius) // b + 1]
        if not done.all():
            self._fill(np.argwhere(~done) + [(x - radius) // b, (y - radius) // b, (z - radius) // b])

    def _fill(self, blocks: np.ndarray) -> None:
        points = (blocks[:, None, :] * self.block + self.local[None]).reshape(-1, 3)
        points = points[np.all(points < self.size, axis=1)]
        self.values[points[:, 0], points[:, 1], points[:, 2]] = self.cost(points)
        self.done[blocks[:, 0], blocks[:, 1], blocks[:, 2]] = True


class FastPlanner:
    """The reference's descent reading only the cost of the voxels it visits (see the module docstring)."""

    def __init__(self, config: PlannerConfig | None = None) -> None:
        self.config = config or PlannerConfig()

    def optimize(self, start: np.ndarray, target_map: np.ndarray, obstacle_map: np.ndarray,
                 object_centric: bool = False) -> PlannedPath:
        c = self.config
        size = target_map.shape[0]
        sweep = _sweep(size)
        target_cost = _LazyTargetCost(target_map, sweep)
        obstacle_cost = _LazyObstacleCost(obstacle_map, c.obstacle_sigma)

        def combined(voxels: np.ndarray) -> np.ndarray:
            return target_cost(voxels) * c.target_weight + obstacle_cost(voxels) * c.obstacle_weight

        # the overall normaliser: min on the targets (their distance term is 0) and the sweep
        probes = sweep if not len(target_cost.targets) else np.vstack(
            [sweep, target_cost.targets[:: max(1, len(target_cost.targets) // 4000)]])
        values = combined(probes)
        low, span = float(values.min()), float(values.max() - values.min())
        span = span if span > 0 else 1.0
        normalised = _BlockCache(lambda voxels: (combined(voxels) - low) / span, size)
        penalty = np.zeros(target_map.shape)  # calloc'd: pages touched only where the descent goes

        def cost(voxels: np.ndarray) -> np.ndarray:
            return normalised(voxels) + penalty[voxels[:, 0], voxels[:, 1], voxels[:, 2]]

        offsets = neighbour_offsets(size, object_centric)
        stop_offsets = neighbour_offsets(size, False)
        strides = np.array([size * size, size, 1])
        flat_offsets, flat_stop_offsets = offsets @ strides, stop_offsets @ strides
        values_flat, penalty_flat = normalised.values.ravel(), penalty.ravel()  # views
        half = int(2 * size / 100)

        def look(centre: np.ndarray, around: np.ndarray, flat_around: np.ndarray) -> tuple[np.ndarray | None, np.ndarray]:
            """The neighbourhood's voxels (None: centre + around, all inside the grid) and their costs."""
            x, y, z = centre.tolist()
            if half <= x < size - half and half <= y < size - half and half <= z < size - half:
                normalised.ensure(x, y, z, half)  # inside the grid: flat indices, no clipping
                index = (x * size + y) * size + z + flat_around
                return None, values_flat[index] + penalty_flat[index]
            voxels = np.unique(np.clip(centre + around, 0, size - 1), axis=0)  # the reference's order
            return voxels, cost(voxels)

        current = np.asarray(start).round().astype(int)
        path = [current]
        # the stop check's neighbourhood is the next step's (not when pushing: that one is planar)
        reusable: tuple[np.ndarray | None, np.ndarray] | None = None
        for _ in range(c.max_steps):
            near, near_cost = reusable if reusable is not None and not object_centric else look(
                current, offsets, flat_offsets)
            best = int(np.argmin(near_cost))
            nxt = current + offsets[best] if near is None else near[best]
            x, y, z = current.tolist()
            penalty_flat[(x * size + y) * size + z] += 1.0
            # the next voxel's cost as the reference reads it, after the penalty (clipping at the
            # grid's edge can make the current voxel its own neighbour)
            here = near_cost[best] + (1.0 if near is not None and np.array_equal(nxt, current) else 0.0)
            path.append(nxt)
            current = nxt
            reusable = look(current, stop_offsets, flat_stop_offsets)
            if not np.any(reusable[1] < here + c.stop_threshold):
                break
        raw = np.array(path)
        return PlannedPath(raw, postprocess(raw, target_cost.targets, size, c, object_centric))


PLANNERS: dict[str, Callable[[], PathPlanner]] = {"reference": ReferencePlanner, "fast": FastPlanner}
