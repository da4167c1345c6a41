"""VoxPoser <-> ROS messages: value maps as sensor_msgs/PointCloud2 (built from NumPy arrays in one
piece, no per-point Python loop), trajectories as nav_msgs/Path, waypoints as PoseStamped, and the
scene graph as boxes for `detect()`."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import Path
from sensor_msgs.msg import PointCloud2

from conceptagent_ros.msg import SceneGraph
from conceptagent_ros.ros.conversions.clouds import structured_cloud
from conceptagent_ros.voxposer.api import VoxelGrid
from conceptagent_ros.voxposer.box_scene import ObjectBox

# the voxels worth drawing per map: those that differ from the map's resting value
MAP_BACKGROUND = {"affordance": 0.0, "avoidance": 0.0, "velocity": 1.0, "gripper": 0.0}
CLOUD_FIELDS = tuple((name, 4 * i) for i, name in enumerate(("x", "y", "z", "intensity")))  # float32, byte offset
CLOUD_DTYPE = np.dtype([(name, "<f4") for name, _ in CLOUD_FIELDS])


def value_map_cloud(kind: str, values: np.ndarray, grid: VoxelGrid, frame: str, stamp: Time,
                    max_points: int = 100_000) -> PointCloud2:
    """The map's non-background voxels as points with their value in `intensity` (rviz colours by it).

    A map with more such voxels than `max_points` is thinned with an even stride, so a dense map
    (a half-space avoidance map has 500,000) still goes out in one small message."""
    if kind not in MAP_BACKGROUND:
        raise ValueError(f"no point cloud for a {kind} map (one of {', '.join(MAP_BACKGROUND)})")
    if values.shape != (grid.size,) * 3:
        raise ValueError(f"{kind} map has shape {values.shape}, expected {(grid.size,) * 3}")
    flat = values.reshape(-1)
    chosen = np.flatnonzero(flat != MAP_BACKGROUND[kind])
    if len(chosen) > max_points:
        chosen = chosen[:: int(np.ceil(len(chosen) / max_points))]
    voxels = np.stack(np.unravel_index(chosen, values.shape), axis=1)
    world = grid.to_world(voxels)
    cloud = np.empty(len(chosen), dtype=CLOUD_DTYPE)
    cloud["x"], cloud["y"], cloud["z"] = world[:, 0], world[:, 1], world[:, 2]
    cloud["intensity"] = flat[chosen]
    return structured_cloud(cloud, frame, stamp)


def cloud_points(msg: PointCloud2) -> np.ndarray:
    """(N, 4) x, y, z, intensity from a cloud written by `value_map_cloud` (for tests and tools)."""
    cloud = np.frombuffer(bytes(msg.data), dtype=CLOUD_DTYPE, count=msg.width * msg.height)
    return np.stack([cloud[name] for name, _ in CLOUD_FIELDS], axis=1).astype(float)


def pose_stamped(position: Sequence[float] | np.ndarray, quaternion: Sequence[float] | np.ndarray, frame: str,
                 stamp: Time) -> PoseStamped:
    msg = PoseStamped()
    msg.header.frame_id, msg.header.stamp = frame, stamp
    msg.pose.position.x, msg.pose.position.y, msg.pose.position.z = (float(v) for v in position)
    o = msg.pose.orientation
    o.x, o.y, o.z, o.w = (float(v) for v in quaternion)
    return msg


def path_msg(positions: np.ndarray, quaternions: np.ndarray, frame: str, stamp: Time) -> Path:
    """A Path of N poses (positions (N, 3), quaternions (N, 4) x, y, z, w)."""
    msg = Path()
    msg.header.frame_id, msg.header.stamp = frame, stamp
    msg.poses = [pose_stamped(p, q, frame, stamp) for p, q in zip(positions, quaternions)]
    return msg


def boxes_from_graph(graph: SceneGraph) -> list[ObjectBox]:
    """Each object of the graph as a box named by its label ("blue block"), or its id where the
    label repeats (two mugs: mug_1, mug_2), so `detect()` finds it by the words of the instruction."""
    labels = [obj.label or obj.id for obj in graph.objects]
    boxes = []
    for obj, label in zip(graph.objects, labels):
        name = label if labels.count(label) == 1 else obj.id
        p, o, s = obj.pose.position, obj.pose.orientation, obj.size
        quaternion = (o.x, o.y, o.z, o.w) if (o.x, o.y, o.z, o.w) != (0.0, 0.0, 0.0, 0.0) else (0.0, 0.0, 0.0, 1.0)
        boxes.append(ObjectBox(name.replace("_", " ") if name == label else name, (p.x, p.y, p.z), (s.x, s.y, s.z),
                               quaternion))
    return boxes
