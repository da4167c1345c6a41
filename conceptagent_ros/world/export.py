"""`conceptagent world export SCENE|all --out DIR`: per scene, SCENE.sdf (the world both Gazebo and
PyBullet load) and SCENE_map.pgm + SCENE_map.yaml (its occupancy map in map_server's format)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from conceptagent_ros.errors import SceneError
from conceptagent_ros.scene.model import Scene
from conceptagent_ros.world.floor_plan import floor_plan
from conceptagent_ros.world.occupancy_map import occupancy_map, write_map
from conceptagent_ros.world.sdf_world import floor_standing, scene_boxes, world_sdf


@dataclass(frozen=True)
class ExportedWorld:
    scene: str
    sdf: Path
    map_pgm: Path
    map_yaml: Path
    models: int
    doorways: int
    free_share: float  # of the map's cells


def export_world(scene: Scene, out: Path) -> ExportedWorld:
    if scene.setting != "household":
        raise SceneError(f"scene '{scene.name}' is a {scene.setting} scene: only household scenes (rooms and "
                         "furniture) export to a world; the tabletop is laid out by physical/scene_layout.py")
    out.mkdir(parents=True, exist_ok=True)
    boxes = scene_boxes(scene)
    plan = floor_plan(scene, floor_standing(boxes))
    sdf = out / f"{scene.name}.sdf"
    sdf.write_text(world_sdf(scene, boxes, plan))
    grid = occupancy_map(scene, plan, boxes)
    pgm, yaml_path = out / f"{scene.name}_map.pgm", out / f"{scene.name}_map.yaml"
    write_map(grid, pgm, yaml_path)
    return ExportedWorld(scene.name, sdf, pgm, yaml_path, len(scene.objects) + 2, len(plan.doorways),
                         float(1.0 - grid.occupied.mean()))
