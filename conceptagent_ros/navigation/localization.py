"""Where the base is, as a robot knows it: wheel odometry that drifts, a 2-D lidar, and Monte Carlo
localization against the map, as Nav2's AMCL does on a robot.

The algorithms are Thrun, Burgard & Fox, *Probabilistic Robotics* (2005): the odometry motion
model sampled per particle (table 5.6, its alpha parameters), the likelihood-field range model
(section 6.4: a beam's end is scored by its distance to the nearest occupied cell, a Gaussian of
`sigma_hit` mixed with a uniform for random returns) and low-variance resampling (table 4.4), done
when the particles' effective number falls below half. No well-kept Python package does Monte Carlo
localization (Nav2's amcl is C++ inside ROS), so this module does, on numpy and scipy's distance
transform. It knows nothing of PyBullet: the body gives it odometry and scans.

The world's side (how the wheels slip, so the odometry drifts) is `WheelSlip`: each step's true
motion is the commanded one scaled by a per-run bias (a wheel's radius off by a percent) and a
per-step noise.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.ndimage import distance_transform_edt

from conceptagent_ros.scene.geometry import Pose2D
from conceptagent_ros.world.occupancy_map import OccupancyMap


@dataclass(frozen=True)
class Scan:
    """One 2-D lidar sweep from the lidar's own pose: beam angles (radians, in the lidar's frame)
    and ranges (metres; inf where nothing came back within max_range)."""

    angles: np.ndarray
    ranges: np.ndarray
    max_range: float


@dataclass(frozen=True)
class OdometryNoise:
    """Probabilistic Robotics' alpha1..alpha4: how much rotation (a1) and translation (a2) blur a
    rotation, how much translation (a3) and rotation (a4) blur a translation."""

    rot_from_rot: float = 0.05
    rot_from_trans: float = 0.05
    trans_from_trans: float = 0.05
    trans_from_rot: float = 0.02


@dataclass(frozen=True)
class WheelSlip:
    """How the world moves the base for a commanded motion: scaled by a bias drawn once per run
    (translation and rotation off by up to `bias` of themselves) and by per-step noise."""

    bias: float = 0.03
    noise: float = 0.02

    def drawn(self, rng: np.random.Generator) -> tuple[float, float]:
        return 1.0 + float(rng.uniform(-self.bias, self.bias)), 1.0 + float(rng.uniform(-self.bias, self.bias))

    def move(self, pose: Pose2D, forward: float, turn: float, scale: tuple[float, float],
             rng: np.random.Generator) -> Pose2D:
        """Where a base commanded `forward` metres along its heading after turning `turn` radians
        (the controller's step) ends up."""
        f = forward * scale[0] * (1.0 + float(rng.normal(0.0, self.noise)))
        t = turn * scale[1] * (1.0 + float(rng.normal(0.0, self.noise)))
        yaw = pose.yaw + t
        return Pose2D(pose.x + f * math.cos(yaw), pose.y + f * math.sin(yaw), math.remainder(yaw, 2 * math.pi))


class LikelihoodField:
    """Probabilistic Robotics' likelihood field of an occupancy grid."""

    def __init__(self, grid: OccupancyMap, sigma_hit: float = 0.08, z_hit: float = 0.9, z_rand: float = 0.1):
        self.grid, self.sigma_hit, self.z_hit, self.z_rand = grid, sigma_hit, z_hit, z_rand
        # metres from each cell to the nearest occupied cell
        self.distance = distance_transform_edt(~grid.occupied) * grid.resolution

    def log_likelihood(self, poses: np.ndarray, scan: Scan, lidar_offset: tuple[float, float],
                       beams: np.ndarray) -> np.ndarray:
        """Per pose (N x 3: x, y, yaw of the base), the log-likelihood of the scan's `beams` (indices)."""
        ranges, angles = scan.ranges[beams], scan.angles[beams]
        hit = np.isfinite(ranges) & (ranges < scan.max_range)
        ranges, angles = ranges[hit], angles[hit]
        if len(ranges) == 0:
            return np.zeros(len(poses))
        x, y, yaw = poses[:, 0:1], poses[:, 1:2], poses[:, 2:3]
        c, s = np.cos(yaw), np.sin(yaw)
        lx, ly = x + c * lidar_offset[0] - s * lidar_offset[1], y + s * lidar_offset[0] + c * lidar_offset[1]
        ex, ey = lx + ranges * np.cos(yaw + angles), ly + ranges * np.sin(yaw + angles)
        rows = np.floor((ey - self.grid.origin[1]) / self.grid.resolution).astype(int)
        cols = np.floor((ex - self.grid.origin[0]) / self.grid.resolution).astype(int)
        inside = (rows >= 0) & (rows < self.distance.shape[0]) & (cols >= 0) & (cols < self.distance.shape[1])
        d = np.where(inside, self.distance[np.clip(rows, 0, self.distance.shape[0] - 1),
                                           np.clip(cols, 0, self.distance.shape[1] - 1)], 2.0)
        p = self.z_hit * np.exp(-0.5 * (d / self.sigma_hit) ** 2) + self.z_rand / scan.max_range
        return np.log(p).sum(axis=1)


@dataclass
class MonteCarloLocalization:
    """Particles over the base's pose, moved by odometry and weighed by scans."""

    likelihood: LikelihoodField
    start: Pose2D
    rng: np.random.Generator
    particles: int = 400
    start_spread: tuple[float, float, float] = (0.05, 0.05, 0.03)  # metres, metres, radians
    noise: OdometryNoise = OdometryNoise()
    lidar_offset: tuple[float, float] = (0.13, 0.0)  # the lidar's place on the base (the description's)
    beams: int = 60  # of a scan's beams, evenly spaced, each update reads
    # how much one scan may sharpen the belief: each beam's log-likelihood is scaled down as if the
    # beams were this many times fewer (neighbouring beams are not independent; AMCL does the same
    # with its beam skipping), which keeps the particles from collapsing onto one wrong pose
    beam_correlation: float = 4.0
    poses: np.ndarray = field(init=False)
    weights: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        spread = np.asarray(self.start_spread)
        centre = np.array([self.start.x, self.start.y, self.start.yaw])
        self.poses = centre + self.rng.normal(0.0, 1.0, (self.particles, 3)) * spread
        self.weights = np.full(self.particles, 1.0 / self.particles)

    def predict(self, before: Pose2D, after: Pose2D) -> None:
        """Move every particle by the odometry's step from `before` to `after` (poses in the
        odometry's own frame), blurred by the motion model."""
        dx, dy = after.x - before.x, after.y - before.y
        trans = math.hypot(dx, dy)
        rot1 = math.remainder(math.atan2(dy, dx) - before.yaw, 2 * math.pi) if trans > 1e-4 else 0.0
        rot2 = math.remainder(after.yaw - before.yaw - rot1, 2 * math.pi)
        a = self.noise
        n = self.particles
        # the book's model takes every motion for a forward one: a base backing off 2 cm turns half a
        # turn, drives and turns back, and the turns' noise (alpha1 of pi) scattered the particles'
        # headings by a radian. Backward and forward motion are blurred alike, as Nav2's AMCL does
        # (its differential model's delta_rot1_noise: the turn's distance from 0 or from pi)
        n1, n2 = _from_forward_or_back(rot1), _from_forward_or_back(rot2)
        r1 = rot1 - self.rng.normal(0.0, 1.0, n) * math.sqrt(a.rot_from_rot * n1 ** 2 + a.rot_from_trans * trans ** 2)
        tr = trans - self.rng.normal(0.0, 1.0, n) * math.sqrt(a.trans_from_trans * trans ** 2
                                                               + a.trans_from_rot * (n1 ** 2 + n2 ** 2))
        r2 = rot2 - self.rng.normal(0.0, 1.0, n) * math.sqrt(a.rot_from_rot * n2 ** 2 + a.rot_from_trans * trans ** 2)
        heading = self.poses[:, 2] + r1
        self.poses[:, 0] += tr * np.cos(heading)
        self.poses[:, 1] += tr * np.sin(heading)
        self.poses[:, 2] = heading + r2

    def correct(self, scan: Scan) -> None:
        """Weigh the particles by the scan, and resample where few of them carry the weight."""
        beams = np.linspace(0, len(scan.ranges) - 1, min(self.beams, len(scan.ranges))).astype(int)
        log_w = np.log(np.maximum(self.weights, 1e-300)) + self.likelihood.log_likelihood(
            self.poses, scan, self.lidar_offset, beams) / self.beam_correlation
        log_w -= log_w.max()
        weights = np.exp(log_w)
        self.weights = weights / weights.sum()
        if 1.0 / float(np.sum(self.weights ** 2)) < self.particles / 2:
            self._resample()

    def _resample(self) -> None:
        """Low-variance resampling (Probabilistic Robotics, table 4.4)."""
        n = self.particles
        positions = (self.rng.uniform(0.0, 1.0 / n) + np.arange(n) / n)
        chosen = np.minimum(np.searchsorted(np.cumsum(self.weights), positions), n - 1)
        self.poses = self.poses[chosen].copy()
        self.weights = np.full(n, 1.0 / n)

    @property
    def estimate(self) -> Pose2D:
        """The particles' weighted mean (the heading's as a mean of unit vectors)."""
        w = self.weights
        yaw = math.atan2(float(np.sum(w * np.sin(self.poses[:, 2]))), float(np.sum(w * np.cos(self.poses[:, 2]))))
        return Pose2D(float(np.sum(w * self.poses[:, 0])), float(np.sum(w * self.poses[:, 1])), yaw)

    @property
    def spread(self) -> float:
        """The particles' weighted standard deviation in position (metres)."""
        mean = self.estimate
        d2 = (self.poses[:, 0] - mean.x) ** 2 + (self.poses[:, 1] - mean.y) ** 2
        return float(math.sqrt(np.sum(self.weights * d2)))


def _from_forward_or_back(turn: float) -> float:
    """How far a turn (radians, within pi) is from none or from half a turn, whichever is nearer."""
    return min(abs(turn), math.pi - abs(turn))
