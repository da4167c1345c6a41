"""The base's pose on the map as a TF transform (map -> base_footprint), for rviz to put the robot
model where the body stands; robot_state_publisher then places every link from the joint states and
the description. tf2_ros comes with a ROS 2 install and not from pip: where it is missing, nothing
is broadcast (the robot_pose topic still says where the base is)."""
from __future__ import annotations

import math
from typing import Any


class BaseTransform:
    def __init__(self, node: Any, parent: str, child: str = "base_footprint", broadcaster: Any = None):
        """`broadcaster`: anything with sendTransform(TransformStamped) (tests); tf2_ros's
        TransformBroadcaster on `node` otherwise, if tf2_ros is there."""
        self.parent, self.child = parent, child
        if broadcaster is None:
            try:
                from tf2_ros import TransformBroadcaster
            except ImportError:
                broadcaster = None
            else:
                broadcaster = TransformBroadcaster(node)
        self.broadcaster = broadcaster

    @property
    def available(self) -> bool:
        return self.broadcaster is not None

    def send(self, x: float, y: float, yaw: float, stamp: Any) -> None:
        if self.broadcaster is None:
            return
        from geometry_msgs.msg import TransformStamped

        t = TransformStamped()
        t.header.stamp, t.header.frame_id, t.child_frame_id = stamp, self.parent, self.child
        t.transform.translation.x, t.transform.translation.y = float(x), float(y)
        t.transform.rotation.z, t.transform.rotation.w = math.sin(yaw / 2), math.cos(yaw / 2)
        self.broadcaster.sendTransform(t)
