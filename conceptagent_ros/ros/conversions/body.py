"""Messages of a robot body for rviz: its joint states (the robot model drawn from its description
moves with them), its base's pose and the path the base last planned."""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import Path
from sensor_msgs.msg import JointState

from conceptagent_ros.ros.conversions.voxposer import path_msg, pose_stamped
from conceptagent_ros.scene.geometry import yaw_to_quaternion


def joint_state_msg(names: Sequence[str], positions: Sequence[float], velocities: Sequence[float],
                    stamp: Time) -> JointState:
    msg = JointState()
    msg.header.stamp = stamp
    msg.name, msg.position, msg.velocity = list(names), [float(v) for v in positions], [float(v) for v in velocities]
    return msg


def base_pose_msg(x: float, y: float, yaw: float, frame: str, stamp: Time) -> PoseStamped:
    return pose_stamped((x, y, 0.0), yaw_to_quaternion(yaw), frame, stamp)


def base_path_msg(points: Sequence[tuple[float, float]], frame: str, stamp: Time) -> Path:
    """A base's path on the floor; each pose faces the next point (the last, the one before it)."""
    headings = []
    for i in range(len(points)):
        a, b = (points[i], points[i + 1]) if i + 1 < len(points) else (points[i - 1] if i else points[i], points[i])
        headings.append(math.atan2(b[1] - a[1], b[0] - a[0]) if a != b else 0.0)
    positions = np.array([(x, y, 0.0) for x, y in points]).reshape(-1, 3)
    return path_msg(positions, np.array([yaw_to_quaternion(h) for h in headings]).reshape(-1, 4), frame, stamp)
