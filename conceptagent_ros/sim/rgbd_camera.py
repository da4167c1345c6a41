"""A synthetic RGB-D camera over the embedded household (open3d's RaycastingScene, headless, CPU):
depth, per-pixel instance ids and a shaded colour image from any pose, with optional depth noise
and dropout. It renders what the world holds as boxes (scene/house_geometry.py): the room's
floor and walls, its furniture, and the things in plain sight (not inside something closed, not
tucked away before a search, not in the gripper)."""
from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from conceptagent_ros.perception.detectors.sim_paint import category_colour
from conceptagent_ros.perception.frames import Frame, Intrinsics, look_at
from conceptagent_ros.scene.house_geometry import PANEL, SLIDING, Box, has_shelf, inner_floor, solid_parts
from conceptagent_ros.scene.model import Room

WALL_HEIGHT = 2.6
BACKGROUND = -1


@dataclass(frozen=True)
class CameraConfig:
    width: int = 320
    height: int = 240
    horizontal_fov_deg: float = 70.0
    mount_height: float = 1.4  # metres above the floor
    pitches_deg: tuple[float, ...] = (-15.0, -45.0)  # below the horizon: far shelves and near tables
    yaws: int = 8  # views per turn on the spot
    depth_noise: float = 0.0  # standard deviation at 1 m, growing with the square of depth
    dropout: float = 0.0  # share of pixels with no depth (NaN)
    max_range: float = 10.0

    def intrinsics(self) -> Intrinsics:
        return Intrinsics.from_fov(self.width, self.height, self.horizontal_fov_deg)


DEFAULT_CAMERA = CameraConfig()


def _box_mesh(center: Iterable[float], size: Iterable[float]):  # type: ignore[no-untyped-def]
    import open3d as o3d

    sx, sy, sz = size
    mesh = o3d.geometry.TriangleMesh.create_box(sx, sy, sz)
    cx, cy, cz = center
    mesh.translate((cx - sx / 2.0, cy - sy / 2.0, cz - sz / 2.0))
    return o3d.t.geometry.TriangleMesh.from_legacy(mesh)


def _panels(box: Box) -> list[tuple[tuple[float, float, float], tuple[float, float, float]]]:
    """A closed box (a worktop: its solid parts around the units under it), or an open container:
    floor, top, back and sides, without the front panel."""
    if box.open_front is None:
        return solid_parts(box)
    (cx, cy, cz), (sx, sy, sz) = box.center, box.size
    t = PANEL
    panels = [((cx, cy, cz - sz / 2 + t / 2), (sx, sy, t)), ((cx, cy, cz + sz / 2 - t / 2), (sx, sy, t))]
    if has_shelf(box.size) or box.category in SLIDING:  # a shelf, a chest's top drawer's floor
        panels.append(((cx, cy, inner_floor(box) - t / 2), (sx - 2 * t, sy - 2 * t, t)))
    fx, fy = box.open_front
    if fx:  # open towards +x or -x: back wall at the other x end, sides along y
        panels.append(((cx - fx * (sx / 2 - t / 2), cy, cz), (t, sy, sz)))
        panels += [((cx, cy - sy / 2 + t / 2, cz), (sx, t, sz)), ((cx, cy + sy / 2 - t / 2, cz), (sx, t, sz))]
    else:
        panels.append(((cx, cy - fy * (sy / 2 - t / 2), cz), (sx, t, sz)))
        panels += [((cx - sx / 2 + t / 2, cy, cz), (t, sy, sz)), ((cx + sx / 2 - t / 2, cy, cz), (t, sy, sz))]
    return panels


class RenderScene:
    """One arrangement of boxes, ready to render from many poses."""

    def __init__(self, boxes: Iterable[Box], room: Room | None):
        import open3d as o3d

        self.scene = o3d.t.geometry.RaycastingScene()
        self.names: list[str] = []
        self.colours: list[np.ndarray] = []
        self._geometry_to_instance: dict[int, int] = {}
        self._background_colour: dict[int, np.ndarray] = {}
        for box in boxes:
            for center, size in _panels(box):
                gid = self.scene.add_triangles(_box_mesh(center, size))
                self._geometry_to_instance[gid] = len(self.names)
            self.names.append(box.object_id)
            self.colours.append(category_colour(box.category))
        if room is not None:
            x0, y0, x1, y1 = room.bounds
            t = 0.05
            floor = self.scene.add_triangles(
                _box_mesh(((x0 + x1) / 2, (y0 + y1) / 2, -t / 2), (x1 - x0 + 2 * t, y1 - y0 + 2 * t, t)))
            self._background_colour[floor] = np.array([150, 140, 130], dtype=np.float32)
            walls = [((x0 - t / 2, (y0 + y1) / 2), (t, y1 - y0)), ((x1 + t / 2, (y0 + y1) / 2), (t, y1 - y0)),
                     (((x0 + x1) / 2, y0 - t / 2), (x1 - x0, t)), (((x0 + x1) / 2, y1 + t / 2), (x1 - x0, t))]
            for (cx, cy), (sx, sy) in walls:
                gid = self.scene.add_triangles(_box_mesh((cx, cy, WALL_HEIGHT / 2), (sx, sy, WALL_HEIGHT)))
                self._background_colour[gid] = np.array([215, 205, 185], dtype=np.float32)
        # Per geometry id (the last entry for rays that hit nothing): its instance, and its paint
        self._lut_size = max([*self._geometry_to_instance, *self._background_colour, 0]) + 2
        self._instance_of = np.full(self._lut_size, BACKGROUND, dtype=np.int32)
        self._paint_of = np.zeros((self._lut_size, 3), dtype=np.float32)
        for gid, index in self._geometry_to_instance.items():
            self._instance_of[gid] = index
            self._paint_of[gid] = self.colours[index]
        for gid, colour in self._background_colour.items():
            self._paint_of[gid] = colour

    def render(self, world_T_camera: np.ndarray, config: CameraConfig, rng: np.random.Generator | None = None,
               stamp: float = 0.0) -> Frame:
        import open3d as o3d

        k = config.intrinsics()
        camera_T_world = np.linalg.inv(world_T_camera)
        rays = o3d.t.geometry.RaycastingScene.create_rays_pinhole(
            intrinsic_matrix=o3d.core.Tensor(k.k()), extrinsic_matrix=o3d.core.Tensor(camera_T_world),  # type: ignore[call-overload]
            width_px=k.width, height_px=k.height)
        hit = self.scene.cast_rays(rays)
        t_hit = hit["t_hit"].numpy()
        directions = rays.numpy()[..., 3:]
        # t_hit is in units of each ray's direction; depth is the distance along the optical axis
        depth = (t_hit * (directions @ world_T_camera[:3, 2])).astype(np.float32)
        missed = ~np.isfinite(depth) | (depth > config.max_range)
        geometry = hit["geometry_ids"].numpy().astype(np.int64)
        geometry[missed] = self._lut_size - 1
        geometry = np.clip(geometry, 0, self._lut_size - 1)
        instances = self._instance_of[geometry]
        # Colour: the thing's paint, shaded by how squarely it faces a light from above and behind the camera
        normals = hit["primitive_normals"].numpy()
        light = -world_T_camera[:3, 2] + np.array([0.0, 0.0, 1.0])
        light /= np.linalg.norm(light)
        shade = 0.45 + 0.55 * np.abs(normals @ light)
        rgb = np.clip(self._paint_of[geometry] * shade[..., None], 0, 255).astype(np.uint8)
        rgb[missed] = 0
        depth[missed] = np.nan
        if rng is not None and config.depth_noise > 0:
            depth = depth + rng.normal(0.0, config.depth_noise, depth.shape).astype(np.float32) * depth * depth
        if rng is not None and config.dropout > 0:
            depth[rng.random(depth.shape) < config.dropout] = np.nan
        return Frame(rgb=rgb, depth=depth, intrinsics=k, world_T_camera=world_T_camera, stamp=stamp,
                     frame_id="camera_optical", instance_ids=instances, instance_names=tuple(self.names))


def turn_on_the_spot(x: float, y: float, config: CameraConfig, heading: float = 0.0) -> list[np.ndarray]:
    """Camera poses for one look around: every yaw at every pitch, from the robot's mast."""
    poses = []
    eye = np.array([x, y, config.mount_height])
    for pitch in config.pitches_deg:
        for i in range(config.yaws):
            yaw = heading + 2 * math.pi * i / config.yaws
            p = math.radians(pitch)
            target = eye + np.array([math.cos(yaw) * math.cos(p), math.sin(yaw) * math.cos(p), math.sin(p)])
            poses.append(look_at(eye, target))
    return poses
