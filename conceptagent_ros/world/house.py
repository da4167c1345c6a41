"""A household scene's physical geometry, worked out once: where each thing stands (the embedded
household's layout, scene/house_geometry), the walls and doorways (floor_plan) and the occupancy
map (occupancy_map). The exporter, the robot's start and the navigator all read it."""
from __future__ import annotations

from dataclasses import dataclass

from conceptagent_ros.errors import SceneError
from conceptagent_ros.scene.house_geometry import Box, layout
from conceptagent_ros.scene.model import Scene
from conceptagent_ros.world.floor_plan import FloorPlan, floor_plan
from conceptagent_ros.world.occupancy_map import OccupancyMap, occupancy_map


@dataclass(frozen=True)
class House:
    scene: Scene
    boxes: dict[str, Box]
    plan: FloorPlan
    grid: OccupancyMap


def house(scene: Scene) -> House:
    if scene.setting != "household":
        raise SceneError(f"scene '{scene.name}' is a {scene.setting} scene: only household scenes (rooms and "
                         "furniture) export to a world; the tabletop is laid out by bodies/tabletop/scene_layout.py")
    boxes = layout(scene)
    plan = floor_plan(scene, [b for b in boxes.values() if b.on_floor])
    return House(scene, boxes, plan, occupancy_map(scene, plan, boxes))
