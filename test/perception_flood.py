"""Publishes camera frames as fast as asked, from a process of its own (so the flood does not wait
on the node it floods): python perception_flood.py DOMAIN RATE SECONDS. Prints how many it sent."""
from __future__ import annotations

import math
import sys
import time

import rclpy
from geometry_msgs.msg import PoseStamped
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import CameraInfo, Image

from conceptagent_ros.perception.frames import look_at
from conceptagent_ros.ros.conversions.perception import frame_messages
from conceptagent_ros.scene.house_geometry import layout
from conceptagent_ros.scene.loader import load_scene
from conceptagent_ros.sim.rgbd_camera import CameraConfig, RenderScene


def main() -> None:
    domain, rate, seconds = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
    scene = load_scene("studio_kitchen")
    render = RenderScene(layout(scene).values(), scene.rooms["kitchen_1"])
    camera = CameraConfig(width=160, height=120)
    k = camera.intrinsics()
    # Realistic poses: the node looks each frame's up
    shots = [render.render(look_at((3.0, 2.5, 1.4), (3.0 + 3 * math.cos(a), 2.5 + 3 * math.sin(a), 0.6)), camera)
             for a in (2 * math.pi * i / 4 for i in range(4))]
    rclpy.init(domain_id=domain)
    node = rclpy.create_node("flood")
    rgb = node.create_publisher(Image, "rgb", qos_profile_sensor_data)
    depth = node.create_publisher(Image, "depth", qos_profile_sensor_data)
    info_pub = node.create_publisher(CameraInfo, "camera_info", qos_profile_sensor_data)
    pose_pub = node.create_publisher(PoseStamped, "pose", 20)
    messages = [frame_messages(frame, k, "map") for frame in shots]
    deadline = time.monotonic() + 5.0
    while rgb.get_subscription_count() == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    sent, start = 0, time.monotonic()
    while time.monotonic() - start < seconds:
        shot = messages[sent % len(messages)]
        shot.stamp(500.0 + sent / rate)
        info_pub.publish(shot.info)
        pose_pub.publish(shot.pose)
        rgb.publish(shot.rgb)
        depth.publish(shot.depth)
        sent += 1
        time.sleep(max(0.0, start + sent / rate - time.monotonic()))
    print(sent, flush=True)
    node.destroy_node()
    rclpy.shutdown()


if __name__ == "__main__":
    main()
