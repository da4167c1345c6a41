"""The perception node under real rclpy: RGB-D, CameraInfo and poses in; the fused graph,
detections, markers and the query services out; models loaded in lifecycle configure; and a
flood of frames at ten times camera rate dropped, not queued."""
from __future__ import annotations

import math
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml
from ros_helpers import Spinning, require_ros, wait_future, wait_until

require_ros()

from geometry_msgs.msg import PoseStamped  # noqa: E402
from rclpy.executors import MultiThreadedExecutor  # noqa: E402
from rclpy.lifecycle import TransitionCallbackReturn  # noqa: E402
from rclpy.node import Node  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from rclpy.qos import qos_profile_sensor_data  # noqa: E402
from sensor_msgs.msg import CameraInfo, Image  # noqa: E402
from visualization_msgs.msg import MarkerArray  # noqa: E402

from conceptagent_ros.msg import ObjectDetections, SceneGraph  # noqa: E402
from conceptagent_ros.perception.frames import look_at  # noqa: E402
from conceptagent_ros.scene.house_geometry import layout  # noqa: E402
from conceptagent_ros.scene.loader import load_scene  # noqa: E402
from conceptagent_ros.sim.rgbd_camera import CameraConfig, RenderScene  # noqa: E402

TARGETS = ["fridge", "dining_table", "shelf"]


@pytest.fixture(scope="module")
def frames():
    scene = load_scene("studio_kitchen")
    render = RenderScene(layout(scene).values(), scene.rooms["kitchen_1"])
    camera = CameraConfig(width=160, height=120)
    out = []
    for i in range(8):
        a = 2 * math.pi * i / 8
        eye = (3.0, 2.5, 1.4)
        pose = look_at(eye, (3.0 + 3 * math.cos(a), 2.5 + 3 * math.sin(a), 0.6))
        out.append((pose, render.render(pose, camera)))
    return out, camera.intrinsics()


def config_file(tmp_path: Path) -> str:
    path = tmp_path / "perception.yaml"
    path.write_text(yaml.safe_dump({"detector": {"kind": "sim_paint"}, "segmenter": {"kind": "box"},
                                    "embedder": {"kind": "none"}, "vocabulary": TARGETS}))
    return str(path)


def perception_node(context, **params):
    from conceptagent_ros.ros.perception_node import PerceptionNode

    return PerceptionNode(context=context, parameter_overrides=[Parameter(k, value=v) for k, v in params.items()])


class Camera:
    """Publishes frames as a camera driver does: Image rgb8 + 32FC1, CameraInfo, PoseStamped."""

    def __init__(self, context, intrinsics):
        self.node = Node("fake_camera", context=context)
        self.rgb = self.node.create_publisher(Image, "rgb", qos_profile_sensor_data)
        self.depth = self.node.create_publisher(Image, "depth", qos_profile_sensor_data)
        self.info = self.node.create_publisher(CameraInfo, "camera_info", qos_profile_sensor_data)
        self.pose = self.node.create_publisher(PoseStamped, "pose", 20)
        self.k = intrinsics
        self.sent = 0

    def prepare(self, pose: np.ndarray, frame):
        """The messages of one shot, built once: a flood re-stamps and sends them."""
        from conceptagent_ros.ros.conversions.perception import frame_messages

        return frame_messages(frame, self.k, "map")

    def send(self, shot, stamp_s: float) -> None:
        shot.stamp(stamp_s)
        self.info.publish(shot.info)
        self.pose.publish(shot.pose)  # the pose first, as odometry runs ahead of the camera
        self.rgb.publish(shot.rgb)
        self.depth.publish(shot.depth)
        self.sent += 1


def spin(context, *nodes) -> Spinning:
    executor = MultiThreadedExecutor(num_threads=4, context=context)
    for node in nodes:
        executor.add_node(node)
    return Spinning(executor, "perception-test-spin")


def test_frames_become_a_graph_with_detections_markers_and_queries(ros_context, frames, tmp_path):
    from conceptagent_ros.srv import GetSceneGraph, QueryObjects

    shots, k = frames
    node = perception_node(ros_context, config=config_file(tmp_path))
    assert node.trigger_configure() == TransitionCallbackReturn.SUCCESS
    node.trigger_activate()
    camera = Camera(ros_context, k)
    graphs: list[SceneGraph] = []
    detections: list[ObjectDetections] = []
    markers: list[MarkerArray] = []
    watcher = Node("watcher", context=ros_context)
    watcher.create_subscription(SceneGraph, "perceived_graph", graphs.append, 10)
    watcher.create_subscription(ObjectDetections, "detections", detections.append, 10)
    watcher.create_subscription(MarkerArray, "perception_markers", markers.append, 10)
    spinning = spin(ros_context, node, camera.node, watcher)
    try:
        wait_until(lambda: camera.rgb.get_subscription_count() > 0 and watcher.count_publishers("perceived_graph") > 0)
        time.sleep(0.5)
        for i, (pose, frame) in enumerate(shots):
            camera.send(camera.prepare(pose, frame), 100.0 + 0.1 * i)
            wait_until(lambda i=i: node.frames >= i + 1 or node.dropped > 0, timeout=10.0, what=f"frame {i} processed")
        wait_until(lambda: graphs and {o.label for o in graphs[-1].objects} >= set(TARGETS), timeout=10.0,
                   what="every target in the graph")
        graph = graphs[-1]
        truth = layout(load_scene("studio_kitchen"))
        for obj in graph.objects:  # each box stands where the thing of that label stands
            nearest = min(math.dist((obj.pose.position.x, obj.pose.position.y), b.center[:2])
                          for b in truth.values() if b.category == obj.label)
            assert nearest < 0.6, f"{obj.id} is {nearest:.2f} m from any {obj.label}"
        assert graph.header.frame_id == "map" and graph.header.stamp.sec >= 100
        assert detections and any(d.label in TARGETS for msg in detections for d in msg.detections)
        assert markers and any(m.ns == "perception/boxes" for m in markers[-1].markers)
        client = watcher.create_client(QueryObjects, "perception/query_objects")
        assert client.wait_for_service(timeout_sec=5.0)
        answer = wait_future(client.call_async(QueryObjects.Request(text="the fridge", max_results=2)))
        assert answer.objects and answer.objects[0].label == "fridge" and answer.scores[0] >= answer.scores[-1]
        whole = watcher.create_client(GetSceneGraph, "perception/get_scene_graph")
        assert whole.wait_for_service(timeout_sec=5.0)
        assert len(wait_future(whole.call_async(GetSceneGraph.Request())).graph.objects) == len(graph.objects)
        # the map's points of objects, for the manipulation planners: each cloud fills its object's box
        from conceptagent_ros.ros.conversions.clouds import cloud_xyz
        from conceptagent_ros.srv import GetObjectPoints

        points = watcher.create_client(GetObjectPoints, "perception/get_object_points")
        assert points.wait_for_service(timeout_sec=5.0)
        fridge = next(o for o in graph.objects if o.label == "fridge")
        reply = wait_future(points.call_async(GetObjectPoints.Request(ids=[fridge.id, "unicorn_9"])))
        assert not reply.success and "unicorn_9" in reply.message and list(reply.ids) == [fridge.id]
        assert list(reply.labels) == ["fridge"]
        cloud = cloud_xyz(reply.clouds[0])
        assert len(cloud) > 50 and reply.clouds[0].header.frame_id == "map"
        centre = np.array([fridge.pose.position.x, fridge.pose.position.y, fridge.pose.position.z])
        half = np.array([fridge.size.x, fridge.size.y, fridge.size.z]) / 2 + 0.05
        # within the (turned) box: in x-y no further than its corners, in z within its height
        inside = (np.linalg.norm(cloud[:, :2] - centre[:2], axis=1) <= np.hypot(half[0], half[1])) & \
            (np.abs(cloud[:, 2] - centre[2]) <= half[2])
        assert inside.mean() > 0.95, f"{(~inside).sum()} of the fridge's {len(cloud)} points lie outside its box"
        every = wait_future(points.call_async(GetObjectPoints.Request()))
        assert every.success and sorted(every.ids) == sorted(o.id for o in graph.objects)
    finally:
        spinning.stop()


def test_a_frame_taken_up_before_its_pose_waits_for_it_and_one_whose_pose_never_comes_is_dropped(
        ros_context, frames, tmp_path):
    """Odometry, camera info and the images are separate topics: under load the images' callback
    can run before the camera's info and the pose stamped with them have been taken up. The frame
    waits for them (pose_wait), and goes once the pose is clearly not coming, rather than holding
    the images' callback."""
    shots, k = frames
    node = perception_node(ros_context, config=config_file(tmp_path), pose_wait=2.0)
    assert node.trigger_configure() == TransitionCallbackReturn.SUCCESS
    node.trigger_activate()
    camera = Camera(ros_context, k)
    spinning = spin(ros_context, node, camera.node)
    try:
        wait_until(lambda: camera.rgb.get_subscription_count() > 0 and camera.pose.get_subscription_count() > 0)
        time.sleep(0.5)
        first = camera.prepare(*shots[0])
        first.stamp(300.0)
        camera.rgb.publish(first.rgb)
        camera.depth.publish(first.depth)
        time.sleep(0.5)  # the images are in; the camera's info and pose are not
        assert node.frames == 0 and node.dropped == 0
        camera.info.publish(first.info)
        camera.pose.publish(first.pose)
        wait_until(lambda: node.frames == 1, timeout=10.0, what="the frame processed once its pose came")
        assert node.dropped == 0
        second = camera.prepare(*shots[1])
        second.stamp(300.1)
        camera.pose.publish(second.pose)  # a pose past the third frame's: the third's will not come
        time.sleep(0.2)
        third = camera.prepare(*shots[2])
        third.stamp(299.0)
        camera.rgb.publish(third.rgb)
        camera.depth.publish(third.depth)
        wait_until(lambda: node.dropped == 1, timeout=1.5, what="the frame without a pose dropped before pose_wait")
        assert node.frames == 1
    finally:
        spinning.stop()


def rss_mib() -> float:
    with open("/proc/self/status", encoding="ascii") as f:
        return next(int(line.split()[1]) / 1024 for line in f if line.startswith("VmRSS:"))


def test_a_flood_of_frames_is_dropped_not_queued(ros_context, frames, tmp_path):
    """Ten times camera rate (300 Hz) for four seconds from another process: the node keeps up by
    dropping frames (DDS history depth 1, a pairing queue of two), so memory stays where it was."""
    shots, k = frames
    node = perception_node(ros_context, config=config_file(tmp_path))
    assert node.trigger_configure() == TransitionCallbackReturn.SUCCESS
    node.trigger_activate()
    camera = Camera(ros_context, k)
    prepared = [camera.prepare(pose, frame) for pose, frame in shots]
    spinning = spin(ros_context, node, camera.node)
    try:
        wait_until(lambda: camera.rgb.get_subscription_count() > 0)
        time.sleep(0.5)
        for i in range(30):  # warm up at camera rate: the map and the allocator settle
            camera.send(prepared[i % len(prepared)], 200.0 + i / 30.0)
            time.sleep(1 / 30.0)
        wait_until(lambda: node.frames > 5, timeout=10.0)
        before, processed_before = rss_mib(), node.frames
        flood = subprocess.run([sys.executable, str(Path(__file__).parent / "perception_flood.py"),
                                str(ros_context.get_domain_id()), "300", "4"],
                               capture_output=True, text=True, timeout=120)
        assert flood.returncode == 0, flood.stderr
        sent = int(flood.stdout.split()[-1])
        time.sleep(1.0)
        after = rss_mib()
        processed = node.frames - processed_before
        sync = node._sync
        assert sent >= 900, f"the flood was only {sent} frames in 4 s"
        assert 0 < processed < sent, f"{processed} of {sent} frames processed: the node did not drop"
        assert sync is None or not hasattr(sync, "_queues") or all(len(q) <= sync.queue_size for q in sync._queues)
        assert after - before < 60, f"memory grew {after - before:.0f} MiB under the flood"
    finally:
        spinning.stop()


def test_configure_fails_with_a_reason_when_models_are_missing(ros_context, tmp_path):
    path = tmp_path / "perception.yaml"
    path.write_text(yaml.safe_dump({"detector": {"kind": "owlv2", "model": str(tmp_path / "no_such_model")},
                                    "embedder": {"kind": "none"}, "segmenter": {"kind": "box"}}))
    node = perception_node(ros_context, config=str(path))
    assert node.trigger_configure() == TransitionCallbackReturn.FAILURE
    assert node.pipeline is None


def test_the_robot_params_file_names_only_parameters_the_node_declares(ros_context):
    params = yaml.safe_load((Path(__file__).resolve().parent.parent / "config" / "ros" / "robot.yaml").read_text())
    given = set(params["/conceptagent/perception"]["ros__parameters"])
    node = perception_node(ros_context)
    declared = {name for name in node._parameters if name != "use_sim_time"}
    assert given <= declared, f"unknown parameters: {given - declared}"
    node.destroy_node()


def test_the_executable_exits_2_with_the_reason_on_bad_models(tmp_path):
    path = tmp_path / "perception.yaml"
    path.write_text(yaml.safe_dump({"detector": {"kind": "grounding_dino", "model": str(tmp_path / "none")},
                                    "embedder": {"kind": "none"}, "segmenter": {"kind": "box"}}))
    script = Path(__file__).resolve().parent.parent / "scripts" / "perception_node"
    from conceptagent_ros.ros.domains import reserved_domain

    with reserved_domain() as domain:
        result = subprocess.run([sys.executable, str(script), "--ros-args", "-p", f"config:={path}"],
                                capture_output=True, text=True, timeout=120,
                                env={**__import__("os").environ, "ROS_DOMAIN_ID": str(domain)})
    assert result.returncode == 2
    assert "models fetch" in result.stderr + result.stdout
