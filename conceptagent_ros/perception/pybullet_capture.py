"""One image from a camera in PyBullet, as a depth camera with a simulator's segmentation gives it:
colour, per pixel the world point back-projected from the depth buffer, and PyBullet's segmentation
(the body and link each pixel shows). The household's mast camera and the tabletop's fixed cameras
both take their images here. PyBullet is the caller's: it is passed in, never imported."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from conceptagent_ros.perception.depth_noise import DepthNoise, optical_points, still_frames
from conceptagent_ros.perception.frames import Intrinsics

LINK_SHIFT = 24  # PyBullet packs (link + 1) above bit 24 of a segmentation value, the body below


@dataclass(frozen=True)
class Capture:
    rgb: np.ndarray  # (H, W, 3) uint8
    points: np.ndarray  # (H, W, 3) world points back-projected from the depth buffer (far clip included)
    buffer: np.ndarray  # (H, W) OpenGL depth buffer, 0 at the near clip, 1 at the far clip
    segmentation: np.ndarray  # (H, W) int64: body + ((link + 1) << 24); -1 where nothing is

    @property
    def bodies(self) -> np.ndarray:
        """Body id per pixel, -1 for none."""
        return np.where(self.segmentation >= 0, self.segmentation & ((1 << LINK_SHIFT) - 1), -1)

    @property
    def links(self) -> np.ndarray:
        """Link index per pixel (-1: the base link; -2 where nothing is)."""
        return np.where(self.segmentation >= 0, (self.segmentation >> LINK_SHIFT) - 1, -2)

    def at_far_clip(self) -> np.ndarray:
        return self.buffer >= 1.0 - 1e-7


def capture(p: Any, client: int, view: np.ndarray, projection: np.ndarray, width: int, height: int) -> Capture:
    """Render with `view` and `projection` (4 x 4, as PyBullet computes them, read column-major) on
    the tiny renderer, which needs no display, and back-project every pixel through the inverse of
    projection * view (no per-pixel loop)."""
    _, _, rgba, buffer, seg = p.getCameraImage(
        width, height, view.flatten(order="F").tolist(), projection.flatten(order="F").tolist(),
        renderer=p.ER_TINY_RENDERER, flags=p.ER_SEGMENTATION_MASK_OBJECT_AND_LINKINDEX, physicsClientId=client)
    rgba = np.asarray(rgba, dtype=np.uint8).reshape(height, width, 4)
    buffer = np.asarray(buffer, dtype=float).reshape(height, width)
    seg = np.asarray(seg, dtype=np.int64).reshape(height, width)
    u = (np.arange(width) + 0.5) / width * 2 - 1
    v = 1 - (np.arange(height) + 0.5) / height * 2
    uu, vv = np.meshgrid(u, v)
    ndc = np.stack([uu, vv, 2 * buffer - 1, np.ones_like(buffer)], axis=-1).reshape(-1, 4)
    world = ndc @ np.linalg.inv(projection @ view).T
    world = (world[:, :3] / world[:, 3:]).reshape(height, width, 3)
    return Capture(rgba[..., :3], world, buffer, seg)


def projection_intrinsics(projection: np.ndarray, width: int, height: int) -> Intrinsics:
    """The pinhole an OpenGL projection (a centred frustum, as PyBullet computes it) is, in the
    pixel convention of frames.Intrinsics (the first pixel's centre at 0)."""
    return Intrinsics(width, height, float(projection[0, 0]) * width / 2.0, float(projection[1, 1]) * height / 2.0,
                      (width - 1) / 2.0, (height - 1) / 2.0)


def seen_through(shot: Capture, view: np.ndarray, projection: np.ndarray, noise: DepthNoise,
                 rng: np.random.Generator) -> Capture:
    """The capture as a real depth camera standing still returns it: the depth along the optical
    axis put through `noise` (perception/depth_noise: a look is the median of a few frames), and the
    points back-projected from that; NaN points where the camera returns no depth (and at the far
    clip). Colour and segmentation stay as rendered."""
    height, width = shot.buffer.shape
    intrinsics = projection_intrinsics(projection, width, height)
    seen = ~shot.at_far_clip()
    homogeneous = np.concatenate([shot.points.reshape(-1, 3), np.ones((height * width, 1))], axis=1)
    in_camera = (homogeneous @ view.T)[:, :3].reshape(height, width, 3)  # OpenGL: x right, y up, looking down -z
    depth = np.where(seen, -in_camera[..., 2], np.nan)
    noisy = still_frames(noise, depth, intrinsics, rng)
    optical = optical_points(noisy, intrinsics)  # x right, y down, z forward
    gl = np.stack([optical[..., 0], -optical[..., 1], -optical[..., 2], np.ones_like(noisy)], axis=-1)
    world = (gl.reshape(-1, 4) @ np.linalg.inv(view).T)[:, :3].reshape(height, width, 3)
    return Capture(shot.rgb, world, shot.buffer, shot.segmentation)


def matrix(values: Any) -> np.ndarray:
    """A 4 x 4 matrix from PyBullet's 16 numbers (column-major)."""
    return np.asarray(values, dtype=float).reshape(4, 4, order="F")
