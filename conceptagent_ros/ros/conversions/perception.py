"""The fused object map (perception/fusion.py) as messages: a SceneGraph of boxes with their on/in/near
relations, and rviz markers (boxes in each label's colour, labels, relation lines)."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from builtin_interfaces.msg import Duration, Time
from geometry_msgs.msg import Point, PoseStamped
from sensor_msgs.msg import CameraInfo, Image
from std_msgs.msg import ColorRGBA
from visualization_msgs.msg import Marker, MarkerArray

from conceptagent_ros.msg import SceneGraph, SceneObject, SceneRelation
from conceptagent_ros.perception.frames import Frame, Intrinsics, rotation_to_quaternion
from conceptagent_ros.perception.fusion import ObjectMap
from conceptagent_ros.perception.map_io import label_colour
from conceptagent_ros.perception.map_objects import map_relations, perceived_objects
from conceptagent_ros.perception.ros_images import numpy_to_image_fields
from conceptagent_ros.ros.conversions.scene import aliases_to_msg, pose_msg


@dataclass
class FrameMessages:
    """One RGB-D frame as a camera driver publishes it."""

    info: CameraInfo
    pose: PoseStamped
    rgb: Image
    depth: Image

    def stamp(self, seconds: float) -> None:
        """Stamp every message with one time (the driver's clock at the exposure)."""
        t = _time(seconds)
        for msg in (self.info, self.pose, self.rgb, self.depth):
            msg.header.stamp = t


def image_msg(array: np.ndarray, frame_id: str) -> Image:
    f = numpy_to_image_fields(array)
    msg = Image(height=f["height"], width=f["width"], encoding=f["encoding"], is_bigendian=0, step=f["step"])
    msg.data = f["data"].tobytes()
    msg.header.frame_id = frame_id
    return msg


def frame_messages(frame: Frame, intrinsics: Intrinsics, world_frame: str, camera_frame: str = "camera_optical") -> FrameMessages:
    """CameraInfo, the camera's pose (optical frame) in world_frame, rgb8 and 32FC1 images, stamped
    with the frame's time."""
    info = CameraInfo(width=intrinsics.width, height=intrinsics.height, k=[float(v) for v in intrinsics.k().reshape(-1)])
    info.header.frame_id = camera_frame
    pose = PoseStamped()
    pose.header.frame_id = world_frame
    pose.pose.position.x, pose.pose.position.y, pose.pose.position.z = (float(v) for v in frame.world_T_camera[:3, 3])
    o = pose.pose.orientation
    o.x, o.y, o.z, o.w = rotation_to_quaternion(frame.world_T_camera[:3, :3])
    messages = FrameMessages(info, pose, image_msg(frame.rgb, camera_frame), image_msg(frame.depth, camera_frame))
    messages.stamp(frame.stamp)
    return messages


def _time(seconds: float) -> Time:
    nanoseconds = int(round(seconds * 1e9))
    return Time(sec=nanoseconds // 1_000_000_000, nanosec=nanoseconds % 1_000_000_000)


def map_to_graph_msg(object_map: ObjectMap, stamp: Time, frame_id: str, vocabulary: Sequence[str] = ()) -> SceneGraph:
    graph = SceneGraph()
    graph.header.stamp, graph.header.frame_id = stamp, frame_id
    relations = map_relations(object_map)
    for obj, perceived in zip(object_map.objects.values(), perceived_objects(object_map, relations)):
        box = obj.box
        msg = SceneObject()
        msg.id, msg.label = obj.id, obj.label
        msg.pose = pose_msg(box.center, box.yaw)
        msg.size.x, msg.size.y, msg.size.z = (float(v) for v in box.extent)
        msg.parent = perceived.obj.parent or ""
        msg.affordances = sorted(perceived.obj.affordances)
        msg.state = sorted(k for k, v in perceived.obj.state.items() if v)
        msg.confidence = float(obj.confidence)
        msg.detections = int(obj.detections)
        msg.last_seen = _time(obj.last_seen)
        if obj.embedding is not None:
            msg.embedding = [float(v) for v in obj.embedding]
        graph.objects.append(msg)
    graph.relations = [SceneRelation(subject=r.subject, predicate=r.relation, object=r.object) for r in relations]
    graph.vocabulary = list(vocabulary)
    graph.aliases = aliases_to_msg(object_map.aliases)
    return graph


def _colour(label: str, alpha: float) -> ColorRGBA:
    r, g, b = label_colour(label)
    return ColorRGBA(r=r, g=g, b=b, a=alpha)


def map_markers(object_map: ObjectMap, stamp: Time, frame_id: str) -> MarkerArray:
    """DELETEALL first, so objects that went leave rviz too."""
    clear = Marker()
    clear.header.stamp, clear.header.frame_id, clear.action = stamp, frame_id, Marker.DELETEALL
    markers = [clear]
    lines = Marker()
    lines.header.stamp, lines.header.frame_id = stamp, frame_id
    lines.ns, lines.id, lines.type, lines.action = "perception/relations", 0, Marker.LINE_LIST, Marker.ADD
    lines.scale.x = 0.01
    lines.color = ColorRGBA(r=0.9, g=0.9, b=0.3, a=0.8)
    lines.pose.orientation.w = 1.0
    for i, obj in enumerate(object_map.objects.values()):
        box = obj.box
        cube = Marker()
        cube.header.stamp, cube.header.frame_id = stamp, frame_id
        cube.ns, cube.id, cube.type, cube.action = "perception/boxes", i, Marker.CUBE, Marker.ADD
        cube.pose = pose_msg(box.center, box.yaw)
        cube.scale.x, cube.scale.y, cube.scale.z = (max(float(v), 0.01) for v in box.extent)
        cube.color = _colour(obj.label, 0.45)
        cube.lifetime = Duration(sec=0)
        text = Marker()
        text.header.stamp, text.header.frame_id = stamp, frame_id
        text.ns, text.id, text.type, text.action = "perception/labels", i, Marker.TEXT_VIEW_FACING, Marker.ADD
        text.pose = pose_msg((box.center[0], box.center[1], box.z_max + 0.12))
        text.scale.z = 0.1
        text.color = ColorRGBA(r=1.0, g=1.0, b=1.0, a=1.0)
        text.text = f"{obj.id} ({obj.confidence:.0%})"
        markers += [cube, text]
    centres = {oid: o.box.center for oid, o in object_map.objects.items()}
    for rel in map_relations(object_map):
        if rel.relation in ("on", "in"):
            a, b = centres[rel.subject], centres[rel.object]
            lines.points += [Point(x=a[0], y=a[1], z=a[2]), Point(x=b[0], y=b[1], z=b[2])]
    if lines.points:
        markers.append(lines)
    result = MarkerArray()
    result.markers = markers
    return result
