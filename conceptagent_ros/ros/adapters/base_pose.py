"""Where an arm's kinematic root stands in the planning frame, for an arm on a mobile base.

The arm's kinematics (voxposer/kinematics.py) work in the frame of its URDF's root link; perception's
points and the skills' targets are in the planning frame (map). On a fixed arm the two are one; on a
mobile manipulator the root moves with the base, so the manipulation node looks the root up on TF
each time it turns a target into joints or joints into a pose. tf2_ros is not pip-installable: it is
imported when a TfBasePose is built without a buffer, and tests pass a stand-in buffer with
tf2_ros.Buffer's `lookup_transform(target_frame, source_frame, time)`.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from scipy.spatial.transform import Rotation

from conceptagent_ros.voxposer.executor import VoxPoserError

Pose = tuple[np.ndarray, np.ndarray]  # position, quaternion (x, y, z, w)


class TfBasePose:
    """`pose()`: the root link's pose in `frame` from TF, the latest transform there is."""

    def __init__(self, node: Any, frame: str, root: str, buffer: Any = None):
        self.frame, self.root = frame, root
        if buffer is None:
            try:
                from tf2_ros import Buffer, TransformListener
            except ImportError as e:
                raise VoxPoserError("controller", f"arm.base_frame {root!r} needs tf2_ros "
                                                  f"(apt install ros-$ROS_DISTRO-tf2-ros): {e}") from None
            buffer = Buffer()
            self._listener = TransformListener(buffer, node, spin_thread=False)
        self.buffer = buffer

    def pose(self) -> Pose:
        from rclpy.time import Time

        try:
            t = self.buffer.lookup_transform(self.frame, self.root, Time()).transform
        except Exception as e:  # noqa: BLE001 - tf2's LookupException, ExtrapolationException, ...
            raise VoxPoserError("controller", f"no transform {self.frame} -> {self.root} on TF ({e}): is the "
                                              "base's localization running?") from None
        return (np.array([t.translation.x, t.translation.y, t.translation.z]),
                np.array([t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w]))


def to_frame(base: Pose, position: np.ndarray, quaternion: np.ndarray) -> Pose:
    """A pose in the root's frame, in the planning frame."""
    rotation = Rotation.from_quat(base[1])
    return base[0] + rotation.apply(position), (rotation * Rotation.from_quat(quaternion)).as_quat()


def to_root(base: Pose, position: np.ndarray, quaternion: np.ndarray) -> Pose:
    """A pose in the planning frame, in the root's frame."""
    inverse = Rotation.from_quat(base[1]).inv()
    return inverse.apply(np.asarray(position) - base[0]), (inverse * Rotation.from_quat(quaternion)).as_quat()
