"""The fused object map (scene/fusion.py) as messages: a SceneGraph of boxes with their on/in/near
relations, and rviz markers (boxes in each label's colour, labels, relation lines)."""
from __future__ import annotations

from collections.abc import Sequence

from builtin_interfaces.msg import Duration, Time
from geometry_msgs.msg import Point
from std_msgs.msg import ColorRGBA
from visualization_msgs.msg import Marker, MarkerArray

from conceptagent_ros.msg import SceneGraph, SceneObject, SceneRelation
from conceptagent_ros.ros.conversions.scene import pose_msg
from conceptagent_ros.scene.fusion import ObjectMap
from conceptagent_ros.scene.loader import category_defaults
from conceptagent_ros.scene.map_io import label_colour
from conceptagent_ros.scene.relations3d import spatial_relations


def _time(seconds: float) -> Time:
    whole = int(seconds)
    return Time(sec=whole, nanosec=int(round((seconds - whole) * 1e9)) % 1_000_000_000)


def map_to_graph_msg(object_map: ObjectMap, stamp: Time, frame_id: str, vocabulary: Sequence[str] = ()) -> SceneGraph:
    graph = SceneGraph()
    graph.header.stamp, graph.header.frame_id = stamp, frame_id
    defaults = category_defaults()
    relations = spatial_relations({oid: o.box for oid, o in object_map.objects.items()})
    parents = {r.subject: r.object for r in relations if r.relation in ("on", "in")}
    for obj in object_map.objects.values():
        box = obj.box
        msg = SceneObject()
        msg.id, msg.label = obj.id, obj.label
        msg.pose = pose_msg(box.center, box.yaw)
        msg.size.x, msg.size.y, msg.size.z = (float(v) for v in box.extent)
        msg.parent = parents.get(obj.id, "")
        known = defaults.get(obj.label.replace(" ", "_"), {})
        msg.affordances = sorted(known.get("affordances") or ())
        msg.state = sorted(k for k, v in obj.state.items() if v)
        msg.confidence = float(obj.confidence)
        msg.detections = int(obj.detections)
        msg.last_seen = _time(obj.last_seen)
        if obj.embedding is not None:
            msg.embedding = [float(v) for v in obj.embedding]
        graph.objects.append(msg)
    graph.relations = [SceneRelation(subject=r.subject, predicate=r.relation, object=r.object) for r in relations]
    graph.vocabulary = list(vocabulary)
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
    for rel in spatial_relations({oid: o.box for oid, o in object_map.objects.items()}):
        if rel.relation in ("on", "in"):
            a, b = centres[rel.subject], centres[rel.object]
            lines.points += [Point(x=a[0], y=a[1], z=a[2]), Point(x=b[0], y=b[1], z=b[2])]
    if lines.points:
        markers.append(lines)
    result = MarkerArray()
    result.markers = markers
    return result
