"""Scene graph messages <-> core objects: SceneObject, Room, RobotState, SceneGraph <-> Observation."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from builtin_interfaces.msg import Time
from geometry_msgs.msg import Pose

from conceptagent_ros.msg import ObjectAlias, SceneRelation
from conceptagent_ros.msg import RobotState as RobotStateMsg
from conceptagent_ros.msg import Room as RoomMsg
from conceptagent_ros.msg import SceneGraph as SceneGraphMsg
from conceptagent_ros.msg import SceneObject as SceneObjectMsg
from conceptagent_ros.scene.geometry import nominal_size, quaternion_to_yaw, yaw_to_quaternion
from conceptagent_ros.scene.model import RobotState, Room, SceneObject
from conceptagent_ros.scene.observation import Observation


@dataclass(frozen=True)
class GraphSnapshot:
    """A SceneGraph message in core terms: what the robot perceives now, and the map it moves in."""

    observation: Observation
    rooms: dict[str, Room]
    vocabulary: frozenset[str]
    stamp_ns: int
    frame_id: str


def pose_msg(position: tuple[float, float, float], yaw: float = 0.0) -> Pose:
    pose = Pose()
    pose.position.x, pose.position.y, pose.position.z = (float(v) for v in position)
    q = yaw_to_quaternion(yaw)
    pose.orientation.x, pose.orientation.y, pose.orientation.z, pose.orientation.w = q
    return pose


def pose_position(pose: Pose) -> tuple[float, float, float]:
    return (pose.position.x, pose.position.y, pose.position.z)


def pose_yaw(pose: Pose) -> float:
    o = pose.orientation
    return quaternion_to_yaw(o.x, o.y, o.z, o.w)


def scene_object_to_msg(obj: SceneObject, stamp: Time | None = None, confidence: float = 1.0) -> SceneObjectMsg:
    msg = SceneObjectMsg()
    msg.id, msg.label, msg.room = obj.id, obj.category, obj.room
    msg.pose = pose_msg(obj.position)
    msg.size.x, msg.size.y, msg.size.z = nominal_size(obj)
    msg.parent = obj.parent or ""
    msg.affordances = sorted(obj.affordances)
    msg.state = sorted(k for k, v in obj.state.items() if v)
    msg.hidden = obj.hidden
    msg.attributes = [f"{k}={v}" for k, v in sorted(obj.attributes.items())]
    msg.confidence = float(confidence)
    msg.detections = 1
    if stamp is not None:
        msg.last_seen = stamp
    return msg


def scene_object_from_msg(msg: SceneObjectMsg) -> SceneObject:
    return SceneObject(
        id=msg.id, category=msg.label, room=msg.room, position=pose_position(msg.pose),
        affordances=frozenset(msg.affordances), state={k: True for k in msg.state},
        parent=msg.parent or None, hidden=msg.hidden,
        attributes=dict(a.split("=", 1) for a in msg.attributes if "=" in a),
    )


def room_to_msg(room: Room) -> RoomMsg:
    msg = RoomMsg()
    msg.id, msg.category = room.id, room.category
    msg.x_min, msg.y_min, msg.x_max, msg.y_max = (float(v) for v in room.bounds)
    return msg


def room_from_msg(msg: RoomMsg) -> Room:
    return Room(msg.id, msg.category, (msg.x_min, msg.y_min, msg.x_max, msg.y_max))


def robot_to_msg(robot: RobotState, yaw: float = 0.0) -> RobotStateMsg:
    msg = RobotStateMsg()
    msg.pose = pose_msg(robot.position, yaw)
    msg.room, msg.holding, msg.reach = robot.room, robot.holding or "", float(robot.reach)
    return msg


def robot_from_msg(msg: RobotStateMsg) -> RobotState:
    return RobotState(pose_position(msg.pose), msg.room, msg.holding or None, msg.reach)


def relations_of(objects: Iterable[SceneObject]) -> list[SceneRelation]:
    """Containment as relations: `in` for things inside openable containers, `on` otherwise."""
    by_id = {o.id: o for o in objects}
    relations = []
    for obj in by_id.values():
        if obj.parent is None:
            continue
        parent = by_id.get(obj.parent)
        predicate = "in" if parent is not None and parent.has("openable") else "on"
        relations.append(SceneRelation(subject=obj.id, predicate=predicate, object=obj.parent))
    return relations


def graph_to_msg(
    observation: Observation,
    rooms: Mapping[str, Room],
    vocabulary: Iterable[str],
    stamp: Time,
    frame_id: str = "map",
    robot_yaw: float = 0.0,
) -> SceneGraphMsg:
    msg = SceneGraphMsg()
    msg.header.stamp, msg.header.frame_id = stamp, frame_id
    msg.robot = robot_to_msg(observation.robot, robot_yaw)
    msg.rooms = [room_to_msg(r) for r in rooms.values()]
    msg.objects = [scene_object_to_msg(o, stamp) for o in observation.objects]
    msg.relations = relations_of(observation.objects)
    msg.receptacles_seen_inside = list(observation.receptacles_seen_inside)
    msg.searched = list(observation.searched)
    msg.vocabulary = sorted(set(vocabulary))
    return msg


def stamp_ns(stamp: Time) -> int:
    """A builtin_interfaces/Time as integer nanoseconds (what freshness is compared in)."""
    return int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec)


def graph_from_msg(msg: SceneGraphMsg) -> GraphSnapshot:
    observation = Observation(
        robot=robot_from_msg(msg.robot),
        objects=tuple(scene_object_from_msg(o) for o in msg.objects),
        receptacles_seen_inside=tuple(msg.receptacles_seen_inside),
        searched=tuple(msg.searched),
    )
    return GraphSnapshot(observation, {r.id: room_from_msg(r) for r in msg.rooms}, frozenset(msg.vocabulary),
                         stamp_ns(msg.header.stamp), msg.header.frame_id)


def aliases_to_msg(aliases: Mapping[str, str]) -> list[ObjectAlias]:
    return [ObjectAlias(id=old, same_as=now) for old, now in sorted(aliases.items())]


def aliases_of(msg: SceneGraphMsg) -> dict[str, str]:
    """{old id: the object it was fused into} as a scene graph states it."""
    return {a.id: a.same_as for a in msg.aliases}


def resolve_alias(msg: SceneGraphMsg | None, object_id: str) -> str:
    """The id `object_id` names in this graph: itself, or the object perception fused it into."""
    if msg is None or any(o.id == object_id for o in msg.objects):
        return object_id  # a live id is nobody's alias
    return aliases_of(msg).get(object_id, object_id)
