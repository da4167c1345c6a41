"""sensor_msgs Image / CameraInfo and geometry_msgs poses to NumPy, free of ROS: works on the messages
of a ROS 2 node and on rosbags' deserialised ones alike (same field names)."""
from __future__ import annotations

from typing import Any

import numpy as np

from conceptagent_ros.perception.frames import Intrinsics, pose_from_quaternion

# The fixed turn from a ROS camera link (x forward, y left, z up) to its optical frame (z forward,
# x right, y down): REP 103.
LINK_T_OPTICAL = np.array([[0.0, 0.0, 1.0, 0.0], [-1.0, 0.0, 0.0, 0.0], [0.0, -1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]])


def stamp_seconds(header: Any) -> float:
    return float(header.stamp.sec) + float(header.stamp.nanosec) * 1e-9


def image_to_numpy(msg: Any) -> np.ndarray:
    """rgb8 / bgr8 / rgba8 / bgra8 / mono8 -> H x W x 3 uint8 RGB; 16UC1 (millimetres) and 32FC1
    (metres) -> H x W float32 metres, 0 and NaN left as no measurement."""
    h, w, enc = int(msg.height), int(msg.width), str(msg.encoding).lower()
    data = np.frombuffer(bytes(msg.data) if not isinstance(msg.data, np.ndarray) else msg.data.tobytes(), dtype=np.uint8)
    step = int(msg.step)
    if data.size < step * h:
        raise ValueError(f"image data has {data.size} bytes, {h} rows of {step} need {step * h}")
    rows = data[: step * h].reshape(h, step)
    if enc in ("rgb8", "bgr8", "rgba8", "bgra8", "mono8", "8uc1", "8uc3"):
        channels = {"rgb8": 3, "bgr8": 3, "8uc3": 3, "rgba8": 4, "bgra8": 4, "mono8": 1, "8uc1": 1}[enc]
        img = rows[:, : w * channels].reshape(h, w, channels)
        if channels == 1:
            return np.repeat(img, 3, axis=2)
        img = img[:, :, :3]
        return np.ascontiguousarray(img[:, :, ::-1] if enc.startswith("bgr") else img)
    big = bool(msg.is_bigendian)
    if enc in ("16uc1", "mono16"):
        depth = rows[:, : w * 2].copy().view(">u2" if big else "<u2").reshape(h, w).astype(np.float32) / 1000.0
        depth[depth == 0] = np.nan
        return depth
    if enc == "32fc1":
        depth = rows[:, : w * 4].copy().view(">f4" if big else "<f4").reshape(h, w).astype(np.float32)
        depth[~np.isfinite(depth) | (depth <= 0)] = np.nan
        return depth
    raise ValueError(f"image encoding {msg.encoding!r} is not supported (rgb8, bgr8, rgba8, bgra8, mono8, 16UC1, 32FC1)")


def numpy_to_image_fields(array: np.ndarray) -> dict[str, Any]:
    """The fields of a sensor_msgs/Image holding this array (uint8 RGB, float32 depth, int32 ids)."""
    if array.dtype == np.uint8 and array.ndim == 3 and array.shape[2] == 3:
        h, w, _ = array.shape
        return {"height": h, "width": w, "encoding": "rgb8", "is_bigendian": 0, "step": w * 3,
                "data": np.ascontiguousarray(array).reshape(-1)}
    if array.dtype in (np.float32, np.int32) and array.ndim == 2:
        h, w = array.shape
        encoding = "32FC1" if array.dtype == np.float32 else "32SC1"  # depth in metres / instance ids
        return {"height": h, "width": w, "encoding": encoding, "is_bigendian": 0, "step": w * 4,
                "data": np.ascontiguousarray(array.astype(array.dtype.newbyteorder("<"))).view(np.uint8).reshape(-1)}
    raise ValueError(f"no Image encoding for an array of {array.dtype} and shape {array.shape}")


def camera_info_intrinsics(msg: Any) -> Intrinsics:
    return Intrinsics.from_k(int(msg.width), int(msg.height), list(msg.k))


def pose_to_matrix(msg: Any, frame: str = "optical") -> np.ndarray:
    """world_T_camera from PoseStamped, PoseWithCovarianceStamped, Odometry or TransformStamped.
    frame: "optical" when the pose is the camera's optical frame, "link" when it is a REP 103 body
    or camera link (x forward), as odometry gives."""
    pose = msg
    if hasattr(pose, "pose"):
        pose = pose.pose
        if hasattr(pose, "pose"):  # Odometry / PoseWithCovariance
            pose = pose.pose
    if hasattr(msg, "transform"):
        t, q = msg.transform.translation, msg.transform.rotation
        position = (t.x, t.y, t.z)
    else:
        p, q = pose.position, pose.orientation
        position = (p.x, p.y, p.z)
    matrix = pose_from_quaternion(position, (q.x, q.y, q.z, q.w))
    if frame == "link":
        return matrix @ LINK_T_OPTICAL
    if frame != "optical":
        raise ValueError(f"pose frame must be 'optical' or 'link', not {frame!r}")
    return matrix
