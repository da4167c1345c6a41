"""The fused object map as the objects a planner is told of: each with its category's affordances,
the state perception saw, what it stands on or in (perception/relations3d.py), and its box's
footprint (scene/robot_memory.Perceived). The perception node sends the same as perceived_graph
(ros/conversions/perception.map_to_graph_msg); a robot with no ROS graph reads it here."""
from __future__ import annotations

from conceptagent_ros.perception.fusion import ObjectMap
from conceptagent_ros.perception.relations3d import SpatialRelation, spatial_relations
from conceptagent_ros.scene.loader import category_defaults
from conceptagent_ros.scene.model import SceneObject
from conceptagent_ros.scene.robot_memory import Perceived


def map_relations(object_map: ObjectMap) -> list[SpatialRelation]:
    return spatial_relations({oid: o.box for oid, o in object_map.objects.items()})


def perceived_objects(object_map: ObjectMap, relations: list[SpatialRelation] | None = None) -> list[Perceived]:
    """Every object of the map, in the map's order (`relations`: map_relations(object_map), where
    the caller has them already)."""
    defaults = category_defaults()
    relations = map_relations(object_map) if relations is None else relations
    parents = {r.subject: r.object for r in relations if r.relation in ("on", "in")}
    out = []
    for obj in object_map.objects.values():
        box = obj.box
        known = defaults.get(obj.label.replace(" ", "_"), {})
        scene_object = SceneObject(id=obj.id, category=obj.label, room="",
                                   position=tuple(float(v) for v in box.center),  # type: ignore[arg-type]
                                   affordances=frozenset(known.get("affordances") or ()),
                                   state={k: True for k, v in obj.state.items() if v}, parent=parents.get(obj.id))
        out.append(Perceived(scene_object, (float(box.extent[0]), float(box.extent[1])), float(box.yaw)))
    return out
