"""VoxPoser's loop: compose once, then plan and replan against the latest observation (MPC).

`VoxPoser.run(instruction)` asks the composer (or the planner, then the composer per sub-task) for
its program, runs it in the sandbox to learn which `execute(...)` calls it makes, and carries each
out: observe -> re-evaluate the movable and the map programs in the sandbox (no new LLM call) ->
plan a path on the value maps -> send the next waypoint, with rotation, speed and gripper read
from their maps there -> repeat until the movable is within two voxels of a target. When the movable
is an object, the same loop plans the object's path and moves it by pushes (pushing.py), observing
it again after each. Any failure
(a refused, raising, looping or garbage-returning program, an unreachable waypoint) stops the arm
where it is and ends the run with the reason.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.voxposer.api import (
    MAP_KINDS,
    PACKED_MAPS,
    ComposeRequest,
    EvaluateRequest,
    SceneSnapshot,
    VoxelGrid,
    unpack_map,
)
from conceptagent_ros.voxposer.lmps import ProgramBook
from conceptagent_ros.voxposer.planners import FastPlanner, PathPlanner, PlannedPath
from conceptagent_ros.voxposer.pushing import Push, PushModel
from conceptagent_ros.voxposer.sandbox import Sandbox, SandboxError


class ArmEnvironment(Protocol):
    """What the loop needs of a robot: the PyBullet tabletop, or a ROS controller adapter."""

    def observe(self) -> SceneSnapshot: ...

    def move_to(self, position: np.ndarray, quaternion: np.ndarray | None = None, speed: float = 1.0,
                gripper: float | None = None) -> bool: ...

    def reset_to_default_pose(self) -> None: ...

    def stop(self) -> None:
        """Hold the arm where it is now (after a failure or a cancel)."""


@dataclass
class Waypoint:
    position: np.ndarray  # world metres
    quaternion: np.ndarray
    speed: float
    gripper: float


@dataclass
class Evaluation:
    """The movable and the checked maps, evaluated in the sandbox on one observation."""

    snapshot: SceneSnapshot
    name: str  # "gripper" or the object's name
    world: np.ndarray  # the movable's position, metres
    start: np.ndarray  # its voxel
    maps: dict[str, np.ndarray]
    targets: np.ndarray  # (N, 3) voxels where the affordance map is 1
    seconds: float


@dataclass
class ReplanRecord:
    execute_index: int
    evaluate_s: float
    plan_s: float
    start_voxel: np.ndarray
    path: np.ndarray  # voxels


@dataclass
class RunReport:
    instruction: str
    success: bool = False  # every execute() reached its target
    message: str = ""
    error_kind: str = ""
    programs: list[str] = field(default_factory=list)
    replans: list[ReplanRecord] = field(default_factory=list)
    waypoints: list[Waypoint] = field(default_factory=list)
    llm_writes: int = 0
    canceled: bool = False
    last_maps: dict[str, np.ndarray] = field(default_factory=dict)  # the latest replan's maps (for pictures)

    @property
    def replan_hz(self) -> float:
        times = [r.evaluate_s + r.plan_s for r in self.replans]
        return len(times) / sum(times) if times and sum(times) > 0 else 0.0


class VoxPoserError(ConceptAgentError):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass
class VoxPoserOptions:
    use_planner_lmp: bool = False  # the paper skips it in simulation: the templates are one sub-task
    max_replans: int = 200
    reach_voxels: float = 2.0
    replan_every_m: float = 0.02  # execute the path's waypoints for this far, then observe and replan
    stall_replans: int = 4  # the movable in the same voxel this many replans running: give up there
    max_pushes: int = 60
    push_reach_m: float = 0.03  # an object this close (xy) to its target has arrived
    push_lookahead_m: float = 0.05  # each push aims at the object path's point this far ahead
    push_height_m: float = 0.025  # the closed fingers' centre above the table while pushing
    hover_height_m: float = 0.12  # travel height between pushes (clear of the blocks)
    push_seed: int = 0
    arm_base_xy: tuple[float, float] = (0.0, 0.0)  # the arm's base in the world frame
    arm_reach_m: float = 0.78  # how far (xy) from its base the hand reaches at pushing height (Panda)


class VoxPoser:
    def __init__(self, env: ArmEnvironment, book: ProgramBook, sandbox: Sandbox, planner: PathPlanner | None = None,
                 options: VoxPoserOptions | None = None,
                 on_progress: Callable[[str], None] | None = None,
                 should_stop: Callable[[], bool] | None = None) -> None:
        self.env = env
        self.book = book
        self.sandbox = sandbox
        self.planner = planner or FastPlanner()
        self.options = options or VoxPoserOptions()
        self.say = on_progress or (lambda _msg: None)
        self.should_stop = should_stop or (lambda: False)
        self.on_waypoint: Callable[[Waypoint, int], None] = lambda _w, _i: None
        # after each replan: the record, the checked maps and the snapshot they were evaluated on
        self.on_replan: Callable[[ReplanRecord, dict[str, np.ndarray], SceneSnapshot], None] = lambda _r, _m, _s: None

    def run(self, instruction: str) -> RunReport:
        report = RunReport(instruction)
        try:
            self._run(instruction, report)
        except (SandboxError, VoxPoserError) as exc:
            report.success = False
            report.error_kind = exc.kind
            report.message = str(exc)
        except ConceptAgentError as exc:  # e.g. the offline composer does not understand
            report.success = False
            report.error_kind = "not_understood"
            report.message = str(exc)
        if not report.success:
            self.env.stop()  # whatever went wrong, the arm is left holding still
        report.programs = list(self.book.log)
        report.llm_writes = self.book.writes
        return report

    def _run(self, instruction: str, report: RunReport) -> None:
        text = " ".join(instruction.split())
        if not text:
            raise VoxPoserError("bad_input", "empty instruction")
        if any(ord(ch) < 32 for ch in instruction if ch not in "\t\n"):
            raise VoxPoserError("bad_input", "the instruction contains control characters")
        snapshot = self.env.observe()
        role = "planner" if self.options.use_planner_lmp else "composer"
        self.book.write(role, text, snapshot.names())
        requests = self._compose(role, text, snapshot)
        if role == "planner":
            expanded: list[tuple[Any, ...]] = []
            for request in requests:
                if request[0] == "composer":
                    self.book.write("composer", request[1], snapshot.names())
                    expanded += self._compose("composer", request[1], self.env.observe())
                else:
                    expanded.append(request)
            requests = expanded
        if not any(r[0] == "execute" for r in requests):
            raise VoxPoserError("bad_result", "the program made no execute() call: nothing to do")
        for index, request in enumerate(requests):
            if request[0] == "reset":
                self.env.reset_to_default_pose()
            elif request[0] == "execute":
                self._execute(index, request[1], request[2], report)
                if report.canceled:
                    report.message = "canceled"
                    return
        report.success = True
        report.message = f"done: {sum(r[0] == 'execute' for r in requests)} motion(s), {len(report.replans)} replans"

    def _compose(self, role: str, text: str, snapshot: SceneSnapshot) -> list[tuple[Any, ...]]:
        def payload(programs: dict[tuple[str, str], str]) -> ComposeRequest:
            return ComposeRequest(snapshot, dict(programs), role)
        result = self.book.run(self.sandbox, (role, text), payload, snapshot)
        return list(result)

    def _evaluate(self, snapshot: SceneSnapshot, movable: str, maps: dict[str, str]) -> Evaluation:
        t0 = time.perf_counter()
        (name, world, start), checked = evaluate_maps(self.book, self.sandbox, snapshot, movable, maps)
        targets = np.argwhere(checked.get("affordance", np.zeros(1)) == 1)
        if len(targets) == 0:
            raise VoxPoserError("bad_result", f"the affordance map for {maps['affordance']!r} has no target "
                                              "voxel (no voxel set to 1)")
        return Evaluation(snapshot, name, np.asarray(world, dtype=float), np.asarray(start), checked, targets,
                          time.perf_counter() - t0)

    def _plan(self, index: int, evaluation: Evaluation, report: RunReport) -> PlannedPath:
        """Plan the movable's path on the evaluated maps; record the replan and tell on_replan."""
        t0 = time.perf_counter()
        maps = evaluation.maps
        avoidance = maps.get("avoidance", np.zeros((evaluation.snapshot.grid.size,) * 3))
        planned: PlannedPath = self.planner.optimize(evaluation.start, maps["affordance"], avoidance)
        record = ReplanRecord(index, evaluation.seconds, time.perf_counter() - t0, evaluation.start, planned.path)
        report.replans.append(record)
        report.last_maps = maps
        self.on_replan(record, maps, evaluation.snapshot)
        return planned

    def _send(self, waypoint: Waypoint, report: RunReport, what: str) -> None:
        self.say(f"{what} {len(report.waypoints) + 1}: {np.round(waypoint.position, 3).tolist()} "
                 f"speed x{waypoint.speed:.2f} gripper {'closed' if waypoint.gripper >= 0.5 else 'open'}")
        self.env.move_to(waypoint.position, waypoint.quaternion, waypoint.speed, waypoint.gripper)
        report.waypoints.append(waypoint)
        self.on_waypoint(waypoint, len(report.waypoints))

    def _execute(self, index: int, movable: str, maps: dict[str, str], report: RunReport) -> None:
        if "affordance" not in maps:
            raise VoxPoserError("bad_result", "execute() without an affordance map has nowhere to go")
        recent: list[tuple[int, ...]] = []
        for _ in range(self.options.max_replans):
            if self.should_stop():
                report.canceled = True
                return
            evaluation = self._evaluate(self.env.observe(), movable, maps)
            if evaluation.name != "gripper":
                self._push(index, movable, maps, report, evaluation)
                return
            start, targets = evaluation.start, evaluation.targets
            if np.min(np.linalg.norm(targets - start, axis=1)) <= self.options.reach_voxels:
                self._final_settings(evaluation.snapshot, evaluation.maps, start)
                return
            recent = (recent + [tuple(int(v) for v in start)])[-self.options.stall_replans:]
            if len(recent) == self.options.stall_replans and len(set(recent)) == 1:
                gap = float(np.min(np.linalg.norm(targets - start, axis=1)))
                raise VoxPoserError("not_reached", f"the arm stopped making progress {gap:.0f} voxels from the target "
                                                   f"of {maps['affordance']!r} (unreachable, or blocked); stopped there")
            planned = self._plan(index, evaluation, report)
            path = planned.path[1:] if len(planned.path) > 1 else planned.path
            travelled, previous = 0.0, evaluation.world
            for voxel in path:
                if travelled >= self.options.replan_every_m:
                    break
                if self.should_stop():
                    report.canceled = True
                    return
                waypoint = self._waypoint(evaluation.snapshot, evaluation.maps, voxel)
                travelled += float(np.linalg.norm(waypoint.position - previous))
                for part in speed_changes(previous, waypoint, evaluation.snapshot.grid, evaluation.maps):
                    self._send(part, report, "waypoint")
                previous = waypoint.position
        raise VoxPoserError("not_reached", f"target of {maps['affordance']!r} not reached after "
                                           f"{self.options.max_replans} replans")

    def _push(self, index: int, movable: str, maps: dict[str, str], report: RunReport, first: Evaluation) -> None:
        """Move an object along its planned path by pushes chosen with the pushing model (pushing.py);
        `first` is the evaluation that found the movable to be an object."""
        options, model = self.options, PushModel()
        rng = np.random.default_rng(options.push_seed)
        moved: list[float] = []
        evaluation = first
        for pushes in range(options.max_pushes):
            if pushes:  # observe the object where the last push left it
                if self.should_stop():
                    report.canceled = True
                    return
                snapshot = self.env.observe()
                if evaluation.name not in snapshot.names():
                    raise VoxPoserError("not_reached", f"the {evaluation.name} is out of sight after a push (off the table?)")
                last = evaluation.world[:2]
                evaluation = self._evaluate(snapshot, movable, maps)
                moved.append(float(np.linalg.norm(evaluation.world[:2] - last)))
            name, centre, grid = evaluation.name, evaluation.world, evaluation.snapshot.grid
            gap = float(np.min(np.linalg.norm(grid.to_world(evaluation.targets)[:, :2] - centre[:2], axis=1)))
            if gap <= options.push_reach_m:
                return
            if len(moved) >= 4 and max(moved[-4:]) < 0.005:
                raise VoxPoserError("not_reached", f"the last 4 pushes left the {name} where it was, {gap * 100:.0f} cm "
                                                   f"from the target of {maps['affordance']!r}; stopped there")
            planned = self._plan(index, evaluation, report)
            # the object's path kept to the table: a block pushed past its edge falls, or lies beyond
            # the hand's reach with no side left to push it back from
            lo, hi = np.asarray(evaluation.snapshot.table_lower[:2]), np.asarray(evaluation.snapshot.table_upper[:2])
            path = np.clip(grid.to_world(np.asarray(planned.path))[:, :2], lo, hi)
            ahead = np.linalg.norm(path - centre[:2], axis=1) >= options.push_lookahead_m
            goal = path[int(np.argmax(ahead))] if ahead.any() else path[-1]
            points = next(o.points for o in evaluation.snapshot.objects if o.name == name)
            radius = float(np.max(points[:, :2].max(axis=0) - points[:, :2].min(axis=0)) / 2) + 0.005
            avoidance = evaluation.maps.get("avoidance", np.zeros((grid.size,) * 3))
            push = model.choose(centre[:2], radius, goal, avoidance_cost(grid, avoidance, float(centre[2])), rng,
                                reachable=self._reachable)
            self._carry_out(push, evaluation.snapshot, report)
            if report.canceled:
                return
        raise VoxPoserError("not_reached", f"the {movable} did not reach the target of {maps['affordance']!r} "
                                           f"after {options.max_pushes} pushes")

    def _reachable(self, points: np.ndarray) -> np.ndarray:
        """Which xy points (N, 2) the hand reaches at pushing height."""
        base = np.asarray(self.options.arm_base_xy, dtype=float)
        return np.linalg.norm(points - base, axis=-1) <= self.options.arm_reach_m

    def _carry_out(self, push: Push, snapshot: SceneSnapshot, report: RunReport) -> None:
        """Hover over the pre-contact point, go down, push through, rise: the fingers closed, a firm pusher."""
        o = self.options
        pre = push.pre_contact(0.03)
        now = np.asarray(snapshot.ee_position, dtype=float)
        moves = []
        if now[2] < o.hover_height_m - 0.01:
            moves.append((np.array([now[0], now[1], o.hover_height_m]), 1.0))
        moves += [(np.array([*pre, o.hover_height_m]), 1.0), (np.array([*pre, o.push_height_m]), 0.5),
                  (np.array([*push.end(), o.push_height_m]), 0.3),
                  (np.array([*(push.end() - push.direction * 0.02), o.hover_height_m]), 1.0)]
        down = np.array([1.0, 0.0, 0.0, 0.0])
        for position, speed in moves:
            if self.should_stop():
                report.canceled = True
                return
            self._send(Waypoint(position, down, speed, 1.0), report, "push waypoint")

    def _waypoint(self, snapshot: SceneSnapshot, maps: dict[str, np.ndarray], voxel: np.ndarray) -> Waypoint:
        v = np.clip(np.round(voxel).astype(int), 0, snapshot.grid.size - 1)
        at = (v[0], v[1], v[2])
        quat = maps["rotation"][at] if "rotation" in maps else np.asarray(snapshot.ee_quaternion)
        speed = float(maps["velocity"][at]) if "velocity" in maps else 1.0
        gripper = float(maps["gripper"][at]) if "gripper" in maps else float(snapshot.gripper_closed)
        return Waypoint(snapshot.grid.to_world(v), np.asarray(quat, dtype=float), speed, gripper)

    def _final_settings(self, snapshot: SceneSnapshot, maps: dict[str, np.ndarray], voxel: np.ndarray) -> None:
        """At the target: apply the gripper (and rotation) its maps ask for there."""
        waypoint = self._waypoint(snapshot, maps, voxel)
        if "gripper" in maps and float(waypoint.gripper >= 0.5) != snapshot.gripper_closed:
            self.env.move_to(np.asarray(snapshot.ee_position), waypoint.quaternion, 1.0, waypoint.gripper)


def avoidance_cost(grid: VoxelGrid, avoidance: np.ndarray, z: float) -> Callable[[np.ndarray], np.ndarray]:
    """The avoidance map's value under planar positions (N, 2) at height z, as a push's extra cost."""
    def cost(xy: np.ndarray) -> np.ndarray:
        cells = grid.to_voxel(np.column_stack([xy, np.full(len(xy), z)]))
        return 0.2 * avoidance[cells[:, 0], cells[:, 1], cells[:, 2]]
    return cost


def evaluate_maps(book: ProgramBook, sandbox: Sandbox, snapshot: SceneSnapshot, movable: str,
                  maps: dict[str, str]) -> tuple[tuple[str, np.ndarray, np.ndarray], dict[str, np.ndarray]]:
    """One re-evaluation: the movable ((name, world position, voxel)) and the checked maps on `snapshot`."""
    def payload(programs: dict[tuple[str, str], str]) -> EvaluateRequest:
        return EvaluateRequest(snapshot, dict(programs), movable, maps)
    values = book.run(sandbox, None, payload, snapshot)
    size = snapshot.grid.size
    checked = {kind: check_map(kind, values.get(kind), size) for kind in MAP_KINDS if kind in values}
    return values["movable"], checked


def speed_changes(start: np.ndarray, waypoint: Waypoint, grid: VoxelGrid, maps: dict[str, np.ndarray],
                  step_m: float = 0.005) -> list[Waypoint]:
    """The move from `start` to `waypoint`, split where the velocity map changes along it (to within
    `step_m`), each part at the speed of the voxels it runs through: waypoints are ~2 cm apart, and a
    move that leaves a slow region should not crawl the rest of the way, nor one that enters it rush in."""
    if "velocity" not in maps:
        return [waypoint]
    length = float(np.linalg.norm(waypoint.position - start))
    count = max(1, int(np.ceil(length / step_m)))
    points = start + (waypoint.position - start) * (np.arange(1, count + 1) / count)[:, None]
    voxels = grid.to_voxel(points)
    speeds = maps["velocity"][voxels[:, 0], voxels[:, 1], voxels[:, 2]].astype(float)
    ends = [*np.flatnonzero(speeds[1:] != speeds[:-1]), count - 1]
    parts = [Waypoint(points[i], waypoint.quaternion, float(speeds[i]), waypoint.gripper) for i in ends[:-1]]
    return [*parts, Waypoint(waypoint.position, waypoint.quaternion, float(speeds[-1]), waypoint.gripper)]


def check_map(kind: str, value: Any, size: int) -> np.ndarray:
    """Refuse garbage from a map program: wrong type, shape or non-finite values. A packed map (see
    api.pack_map) is checked on the values it holds before it is unpacked."""
    shape = (size, size, size, 4) if kind == "rotation" else (size, size, size)
    cells = value.cell_values() if isinstance(value, PACKED_MAPS) else value
    if not isinstance(cells, np.ndarray):
        raise VoxPoserError("bad_result", f"get_{kind}_map returned {type(value).__name__}, not a NumPy array")
    if tuple(value.shape) != shape:
        raise VoxPoserError("bad_result", f"get_{kind}_map returned shape {tuple(value.shape)}, expected {shape}")
    if not np.issubdtype(cells.dtype, np.number) and cells.dtype != bool:
        raise VoxPoserError("bad_result", f"get_{kind}_map returned dtype {cells.dtype}")
    if not np.all(np.isfinite(cells)):
        raise VoxPoserError("bad_result", f"get_{kind}_map contains NaN or infinite values")
    if kind == "velocity" and (cells.min() <= 0 or cells.max() > 10):
        raise VoxPoserError("bad_result", f"get_velocity_map values must be in (0, 10], got {cells.min()}..{cells.max()}")
    return unpack_map(value)
