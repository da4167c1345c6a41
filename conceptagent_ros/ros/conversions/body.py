"""Messages of a robot body for rviz: its joint states (the robot model drawn from its description
moves with them), its base's pose and the path the base last planned."""
from __future__ import annotations

import math
from collections.abc import Sequence

from builtin_interfaces.msg import Time
from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import Path
from sensor_msgs.msg import JointState


def joint_state_msg(names: Sequence[str], positions: Sequence[float], velocities: Sequence[float],
                    stamp: Time) -> JointState:
    msg = JointState()
    msg.header.stamp = stamp
    msg.name, msg.position, msg.velocity = list(names), [float(v) for v in positions], [float(v) for v in velocities]
    return msg


def pose_msg(x: float, y: float, yaw: float, frame: str, stamp: Time) -> PoseStamped:
    msg = PoseStamped()
    msg.header.stamp, msg.header.frame_id = stamp, frame
    msg.pose.position.x, msg.pose.position.y = float(x), float(y)
    msg.pose.orientation.z, msg.pose.orientation.w = math.sin(yaw / 2), math.cos(yaw / 2)
    return msg


def path_msg(points: Sequence[tuple[float, float]], frame: str, stamp: Time) -> Path:
    """A base's path on the floor; each pose faces the next point (the last, the one before it)."""
    msg = Path()
    msg.header.stamp, msg.header.frame_id = stamp, frame
    for i, (x, y) in enumerate(points):
        a, b = (points[i], points[i + 1]) if i + 1 < len(points) else (points[i - 1] if i else points[i], points[i])
        yaw = math.atan2(b[1] - a[1], b[0] - a[0]) if a != b else 0.0
        msg.poses.append(pose_msg(x, y, yaw, frame, stamp))
    return msg
