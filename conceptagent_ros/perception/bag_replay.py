"""Build an object map from a rosbag2 recording (MCAP or sqlite3) with rosbags: no ROS needed.

RGB and depth are paired by approximate time, the camera pose is the pose message nearest in time
(PoseStamped, Odometry, TransformStamped...), and intrinsics come from CameraInfo."""
from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.perception.frames import Frame, Intrinsics
from conceptagent_ros.perception.pipeline import FramePipeline
from conceptagent_ros.perception.ros_images import camera_info_intrinsics, image_to_numpy, pose_to_matrix, stamp_seconds
from conceptagent_ros.perception.sync import ApproximateSync, nearest

log = logging.getLogger(__name__)


class BagError(ConceptAgentError):
    """The recording cannot be read, or lacks a topic it was asked for."""


@dataclass(frozen=True)
class BagTopics:
    rgb: str
    depth: str
    camera_info: str
    pose: str | None = None
    pose_frame: str = "optical"  # "link": the pose is a REP 103 body/camera link (x forward)


@dataclass
class ReplayReport:
    frames: int = 0
    skipped_no_pose: int = 0
    skipped_bad: list[str] = field(default_factory=list)
    dropped_unpaired: int = 0
    seconds: dict[str, float] = field(default_factory=dict)


def replay_bag(path: str | Path, topics: BagTopics, pipeline: FramePipeline, *, every: int = 1,
               max_frames: int | None = None, slop: float = 0.05, max_pose_gap: float = 0.2,
               progress: Callable[[int, int], None] | None = None) -> ReplayReport:
    """Feed every `every`-th RGB-D pair of the recording to the pipeline."""
    from rosbags.highlevel import AnyReader
    from rosbags.typesys import Stores, get_typestore

    source = Path(path)
    if not source.exists():
        raise BagError(f"{source}: no such bag (a rosbag2 folder, or its .mcap / .db3 file)")
    bag_dir = source.parent if source.is_file() and source.suffix in (".mcap", ".db3") and \
        (source.parent / "metadata.yaml").exists() else source
    report = ReplayReport()
    try:
        reader = AnyReader([bag_dir], default_typestore=get_typestore(Stores.ROS2_JAZZY))
        reader.open()
    except Exception as e:  # rosbags raises its own error types per storage; all mean "not a readable bag"
        raise BagError(f"{bag_dir}: not a readable rosbag2 recording: {e}") from e
    try:
        by_topic = {c.topic: c for c in reader.connections}
        wanted = [topics.rgb, topics.depth, topics.camera_info] + ([topics.pose] if topics.pose else [])
        missing = [t for t in wanted if t not in by_topic]
        if missing:
            raise BagError(f"{bag_dir}: no topic {', '.join(missing)}; it has {', '.join(sorted(by_topic)) or 'none'}")
        # Poses and intrinsics first (small): each frame looks up the pose nearest in time
        pose_stamps: list[float] = []
        poses: list[np.ndarray] = []
        intrinsics: Intrinsics | None = None
        small = [by_topic[topics.camera_info]] + ([by_topic[topics.pose]] if topics.pose else [])
        for conn, _, raw in reader.messages(connections=small):
            msg: Any = reader.deserialize(raw, conn.msgtype)
            if conn.topic == topics.camera_info:
                intrinsics = intrinsics or camera_info_intrinsics(msg)
            else:
                header = getattr(msg, "header", None)
                pose_stamps.append(stamp_seconds(header) if header is not None else 0.0)
                poses.append(pose_to_matrix(msg, topics.pose_frame))
        if intrinsics is None:
            raise BagError(f"{bag_dir}: no CameraInfo message on {topics.camera_info}")
        order = np.argsort(pose_stamps)
        pose_stamps = [pose_stamps[i] for i in order]
        poses = [poses[i] for i in order]
        if not topics.pose:
            log.warning("no pose topic: the camera is taken to stand still at the origin")
        total = by_topic[topics.rgb].msgcount // max(1, every)
        pairs = 0

        def on_pair(rgb_msg: Any, depth_msg: Any) -> None:
            nonlocal pairs
            pairs += 1
            if (pairs - 1) % every or (max_frames is not None and report.frames >= max_frames):
                return
            stamp = stamp_seconds(rgb_msg.header)
            if poses:
                i = nearest(pose_stamps, stamp)
                if abs(pose_stamps[i] - stamp) > max_pose_gap:
                    report.skipped_no_pose += 1
                    return
                pose = poses[i]
            else:
                pose = np.eye(4)
            try:
                rgb, depth = image_to_numpy(rgb_msg), image_to_numpy(depth_msg)
                k = intrinsics if (intrinsics.width, intrinsics.height) == (depth.shape[1], depth.shape[0]) \
                    else _scaled(intrinsics, depth.shape[1], depth.shape[0])
                if rgb.shape[:2] != depth.shape[:2]:
                    rgb = _resize_nearest(rgb, depth.shape[:2])
                frame = Frame(rgb=rgb, depth=depth, intrinsics=k, world_T_camera=pose, stamp=stamp,
                              frame_id=str(rgb_msg.header.frame_id))
            except ValueError as e:
                report.skipped_bad.append(f"t={stamp:.3f}: {e}")
                return
            result = pipeline.process(frame)
            for stage, s in result.seconds.items():
                report.seconds[stage] = report.seconds.get(stage, 0.0) + s
            report.frames += 1
            if progress is not None:
                progress(report.frames, total)

        sync = ApproximateSync(2, on_pair, slop=slop, queue_size=30)
        streams = {topics.rgb: 0, topics.depth: 1}
        for conn, _, raw in reader.messages(connections=[by_topic[topics.rgb], by_topic[topics.depth]]):
            if max_frames is not None and report.frames >= max_frames:
                break
            image: Any = reader.deserialize(raw, conn.msgtype)
            sync.add(streams[conn.topic], stamp_seconds(image.header), image)
        report.dropped_unpaired = sync.dropped
    finally:
        reader.close()
    return report


def _scaled(k: Intrinsics, width: int, height: int) -> Intrinsics:
    """CameraInfo of the colour camera, depth registered at another resolution."""
    sx, sy = width / k.width, height / k.height
    return Intrinsics(width, height, k.fx * sx, k.fy * sy, k.cx * sx, k.cy * sy)


def _resize_nearest(img: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    h, w = shape
    rows = (np.arange(h) * img.shape[0] / h).astype(int)
    cols = (np.arange(w) * img.shape[1] / w).astype(int)
    return img[rows][:, cols]
