"""What a structured-light or time-of-flight RGB-D camera does to a perfect depth image.

The model is Nguyen, Izadi & Lovell, "Modeling Kinect Sensor Noise for Improved 3D Reconstruction
and Tracking" (3DIMPVT 2012), measured on a Kinect v1:
- axial noise (along the ray), a normal distribution of standard deviation
  sigma_z(z, theta) = 0.0012 + 0.0019 (z - 0.4)^2 + 0.0001 / sqrt(z) * theta^2 / (pi/2 - theta)^2  metres,
  z the depth in metres and theta the angle between the surface's normal and the camera's ray:
  it grows with the square of the distance and steeply toward grazing angles;
- lateral noise (across the image), sigma_L(theta) = 0.8 + 0.035 theta / (pi/2 - theta) pixels:
  each pixel reads the depth of a neighbour that far off;
- missing pixels: the paper's measurements end near 70-80 degrees, where the sensor returns no
  depth; beyond `grazing_limit_deg` a pixel is dropped. A structured-light camera also loses the
  pixels on the far side of a depth edge (the projector's shadow, and mixed pixels on the edge),
  so a pixel whose neighbour stands more than `edge_jump` nearer is dropped.

The image is changed as a camera would deliver it: depth along the optical axis, NaN where no
depth came back. Nothing here knows a simulator: it works on any depth image and its intrinsics.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from conceptagent_ros.perception.frames import Intrinsics


@dataclass(frozen=True)
class DepthNoise:
    grazing_limit_deg: float = 80.0  # beyond this angle between a surface's normal and the ray: no depth
    edge_jump: float = 0.04  # metres: a pixel this much further than a neighbour lies in an edge's shadow
    axial_scale: float = 1.0  # the paper's sigma_z times this (a newer sensor is quieter: below 1)
    lateral_scale: float = 1.0  # the paper's sigma_L times this

    def axial_sigma(self, z: np.ndarray, theta: np.ndarray) -> np.ndarray:
        """Nguyen et al.'s sigma_z in metres, for depth `z` (m) and incidence `theta` (radians)."""
        z = np.maximum(np.asarray(z, dtype=float), 1e-3)
        theta = np.clip(np.asarray(theta, dtype=float), 0.0, math.radians(89.0))
        grazing = theta ** 2 / (math.pi / 2 - theta) ** 2
        return self.axial_scale * (0.0012 + 0.0019 * (z - 0.4) ** 2 + 0.0001 / np.sqrt(z) * grazing)

    def lateral_sigma_px(self, theta: np.ndarray) -> np.ndarray:
        """Nguyen et al.'s sigma_L in pixels for incidence `theta` (radians)."""
        theta = np.clip(np.asarray(theta, dtype=float), 0.0, math.radians(89.0))
        return self.lateral_scale * (0.8 + 0.035 * theta / (math.pi / 2 - theta))

    def apply(self, depth: np.ndarray, intrinsics: Intrinsics, rng: np.random.Generator) -> np.ndarray:
        """The depth image as the camera returns it: noisy, NaN where it returns nothing. `depth`
        is metres along the optical axis, NaN (or <= 0) where nothing was seen."""
        depth = np.asarray(depth, dtype=float)
        valid = np.isfinite(depth) & (depth > 0)
        theta = incidence(depth, intrinsics)
        height, width = depth.shape
        # lateral: each pixel reads a neighbour's depth, as far off as sigma_L says
        shift = self.lateral_sigma_px(np.where(np.isfinite(theta), theta, 0.0))
        rows = np.clip(np.rint(np.arange(height)[:, None] + rng.normal(0.0, 1.0, depth.shape) * shift), 0, height - 1)
        cols = np.clip(np.rint(np.arange(width)[None, :] + rng.normal(0.0, 1.0, depth.shape) * shift), 0, width - 1)
        read = depth[rows.astype(int), cols.astype(int)]
        read_theta = theta[rows.astype(int), cols.astype(int)]
        seen = valid & np.isfinite(read) & (read > 0)
        noisy = read + rng.normal(0.0, 1.0, depth.shape) * self.axial_sigma(np.where(seen, read, 1.0),
                                                                             np.where(np.isfinite(read_theta), read_theta, 0.0))
        dropped = ~seen | ~np.isfinite(theta) | (theta > math.radians(self.grazing_limit_deg)) | self._shadowed(depth)
        return np.where(dropped, np.nan, noisy)

    def _shadowed(self, depth: np.ndarray) -> np.ndarray:
        """Pixels with a 4-neighbour more than edge_jump nearer: the far side of a depth edge."""
        filled = np.where(np.isfinite(depth) & (depth > 0), depth, np.inf)
        nearest = np.full_like(filled, np.inf)
        nearest[1:, :] = np.minimum(nearest[1:, :], filled[:-1, :])
        nearest[:-1, :] = np.minimum(nearest[:-1, :], filled[1:, :])
        nearest[:, 1:] = np.minimum(nearest[:, 1:], filled[:, :-1])
        nearest[:, :-1] = np.minimum(nearest[:, :-1], filled[:, 1:])
        jump = np.zeros_like(filled)
        np.subtract(filled, nearest, out=jump, where=np.isfinite(filled) & np.isfinite(nearest))
        return jump > self.edge_jump


def optical_points(depth: np.ndarray, intrinsics: Intrinsics) -> np.ndarray:
    """(H, W, 3) points in the optical frame (x right, y down, z forward) from depth along z."""
    height, width = depth.shape
    u, v = np.meshgrid(np.arange(width, dtype=float), np.arange(height, dtype=float))
    return np.stack([(u - intrinsics.cx) / intrinsics.fx * depth, (v - intrinsics.cy) / intrinsics.fy * depth, depth],
                    axis=-1)


def incidence(depth: np.ndarray, intrinsics: Intrinsics) -> np.ndarray:
    """Per pixel, the angle (radians) between the surface's normal, from the depth image's own
    neighbours, and the ray to the camera; NaN where it cannot be told (no depth, or an edge)."""
    points = optical_points(np.where(np.isfinite(depth) & (depth > 0), depth, np.nan), intrinsics)
    along_u = np.gradient(points, axis=1)
    along_v = np.gradient(points, axis=0)
    normal = np.cross(along_u, along_v)
    length = np.linalg.norm(normal, axis=-1)
    ray = points / np.linalg.norm(points, axis=-1, keepdims=True)
    cosine = np.abs(np.sum(normal * ray, axis=-1)) / np.where(length > 0, length, np.nan)
    return np.arccos(np.clip(cosine, 0.0, 1.0))


STILL_FRAMES = 5  # frames a look takes of a scene that stands still, with noise on (their median)


def still_frames(noise: DepthNoise, rendered: np.ndarray, intrinsics: Intrinsics, rng: np.random.Generator,
                 frames: int = STILL_FRAMES) -> np.ndarray:
    """`frames` frames of an unmoving scene through the noise model, their per-pixel median (where
    most of them returned depth): what a camera that stands still takes a look as, since the model's
    noise is independent from frame to frame."""
    shots = np.stack([noise.apply(rendered, intrinsics, rng) for _ in range(frames)])
    returned = np.isfinite(shots).sum(axis=0)
    with np.errstate(all="ignore"):
        median = np.nanmedian(np.where(returned[None] > 0, shots, 0.0), axis=0)
    return np.where(returned * 2 > frames, median, np.nan)
