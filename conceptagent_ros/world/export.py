"""`conceptagent world export SCENE|all --out DIR`: per scene, SCENE.sdf (the world both Gazebo and
PyBullet load) and SCENE_map.pgm + SCENE_map.yaml (its occupancy map in map_server's format)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from conceptagent_ros.scene.model import Scene
from conceptagent_ros.world.house import House, house
from conceptagent_ros.world.occupancy_map import write_map
from conceptagent_ros.world.sdf_world import world_sdf


@dataclass(frozen=True)
class ExportedWorld:
    scene: str
    sdf: Path
    map_pgm: Path
    map_yaml: Path
    models: int
    doorways: int
    free_share: float  # of the map's cells


def export_world(scene: Scene | House, out: Path) -> ExportedWorld:
    """A scene's world and map, from its geometry if already worked out (a House)."""
    home = scene if isinstance(scene, House) else house(scene)
    name = home.scene.name
    out.mkdir(parents=True, exist_ok=True)
    sdf = out / f"{name}.sdf"
    sdf.write_text(world_sdf(home))
    pgm, yaml_path = out / f"{name}_map.pgm", out / f"{name}_map.yaml"
    write_map(home.grid, pgm, yaml_path)
    return ExportedWorld(name, sdf, pgm, yaml_path, len(home.scene.objects) + 2, len(home.plan.doorways),
                         float(1.0 - home.grid.occupied.mean()))
