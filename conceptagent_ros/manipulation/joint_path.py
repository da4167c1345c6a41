"""A collision-free path for an arm in joint space: RRT-Connect (Kuffner and LaValle, 2000) between
two joint configurations, then shortcut smoothing.

The arm's geometry is not known here: `free(q)` answers whether a configuration touches nothing
(bodies/household/mobile_arm.py asks PyBullet, with the world's own collision shapes). A straight line
between configurations is free when every configuration on it, at most `resolution` radians apart
in any joint, is free. The first thing tried is the straight line from start to goal, so an arm in
open space moves as it did before there was a planner.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

Free = Callable[[np.ndarray], bool]


@dataclass(frozen=True)
class JointPathConfig:
    resolution: float = 0.02  # radians between checked configurations on a line (2 cm at the hand of an 0.85 m arm)
    step: float = 0.3  # radians: how far the tree grows toward a sample in one extension
    max_samples: int = 1500
    shortcut_rounds: int = 60
    goal_bias: float = 0.1  # share of samples that are the other tree's root


def line_free(a: np.ndarray, b: np.ndarray, free: Free, resolution: float) -> bool:
    """Every configuration on the straight line from `a` to `b` (b included, a not) is free."""
    steps = max(1, int(np.ceil(float(np.abs(b - a).max()) / resolution)))
    return all(free(a + (b - a) * (k / steps)) for k in range(1, steps + 1))


class _Tree:
    def __init__(self, root: np.ndarray):
        self.nodes = [root]
        self.parents = [-1]

    def nearest(self, q: np.ndarray) -> int:
        return int(np.argmin(np.abs(np.asarray(self.nodes) - q).max(axis=1)))

    def add(self, q: np.ndarray, parent: int) -> int:
        self.nodes.append(q)
        self.parents.append(parent)
        return len(self.nodes) - 1

    def path_to_root(self, index: int) -> list[np.ndarray]:
        out = []
        while index >= 0:
            out.append(self.nodes[index])
            index = self.parents[index]
        return out


def _extend(tree: _Tree, target: np.ndarray, free: Free, cfg: JointPathConfig) -> tuple[int, bool]:
    """Grow `tree` one step toward `target`: (the new node's index or -1, whether it is `target`)."""
    near = tree.nearest(target)
    q = tree.nodes[near]
    gap = target - q
    span = float(np.abs(gap).max())
    reached = span <= cfg.step
    new = target if reached else q + gap * (cfg.step / span)
    if not line_free(q, new, free, cfg.resolution):
        return -1, False
    return tree.add(new, near), reached


def _connect(tree: _Tree, target: np.ndarray, free: Free, cfg: JointPathConfig) -> int:
    """Grow `tree` toward `target` until it gets there (its index) or is stopped (-1)."""
    while True:
        index, reached = _extend(tree, target, free, cfg)
        if index < 0:
            return -1
        if reached:
            return index


def plan_joint_path(start: Sequence[float], goal: Sequence[float], free: Free, lower: Sequence[float],
                    upper: Sequence[float], config: JointPathConfig | None = None,
                    seed: int = 0) -> list[np.ndarray] | None:
    """Configurations from `start` to `goal` (both included), each straight line between them free;
    None when `goal` is not free or no path was found within the sample budget. `start` is taken
    as it is (the arm is there)."""
    cfg = config or JointPathConfig()
    a, b = np.asarray(start, dtype=float), np.asarray(goal, dtype=float)
    lo, hi = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    if not free(b):
        return None
    if line_free(a, b, free, cfg.resolution):
        return [a, b]
    rng = np.random.default_rng(seed)
    trees = (_Tree(a), _Tree(b))
    for n in range(cfg.max_samples):
        grow, other = (trees[0], trees[1]) if n % 2 == 0 else (trees[1], trees[0])
        sample = other.nodes[0] if rng.random() < cfg.goal_bias else rng.uniform(lo, hi)
        index, _ = _extend(grow, sample, free, cfg)
        if index < 0:
            continue
        meet = _connect(other, grow.nodes[index], free, cfg)
        if meet < 0:
            continue
        from_grow, from_other = grow.path_to_root(index), other.path_to_root(meet)
        path = from_grow[::-1] + from_other[1:] if grow is trees[0] else from_other[::-1] + from_grow[1:]
        return shortcut(path, free, cfg, rng)
    return None


def shortcut(path: list[np.ndarray], free: Free, cfg: JointPathConfig,
             rng: np.random.Generator | None = None) -> list[np.ndarray]:
    """The path with detours cut: two configurations picked at random are joined straight where
    that line is free."""
    rng = rng or np.random.default_rng(0)
    path = list(path)
    for _ in range(cfg.shortcut_rounds):
        if len(path) <= 2:
            break
        i, j = sorted(rng.choice(len(path), size=2, replace=False))
        if j - i < 2:
            continue
        if line_free(path[i], path[j], free, cfg.resolution):
            path = path[:i + 1] + path[j:]
    return path
