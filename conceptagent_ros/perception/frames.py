"""RGB-D frames as the perception pipeline sees them: images, pinhole intrinsics, and where the
camera stood (world_T_camera, optical frame: x right, y down, z forward, as sensor_msgs uses)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Intrinsics:
    width: int
    height: int
    fx: float
    fy: float
    cx: float
    cy: float

    @classmethod
    def from_fov(cls, width: int, height: int, horizontal_fov_deg: float) -> Intrinsics:
        fx = (width / 2.0) / math.tan(math.radians(horizontal_fov_deg) / 2.0)
        return cls(width, height, fx, fx, (width - 1) / 2.0, (height - 1) / 2.0)

    @classmethod
    def from_k(cls, width: int, height: int, k: np.ndarray | list[float]) -> Intrinsics:
        """From CameraInfo's row-major 3x3 K."""
        m = np.asarray(k, dtype=float).reshape(3, 3)
        if m[0, 0] <= 0 or m[1, 1] <= 0:
            raise ValueError(f"camera matrix has no focal length: fx={m[0, 0]}, fy={m[1, 1]}")
        return cls(width, height, float(m[0, 0]), float(m[1, 1]), float(m[0, 2]), float(m[1, 2]))

    def k(self) -> np.ndarray:
        return np.array([[self.fx, 0.0, self.cx], [0.0, self.fy, self.cy], [0.0, 0.0, 1.0]])


@dataclass
class Frame:
    """One RGB-D frame. depth is in metres (NaN or <= 0 where nothing was measured)."""

    rgb: np.ndarray  # H x W x 3 uint8
    depth: np.ndarray  # H x W float32, metres
    intrinsics: Intrinsics
    world_T_camera: np.ndarray  # 4 x 4
    stamp: float = 0.0
    frame_id: str = "camera"
    # Only a simulator has these: the object each pixel shows ("" for none), for the oracle detector
    # and for scoring a map against the truth. Nothing else in the pipeline reads them.
    instance_ids: np.ndarray | None = None  # H x W int32 index into instance_names, -1 for background
    instance_names: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        h, w = self.depth.shape[:2]
        if self.rgb.shape[:2] != (h, w):
            raise ValueError(f"rgb is {self.rgb.shape[1]}x{self.rgb.shape[0]} but depth is {w}x{h}")
        if (w, h) != (self.intrinsics.width, self.intrinsics.height):
            raise ValueError(f"intrinsics are for {self.intrinsics.width}x{self.intrinsics.height}, images are {w}x{h}")
        if self.world_T_camera.shape != (4, 4) or not np.all(np.isfinite(self.world_T_camera)):
            raise ValueError("camera pose must be a finite 4x4 transform")


def look_at(eye: np.ndarray | tuple[float, float, float], target: np.ndarray | tuple[float, float, float],
            up: tuple[float, float, float] = (0.0, 0.0, 1.0)) -> np.ndarray:
    """world_T_camera of an optical-frame camera at `eye` looking at `target`."""
    eye_v, target_v = np.asarray(eye, dtype=float), np.asarray(target, dtype=float)
    z = target_v - eye_v
    z /= np.linalg.norm(z)
    x = np.cross(z, np.asarray(up, dtype=float))
    if np.linalg.norm(x) < 1e-9:  # looking straight up or down
        x = np.cross(z, np.array([1.0, 0.0, 0.0]))
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    pose = np.eye(4)
    pose[:3, 0], pose[:3, 1], pose[:3, 2], pose[:3, 3] = x, y, z, eye_v
    return pose


def pose_from_quaternion(position: tuple[float, float, float], quaternion_xyzw: tuple[float, float, float, float]) -> np.ndarray:
    x, y, z, w = quaternion_xyzw
    n = math.sqrt(x * x + y * y + z * z + w * w)
    if not math.isfinite(n) or n < 1e-9:
        raise ValueError(f"not a rotation: quaternion {quaternion_xyzw}")
    x, y, z, w = x / n, y / n, z / n, w / n
    pose = np.eye(4)
    pose[:3, :3] = [
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ]
    pose[:3, 3] = position
    return pose


def rotation_to_quaternion(r: np.ndarray) -> tuple[float, float, float, float]:
    """(x, y, z, w) of a 3x3 rotation matrix (Shepperd's method, stable for every rotation)."""
    trace = r[0, 0] + r[1, 1] + r[2, 2]
    if trace > 0:
        s = 2.0 * math.sqrt(trace + 1.0)
        return (float((r[2, 1] - r[1, 2]) / s), float((r[0, 2] - r[2, 0]) / s), float((r[1, 0] - r[0, 1]) / s),
                0.25 * s)
    i = max(range(3), key=lambda j: r[j, j])
    j, k = (i + 1) % 3, (i + 2) % 3
    s = 2.0 * math.sqrt(1.0 + r[i, i] - r[j, j] - r[k, k])
    q = [0.0, 0.0, 0.0, 0.0]
    q[i] = 0.25 * s
    q[j] = float((r[j, i] + r[i, j]) / s)
    q[k] = float((r[k, i] + r[i, k]) / s)
    q[3] = float((r[k, j] - r[j, k]) / s)
    return q[0], q[1], q[2], q[3]
