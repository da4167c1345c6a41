"""The task planner's body on the physical arm: `conceptagent run ... --scene tabletop --body pybullet`.

A RobotInterface (planning/robot.py) over the PyBullet Panda at the table the scene file lays out
(physical/scene_layout.py). What the planner is told comes from the four RGB-D cameras: per part,
the depth pixels its segmentation mask covers (the simulator's masks, the geometry from depth), its
place from those points, what it stands in from their boxes, a drawer's opening measured from its
front's points against the most recessed front. Skills go to the manipulation package's planners
and executors on those points: pick (grasp planner, pick executor), place (place planner on the
receptacle's points, place executor), open and close (articulation planner and executor, the
result measured again from the points). A physical failure comes back as a failed skill whose
message carries the manipulation code (`pick(duck_1) failed: SLIPPED: ...`), for the planner to
act on like any other. The goal is judged by physical/tabletop_judge.py on PyBullet's own state.

The arm does not drive: navigate_to succeeds on anything at the table (the whole table is within
the arm's reach from its base), and skills the arm has no executor for are refused as unavailable.
"""
from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TextIO

import numpy as np

from conceptagent_ros.manipulation.articulation_executor import carry_out
from conceptagent_ros.manipulation.articulation_planner import FrontGeometry, drawer_opening, front_geometry, plan_drawer
from conceptagent_ros.manipulation.failures import ManipulationError
from conceptagent_ros.manipulation.grasp_planner import GraspCandidate, GraspPlan, GraspPlanner
from conceptagent_ros.manipulation.pick_executor import PickConfig, PickExecutor
from conceptagent_ros.manipulation.place_executor import HeldObject, hand_turn_along, place
from conceptagent_ros.manipulation.place_planner import PlacePlanner
from conceptagent_ros.manipulation.robot_spec import load_robot_spec
from conceptagent_ros.manipulation.watched_arm import MotionCanceled, WatchedArm
from conceptagent_ros.physical.grasp_world import GraspWorld
from conceptagent_ros.physical.scene_layout import TabletopLayout, tabletop_layout
from conceptagent_ros.scene.model import RobotState, Scene, SceneObject
from conceptagent_ros.scene.observation import Observation
from conceptagent_ros.skills.contract import SkillCall, SkillOutcome

OPEN_BY = 0.10  # how far open() pulls a drawer
SEEN_OPEN = 0.05  # a drawer measured at least this far out is open; at most CLOSED_AT, closed
SEEN_CLOSED = 0.02
CONTAINED_MARGIN = 0.01  # a thing's bottom may lie this far below a receptacle's lowest point and still be in it
ARITY = {"navigate_to": 1, "pick": 1, "place": 2, "open": 1, "close": 1}
SKILLS = tuple(ARITY)


Progress = Callable[[str, float], None]  # (what the skill is doing, fraction done)


@dataclass
class SkillWatch:
    """What a skill server hands a skill: a flag that cancels it (the arm stops before its next
    motion) and a callback told of each phase."""

    cancel: threading.Event | None = None
    progress: Progress | None = None


@dataclass
class Held:
    object_id: str
    grasp: GraspCandidate
    hand_position: np.ndarray  # where the hand stopped after the lift


class TabletopBody:
    """RobotInterface on the physical Panda. `close()` when done (it owns two PyBullet clients)."""

    def __init__(self, scene: Scene, seed: int = 0, gui: bool = False, robot: str = "panda",
                 log: TextIO | None = None):
        self.scene = scene
        self.layout: TabletopLayout = tabletop_layout(scene, seed)
        self.spec = load_robot_spec(robot)
        self.world = GraspWorld([], seed, gui=gui, tray=self.layout.tray, cabinet=self.layout.cabinet,
                                placed=self.layout.things)
        self.state = RobotState(scene.robot.start_position, scene.robot.start_room, None, scene.robot.reach)
        self.held: Held | None = None
        self.log = log if log is not None else sys.stderr
        self.last_grasp_plan: GraspPlan | None = None  # for pictures and rviz markers
        self.last_grasp: GraspCandidate | None = None
        self._watch = SkillWatch()

    def close(self) -> None:
        self.world.close()

    # -- seeing ------------------------------------------------------------------------------------
    def clouds(self) -> dict[str, np.ndarray]:
        """Per scene id, the points the cameras see of it now."""
        out = {}
        for part, points in self.world.perceive().items():
            sid = self.layout.scene_id(part)
            if sid is not None and len(points):
                out[sid] = points
        return out

    def drawer_openings(self, clouds: dict[str, np.ndarray]) -> dict[str, float]:
        """Each seen drawer's opening (m), measured from its front's points against the most
        recessed front (a closed drawer's) -- not read from the simulator."""
        fronts: dict[str, FrontGeometry] = {}
        for sid in self.layout.drawers:
            if sid in clouds:
                try:
                    fronts[sid] = front_geometry(clouds[sid], self.spec.arm.base)
                except ManipulationError:
                    continue
        if not fronts:
            return {}
        # the front standing least toward the robot is taken for closed
        reference = min(fronts.values(), key=lambda f: float(f.centre @ f.normal))
        openings = {}
        for sid in fronts:
            try:
                openings[sid] = drawer_opening(clouds[sid], reference)
            except ManipulationError:
                continue
        return openings

    def observe(self) -> Observation:
        clouds = self.clouds()
        openings = self.drawer_openings(clouds)
        boxes = {sid: (pts.min(axis=0), pts.max(axis=0)) for sid, pts in clouds.items()}
        holders = [sid for sid in boxes if self.scene.objects[sid].has("receptacle")
                   and (sid not in self.layout.drawers or openings.get(sid, 0.0) >= SEEN_OPEN)]
        objects = []
        for sid, (lo, hi) in boxes.items():
            spec = self.scene.objects[sid]
            state = dict(spec.state)
            if sid in openings:
                state["open"] = openings[sid] >= SEEN_OPEN
            held = self.held is not None and self.held.object_id == sid
            parent = None if held else self._holder(sid, boxes, holders)
            centre = (lo + hi) / 2
            objects.append(SceneObject(sid, spec.category, self.state.room, (float(centre[0]), float(centre[1]), float(hi[2])),
                                       spec.affordances, state, parent, attributes=dict(spec.attributes)))
        self.state = RobotState(self.state.position, self.state.room, self.held.object_id if self.held else None,
                                self.state.reach)
        seen_inside = tuple(sid for sid in holders if sid in boxes)
        return Observation(self.state, tuple(objects), seen_inside)

    def _holder(self, sid: str, boxes: dict[str, tuple[np.ndarray, np.ndarray]], holders: list[str]) -> str | None:
        """The receptacle of smallest footprint (larger than the thing's) over which the thing's
        centre stands, with the thing's bottom within its height: in the tray, in the open drawer,
        else on the table. A drawer is in its cabinet (the cabinet's make, not a thing seen)."""
        if sid in self.layout.drawers:
            return self.layout.cabinet_id
        lo, hi = boxes[sid]
        centre = (lo + hi) / 2
        best: tuple[float, str] | None = None
        for other in holders:
            if other == sid or self._area(boxes[other]) <= self._area(boxes[sid]):
                continue
            olo, ohi = boxes[other]
            over = bool(np.all(centre[:2] >= olo[:2]) and np.all(centre[:2] <= ohi[:2]))
            if over and olo[2] - CONTAINED_MARGIN <= lo[2] <= ohi[2] + CONTAINED_MARGIN:
                area = self._area(boxes[other])
                if best is None or area < best[0]:
                    best = (area, other)
        return best[1] if best else None

    @staticmethod
    def _area(box: tuple[np.ndarray, np.ndarray]) -> float:
        return float(np.prod(box[1][:2] - box[0][:2]))

    # -- acting ------------------------------------------------------------------------------------
    def execute(self, call: SkillCall, watch: SkillWatch | None = None) -> SkillOutcome:
        """Run one skill on the arm. With `watch`, a set cancel flag stops the arm before its next
        motion (the outcome is then "canceled") and each phase is reported as it starts."""
        self._watch = watch or SkillWatch()
        try:
            return self._execute(call)
        finally:
            self._watch = SkillWatch()

    def _phase(self, what: str, fraction: float) -> None:
        if self._watch.cancel is not None and self._watch.cancel.is_set():
            raise MotionCanceled(f"canceled before {what}")
        if self._watch.progress is not None:
            self._watch.progress(what, fraction)

    def _hand(self) -> WatchedArm:
        """The arm as the executors drive it: in straight lines, in joint space where a line cannot
        get there, stopped by a cancel before any motion."""
        progress = self._watch.progress

        def motion(what: str) -> None:
            if progress is not None:
                progress(what, -1.0)  # a motion within the phase: no new fraction

        return WatchedArm(self.world.hand(joint_space_fallback=True), self._watch.cancel, motion)

    def _execute(self, call: SkillCall) -> SkillOutcome:
        if call.skill not in SKILLS:
            return SkillOutcome(call, False, f"the arm at the table has no {call.skill} skill (it can "
                                             f"{', '.join(SKILLS)})", "unavailable")
        if len(call.args) != ARITY[call.skill]:
            return SkillOutcome(call, False, f"{call}: {call.skill} takes {ARITY[call.skill]} argument"
                                             f"{'s' if ARITY[call.skill] != 1 else ''}", "invalid")
        unknown = [a for a in call.args if a not in self.scene.objects and a not in self.scene.rooms]
        if unknown:
            return SkillOutcome(call, False, f"{call}: unknown object {unknown[0]}", "invalid")
        started = time.perf_counter()
        try:
            message = getattr(self, f"_do_{call.skill}")(*call.args)
        except ManipulationError as e:
            self.log.write(f"  {call}: {e.code} after {time.perf_counter() - started:.1f} s\n")
            return SkillOutcome(call, False, f"{call} failed: {e.code}: {e.detail}", "physical")
        except _Refused as e:
            return SkillOutcome(call, False, f"{call} was refused: {e}", "precondition")
        except MotionCanceled as e:
            self.world.table.stop()  # hold where it is
            if self.held is not None and self.world.table.finger_gap() <= self.spec.gripper.empty_gap + 0.002:
                self.held = None
            return SkillOutcome(call, False, f"{call} canceled: {e}; the arm stopped", "canceled")
        return SkillOutcome(call, True, f"{call}: {message}")

    def _do_navigate_to(self, target: str) -> str:
        return "the arm reaches the whole table from its base"

    def _others(self, clouds: dict[str, np.ndarray], *leave_out: str) -> np.ndarray:
        rest = [pts for sid, pts in clouds.items() if sid not in leave_out]
        return np.concatenate(rest) if rest else np.zeros((0, 3))

    def _look(self, needed: str) -> dict[str, np.ndarray]:
        """What the cameras see now; NOT_SEEN when they do not see `needed`."""
        self._phase("looking at the table", 0.05)
        clouds = self.clouds()
        if needed not in clouds:
            raise ManipulationError("NOT_SEEN", f"no camera sees {needed}")
        return clouds

    def _do_pick(self, obj: str) -> str:
        if self.held is not None:
            raise _Refused(f"the hand already holds {self.held.object_id}")
        if obj not in (t.name for t in self.layout.things):
            raise _Refused(f"{obj} is not something the hand can pick up")
        clouds = self._look(obj)
        self._phase(f"planning a grasp of {obj}", 0.15)
        planner = GraspPlanner(self.spec.gripper, self.spec.arm, self.world.kinematics.reachable)
        self.last_grasp_plan, self.last_grasp = None, None
        plan = planner.plan(clouds[obj], self._others(clouds, obj))
        self.last_grasp_plan = plan
        self._phase(f"picking {obj} ({len(plan.candidates)} grasps planned)", 0.3)
        config = PickConfig()
        part = self.layout.part(obj)
        result = PickExecutor(self._hand(), self.spec.gripper, config).pick(
            plan, lambda: self.world.locate(part) if part else None)
        self.last_grasp = result.grasp
        if not result.success or result.grasp is None:
            raise ManipulationError(result.code or "NOT_HELD", result.message)
        self.held = Held(obj, result.grasp, result.grasp.position + np.array([0.0, 0.0, config.lift]))
        return f"picked up ({result.message}; {result.attempts} attempt{'s' if result.attempts != 1 else ''})"

    def _do_place(self, obj: str, receptacle: str) -> str:
        if self.held is None or self.held.object_id != obj:
            raise _Refused(f"the hand does not hold {obj}")
        clouds = self._look(receptacle)
        self._phase(f"planning where in {receptacle} to put {obj}", 0.15)
        held = HeldObject.from_points(clouds.get(obj, np.zeros((0, 3))))
        near = None
        if receptacle == self.layout.table:  # the free table nearest where the hand is, not the table's far end
            near = (float(self.held.hand_position[0]), float(self.held.hand_position[1]))
        spot = PlacePlanner().plan(held.footprint_radius, held.height, clouds[receptacle],
                                   self._others(clouds, obj, receptacle), near=near)
        turn = 0.0
        if spot.inside or receptacle in self.layout.drawers:  # walls around: the hand's long side along the long side
            turn = hand_turn_along(self.held.grasp.rotation, _long_axis(clouds[receptacle]))
        self._phase(f"putting {obj} down", 0.3)
        done = place(self._hand(), self.spec.gripper, self.held.hand_position, self.held.grasp.rotation, held, spot,
                     turn=turn)
        if not done.success:
            if done.code != "UNREACHABLE":  # it may have left the hand on the way
                self.held = None if self.world.table.finger_gap() <= self.spec.gripper.empty_gap + 0.002 else self.held
            raise ManipulationError(done.code, done.message)
        self.held = None
        self.world.table.step(120)  # let it settle before anyone looks
        into = spot.inside or receptacle in self.layout.drawers
        return f"put {'in' if into else 'on'} {receptacle} ({spot.clearance * 100:.1f} cm clear of the nearest thing)" \
            if np.isfinite(spot.clearance) else f"put {'in' if into else 'on'} {receptacle}"

    def _drawer(self, target: str) -> str:
        if target not in self.layout.drawers:
            raise _Refused(f"{target} is not a drawer of the cabinet; the arm opens and closes drawers only")
        if self.held is not None:
            raise _Refused(f"the hand holds {self.held.object_id}; put it down first")
        return self.layout.drawers[target]

    def _do_open(self, target: str) -> str:
        return self._move_drawer(target, "open")

    def _do_close(self, target: str) -> str:
        return self._move_drawer(target, "close")

    def _move_drawer(self, target: str, action: str) -> str:
        self._drawer(target)
        clouds = self._look(target)
        before = self.drawer_openings(clouds).get(target, 0.0)
        distance = OPEN_BY if action == "open" else max(before, 0.0) + 0.005
        plan = plan_drawer(clouds[target], self.spec.arm.base, self.spec.gripper, action,  # type: ignore[arg-type]
                           distance, floor_z=0.0)
        self._phase(f"{'pulling' if action == 'open' else 'pushing'} {target} by its {plan.grip}", 0.2)
        reached = carry_out(self._hand(), plan)
        self.world.hand().rest()  # hand up and pointing down: where the next pick's straight lines start well
        self._phase(f"measuring how far {target} stands out", 0.9)
        if not reached:
            raise ManipulationError("UNREACHABLE", "the arm did not reach the handle")
        self.world.table.step(120)
        after = self.drawer_openings(self.clouds()).get(target)
        if after is None:
            raise ManipulationError("NOT_SEEN", f"{target}'s front is not seen after the {action}")
        moved = after >= SEEN_OPEN if action == "open" else after <= SEEN_CLOSED
        if not moved:
            raise ManipulationError("NOT_MOVED", f"the drawer stands {after * 100:.1f} cm out after the {action} "
                                                 f"(it stood {before * 100:.1f} cm out before)")
        return f"{'opened' if action == 'open' else 'closed'}: it stands {after * 100:.1f} cm out (measured from its front)"


def _long_axis(points: np.ndarray) -> np.ndarray:
    """The horizontal direction along which the points spread most."""
    xy = points[:, :2] - points[:, :2].mean(axis=0)
    _, vectors = np.linalg.eigh(xy.T @ xy)
    return vectors[:, -1]


class _Refused(Exception):
    """A call the body will not try (its precondition fails before any motion)."""
