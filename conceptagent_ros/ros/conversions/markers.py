"""rviz markers from core objects: the scene graph (boxes, labels, containment lines, rooms, robot)
and the plan (the steps so far and the one running, as text over the robot)."""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from builtin_interfaces.msg import Duration, Time
from geometry_msgs.msg import Point
from std_msgs.msg import ColorRGBA
from visualization_msgs.msg import Marker, MarkerArray

from conceptagent_ros.planning.plan_view import PlanNode
from conceptagent_ros.scene.geometry import nominal_size
from conceptagent_ros.scene.model import RobotState, Room, SceneObject

ITEM = ColorRGBA(r=0.95, g=0.55, b=0.15, a=0.9)
FURNITURE = ColorRGBA(r=0.35, g=0.55, b=0.85, a=0.5)
HELD = ColorRGBA(r=0.2, g=0.85, b=0.3, a=1.0)
TEXT = ColorRGBA(r=1.0, g=1.0, b=1.0, a=1.0)
RELATION = ColorRGBA(r=0.9, g=0.9, b=0.3, a=0.8)
ROOM = ColorRGBA(r=0.6, g=0.6, b=0.6, a=0.6)
ROBOT = ColorRGBA(r=0.1, g=0.9, b=0.9, a=1.0)
FAILED_COLOR = ColorRGBA(r=0.9, g=0.2, b=0.2, a=0.9)


def _marker(ns: str, mid: int, kind: int, stamp: Time, frame: str, color: ColorRGBA) -> Marker:
    m = Marker()
    m.header.stamp, m.header.frame_id = stamp, frame
    m.ns, m.id, m.type, m.action = ns, mid, kind, Marker.ADD
    m.color = color
    m.pose.orientation.w = 1.0
    m.lifetime = Duration(sec=0)
    return m


def _clear(stamp: Time, frame: str) -> Marker:
    m = Marker()
    m.header.stamp, m.header.frame_id = stamp, frame
    m.action = Marker.DELETEALL
    return m


def scene_markers(objects: Sequence[SceneObject], rooms: Mapping[str, Room], robot: RobotState,
                  stamp: Time, frame: str = "map") -> MarkerArray:
    """One DELETEALL first, so objects that left the view disappear in rviz too."""
    markers = [_clear(stamp, frame)]
    centres = {o.id: o.position for o in objects}
    for i, obj in enumerate(objects):
        sx, sy, sz = nominal_size(obj)
        color = HELD if obj.id == robot.holding else (ITEM if obj.has("pickupable") else FURNITURE)
        box = _marker("objects", i, Marker.CUBE, stamp, frame, color)
        box.pose.position = Point(x=obj.position[0], y=obj.position[1], z=obj.position[2] + sz / 2)
        box.scale.x, box.scale.y, box.scale.z = sx, sy, sz
        markers.append(box)
        label = _marker("labels", i, Marker.TEXT_VIEW_FACING, stamp, frame, TEXT)
        label.pose.position = Point(x=obj.position[0], y=obj.position[1], z=obj.position[2] + sz + 0.15)
        label.scale.z = 0.12
        state = [k for k, v in sorted(obj.state.items()) if v]
        label.text = obj.id + (f" [{', '.join(state)}]" if state else "")
        markers.append(label)
    lines = _marker("relations", 0, Marker.LINE_LIST, stamp, frame, RELATION)
    lines.scale.x = 0.02
    for obj in objects:
        if obj.parent in centres:
            p = centres[obj.parent]
            lines.points += [Point(x=obj.position[0], y=obj.position[1], z=obj.position[2] + 0.1),
                             Point(x=p[0], y=p[1], z=p[2] + 0.5)]
    if lines.points:
        markers.append(lines)
    for i, room in enumerate(rooms.values()):
        x0, y0, x1, y1 = room.bounds
        outline = _marker("rooms", i, Marker.LINE_STRIP, stamp, frame, ROOM)
        outline.scale.x = 0.03
        outline.points = [Point(x=x, y=y) for x, y in ((x0, y0), (x1, y0), (x1, y1), (x0, y1), (x0, y0))]
        markers.append(outline)
        name = _marker("room_names", i, Marker.TEXT_VIEW_FACING, stamp, frame, ROOM)
        name.pose.position = Point(x=(x0 + x1) / 2, y=(y0 + y1) / 2, z=0.05)
        name.scale.z = 0.3
        name.text = room.id
        markers.append(name)
    body = _marker("robot", 0, Marker.CYLINDER, stamp, frame, ROBOT)
    body.pose.position = Point(x=robot.position[0], y=robot.position[1], z=0.25)
    body.scale.x = body.scale.y = 0.45
    body.scale.z = 0.5
    markers.append(body)
    return MarkerArray(markers=markers)


def plan_markers(lines: Sequence[str], robot: RobotState, stamp: Time, frame: str = "map",
                 view: PlanNode | None = None) -> MarkerArray:
    """The steps so far as text beside the robot and, for planners that look ahead, their tree
    (MCTS's search tree, Tree-Planner's action tree, LLM-Planner's plan) drawn upright over it."""
    text = _marker("plan", 0, Marker.TEXT_VIEW_FACING, stamp, frame, TEXT)
    text.pose.position = Point(x=robot.position[0], y=robot.position[1] - 1.5, z=1.2 + 0.12 * len(lines))
    text.scale.z = 0.14
    text.text = "\n".join(lines) if lines else "(idle)"
    markers = [_clear(stamp, frame), text]
    if view is not None:
        markers += plan_tree_markers(view, robot, stamp, frame)
    return MarkerArray(markers=markers)


def _layout(node: PlanNode, depth: int, next_leaf: list[int], out: list[tuple[PlanNode, int, float]]) -> float:
    """Leaves left to right, parents centred over their children; returns the node's column."""
    if not node.children:
        column = float(next_leaf[0])
        next_leaf[0] += 1
    else:
        columns = [_layout(c, depth + 1, next_leaf, out) for c in node.children]
        column = sum(columns) / len(columns)
    out.append((node, depth, column))
    return column


def plan_tree_markers(view: PlanNode, robot: RobotState, stamp: Time, frame: str = "map",
                      spacing: float = 0.7, level: float = 0.5) -> list[Marker]:
    placed: list[tuple[PlanNode, int, float]] = []
    leaves = [0]
    _layout(view, 0, leaves, placed)
    centre = (leaves[0] - 1) / 2.0
    where = {id(n): Point(x=robot.position[0], y=robot.position[1] + (col - centre) * spacing, z=1.5 + d * level)
             for n, d, col in placed}
    markers: list[Marker] = []
    edges = _marker("plan_tree_edges", 0, Marker.LINE_LIST, stamp, frame, ROOM)
    edges.scale.x = 0.015
    for i, (node, _depth, _col) in enumerate(placed):
        color = HELD if node.chosen else (FAILED_COLOR if not node.valid else FURNITURE)
        dot = _marker("plan_tree", i, Marker.SPHERE, stamp, frame, color)
        dot.pose.position = where[id(node)]
        dot.scale.x = dot.scale.y = dot.scale.z = 0.08 + 0.03 * math.log1p(node.visits)
        markers.append(dot)
        label = _marker("plan_tree_labels", i, Marker.TEXT_VIEW_FACING, stamp, frame, TEXT)
        p = where[id(node)]
        label.pose.position = Point(x=p.x, y=p.y, z=p.z + 0.15)
        label.scale.z = 0.09
        stats = f" n={node.visits}" if node.visits else ""
        stats += f" v={node.value:.2f}" if node.value is not None else ""
        label.text = node.label + stats
        markers.append(label)
        for child in node.children:
            edges.points += [where[id(node)], where[id(child)]]
    if edges.points:
        markers.append(edges)
    return markers
