"""The environment API of VoxPoser's appendix A.2, as map programs see it inside the sandbox.

Everything here runs in the sandbox worker on a `SceneSnapshot` (a picklable copy of the latest
observation): detect, cm2index, index2cm, pointat2quat, set_voxel_by_radius, get_empty_*_map,
the nested LMP calls (parse_query_obj and the map LMPs) and, for composer and planner programs,
execute / reset_to_default_pose / composer, which record requests for the trusted side to carry
out. Voxel frame: index (i, j, k) along world x, y, z; `VoxelGrid` converts.

Directions, as the prompts use them: front = +x, back = -x, left = -y, right = +y, up = +z.
"""
from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import numpy as np

from conceptagent_ros.voxposer.sandbox import NUMPY_FUNCTIONS, SandboxError, check_program, run_checked

MAP_KINDS = ("affordance", "avoidance", "rotation", "velocity", "gripper")
MAP_LMPS = tuple(f"get_{kind}_map" for kind in MAP_KINDS)
EE_ALIASES = frozenset({"ee", "endeffector", "end_effector", "end effector", "gripper", "hand", "robot"})
TABLE_ALIASES = frozenset({"table", "desk", "workspace", "work space", "tabletop"})


@dataclass(frozen=True)
class VoxelGrid:
    """A size^3 grid over the axis-aligned workspace [lower, upper] (metres, world frame)."""

    lower: tuple[float, float, float]
    upper: tuple[float, float, float]
    size: int = 100

    @property
    def resolution(self) -> np.ndarray:
        return (np.asarray(self.upper) - np.asarray(self.lower)) / self.size

    def to_voxel(self, world: np.ndarray) -> np.ndarray:
        idx = np.floor((np.asarray(world, dtype=float) - np.asarray(self.lower)) / self.resolution)
        return np.clip(idx, 0, self.size - 1).astype(int)

    def to_world(self, voxel: np.ndarray) -> np.ndarray:
        return np.asarray(self.lower) + (np.asarray(voxel, dtype=float) + 0.5) * self.resolution

    def contains(self, world: np.ndarray) -> bool:
        w = np.asarray(world)
        return bool(np.all(w >= np.asarray(self.lower)) and np.all(w <= np.asarray(self.upper)))


@dataclass(frozen=True)
class ObjectCloud:
    """One detected object of the snapshot: its world points and mean surface normal."""

    name: str
    points: np.ndarray  # (N, 3) world metres
    normal: tuple[float, float, float] = (0.0, 0.0, 1.0)


@dataclass(frozen=True)
class SceneSnapshot:
    """What the map programs may know: the grid, the objects, the end effector, the table."""

    grid: VoxelGrid
    objects: tuple[ObjectCloud, ...]
    ee_position: tuple[float, float, float]
    ee_quaternion: tuple[float, float, float, float]  # x, y, z, w
    gripper_closed: float
    table_lower: tuple[float, float, float]
    table_upper: tuple[float, float, float]

    def names(self) -> list[str]:
        return [o.name for o in self.objects]


class Observation:
    """`detect()`'s answer: name, position (voxel), aabb (2x3 voxel), normal; occupancy_map on demand."""

    def __init__(self, name: str, grid: VoxelGrid, points: np.ndarray, normal: np.ndarray, query: str = "") -> None:
        self.name = name
        self.position = grid.to_voxel(points.mean(axis=0))
        self.aabb = np.stack([grid.to_voxel(points.min(axis=0)), grid.to_voxel(points.max(axis=0))])
        self.normal = normal
        self.world_position = points.mean(axis=0)
        self.query = query or name
        self._grid = grid
        self._points = points

    @property
    def occupancy_map(self) -> np.ndarray:
        occupancy = np.zeros((self._grid.size,) * 3, dtype=bool)
        idx = self._grid.to_voxel(self._points)
        occupancy[idx[:, 0], idx[:, 1], idx[:, 2]] = True
        return occupancy

    def __getitem__(self, key: str) -> Any:  # VoxPoser's programs also index observations like dicts
        if key not in ("name", "position", "aabb", "normal", "occupancy_map"):
            raise KeyError(key)
        return getattr(self, key)

    def __repr__(self) -> str:
        return f"Observation({self.name!r}, position={self.position.tolist()})"


def numpy_namespace() -> SimpleNamespace:
    """The `np` handed to programs: chosen NumPy members only (the module reaches load, ctypeslib, ...)."""
    members = {name: getattr(np, name) for name in NUMPY_FUNCTIONS if hasattr(np, name)}
    members["linalg"] = SimpleNamespace(norm=np.linalg.norm)
    return SimpleNamespace(**members)


def pointat2quat(vector: Any) -> np.ndarray:
    """A quaternion (x, y, z, w) turning the gripper's approach axis (-z of a top-down grasp) onto `vector`."""
    v = np.asarray(vector, dtype=float)
    if v.shape != (3,) or not np.all(np.isfinite(v)) or np.linalg.norm(v) == 0:
        raise ValueError("pointat2quat needs a finite, non-zero 3-vector")
    v = v / np.linalg.norm(v)
    down = np.array([0.0, 0.0, -1.0])
    # the rest pose points the gripper down, rotated pi about x from the world frame
    base = np.array([1.0, 0.0, 0.0, 0.0])
    axis = np.cross(down, v)
    s = np.linalg.norm(axis)
    if s < 1e-9:
        turn = np.array([0.0, 0.0, 0.0, 1.0]) if v[2] < 0 else np.array([1.0, 0.0, 0.0, 0.0])
    else:
        angle = np.arctan2(s, float(np.dot(down, v)))
        turn = np.concatenate([axis / s * np.sin(angle / 2), [np.cos(angle / 2)]])
    return _quat_multiply(turn, base)


def _quat_multiply(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return np.array([aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz])


@dataclass
class Recorded:
    """What a composer / planner program asked for, in order: ('execute', {...}), ('reset',), ('composer', q)."""

    requests: list[tuple[Any, ...]] = field(default_factory=list)


class MapHandle:
    """A map LMP call inside a composer program: evaluated later, again at every replan (as in MPC)."""

    def __init__(self, kind: str, query: str) -> None:
        self.kind = kind
        self.query = query

    def __repr__(self) -> str:
        return f"get_{self.kind}_map({self.query!r})"


class NeedProgram(SandboxError):
    """The program called an LMP whose code is not generated yet; the trusted side generates it and retries."""

    def __init__(self, lmp: str, query: str) -> None:
        super().__init__("need_program", json.dumps([lmp, query]))


class ProgramEnvironment:
    """The globals of one program run in the worker."""

    def __init__(self, snapshot: SceneSnapshot, programs: dict[tuple[str, str], str]) -> None:
        self.snapshot = snapshot
        self.grid = snapshot.grid
        self.programs = programs
        self.recorded = Recorded()
        self.depth = 0

    # -- perception and geometry --
    def detect(self, name: Any) -> Observation:
        if not isinstance(name, str):
            raise TypeError("detect() takes an object name")
        key = name.strip().lower()
        if key in EE_ALIASES:
            point = np.asarray([self.snapshot.ee_position])
            return Observation("gripper", self.grid, point, np.array([0.0, 0.0, 1.0]), query=name)
        if key in TABLE_ALIASES:
            lo, hi = np.asarray(self.snapshot.table_lower), np.asarray(self.snapshot.table_upper)
            corners = np.array([[lo[0], lo[1], hi[2]], [hi[0], hi[1], hi[2]]])
            return Observation("table", self.grid, corners, np.array([0.0, 0.0, 1.0]), query=name)
        for obj in self.snapshot.objects:
            if obj.name.lower() == key:
                return Observation(obj.name, self.grid, obj.points, np.asarray(obj.normal), query=name)
        known = ", ".join(sorted(self.snapshot.names())) or "none"
        raise ValueError(f"detect({name!r}): no such object; objects in view: {known}")

    def cm2index(self, cm: Any, direction: Any) -> Any:
        resolution_cm = self.grid.resolution * 100.0
        axes = {"x": 0, "y": 1, "z": 2}
        if isinstance(direction, str):
            if direction not in axes:
                raise ValueError("cm2index direction is 'x', 'y', 'z' or a 3-vector")
            return int(float(cm) / resolution_cm[axes[direction]])
        d = np.asarray(direction, dtype=float)
        if d.shape != (3,) or np.linalg.norm(d) == 0:
            raise ValueError("cm2index direction is 'x', 'y', 'z' or a non-zero 3-vector")
        d = d / np.linalg.norm(d)
        return (float(cm) * d / resolution_cm).astype(int)

    def index2cm(self, index: Any, direction: Any = None) -> float:
        resolution_cm = self.grid.resolution * 100.0
        if direction is None:
            return float(index) * float(resolution_cm.mean())
        axes = {"x": 0, "y": 1, "z": 2}
        if direction not in axes:
            raise ValueError("index2cm direction is 'x', 'y', 'z' or None")
        return float(index) * float(resolution_cm[axes[direction]])

    def set_voxel_by_radius(self, voxel_map: np.ndarray, voxel_xyz: Any, radius_cm: float = 0, value: float = 1) -> np.ndarray:
        """Set every voxel within radius_cm (a ball in metres, not voxels) of voxel_xyz; touches only its box."""
        centre = np.clip(np.round(np.asarray(voxel_xyz, dtype=float)).astype(int), 0, self.grid.size - 1)
        voxel_map[centre[0], centre[1], centre[2]] = value
        if radius_cm > 0:
            res_cm = self.grid.resolution * 100.0
            r = np.ceil(float(radius_cm) / res_cm).astype(int)
            lo = np.maximum(centre - r, 0)
            hi = np.minimum(centre + r + 1, self.grid.size)
            ii, jj, kk = np.ogrid[lo[0]:hi[0], lo[1]:hi[1], lo[2]:hi[2]]
            d2 = (((ii - centre[0]) * res_cm[0]) ** 2 + ((jj - centre[1]) * res_cm[1]) ** 2
                  + ((kk - centre[2]) * res_cm[2]) ** 2)
            block = voxel_map[lo[0]:hi[0], lo[1]:hi[1], lo[2]:hi[2]]
            block[d2 <= float(radius_cm) ** 2] = value
        return voxel_map

    def empty_map(self, kind: str) -> np.ndarray:
        n = self.grid.size
        if kind in ("affordance", "avoidance"):
            return np.zeros((n, n, n))
        if kind == "velocity":
            return np.ones((n, n, n))
        if kind == "gripper":
            return np.full((n, n, n), float(self.snapshot.gripper_closed))
        if kind == "rotation":
            rotation = np.empty((n, n, n, 4))
            rotation[...] = np.asarray(self.snapshot.ee_quaternion)
            return rotation
        raise ValueError(kind)

    # -- nested LMPs --
    def call_lmp(self, lmp: str, query: Any) -> Any:
        if not isinstance(query, str):
            raise TypeError(f"{lmp}() takes a text query")
        code = self.programs.get((lmp, query))
        if code is None:
            raise NeedProgram(lmp, query)
        if self.depth > 4:
            raise RecursionError("LMPs call each other too deeply")
        self.depth += 1
        try:
            scope = run_checked(check_program(code), self.globals(lmp))
        finally:
            self.depth -= 1
        if "ret_val" not in scope:
            raise ValueError(f"{lmp}({query!r}): the program did not set ret_val")
        value = scope["ret_val"]
        if isinstance(value, Observation):
            value.query = query
        return value

    def globals(self, role: str) -> dict[str, Any]:
        """The names handed to a program of LMP `role` (composer/planner programs may act; map programs may not)."""
        env: dict[str, Any] = {
            "np": numpy_namespace(), "detect": self.detect, "cm2index": self.cm2index, "index2cm": self.index2cm,
            "pointat2quat": pointat2quat, "set_voxel_by_radius": self.set_voxel_by_radius,
            "parse_query_obj": lambda query: self.call_lmp("parse_query_obj", query),
        }
        for kind in MAP_KINDS:
            env[f"get_empty_{kind}_map"] = (lambda k: lambda: self.empty_map(k))(kind)
        if role in ("composer", "planner"):
            for kind in MAP_KINDS:
                env[f"get_{kind}_map"] = (lambda k: lambda query: MapHandle(k, _text(query)))(kind)
            env["execute"] = self._execute
            env["reset_to_default_pose"] = lambda: self.recorded.requests.append(("reset",))
            env["composer"] = lambda query: self.recorded.requests.append(("composer", _text(query)))
        return env

    def _execute(self, movable: Any, affordance_map: Any = None, avoidance_map: Any = None, rotation_map: Any = None,
                 velocity_map: Any = None, gripper_map: Any = None) -> None:
        if not isinstance(movable, Observation):
            raise TypeError("execute(movable, ...): movable must come from parse_query_obj()")
        maps = {}
        for kind, handle in (("affordance", affordance_map), ("avoidance", avoidance_map), ("rotation", rotation_map),
                             ("velocity", velocity_map), ("gripper", gripper_map)):
            if handle is None:
                continue
            if not isinstance(handle, MapHandle) or handle.kind != kind:
                raise TypeError(f"execute(): {kind}_map must come from get_{kind}_map(...)")
            maps[kind] = handle.query
        self.recorded.requests.append(("execute", movable.query, maps))


def _text(query: Any) -> str:
    if not isinstance(query, str):
        raise TypeError("map LMPs take a text query")
    return query


# -- what the worker runs (sandbox TaskRunner) ---------------------------------------------------

@dataclass(frozen=True)
class EvaluateRequest:
    """Evaluate the movable and the named map programs on one snapshot (one MPC replan)."""

    snapshot: SceneSnapshot
    programs: dict[tuple[str, str], str]
    movable: str
    maps: dict[str, str]  # kind -> query


@dataclass(frozen=True)
class ComposeRequest:
    """Run a composer or planner program for the requests it records."""

    snapshot: SceneSnapshot
    programs: dict[tuple[str, str], str]
    role: str


def run_in_worker(tree: ast.Module, name: str, payload: Any) -> Any:
    """The sandbox's TaskRunner for VoxPoser programs (`Sandbox('conceptagent_ros.voxposer.api.run_in_worker')`)."""
    if isinstance(payload, ComposeRequest):
        env = ProgramEnvironment(payload.snapshot, payload.programs)
        run_checked(tree, env.globals(payload.role))
        return env.recorded.requests
    if isinstance(payload, EvaluateRequest):
        env = ProgramEnvironment(payload.snapshot, payload.programs)
        movable = env.call_lmp("parse_query_obj", payload.movable)
        if not isinstance(movable, Observation):
            raise SandboxError("bad_result", f"parse_query_obj({payload.movable!r}) returned "
                                             f"{type(movable).__name__}, not an object from detect()")
        out: dict[str, Any] = {"movable": (movable.name, movable.world_position, movable.position)}
        for kind, query in payload.maps.items():
            out[kind] = pack_map(env.call_lmp(f"get_{kind}_map", query))
        return out
    raise SandboxError("rejected", f"unknown request {type(payload).__name__}")


@dataclass(frozen=True)
class PackedMap:
    """A value map sent back from the worker as its most common value plus the voxels that differ:
    most maps are a few set voxels in a constant grid, and 8 MB through a pipe per map per replan
    would cost more than the planning."""

    shape: tuple[int, ...]
    dtype: str
    fill: Any
    index: np.ndarray
    values: np.ndarray

    def cell_values(self) -> np.ndarray:
        """Every value the map holds (what a check of its values has to look at)."""
        return np.concatenate([np.ravel(self.fill), np.ravel(self.values)]).astype(self.dtype)

    def unpack(self) -> np.ndarray:
        # zeros come from calloc: the untouched pages of a mostly-empty 8 MB map are never written
        out = np.zeros(self.shape, self.dtype) if not np.any(self.fill) else np.full(self.shape, self.fill, self.dtype)
        flat = out.reshape(self.shape[0] * self.shape[1] * self.shape[2], -1)
        flat[self.index] = self.values
        return out


def pack_map(value: Any) -> Any:
    if not isinstance(value, np.ndarray) or value.ndim not in (3, 4) or value.dtype == object:
        return value  # the trusted side refuses it with a clear message
    cells = value.reshape(value.shape[0] * value.shape[1] * value.shape[2], -1)
    fill = cells[0].copy()
    differs = np.flatnonzero(np.any(cells != fill, axis=1))
    if len(differs) <= cells.shape[0] // 4:
        return PackedMap(value.shape, value.dtype.str, fill if cells.shape[1] > 1 else fill[0], differs, cells[differs])
    if value.ndim == 3:
        other = value.flat[differs[0]]
        is_other = value == other
        if np.all(is_other | (value == fill[0])):  # dense but two-valued: a half-space, "everywhere but"
            return TwoValuedMap(value.shape, value.dtype.str, fill[0], other, np.packbits(is_other))
    return value


@dataclass(frozen=True)
class TwoValuedMap:
    """A dense map of two values sent as one bit per voxel (a half-space is 125 kB instead of 8 MB)."""

    shape: tuple[int, ...]
    dtype: str
    fill: Any
    other: Any
    bits: np.ndarray

    def cell_values(self) -> np.ndarray:
        return np.array([self.fill, self.other], dtype=self.dtype)

    def unpack(self) -> np.ndarray:
        is_other = np.unpackbits(self.bits, count=int(np.prod(self.shape))).reshape(self.shape).view(bool)
        return np.where(is_other, np.array(self.other, dtype=self.dtype), np.array(self.fill, dtype=self.dtype))


def unpack_map(value: Any) -> Any:
    return value.unpack() if isinstance(value, PACKED_MAPS) else value


PACKED_MAPS = (PackedMap, TwoValuedMap)


WORKER_RUNNER = "conceptagent_ros.voxposer.api.run_in_worker"
