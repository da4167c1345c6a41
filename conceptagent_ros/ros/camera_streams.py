"""A simulated robot's RGB-D camera on ROS, for the perception node: the topics a camera driver and a
simulator's segmentation camera publish, and what the perception node said back. Both simulated
robots send their frames through it: the robot stand-in (ros/robot_standin_node.py) and the
physical household body (ros/manipulation_node.py with perception camera).

Publishes:   rgb, depth (sensor_msgs/Image), camera_info (sensor_msgs/CameraInfo), pose
             (geometry_msgs/PoseStamped, the lens's optical frame), instances (sensor_msgs/Image 32SC1:
             per pixel an index into instance_names, -1 for none) and instance_names (std_msgs/String,
             latched JSON [[id, label], ...]: every thing of the scene, once, so no frame waits for names)
Subscribes:  perceived_graph (conceptagent_ros/SceneGraph): to know when a frame has been fused, and
             what perception says there is
"""
from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence

import numpy as np
from geometry_msgs.msg import PoseStamped
from rclpy.callback_groups import CallbackGroup
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import CameraInfo, Image
from std_msgs.msg import String

from conceptagent_ros.msg import SceneGraph
from conceptagent_ros.perception.frames import Frame
from conceptagent_ros.ros.conversions.perception import frame_messages, image_msg
from conceptagent_ros.sim.perceived_ids import PerceivedThing

POSE_WAIT_S = 5.0  # for the perception node's pose subscription before the first look

Stamp = tuple[int, int]  # (sec, nanosec)


def things_of(graph: SceneGraph) -> list[PerceivedThing]:
    """What a perceived_graph says of each object, as the id resolver (sim/perceived_ids.py) reads it."""
    things = []
    for o in graph.objects:
        p, size = o.pose.position, o.size
        things.append(PerceivedThing(o.id, o.label, (p.x, p.y, p.z), p.z + size.z / 2, o.parent or None,
                                     {k: True for k in o.state}))
    return things


class CameraStreams:
    def __init__(self, node: Node, group: CallbackGroup, world_frame: str,
                 on_perceived: Callable[[SceneGraph], None] | None = None):
        self.node, self.world_frame = node, world_frame
        reliable = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE)
        self.rgb_pub = node.create_publisher(Image, "rgb", reliable)
        self.depth_pub = node.create_publisher(Image, "depth", reliable)
        self.info_pub = node.create_publisher(CameraInfo, "camera_info", reliable)
        self.pose_pub = node.create_publisher(PoseStamped, "pose", 20)
        self.instances_pub = node.create_publisher(Image, "instances", reliable)
        latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self.names_pub = node.create_publisher(String, "instance_names", latched)
        self.perceived: SceneGraph | None = None
        self._on_perceived = on_perceived
        node.create_subscription(SceneGraph, "perceived_graph", self._perceived, reliable, callback_group=group)
        self.streams_up_at: float | None = None  # when colour, depth and camera info were all matched

    def _perceived(self, msg: SceneGraph) -> None:
        self.perceived = msg
        if self._on_perceived is not None:
            self._on_perceived(msg)

    def name_instances(self, labelled: Sequence[tuple[str, str]]) -> None:
        """What each instance index means: (id, label) by index, for every frame from now on."""
        self.perceived = None
        self.names_pub.publish(String(data=json.dumps([list(pair) for pair in labelled])))

    def perception_listens(self) -> bool:
        return self.rgb_pub.get_subscription_count() > 0

    def streams_matched(self) -> bool:
        """Every stream a frame needs is matched: a frame sent while DDS still discovers one of them
        is lost, and each lost frame costs a frame's timeout (the camera pose too, unless perception
        takes poses from TF: given up on after POSE_WAIT_S)."""
        if any(p.get_subscription_count() == 0 for p in (self.rgb_pub, self.depth_pub, self.info_pub)):
            return False
        self.streams_up_at = self.streams_up_at or time.monotonic()
        return self.pose_pub.get_subscription_count() > 0 or time.monotonic() - self.streams_up_at >= POSE_WAIT_S

    def publish(self, frame: Frame, instances: np.ndarray) -> Stamp:
        """One frame, stamped now; `instances` indexes the names given to name_instances. Returns the
        stamp, for `fused`."""
        msgs = frame_messages(frame, frame.intrinsics, self.world_frame)
        msgs.stamp(self.node.get_clock().now().nanoseconds * 1e-9)
        masks = image_msg(instances.astype(np.int32), msgs.rgb.header.frame_id)
        masks.header.stamp = msgs.rgb.header.stamp
        self.info_pub.publish(msgs.info)
        self.pose_pub.publish(msgs.pose)
        self.rgb_pub.publish(msgs.rgb)
        self.depth_pub.publish(msgs.depth)
        self.instances_pub.publish(masks)
        stamp = msgs.rgb.header.stamp
        return stamp.sec, stamp.nanosec

    def fused(self, sent: Stamp) -> bool:
        """The perception node has published a graph of the frame stamped `sent` (or a later one)."""
        seen = self.perceived.header.stamp if self.perceived is not None else None
        return seen is not None and (seen.sec, seen.nanosec) >= sent
