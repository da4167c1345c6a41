"""Pick, place, open and close as skills: the planners on what the robot sees, the executors on its
arm, one failure code per way to fail. Every body runs them the same way -- the PyBullet Panda with
its cameras (bodies/tabletop/tabletop_body.py) and a real arm with the perception node's points and its
controllers (ros/manipulation_node.py) -- through the ArmBody protocol below.

A skill raises ManipulationError (a physical failure, with its code), SkillRefused (its
precondition fails before any motion) or MotionCanceled (watched_arm.py: a cancel stopped the arm).
Phases are reported through `progress` as they start; a set `cancel` stops the skill before its
next phase or motion.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Literal, Protocol, TextIO

import numpy as np

from conceptagent_ros.manipulation.articulation_executor import carry_out
from conceptagent_ros.manipulation.articulation_planner import (
    DRAWER_FRONTS,
    FrontGeometry,
    drawer_opening,
    front_geometry,
    plan_drawer,
)
from conceptagent_ros.manipulation.clouds import as_resting
from conceptagent_ros.manipulation.failures import ManipulationError
from conceptagent_ros.manipulation.grasp_planner import GraspCandidate, GraspPlan, GraspPlanner
from conceptagent_ros.manipulation.pick_executor import Arm, PickConfig, PickExecutor
from conceptagent_ros.manipulation.place_executor import HeldObject, hand_turn_along, place
from conceptagent_ros.manipulation.place_planner import PlacePlanner, drawer_inside
from conceptagent_ros.manipulation.robot_spec import RobotSpec
from conceptagent_ros.manipulation.watched_arm import MotionCanceled, WatchedArm
from conceptagent_ros.skills.contract import SkillCall, SkillOutcome

OPEN_BY = 0.10  # how far open() pulls a drawer
SEEN_OPEN = 0.05  # a drawer measured at least this far out is open; at most SEEN_CLOSED, closed
SEEN_CLOSED = 0.02
SAME_FRONT_COS = float(np.cos(np.radians(15.0)))  # two fronts whose normals are this near are one front
GAP_TOLERANCE = 0.002  # above the empty hand's gap by this much: something is held
ARITY = {"navigate_to": 1, "pick": 1, "place": 2, "open": 1, "close": 1}
SKILLS = tuple(ARITY)  # navigate_to: a fixed arm reaches what it reaches from its base

Clouds = dict[str, np.ndarray]  # every seen object's points, by id
Progress = Callable[[str, float], None]  # (what the skill is doing, fraction done; -1: a motion within the phase)

HOW = {"handle": "by its handle", "edge": "by its front's top edge", "push": "with the fingers against its handle",
       "press": "by pressing on its handle and dragging"}


class SkillRefused(Exception):
    """A skill the arm will not try: its precondition fails before any motion."""


class SkillUnavailable(Exception):
    """A skill this arm has no way to do on this target (not built for it), said before any motion."""


class ArmBody(Protocol):
    """What the skills need of a robot with an arm."""

    def look(self) -> Clouds:
        """Every object's points as the robot sees them now, by id."""

    def hand(self) -> Arm:
        """The arm as the executors drive it."""

    def reachable(self, position: np.ndarray, quaternion: np.ndarray) -> bool:
        """Whether the hand frame can be put at this pose (the grasp planner's reach check)."""

    def finger_gap(self) -> float: ...

    def settle(self) -> None:
        """Let what the hand let go of, or moved, come to rest before looking again."""

    def rest(self) -> None:
        """The arm back to its rest pose (hand up, pointing down), by whatever way it has."""

    def stop(self) -> None:
        """Hold the arm where it is (a cancel)."""


class DoorMover(Protocol):
    """Who swings a body's hinged doors (bodies/household/doors.py: the base stands where the arm pulls
    the handle, then pushes the door on): the arm's own skills open drawers only."""

    def doors(self) -> Collection[str]:
        """The ids of the hinged doors it opens and closes."""

    def move_door(self, target: str, action: Literal["open", "close"], skills: ArmSkills) -> str:
        """What was done; ManipulationError, SkillRefused or MotionCanceled as the skills raise them."""


@dataclass
class Held:
    object_id: str
    grasp: GraspCandidate
    hand_position: np.ndarray  # where the hand stopped after the lift


@dataclass
class SkillWatch:
    """What a skill server hands a skill: a flag that cancels it (the arm stops before its next
    motion) and a callback told of each phase."""

    cancel: threading.Event | None = None
    progress: Progress | None = None


class ArmSkills:
    """The skills on one body. `drawers`: the ids of the drawers it may open and close (their
    openings are measured against the most recessed of their fronts), or a function giving them;
    `table`: the id of the surface a thing put "on the table" goes to (the spot nearest the hand is
    chosen there); `near_hand`: which other receptacles are filled from the side nearest the hand
    (a household's furniture, larger than the arm reaches across); `mobile`: the arm rides a base
    that may turn between a pick and a place, so a thing held from the side is put down with the
    hand pointing away from the shoulder toward the place (held as grasped, the hand would point
    wherever it pointed at the grasp: sideways or back, out of the arm's reach)."""

    @property
    def drawers(self) -> set[str]:
        return set(self._drawers())

    def __init__(self, body: ArmBody, spec: RobotSpec, drawers: Collection[str] | Callable[[], Collection[str]] = (),
                 table: str | None = None, floor_z: float | None = 0.0,
                 near_hand: Callable[[str], bool] | None = None, mobile: bool = False,
                 pick_config: PickConfig | None = None, doors: DoorMover | None = None, drawer_pull: float = OPEN_BY):
        self.body, self.spec = body, spec
        self.drawer_pull = drawer_pull  # how far open() pulls a drawer out
        self.doors = doors
        self.mobile = mobile
        self.pick_config = pick_config or PickConfig()
        self.near_hand = near_hand or (lambda receptacle: False)
        # a fixed set (a scene file's), or asked for each time (what perception labels a drawer now)
        self._drawers = drawers if callable(drawers) else (lambda fixed=frozenset(drawers): fixed)
        self.table, self.floor_z = table, floor_z
        self.held: Held | None = None
        self.last_grasp_plan: GraspPlan | None = None  # for pictures and rviz markers
        self.last_grasp: GraspCandidate | None = None
        self.watch = SkillWatch()
        self._closed_fronts: dict[str, FrontGeometry] = {}  # each drawer's most recessed front seen so far

    # -- one skill call ------------------------------------------------------------------------------
    def execute(self, call: SkillCall, watch: SkillWatch | None = None, log: TextIO | None = None) -> SkillOutcome:
        """The call's outcome: success with what was done, or the failure the planner is told --
        physical (with the manipulation code), precondition (refused before any motion), canceled
        (the arm stopped), invalid or unavailable."""
        if call.skill not in ARITY:
            return SkillOutcome(call, False, f"the arm has no {call.skill} skill (it can {', '.join(SKILLS)})",
                                "unavailable")
        if len(call.args) != ARITY[call.skill]:
            return SkillOutcome(call, False, f"{call}: {call.skill} takes {ARITY[call.skill]} argument"
                                             f"{'s' if ARITY[call.skill] != 1 else ''}", "invalid")
        self.watch = watch or SkillWatch()
        started = time.perf_counter()
        try:
            message = self._run(call)
        except ManipulationError as e:
            if log is not None:
                log.write(f"  {call}: {e.code} after {time.perf_counter() - started:.1f} s\n")
            return SkillOutcome(call, False, f"{call} failed: {e.code}: {e.detail}", "physical", e.code)
        except SkillRefused as e:
            return SkillOutcome(call, False, f"{call} was refused: {e}", "precondition")
        except SkillUnavailable as e:
            return SkillOutcome(call, False, f"{call}: {e}", "unavailable")
        except MotionCanceled as e:
            self.body.stop()
            self.after_cancel()
            return SkillOutcome(call, False, f"{call} canceled: {e}; the arm stopped", "canceled")
        finally:
            self.watch = SkillWatch()
        return SkillOutcome(call, True, f"{call}: {message}")

    def _run(self, call: SkillCall) -> str:
        skill, args = call.skill, call.args
        if skill == "navigate_to":
            return "the arm reaches what it can from its base"
        if skill == "pick":
            return self.pick(args[0])
        if skill == "place":
            return self.place(args[0], args[1])
        action: Literal["open", "close"] = "open" if skill == "open" else "close"
        if self.doors is not None and args[0] in self.doors.doors():
            if self.held is not None:
                raise SkillRefused(f"the hand holds {self.held.object_id}; put it down first")
            return self.doors.move_door(args[0], action, self)
        return self.move_drawer(args[0], action)

    # -- watching --------------------------------------------------------------------------------
    def phase(self, what: str, fraction: float) -> None:
        if self.watch.cancel is not None and self.watch.cancel.is_set():
            raise MotionCanceled(f"canceled before {what}")
        if self.watch.progress is not None:
            self.watch.progress(what, fraction)

    def watched_hand(self) -> WatchedArm:
        progress = self.watch.progress

        def motion(what: str) -> None:
            if progress is not None:
                progress(what, -1.0)

        return WatchedArm(self.body.hand(), self.watch.cancel, motion)

    def holds_something(self) -> bool:
        return self.body.finger_gap() > self.spec.gripper.empty_gap + GAP_TOLERANCE

    # -- seeing ----------------------------------------------------------------------------------
    def look(self, needed: str) -> Clouds:
        """What the robot sees now; NOT_SEEN when it does not see `needed`."""
        self.phase("looking", 0.05)
        clouds = self.body.look()
        if needed not in clouds:
            raise ManipulationError("NOT_SEEN", f"no camera sees {needed}")
        return clouds

    def drawer_openings(self, clouds: Clouds) -> dict[str, float]:
        """Each seen drawer's opening (m), measured from its front's points against the most
        recessed front (a closed drawer's): of the drawers seen now (a cabinet's row of drawers,
        their fronts flush when closed), or of this drawer as seen before (a chest with one drawer;
        the scenes' drawers start closed)."""
        fronts: dict[str, FrontGeometry] = {}
        for sid in self.drawers:
            if sid in clouds:
                try:
                    fronts[sid] = front_geometry(clouds[sid], self.spec.arm.base, DRAWER_FRONTS)
                except ManipulationError:
                    continue
        if not fronts:
            return {}
        row = min(fronts.values(), key=lambda f: float(f.centre @ f.normal))  # least toward the robot
        openings = {}
        for sid, front in fronts.items():
            remembered = self._closed_fronts.get(sid)
            # only fronts facing the same way count (seen from beside, a chest's side passes for its front)
            same_way = [f for f in (row, remembered) if f is not None and float(f.normal @ front.normal) >= SAME_FRONT_COS]
            reference = min([front, *same_way], key=lambda f: float(f.centre @ front.normal))
            if remembered is None or float(remembered.normal @ front.normal) < SAME_FRONT_COS \
                    or float(front.centre @ front.normal) < float(remembered.centre @ front.normal):
                self._closed_fronts[sid] = front
            try:
                openings[sid] = drawer_opening(clouds[sid], reference)
            except ManipulationError:
                continue
        return openings

    @staticmethod
    def others(clouds: Clouds, *leave_out: str) -> np.ndarray:
        rest = [pts for sid, pts in clouds.items() if sid not in leave_out]
        return np.concatenate(rest) if rest else np.zeros((0, 3))

    # -- the skills ------------------------------------------------------------------------------
    def pick(self, obj: str) -> str:
        if self.held is not None:
            raise SkillRefused(f"the hand already holds {self.held.object_id}")
        clouds = self.look(obj)
        self.phase(f"planning a grasp of {obj}", 0.15)
        planner = GraspPlanner(self.spec.gripper, self.spec.arm, self.body.reachable)
        self.last_grasp_plan, self.last_grasp = None, None
        # the hand stays above what the object rests on, and the sides the camera did not see go
        # down to it (a remote seen from above)
        others = self.others(clouds, obj)
        points, support_z = as_resting(clouds[obj], others)
        plan = planner.plan(points, others, support_z=support_z)
        self.last_grasp_plan = plan
        self.phase(f"picking {obj} ({len(plan.candidates)} grasps planned)", 0.3)
        config = self.pick_config

        def locate() -> np.ndarray | None:
            seen = self.body.look().get(obj)
            return None if seen is None or not len(seen) else seen.mean(axis=0)

        result = PickExecutor(self.watched_hand(), self.spec.gripper, config).pick(plan, locate)
        self.last_grasp = result.grasp
        if not result.success or result.grasp is None:
            raise ManipulationError(result.code or "NOT_HELD", result.message)
        self.held = Held(obj, result.grasp, result.grasp.position + np.array([0.0, 0.0, config.lift]))
        return f"picked up ({result.message}; {result.attempts} attempt{'s' if result.attempts != 1 else ''})"

    def place(self, obj: str, receptacle: str) -> str:
        if self.held is None or self.held.object_id != obj:
            raise SkillRefused(f"the hand does not hold {obj}")
        clouds = self.look(receptacle)
        self.phase(f"planning where in {receptacle} to put {obj}", 0.15)
        held = HeldObject.from_points(clouds.get(obj, np.zeros((0, 3))))
        near = None
        if receptacle == self.table or self.near_hand(receptacle):  # the free spot nearest the hand, not the far end
            near = (float(self.held.hand_position[0]), float(self.held.hand_position[1]))
        support = drawer_inside(clouds[receptacle]) if receptacle in self.drawers else clouds[receptacle]
        spot = PlacePlanner().plan(held.footprint_radius, held.height, support,
                                   self.others(clouds, obj, receptacle), near=near, footprint=held.footprint)
        into = spot.inside or receptacle in self.drawers
        # walls around: the hand's long side along the opening's long side, or it strikes them
        turn = self._hand_near_side(spot.turn, spot.position, held) if spot.turn is not None else \
            hand_turn_along(self.held.grasp.rotation, _long_axis(support)) if into \
            else self._bearing_turn(spot.position) if self.mobile else 0.0
        self.phase(f"putting {obj} down", 0.3)
        done = place(self.watched_hand(), self.spec.gripper, self.held.hand_position, self.held.grasp.rotation, held,
                     spot, turn=turn)
        if not done.success:
            if done.code != "UNREACHABLE" and not self.holds_something():  # it left the hand on the way
                self.held = None
            raise ManipulationError(done.code, done.message)
        self.held = None
        self.body.settle()
        where = f"put {'in' if into else 'on'} {receptacle}"
        return f"{where} ({spot.clearance * 100:.1f} cm clear of the nearest thing)" if np.isfinite(spot.clearance) \
            else where

    def _hand_near_side(self, turn: float, spot: np.ndarray, held: HeldObject) -> float:
        """Of a footprint rectangle's turn and the turn half round from it (the same footprint),
        the one that leaves the hand nearer the shoulder, then the smaller: a pillow held from the
        side turned the wrong way round put the hand on the bed's far side of it."""
        assert self.held is not None
        offset = np.asarray(self.held.hand_position, dtype=float)[:2] - held.bottom_centre[:2]
        shoulder = np.asarray(self.spec.arm.base, dtype=float)[:2]

        def hand_off(t: float) -> tuple[float, float]:
            c, s = np.cos(t), np.sin(t)
            hand = np.asarray(spot, dtype=float)[:2] + np.array([c * offset[0] - s * offset[1], s * offset[0] + c * offset[1]])
            return round(float(np.linalg.norm(hand - shoulder)), 2), abs(t)

        flipped = (turn + np.pi + np.pi) % (2 * np.pi) - np.pi
        return min((turn, float(flipped)), key=hand_off)

    def _bearing_turn(self, spot: np.ndarray) -> float:
        """For a thing held from the side, the turn about the vertical (radians) that points the hand
        away from the shoulder toward the spot, the way an arm reaches out; 0 for a hand pointing down."""
        held = self.held
        assert held is not None
        approach = held.grasp.rotation[:2, 2]
        if float(np.linalg.norm(approach)) < 0.5:
            return 0.0
        bearing = np.asarray(spot, dtype=float)[:2] - np.asarray(self.spec.arm.base, dtype=float)[:2]
        turn = float(np.arctan2(bearing[1], bearing[0]) - np.arctan2(approach[1], approach[0]))
        return float((turn + np.pi) % (2 * np.pi) - np.pi)

    def move_drawer(self, target: str, action: Literal["open", "close"]) -> str:
        if self.held is not None:
            raise SkillRefused(f"the hand holds {self.held.object_id}; put it down first")
        clouds = self.look(target)
        if target not in self.drawers:
            raise SkillRefused(f"{target} is not a drawer the arm knows; it opens and closes drawers only")
        before = self.drawer_openings(clouds).get(target, 0.0)
        distance = self.drawer_pull if action == "open" else max(before, 0.0) + 0.005
        plan = plan_drawer(clouds[target], self.spec.arm.base, self.spec.gripper, action, distance,
                           floor_z=self.floor_z)
        self.phase(f"{'pulling' if action == 'open' else 'pushing'} {target} {HOW[plan.grip]}", 0.2)
        grip = getattr(self.body, "grip_handle", None)  # a body's assisted grip, where it has one
        reached = carry_out(self.watched_hand(), plan, hold=(lambda: grip(target)) if grip is not None else None,
                            release=getattr(self.body, "let_go_of_handle", None))
        self.body.rest()  # hand up and pointing down: where the next pick's straight lines start well
        self.phase(f"measuring how far {target} stands out", 0.9)
        if not reached:
            raise ManipulationError("UNREACHABLE", "the arm did not reach the handle")
        self.body.settle()
        after = self.drawer_openings(self.body.look()).get(target)
        if after is None:
            raise ManipulationError("NOT_SEEN", f"{target}'s front is not seen after the {action}")
        moved = after >= SEEN_OPEN if action == "open" else after <= SEEN_CLOSED
        if not moved:
            raise ManipulationError("NOT_MOVED", f"the drawer stands {after * 100:.1f} cm out after the {action} "
                                                 f"(it stood {before * 100:.1f} cm out before)")
        return f"{'opened' if action == 'open' else 'closed'}: it stands {after * 100:.1f} cm out (measured from its front)"

    def after_cancel(self) -> None:
        """A cancel stopped the arm: what the hand still holds is what it holds."""
        if self.held is not None and not self.holds_something():
            self.held = None


class SkilledBody:
    """What a body that runs ArmSkills says of them: what the hand holds and the last grasp (a mixin
    for the bodies in PyBullet; `skills` is theirs)."""

    skills: ArmSkills

    @property
    def held(self) -> Held | None:
        return self.skills.held

    @property
    def last_grasp_plan(self) -> GraspPlan | None:
        return self.skills.last_grasp_plan

    @property
    def last_grasp(self) -> GraspCandidate | None:
        return self.skills.last_grasp


def _long_axis(points: np.ndarray) -> np.ndarray:
    """The horizontal direction along which the points spread most."""
    xy = points[:, :2] - points[:, :2].mean(axis=0)
    _, vectors = np.linalg.eigh(xy.T @ xy)
    return vectors[:, -1]
