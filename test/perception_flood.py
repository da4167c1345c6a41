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
from conceptagent_ros.perception.ros_images import numpy_to_image_fields
from conceptagent_ros.scene.loader import load_scene
from conceptagent_ros.sim.household_geometry import layout
from conceptagent_ros.sim.rgbd_camera import CameraConfig, RenderScene


def main() -> None:
    domain, rate, seconds = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
    scene = load_scene("studio_kitchen")
    render = RenderScene(layout(scene).values(), scene.rooms["kitchen_1"])
    camera = CameraConfig(width=160, height=120)
    k = camera.intrinsics()
    shots = []
    for i in range(4):
        a = 2 * math.pi * i / 4
        pose = look_at((3.0, 2.5, 1.4), (3.0 + 3 * math.cos(a), 2.5 + 3 * math.sin(a), 0.6))
        frame = render.render(pose, camera)
        msgs = []
        for array in (frame.rgb, frame.depth):
            f = numpy_to_image_fields(array)
            m = Image(height=f["height"], width=f["width"], encoding=f["encoding"], is_bigendian=0, step=f["step"])
            m.data = f["data"].tobytes()
            m.header.frame_id = "camera_optical"
            msgs.append(m)
        p = PoseStamped()
        p.header.frame_id = "map"
        p.pose.position.x, p.pose.position.y, p.pose.position.z = (float(v) for v in pose[:3, 3])
        # yaw-only camera turned to optical: the node only needs a consistent pose here
        p.pose.orientation.w = 1.0
        shots.append((p, *msgs))
    rclpy.init(domain_id=domain)
    node = rclpy.create_node("flood")
    rgb = node.create_publisher(Image, "rgb", qos_profile_sensor_data)
    depth = node.create_publisher(Image, "depth", qos_profile_sensor_data)
    info_pub = node.create_publisher(CameraInfo, "camera_info", qos_profile_sensor_data)
    pose_pub = node.create_publisher(PoseStamped, "pose", 20)
    info = CameraInfo(width=k.width, height=k.height)
    info.k = [float(v) for v in k.k().reshape(-1)]
    deadline = time.monotonic() + 5.0
    while rgb.get_subscription_count() == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    sent, start = 0, time.monotonic()
    while time.monotonic() - start < seconds:
        p, c, d = shots[sent % len(shots)]
        stamp = 500.0 + sent / rate
        for m in (p, c, d, info):
            m.header.stamp.sec, m.header.stamp.nanosec = int(stamp), int((stamp % 1) * 1e9)
        info_pub.publish(info)
        pose_pub.publish(p)
        rgb.publish(c)
        depth.publish(d)
        sent += 1
        time.sleep(max(0.0, start + sent / rate - time.monotonic()))
    print(sent, flush=True)
    node.destroy_node()
    rclpy.shutdown()


if __name__ == "__main__":
    main()
