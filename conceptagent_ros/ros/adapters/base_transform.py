"""A robot base's pose as a TF transform (the pose's frame -> the base's frame), for rviz to put the
robot where it stands; robot_state_publisher then places every link from the joint states and the
description. tf2_ros comes with a ROS 2 install and not from pip: where it is missing, nothing is
broadcast (the robot_pose topic still says where the base is)."""
from __future__ import annotations

from typing import Any


class BaseTransform:
    def __init__(self, node: Any, child: str, broadcaster: Any = None):
        """`broadcaster`: anything with sendTransform(TransformStamped) (tests); tf2_ros's
        TransformBroadcaster on `node` otherwise, if tf2_ros is there (said once in its log)."""
        self.child = child
        if broadcaster is None:
            try:
                from tf2_ros import TransformBroadcaster
            except ImportError:
                if node is not None:
                    node.get_logger().info("tf2_ros not installed: publishing robot_pose only, no TF")
            else:
                broadcaster = TransformBroadcaster(node)
        self.broadcaster = broadcaster

    @property
    def available(self) -> bool:
        return self.broadcaster is not None

    def send(self, pose: Any) -> None:
        """`pose`: a geometry_msgs/PoseStamped; its header's frame is the transform's parent."""
        if self.broadcaster is None:
            return
        from geometry_msgs.msg import TransformStamped

        t = TransformStamped()
        t.header, t.child_frame_id = pose.header, self.child
        p = pose.pose.position
        t.transform.translation.x, t.transform.translation.y, t.transform.translation.z = p.x, p.y, p.z
        t.transform.rotation = pose.pose.orientation
        self.broadcaster.sendTransform(t)
