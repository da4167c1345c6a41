"""`conceptagent perceive --bag`: a recording written here with rosbags (MCAP and sqlite3, colour
as rgb8, depth as 16UC1 millimetres or 32FC1 metres, pose as PoseStamped of the optical frame or
Odometry of a REP 103 link), read back through the command, and the map checked against where
the synthetic camera's things really are."""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from conceptagent_ros.perception.frames import look_at, rotation_to_quaternion
from conceptagent_ros.perception.ros_images import LINK_T_OPTICAL, numpy_to_image_fields
from conceptagent_ros.scene.house_geometry import layout
from conceptagent_ros.scene.loader import load_scene
from conceptagent_ros.sim.rgbd_camera import CameraConfig, RenderScene

TEST_DIR = Path(__file__).parent
TARGETS = ["fridge", "dining_table", "shelf", "garbage_can"]


def write_bag(folder: Path, storage: str, depth_encoding: str, pose_kind: str, frames: int = 16) -> dict[str, str]:
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore

    ts = get_typestore(Stores.ROS2_JAZZY)
    msgs = ts.types
    scene = load_scene("studio_kitchen")
    boxes = layout(scene)
    room = scene.rooms["kitchen_1"]
    render = RenderScene(boxes.values(), room)
    camera = CameraConfig(width=160, height=120)
    k = camera.intrinsics()
    Header, Time = msgs["std_msgs/msg/Header"], msgs["builtin_interfaces/msg/Time"]
    Image, Info = msgs["sensor_msgs/msg/Image"], msgs["sensor_msgs/msg/CameraInfo"]
    RegionOfInterest = msgs["sensor_msgs/msg/RegionOfInterest"]
    Pose, Point = msgs["geometry_msgs/msg/Pose"], msgs["geometry_msgs/msg/Point"]
    Quaternion = msgs["geometry_msgs/msg/Quaternion"]
    topics = {"rgb": "/camera/color/image_raw", "depth": "/camera/depth/image_raw", "info": "/camera/color/camera_info",
              "pose": "/camera/pose" if pose_kind == "pose" else "/odom"}
    plugin = StoragePlugin.MCAP if storage == "mcap" else StoragePlugin.SQLITE3
    with Writer(folder, version=9, storage_plugin=plugin) as writer:
        c_rgb = writer.add_connection(topics["rgb"], "sensor_msgs/msg/Image", typestore=ts)
        c_depth = writer.add_connection(topics["depth"], "sensor_msgs/msg/Image", typestore=ts)
        c_info = writer.add_connection(topics["info"], "sensor_msgs/msg/CameraInfo", typestore=ts)
        pose_type = "geometry_msgs/msg/PoseStamped" if pose_kind == "pose" else "nav_msgs/msg/Odometry"
        c_pose = writer.add_connection(topics["pose"], pose_type, typestore=ts)
        for i in range(frames):
            a = 2 * math.pi * i / frames
            eye = (3.0 + 0.3 * math.cos(a), 2.5 + 0.3 * math.sin(a), 1.4)
            target = (3.0 + 3.0 * math.cos(a), 2.5 + 3.0 * math.sin(a), 0.6)
            pose = look_at(eye, target)
            frame = render.render(pose, camera)
            t_ns = 1_000_000_000 + i * 100_000_000
            stamp = Time(sec=t_ns // 1_000_000_000, nanosec=t_ns % 1_000_000_000)
            header = Header(stamp=stamp, frame_id="camera_color_optical_frame")
            depth = frame.depth
            if depth_encoding == "16UC1":
                mm = np.nan_to_num(depth * 1000.0, nan=0.0).astype("<u2")
                fields = {"height": mm.shape[0], "width": mm.shape[1], "encoding": "16UC1", "is_bigendian": 0,
                          "step": mm.shape[1] * 2, "data": mm.view(np.uint8).reshape(-1)}
            else:
                fields = numpy_to_image_fields(depth.astype(np.float32))
            # colour a little later than depth, as two real streams are
            rgb_header = Header(stamp=Time(sec=stamp.sec, nanosec=stamp.nanosec + 3_000_000), frame_id=header.frame_id)
            writer.write(c_rgb, t_ns + 3_000_000, ts.serialize_cdr(Image(header=rgb_header, **numpy_to_image_fields(frame.rgb)),
                                                                   "sensor_msgs/msg/Image"))
            writer.write(c_depth, t_ns, ts.serialize_cdr(Image(header=header, **fields), "sensor_msgs/msg/Image"))
            if i == 0:
                info = Info(header=header, height=k.height, width=k.width, distortion_model="plumb_bob",
                            d=np.zeros(5), k=k.k().reshape(-1), r=np.eye(3).reshape(-1),
                            p=np.hstack([k.k(), np.zeros((3, 1))]).reshape(-1), binning_x=0, binning_y=0,
                            roi=RegionOfInterest(x_offset=0, y_offset=0, height=0, width=0, do_rectify=False))
                writer.write(c_info, t_ns, ts.serialize_cdr(info, "sensor_msgs/msg/CameraInfo"))
            body = pose if pose_kind == "pose" else pose @ np.linalg.inv(LINK_T_OPTICAL)
            q = rotation_to_quaternion(body[:3, :3])
            p = Pose(position=Point(x=body[0, 3], y=body[1, 3], z=body[2, 3]),
                     orientation=Quaternion(x=q[0], y=q[1], z=q[2], w=q[3]))
            if pose_kind == "pose":
                msg = msgs["geometry_msgs/msg/PoseStamped"](header=Header(stamp=stamp, frame_id="map"), pose=p)
            else:
                cov = np.zeros(36)
                twist = msgs["geometry_msgs/msg/TwistWithCovariance"](
                    twist=msgs["geometry_msgs/msg/Twist"](linear=msgs["geometry_msgs/msg/Vector3"](x=0.0, y=0.0, z=0.0),
                                                          angular=msgs["geometry_msgs/msg/Vector3"](x=0.0, y=0.0, z=0.0)),
                    covariance=cov)
                msg = msgs["nav_msgs/msg/Odometry"](header=Header(stamp=stamp, frame_id="odom"), child_frame_id="camera_link",
                                                     pose=msgs["geometry_msgs/msg/PoseWithCovariance"](pose=p, covariance=cov),
                                                     twist=twist)
            writer.write(c_pose, t_ns, ts.serialize_cdr(msg, pose_type))
    return topics


def perceive(bag: Path, topics: dict[str, str], out: Path, config: Path, pose_frame: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TEST_DIR), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(
        [sys.executable, "-m", "conceptagent_ros.cli", "perceive", "--bag", str(bag), "--rgb", topics["rgb"],
         "--depth", topics["depth"], "--camera-info", topics["info"], "--pose", topics["pose"], "--pose-frame", pose_frame,
         "--config", str(config), "--vocabulary", ",".join(TARGETS), "--out", str(out)],
        capture_output=True, text=True, timeout=300, env=env)


@pytest.fixture(scope="module")
def plugin_config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cfg") / "perception.yaml"
    path.write_text(yaml.safe_dump({
        "detector": {"kind": "plugin", "plugin": "colour_blob_detector:ColourBlobDetector"},
        "segmenter": {"kind": "box"}, "embedder": {"kind": "none"}}))
    return path


@pytest.mark.parametrize(("storage", "depth_encoding", "pose_kind"), [
    ("mcap", "16UC1", "pose"), ("sqlite3", "32FC1", "odometry")])
def test_perceive_bag_builds_the_map_of_what_was_recorded(tmp_path: Path, plugin_config: Path, storage: str,
                                                          depth_encoding: str, pose_kind: str) -> None:
    bag = tmp_path / "recording"
    topics = write_bag(bag, storage, depth_encoding, pose_kind)
    out = tmp_path / "out"
    result = perceive(bag, topics, out, plugin_config, "optical" if pose_kind == "pose" else "link")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "16 frames" in result.stdout
    graph = json.loads((out / "graph.json").read_text())
    truth = layout(load_scene("studio_kitchen"))
    for kind in TARGETS:
        found = [o for o in graph["objects"] if o["label"] == kind]
        expected = [b for b in truth.values() if b.category == kind]
        assert len(found) == len(expected), f"{kind}: {[o['id'] for o in found]}"
        for obj in found:  # what the camera saw of it lies on its true box (it sees faces, not centres)
            pts = np.asarray(obj["points"])
            inside = max(np.mean(np.all(np.abs(pts - b.center) <= np.asarray(b.size) / 2 + 0.05, axis=1))
                         for b in expected)
            assert inside >= 0.9, f"{obj['id']}: only {inside:.0%} of its points on a {kind}"
    assert (out / "objects.png").stat().st_size > 10_000
    assert (out / "objects.ply").read_text().startswith("ply")


def test_perceive_bag_names_a_missing_topic(tmp_path: Path, plugin_config: Path) -> None:
    bag = tmp_path / "recording"
    topics = write_bag(bag, "mcap", "16UC1", "pose", frames=2)
    result = perceive(bag, {**topics, "depth": "/camera/aligned_depth"}, tmp_path / "out", plugin_config, "optical")
    assert result.returncode == 2
    assert "no topic /camera/aligned_depth" in result.stderr and "/camera/depth/image_raw" in result.stderr


def test_perceive_bag_refuses_what_is_not_a_bag(tmp_path: Path, plugin_config: Path) -> None:
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "metadata.yaml").write_text("nonsense: [")
    result = perceive(tmp_path / "junk", {"rgb": "/a", "depth": "/b", "info": "/c", "pose": "/d"}, tmp_path / "out",
                      plugin_config, "optical")
    assert result.returncode == 2 and "not a readable rosbag2" in result.stderr
