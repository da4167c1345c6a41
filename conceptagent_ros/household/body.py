"""The task planner's body in a household: `conceptagent run ... --scene studio_kitchen --body pybullet`.

A RobotInterface (planning/robot.py) over conceptagent_mm in the world the scene exports
(world/export.py), in PyBullet. What the planner is told comes from the robot's own mast camera:
per thing, the depth pixels the simulator's segmentation gives it (the oracle detector's masks, the
geometry from depth), remembered where last seen; on arriving somewhere the robot turns on the spot
to look around, its head tilted down at the workspace and up at the shelves (LOOK_TILTS). Before a
skill acts on a thing the base turns to face it. Skills:
- navigate_to: the embedded navigator (navigation/approach, path_planner) plans to where the base
  should stand for the thing as the robot saw it, and the base drives there (navigation/pybullet_base),
  arm tucked, carrying what the hand holds; BLOCKED, NO_PATH or TIMEOUT come back as its error, and
  OUT_OF_REACH where it arrived as near as the map allows and the arm still does not reach the thing;
- pick, place: the manipulation package's grasp and place planners on what the camera sees, and
  its executors on the arm (household/mobile_arm.py), through manipulation/arm_skills as on every
  body; a thing is picked or placed only within the arm's reach, else the skill is refused;
- open, close: drawers through the same skills (arm_skills.move_drawer), the base first standing
  square before the drawer's front (navigate_to goes to the side a door or drawer opens to); a
  hinged door (fridge, microwave, oven) is opened by household/doors.py (the handle pulled on its
  arc from beside the swing, then the door pushed on from inside to 90 degrees) and its close is
  refused as unavailable (doors.py says why); a box that opens is exported lidless, so its open
  and close change its flag alone; a pick from or a place into a container with a door (a
  fridge's shelf) is done standing INSIDE_STANDOFF before its front;
- every other skill (switch on, slice, heat, ...) has no physical model: once its preconditions hold
  on what the robot perceives (in reach, the hand's state), its declared PDDL effects are applied to
  the body's symbolic flags (SYMBOLIC_SKILLS).

The base is kinematic (mass 0): it goes where it is driven and stays put while the arm works, as a
braked base does. The goal is judged by household/judge.py on PyBullet's own state.
"""
from __future__ import annotations

import functools
import math
import sys
import tempfile
from collections.abc import Callable, Collection
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TextIO

import numpy as np
from scipy.spatial.transform import Rotation

from conceptagent_ros.household.doors import HingedDoors
from conceptagent_ros.household.item_clouds import from_frame, mirror_completed, to_frame
from conceptagent_ros.household.mobile_arm import ArmKinematics, MobileArm, link_index, mm_orientation
from conceptagent_ros.household.robot_camera import CameraImage, RobotCamera, perceived_frame
from conceptagent_ros.manipulation.arm_skills import SEEN_OPEN, ArmSkills, Clouds, Held, SkillWatch
from conceptagent_ros.manipulation.clouds import fit_plane
from conceptagent_ros.manipulation.failures import ManipulationError
from conceptagent_ros.manipulation.frames import hand_frame
from conceptagent_ros.manipulation.grasp_planner import GraspCandidate, GraspPlan
from conceptagent_ros.manipulation.pick_executor import Arm, PickConfig
from conceptagent_ros.manipulation.place_planner import PlaceConfig
from conceptagent_ros.manipulation.robot_spec import RobotSpec, load_robot_spec
from conceptagent_ros.navigation.approach import approach_goal
from conceptagent_ros.navigation.errors import NavigationError
from conceptagent_ros.navigation.path_planner import PlannedPath, costmap, nearest_free, plan_path
from conceptagent_ros.navigation.pybullet_base import TUCKED, DriveResult, PyBulletBase
from conceptagent_ros.perception.frames import Frame
from conceptagent_ros.perception.relations3d import smallest_holder
from conceptagent_ros.planning.pddl.domain import cached_domain
from conceptagent_ros.planning.pddl.effects import EffectModel
from conceptagent_ros.planning.verifier import PreconditionVerifier
from conceptagent_ros.scene.geometry import Pose2D
from conceptagent_ros.scene.graph import derive_symbolic_state
from conceptagent_ros.scene.model import RobotState, Scene, SceneObject
from conceptagent_ros.scene.observation import Observation
from conceptagent_ros.scene.symbolic import SymbolicState, load_predicates
from conceptagent_ros.sim.world import domain_types
from conceptagent_ros.skills.contract import SkillCall, SkillOutcome, load_skill_library
from conceptagent_ros.world.export import export_world
from conceptagent_ros.world.house import House, house
from conceptagent_ros.world.robot_description import FOOTPRINT_RADIUS, TORSO_TRAVEL, robot_urdf
from conceptagent_ros.world.sdf_world import SLIDING, front_yaw, model_kind
from conceptagent_ros.world.spawn import start_pose

PHYSICAL_SKILLS = ("navigate_to", "pick", "place", "open", "close")
LOOK_YAWS = 6  # views of a look around (the camera is 60 degrees across)
# the head's tilts a look takes in: down at the workspace (0), and up at what stands above the arm
# (a 1.2 m shelf's top is above the lowered view from anywhere the arm reaches it)
LOOK_TILTS = (0.0, -0.45)
CONTAINED_MARGIN = 0.03  # a thing's bottom this far below a holder's top (or above it) still rests on it
# metres from the side of what navigate_to goes to, to the base's middle: its near edge 43 cm in
# front of the shoulder, where the arm works best (at 35 cm the hand reached over the near edge of a
# coffee table only bent back on itself)
APPROACH_STANDOFF = 0.5
WELD_FORCE = 60.0  # newtons: the carrying grip (_weld)
DOOR_SHUT_WITHIN = 0.05  # metres out of its piece's footprint a door's points still count as the piece's
DOOR_GRIP_FORCE = 15.0  # newtons: the assisted grip on a door's handle (grip_door); a door swings at 3 N
SQUEEZED = 1.0  # newtons each finger presses a thing with, at least, for the grip (_grip_if_squeezed)
INSIDE_STANDOFF = 0.40  # metres from a fridge's front to the base's middle, to reach in (_step_up_to)
FRONT_STANDOFF = 0.62  # metres from a drawer's front to the base's middle: the handle half a metre from the shoulder
FACING_TOLERANCE = math.radians(20.0)  # a skill's target further off the heading than this: turn to it first
ROOM_STOP_TOLERANCE = 1.5  # metres from a room's middle within which a free stop for the base is sought
# the torso's heights tried for a pick or a place, lowest first (_torso_for): the lowest from which
# the hand reaches over the target pointing down, one step higher for room; a book on a 1.2 m shelf
# is out of reach pointing down from the shoulder's 0.90 m, a sponge held over a bowl on a counter too
TORSO_STEP = 0.05
PICK_HAND_ABOVE = 0.10  # metres the hand is over a thing's top at its pre-grasp from above
PLACE_HAND_ABOVE = 0.16  # metres the hand is over a place's top plus the held thing: the grip's height and the way down
PLACE_INWARD = 0.08  # metres in from a receptacle's near edge its place is taken at, for the question
# metres: the torso lifts at least by how much the top (a place's: plus the held thing) is higher
TORSO_BELOW_TOP = 1.0
# and a place on a top higher than HIGH_TOP has the shoulder SHOULDER_OVER_HIGH_TOP above it: a book
# lowered onto a 1.2 m shelf from a shoulder at 1.14 m struck the shelf's edge on its way down
HIGH_TOP = 1.0
SHOULDER_OVER_HIGH_TOP = 0.04


@dataclass(frozen=True)
class Placed:
    center: tuple[float, float, float]


@dataclass
class Seen:
    """A thing as the camera last saw it: its points' box (a fixed thing's grows over views)."""

    lo: np.ndarray
    hi: np.ndarray
    fixed: bool  # furniture: its box is the union of every view's, as nothing moves it

    @property
    def centre(self) -> np.ndarray:
        return (self.lo + self.hi) / 2


class HouseholdBody:
    """RobotInterface on conceptagent_mm in a household scene's exported world. `close()` when done."""

    # what it does: every skill of the library (those without a physical model by their effects)
    SKILLS = tuple(s.name for s in load_skill_library() if s.name != "done")

    def __init__(self, scene: Scene, seed: int = 0, gui: bool = False, log: TextIO | None = None,
                 home: House | None = None, look_first: bool = True):
        """`look_first`: look around once built (False: the caller does, once a frame_sink is set, so
        that the first look goes to a perception node, and is the only one: a run repeats exactly)."""
        import pybullet as p

        self.scene = scene
        self.home = home or house(scene)
        self.log = log if log is not None else sys.stderr
        self._dir = tempfile.TemporaryDirectory(prefix="conceptagent_household_")
        exported = export_world(self.home, Path(self._dir.name))
        x, y, yaw = start_pose(self.home)
        self.base = PyBulletBase(exported.sdf, Pose2D(x, y, yaw), gui=gui)
        self.p, self.client, self.robot = p, self.base.client, self.base.robot
        p.setGravity(0, 0, -9.81, physicsClientId=self.client)
        p.changeDynamics(self.robot, -1, mass=0.0, physicsClientId=self.client)  # a braked base: it stays put
        copy = Path(self._dir.name) / "conceptagent_mm_arm.urdf"  # the arm's kinematic copy: no torso joint
        copy.write_text(robot_urdf(gazebo=False, torso_fixed=True))
        self.arm = MobileArm(p, self.client, self.robot, ArmKinematics(str(copy)))
        self.arm.on_open = self._let_go_of_weld  # the grip set for carrying ends where the hand opens
        self.arm.on_closed = self._grip_if_squeezed
        self._picking: str | None = None  # what a pick in progress is after
        self.arm.set_arm(TUCKED)
        self.tucked = True
        self.camera = RobotCamera(p, self.client, self.robot)
        self.costmap = costmap(self.home.grid, FOOTPRINT_RADIUS + 0.05)
        self.names = {body: name for name, body in self.base.bodies.items()}
        self.instance_names = tuple(sorted(scene.objects))  # what a frame's instance ids index
        # where every image the camera takes goes too, as a frame (a ROS node's camera topics); None: nowhere
        self.frame_sink: Callable[[Frame], None] | None = None
        self.kinds = {oid: model_kind(o).kind for oid, o in scene.objects.items()}
        self.spec_at_origin = load_robot_spec("conceptagent_mm")
        self.skills = ArmSkills(self, self._spec_here(), drawers=self._drawers, floor_z=0.0,
                                near_hand=lambda receptacle: self.kinds.get(receptacle) != "item", mobile=True,
                                pick_config=PickConfig(unseen_after_lift_is_held=True), doors=HingedDoors(self))
        self._door_grip: int | None = None
        self.memory: dict[str, Seen] = {}
        self.last_path: list[tuple[float, float]] = []  # the base's last planned path (x, y), for rviz
        self.flags: dict[str, dict[str, bool]] = {oid: dict(o.state) for oid, o in scene.objects.items()}
        self.searched: set[str] = set()
        self.in_hand: np.ndarray | None = None  # the held thing's points in the hand frame, from the grasp
        # the held thing's body and its pose in the hand frame, while the base carries it
        self._carry_offset: tuple[int, tuple[float, ...], tuple[float, ...]] = (-1, (0, 0, 0), (0, 0, 0, 1))
        self._weld_id: int | None = None
        self._view: Clouds | None = None  # the view with the arm tucked, for the next skill's first look
        skills = load_skill_library()
        domain = cached_domain(load_predicates(), skills, domain_types(scene))
        self.laws = PreconditionVerifier(domain, skills)
        self.effects = EffectModel(domain)
        self.arm.step(60)  # things dropped into the world come to rest
        if look_first:
            self.look_around()

    # -- where the arm is ------------------------------------------------------------------------
    def _spec_here(self) -> RobotSpec:
        """The robot's spec with its shoulder where the base stands now (the planners work in the world)."""
        spec = self.spec_at_origin
        pose = self.base.pose
        bx, by, bz = spec.arm.base
        c, s = math.cos(pose.yaw), math.sin(pose.yaw)
        shoulder = (pose.x + c * bx - s * by, pose.y + s * bx + c * by, bz + self.arm.torso_height())
        return replace(spec, arm=replace(spec.arm, base=shoulder))

    def shoulder(self) -> np.ndarray:
        return np.asarray(self.skills.spec.arm.base)

    def _drawers(self) -> set[str]:
        return {oid for oid, o in self.scene.objects.items() if o.category in SLIDING}

    # -- what the skills need of the body (manipulation/arm_skills.ArmBody) -----------------------
    def look(self) -> Clouds:
        """What the skill plans on: the first look of a skill is the view taken with the arm tucked
        (the hand held ready in front of the mast hides the top of what it is about to grasp);
        every later look is live. The hand's load is given where the hand is now, turned as it
        gripped it, which is how a place carries it: a pillow taken from the side and seen with the
        hand pointing down at the ready pose stood 60 cm tall, and its place was planned for that."""
        view, self._view = self._view, None
        if view is None:
            view = self.clouds()
        held, points = self.held, self._held_as_gripped()
        if held is not None and points is not None:
            view[held.object_id] = points
        return view

    def _held_as_gripped(self) -> np.ndarray | None:
        """The held thing's points where the hand is now, turned as the hand gripped it (how a
        place carries it); None with nothing in hand."""
        held = self.held
        if held is None or self.in_hand is None:
            return None
        gripped = Rotation.from_quat(mm_orientation(held.grasp.rotation)).as_matrix()
        return from_frame(self.in_hand, self.arm.hand_pose()[0], gripped)

    def hand(self) -> Arm:
        return self.arm

    def reachable(self, position: np.ndarray, quaternion: np.ndarray) -> bool:
        return self.arm.reachable(position, quaternion)

    def finger_gap(self) -> float:
        return self.arm.finger_gap()

    def settle(self) -> None:
        self.arm.step(120)

    def rest(self) -> None:
        self.arm.rest()

    def stop(self) -> None:
        self.arm.stop()

    @property
    def held(self) -> Held | None:
        return self.skills.held

    @property
    def last_grasp_plan(self) -> GraspPlan | None:
        return self.skills.last_grasp_plan

    @property
    def last_grasp(self) -> GraspCandidate | None:
        return self.skills.last_grasp

    @functools.cached_property
    def description(self) -> str:
        """The robot's URDF, what rviz draws it from (expanded when first asked: only a ROS node does)."""
        return robot_urdf(gazebo=False)

    def joint_state(self) -> tuple[list[str], list[float], list[float]]:
        """Every moving joint of the robot (wheels, torso, head, arm, fingers): names, positions
        (radians or metres) and velocities, as the robot's joint_states says them."""
        p, c = self.p, self.client
        names, positions, velocities = [], [], []
        for j in range(p.getNumJoints(self.robot, physicsClientId=c)):
            info = p.getJointInfo(self.robot, j, physicsClientId=c)
            if info[2] == p.JOINT_FIXED:
                continue
            position, velocity = p.getJointState(self.robot, j, physicsClientId=c)[:2]
            names.append(info[1].decode())
            positions.append(float(position))
            velocities.append(float(velocity))
        return names, positions, velocities

    def top_view(self, path: Path, title: str = "", goal_objects: Collection[str] = ()) -> Path:
        """The task from above as PyBullet has it now: the path driven, where every thing stands."""
        from conceptagent_ros.household.picture import draw_top_view

        movable = {oid for oid, kind in self.kinds.items() if kind == "item"}
        pose = self.base.pose
        return draw_top_view(self.p, self.client, self.base.bodies, movable, self.home.plan.walls, self.base.trail,
                             (pose.x, pose.y), FOOTPRINT_RADIUS, path, title, goal_objects)

    def close(self) -> None:
        self.arm.kinematics.close()
        self.base.close()
        self._dir.cleanup()

    # -- seeing ------------------------------------------------------------------------------------
    def clouds(self, tilts: Collection[float] = (0.0,)) -> Clouds:
        """Per scene id, the points the camera sees of it now, with the head at each of `tilts` in
        turn (their points together); a thing's half hidden from the camera filled in by symmetry;
        what the hand holds, where the hand holds it."""
        views: dict[str, list[np.ndarray]] = {}
        for tilt in tilts:
            self.camera.tilt(tilt)
            for name, points in self._view_now().items():
                views.setdefault(name, []).append(points)
        self.camera.tilt(0.0)
        eye = self.camera.pose()[0]  # the head tilts about a joint a few centimetres from the lens
        out: Clouds = {}
        for name, parts in views.items():
            points = np.concatenate(parts)
            out[name] = mirror_completed(points, eye) if self.kinds.get(name) == "item" else points
        held = self.held
        if held is not None and self.in_hand is not None:
            out[held.object_id] = from_frame(self.in_hand, *self.arm_hand_frame())
        self._remember(out)
        return out

    def _view_now(self) -> Clouds:
        """Per scene id, the points one image shows of it (as seen: not completed); the image goes to
        `frame_sink` too, where one is set (a perception node's camera topics), what the hand holds or
        is picking up left unnamed there: the gripper says what it holds, not the camera (seen in the
        rising hand, the thing would stay in perception's map where the lift left it)."""
        image = self.camera.capture()
        owners = self._owners(image)
        if self.frame_sink is not None:
            in_hand = {self.held.object_id if self.held is not None else None, self._picking} - {None}
            hidden = np.isin(owners, [self.instance_names.index(name) for name in in_hand])
            shown = np.where(hidden, -1, owners)
            self.frame_sink(perceived_frame(image, self.camera.intrinsics(), shown, self.instance_names))
        out: Clouds = {}
        for index in np.unique(owners[owners >= 0]):
            points = image.points[owners == index]
            if len(points) >= 10:
                out[self.instance_names[index]] = points
        return out

    def _owners(self, image: CameraImage) -> np.ndarray:
        """Per pixel, the index into instance_names of the scene's thing it shows (-1: none, the robot
        itself, or nothing seen). A door's pixels count as its piece's only within the map's footprint
        of the piece: a swung door is not the fridge's extent (navigate_to would stand off from a
        fridge 1.4 m deep)."""
        owners = np.full(image.bodies.shape, -1, dtype=np.int32)
        valid = np.isfinite(image.points).all(axis=-1)
        for body in np.unique(image.bodies[valid]):
            name = self.names.get(int(body))
            if name is None or int(body) == self.robot or name not in self.scene.objects:
                continue
            mask = (image.bodies == body) & valid
            if self.kinds.get(name) == "door":
                shut = self.home.boxes[name].footprint_contains_all(image.points[mask], DOOR_SHUT_WITHIN)
                mask[mask] = (image.links[mask] == -1) | shut
            owners[mask] = self.instance_names.index(name)
        return owners

    def positions(self) -> dict[str, Placed]:
        """Where each of the scene's things stands now, by PyBullet (its base link's box middle): what
        a perceived id is resolved by (sim/perceived_ids.py)."""
        out: dict[str, Placed] = {}
        for name, body in self.base.bodies.items():
            if name not in self.scene.objects:
                continue
            lo, hi = self.p.getAABB(body, -1, physicsClientId=self.client)
            out[name] = Placed(tuple(float((a + b) / 2) for a, b in zip(lo, hi)))  # type: ignore[arg-type]
        return out

    def arm_hand_frame(self) -> tuple[np.ndarray, np.ndarray]:
        from scipy.spatial.transform import Rotation

        position, quaternion = self.arm.hand_pose()
        return position, Rotation.from_quat(quaternion).as_matrix()

    def _remember(self, clouds: Clouds) -> None:
        held = self.held.object_id if self.held is not None else None
        for sid, points in clouds.items():
            if sid == held:
                continue
            lo, hi = points.min(axis=0), points.max(axis=0)
            fixed = self.kinds.get(sid) != "item"
            old = self.memory.get(sid)
            if fixed and old is not None:
                lo, hi = np.minimum(lo, old.lo), np.maximum(hi, old.hi)
            self.memory[sid] = Seen(lo, hi, fixed)

    def _tuck(self) -> None:
        if not self.tucked:
            self.arm.tuck(TUCKED)
            self.tucked = True

    def _ready(self) -> None:
        if self.tucked:
            self.arm.rest()
            self.tucked = False

    def look_around(self) -> None:
        """Turn on the spot, the arm tucked, looking at every heading; back to the heading it had."""
        self._tuck()
        start = self.base.pose
        for k in range(LOOK_YAWS):
            self.base.place(Pose2D(start.x, start.y, start.yaw + 2 * math.pi * k / LOOK_YAWS))
            self._carry()
            self.clouds(LOOK_TILTS)
        self.base.place(start)
        self._carry()

    # -- what the planner is told ------------------------------------------------------------------
    def _holder(self, sid: str) -> str | None:
        """The receptacle the thing stands in or on, of those remembered (perception/relations3d)."""
        boxes = {other: (seen.lo, seen.hi) for other, seen in self.memory.items()}
        holders = [other for other in self.memory if self.scene.objects[other].has("receptacle")]
        return smallest_holder(sid, boxes, holders, CONTAINED_MARGIN)

    def _robot_state(self) -> RobotState:
        pose = self.base.pose
        room = self.scene.room_at(pose.x, pose.y) or self.scene.robot.start_room
        held = self.held.object_id if self.held is not None else None
        return RobotState(tuple(float(v) for v in self.shoulder()), room, held,  # type: ignore[arg-type]
                          self.skills.spec.arm.reach)

    def _objects(self, clouds: Clouds | None = None) -> list[SceneObject]:
        """Every thing remembered, where its box top is nearest the shoulder (what "near" measures:
        the arm reaches some of it), in the room its middle is in."""
        shoulder = self.shoulder()
        openings = self.skills.drawer_openings(clouds) if clouds else {}
        held = self.held.object_id if self.held is not None else None
        objects = []
        for sid, seen in self.memory.items():
            spec = self.scene.objects[sid]
            nearest = np.clip(shoulder[:2], seen.lo[:2], seen.hi[:2])
            centre = seen.centre
            state = dict(self.flags[sid])
            if sid in openings:
                state["open"] = openings[sid] >= SEEN_OPEN
            room = self.scene.room_at(float(centre[0]), float(centre[1])) or spec.room
            objects.append(SceneObject(sid, spec.category, room, (float(nearest[0]), float(nearest[1]), float(seen.hi[2])),
                                       spec.affordances, state, None if sid == held else self._holder(sid),
                                       attributes=dict(spec.attributes)))
        if held is not None and held not in self.memory:
            spec = self.scene.objects[held]
            objects.append(SceneObject(held, spec.category, self._robot_state().room, tuple(self.shoulder()),  # type: ignore[arg-type]
                                       spec.affordances, dict(self.flags[held]), None, attributes=dict(spec.attributes)))
        return objects

    def observe(self) -> Observation:
        clouds = self.clouds()
        objects = self._objects(clouds)
        robot = self._robot_state()
        inside = tuple(o.id for o in objects if o.has("receptacle") and o.room == robot.room
                       and (not o.has("openable") or o.flag("open")))
        return Observation(robot, tuple(objects), inside, tuple(sorted(self.searched)))

    def symbolic_state(self) -> SymbolicState:
        objects = {o.id: o for o in self._objects()}
        return derive_symbolic_state(self.scene.rooms, objects, self._robot_state(), self.searched)

    # -- acting ------------------------------------------------------------------------------------
    def execute(self, call: SkillCall, watch: SkillWatch | None = None) -> SkillOutcome:
        outcome = self._execute(call, watch)
        if self.frame_sink is not None:
            # one more image where the skill left the robot, for the perception it feeds: the planner's
            # observe() takes one on the body's own view
            self.clouds()
        return outcome

    def _execute(self, call: SkillCall, watch: SkillWatch | None) -> SkillOutcome:
        unknown = [a for a in call.args if a not in self.scene.objects and a not in self.scene.rooms]
        if unknown:
            return SkillOutcome(call, False, f"{call}: unknown object {unknown[0]}", "invalid")
        if call.skill == "done":
            return SkillOutcome(call, True, "the robot declared the task done")
        if call.skill == "navigate_to":
            return self._navigate(call)
        if call.skill not in PHYSICAL_SKILLS:
            return self._symbolic(call)
        if call.skill in ("open", "close") and self.kinds.get(call.args[0]) == "item":
            # a box that opens is exported lidless (world/sdf_world): it stands open, and open or
            # close changes only its flag, once in reach with the hand's state right
            return self._symbolic(call, "the exported box has no lid")
        if call.skill == "close" and self.kinds.get(call.args[0]) == "door":
            return SkillOutcome(call, False, f"{call}: this arm opens hinged doors but does not close them yet "
                                             "(household/doors.py says why)", "unavailable")
        if call.skill in ("open", "close") and call.args[0] in self._drawers():
            self._stand_before_front(call.args[0])  # a hinged door's stance is its own (household/doors.py)
        container = self._worked_in(call)
        if container is not None and self.kinds.get(container) == "door":  # into or out of a fridge
            self._step_up_to(container)
        self._face(call.args[1] if call.skill == "place" else call.args[0])
        far = self._out_of_reach(call)
        if far is not None:
            return SkillOutcome(call, False, f"{call} was refused: {far}", "precondition")
        self._tuck()  # to see unhidden by the arm what the skill will plan on (look())
        self._lift_torso(self._torso_for(call))
        self._view = self.clouds(LOOK_TILTS)
        if call.skill == "place" and self.kinds.get(call.args[1]) == "door" and call.args[1] in self._view:
            self._view[call.args[1]] = self._below_eye(self._view[call.args[1]])
        before = self._view.get(call.args[0]) if call.skill == "pick" else None
        self._ready()
        if call.skill == "place" and self.held is not None:
            self.held.hand_position = self.arm.hand_pose()[0]  # the hand is where the drive left it
        self._picking = call.args[0] if call.skill == "pick" else None
        try:
            outcome = self.skills.execute(call, watch, self.log)
        finally:
            self._view, self._picking = None, None
        if call.skill in ("open", "close") and outcome.success:
            # what the planner's state says between looks (a look measures the front again)
            self.flags[call.args[0]]["open"] = call.skill == "open"
        if call.skill == "pick" and outcome.success and self.held is not None and before is not None:
            # the thing as seen before the grasp, moved as the hand moved since: a rigid grasp keeps
            # it there in the hand's frame (the camera sees little of it in the hand)
            self.memory.pop(self.held.object_id, None)
            hand, rotation = self.arm_hand_frame()
            self.in_hand = to_frame(before + (hand - self.held.grasp.position), hand, rotation)
            if self._weld_id is None:
                self._weld()
        if self.held is None:
            self.in_hand = None
        if not outcome.success and outcome.failure == "physical":  # something may have fallen: look for it
            self.look_around()
        else:  # the arm out of the camera's way, to see what the skill left (the hand hides what it put down)
            self._tuck()
            self.clouds(LOOK_TILTS)
        return outcome

    def _torso_for(self, call: SkillCall) -> float:
        """How high to lift the torso for a pick or a place: the lowest of the heights tried
        (TORSO_STEP apart) from which the hand reaches, pointing down, over the thing's top (a
        pick's pre-grasp) or over the receptacle's near part with the held thing (a place), one step
        higher for room; 0 for other skills."""
        if call.skill not in ("pick", "place"):
            return 0.0
        seen = self.memory.get(call.args[1] if call.skill == "place" else call.args[0])
        if seen is None:
            return self.arm.torso_height()
        shoulder = self.shoulder() - np.array([0.0, 0.0, self.arm.torso_height()])
        if call.skill == "pick":
            spot = np.append(seen.centre[:2], seen.hi[2] + PICK_HAND_ABOVE)
        else:
            lo, hi = seen.lo[:2] + PLACE_INWARD, seen.hi[:2] - PLACE_INWARD
            xy = np.clip(shoulder[:2], np.minimum(lo, seen.centre[:2]), np.maximum(hi, seen.centre[:2]))
            points = self._held_as_gripped()
            held = float(np.ptp(points[:, 2])) if points is not None and len(points) else 0.0
            top = self._shelf_inside(call.args[1]) if self.kinds.get(call.args[1]) == "door" else None
            if top is not None:  # a fridge is filled on its shelf, not on its top
                seen = Seen(np.append(seen.lo[:2], seen.lo[2]), np.append(seen.hi[:2], top), seen.fixed)
            spot = np.append(xy, seen.hi[2] + held + PLACE_HAND_ABOVE)
        bearing = spot[:2] - shoulder[:2]
        closing = np.array([-bearing[1], bearing[0], 0.0]) if np.linalg.norm(bearing) > 1e-6 else np.array([0.0, 1.0, 0.0])
        down = Rotation.from_matrix(hand_frame(np.array([0.0, 0.0, -1.0]), closing)).as_quat()
        # at least the shoulder within TORSO_BELOW_TOP of the top it works over (plus what it holds):
        # the hand that places a cup onto a coffee machine's 1.3 m top came in from above it
        if call.skill == "pick":
            least = float(np.clip(spot[2] - PICK_HAND_ABOVE - TORSO_BELOW_TOP, 0.0, TORSO_TRAVEL))
        else:
            least = float(np.clip(spot[2] - PLACE_HAND_ABOVE - TORSO_BELOW_TOP, 0.0, TORSO_TRAVEL))
            if top is not None:  # the shoulder as high as the hand over the shelf: the forearm goes in level under the top
                least = max(least, float(np.clip(np.ceil((spot[2] - shoulder[2]) / TORSO_STEP) * TORSO_STEP, 0.0,
                                                 TORSO_TRAVEL)))
            elif seen.hi[2] > HIGH_TOP:  # the shoulder over a high top, to come down onto it from above
                least = max(least, float(np.clip(seen.hi[2] + SHOULDER_OVER_HIGH_TOP - shoulder[2], 0.0, TORSO_TRAVEL)))
        for lift in np.arange(0.0, TORSO_TRAVEL + 1e-9, TORSO_STEP):
            if self.arm.reachable_at_lift(spot, down, float(lift)):
                return max(least, 0.0 if lift == 0.0 else float(min(lift + TORSO_STEP, TORSO_TRAVEL)))
        return TORSO_TRAVEL if spot[2] > shoulder[2] else least

    def _shelf_inside(self, container: str) -> float | None:
        """The height of the level surface inside a container with a door, as seen below the eye
        (the underside of its top is level too), or None where none is seen (the door shut)."""
        points = self.clouds(LOOK_TILTS).get(container)
        if points is None:
            return None
        cfg = PlaceConfig()  # the level surface the place planner will find
        plane = fit_plane(self._below_eye(points), cfg.plane_threshold, cfg.min_support_points, cfg.max_tilt_deg,
                          tries=cfg.plane_tries)
        return float(np.median(plane.inliers[:, 2])) if plane is not None else None

    def _below_eye(self, points: np.ndarray) -> np.ndarray:
        """A container's points below the camera: inside a fridge the underside of its top is level
        too, and nothing is put on what the eye sees from below."""
        return points[points[:, 2] < self.camera.pose()[0][2]]

    def _lift_torso(self, height: float) -> None:
        """The torso to `height` with the arm tucked over the base (nothing in the way as it rises
        or falls), and the arm's planners told where the shoulder is now."""
        if abs(height - self.arm.torso_height()) > 0.005:
            self._tuck()
            self.arm.lift_torso(height)
            self._base_moved()

    def _stand_before_front(self, target: str) -> None:
        """Drive to stand square in front of a drawer, FRONT_STANDOFF out on its front's normal,
        facing it, across from its handle: a pull runs along the normal, and from an approach
        pose off to one side (navigate_to stands wherever the arm reaches some of the cabinet) the
        handle is seen edge-on and pulled across the arm. The front is measured from what the
        camera sees (articulation_planner.front_geometry); where it is not seen, or no free path
        leads there, the base stays and the skill tries from where it stands."""
        from conceptagent_ros.manipulation.articulation_planner import front_geometry
        from conceptagent_ros.manipulation.failures import ManipulationError

        self._tuck()
        points = self.clouds().get(target)
        if points is None:
            return
        pose = self.base.pose
        try:
            front = front_geometry(points, (pose.x, pose.y))
        except ManipulationError:
            return
        middle = front.handle if front.handle is not None else front.centre
        across = front.centre + front.width_axis * float((middle - front.centre) @ front.width_axis)
        goal = (float(across[0] + front.normal[0] * FRONT_STANDOFF), float(across[1] + front.normal[1] * FRONT_STANDOFF))
        yaw = math.atan2(-front.normal[1], -front.normal[0])
        if math.dist(goal, (pose.x, pose.y)) < 0.03 and abs(math.remainder(yaw - pose.yaw, 2 * math.pi)) < 0.05:
            return
        try:
            path = plan_path(self.costmap, (pose.x, pose.y), goal, goal_tolerance=0.1)
        except NavigationError:
            return
        self.base.drive(path, yaw)
        self._base_moved()

    def _worked_in(self, call: SkillCall) -> str | None:
        """What a place puts the thing into or onto, or what a pick takes it from (as last seen)."""
        if call.skill == "place":
            return call.args[1]
        if call.skill == "pick" and call.args[0] in self.memory:
            return self._holder(call.args[0])
        return None

    def _step_up_to(self, target: str) -> None:
        """For a pick or a place inside a container with a door, stand INSIDE_STANDOFF before the
        middle of its front (the map's), facing it: from where navigate_to stands (as far out as a
        door is opened from) the arm pointing down does not reach 13 cm in past a fridge's front.
        Where no path leads there, the base stays."""
        if target not in self.scene.objects or self._front_side(target) is None:
            return
        box, normal = self.home.boxes[target], self.closed_door_normal(target)
        depth = abs(float(normal[0])) * box.size[0] + abs(float(normal[1])) * box.size[1]
        goal = np.asarray(box.center[:2]) + normal[:2] * (depth / 2 + INSIDE_STANDOFF)
        pose = self.base.pose
        if math.dist((pose.x, pose.y), goal) < 0.05:
            return
        self.drive_to(float(goal[0]), float(goal[1]), math.atan2(-normal[1], -normal[0]))

    def _face(self, target: str) -> None:
        """Turn the base on the spot toward what a skill acts on, where the camera looks too far
        from it: the arm works in front of the mast and the camera sees 60 degrees across, so a
        thing beside or behind the robot (it began there, or a look around found it there) is
        neither seen nor reached by the skill. A round base turns freely where it stands."""
        seen = self.memory.get(target)
        if seen is None:
            return
        pose = self.base.pose
        bearing = math.atan2(float(seen.centre[1]) - pose.y, float(seen.centre[0]) - pose.x)
        if abs(math.remainder(bearing - pose.yaw, 2 * math.pi)) <= FACING_TOLERANCE:
            return
        self._tuck()
        self._hold_carried()
        self.base.place(Pose2D(pose.x, pose.y, bearing))
        self._carry()
        self._base_moved()

    def _base_moved(self) -> None:
        """The arm's planners and its kinematic copy follow the base to where it stands now."""
        self.skills.spec = self._spec_here()
        self.arm.sync_kinematics()

    def _weld(self) -> None:
        """Hold what the hand grasped rigidly from the lift until the hand opens to let it go: a
        grip set for carrying, while the arm tucks, the base drives and the arm swings the thing
        over the place and lowers it (PyBullet's friction contacts creep under such motions, which a
        real hand's 60 N grip does not: a cup swung from hanging below the hand to held level slid
        out of it; a 9 cm cube turned in the fingers on its way down onto a sink and fell to the
        floor). It is set when the fingers squeeze the thing (_grip_if_squeezed), else after the
        pick; the release is friction alone; what the thing meets on its way down stops the hand
        (the place reports COLLISION)."""
        if self.held is not None:
            self._weld_to_hand(self.held.object_id)

    def _grip_if_squeezed(self) -> None:
        """The grip of _weld from the moment the closed fingers squeeze the thing being picked from
        both sides (each finger pressing it with SQUEEZED newtons or more), as simulators' assisted
        grasping does (iGibson's and BEHAVIOR's). PyBullet's box-on-box contacts give a finger one
        or two contact points, and a phone squeezed by 58 N on each side stayed on the table as the
        hand rose. A hand that closed on nothing, on one side of the thing, or on its support gets
        no grip: the pick's own checks (the gap, the lift) then fail as before."""
        if self._picking is not None and self._weld_id is None and self._squeezed(self._picking):
            self._weld_to_hand(self._picking)

    def _squeezed(self, object_id: str, link: int | None = None) -> bool:
        """Both fingers press the thing (its `link` only, where given) with SQUEEZED newtons or more."""
        body = self.base.bodies.get(object_id)
        if body is None:
            return False
        p, c = self.p, self.client
        only = {} if link is None else {"linkIndexB": link}
        return all(sum(cp[9] for cp in p.getContactPoints(bodyA=self.robot, bodyB=body, linkIndexA=finger,
                                                         physicsClientId=c, **only)) >= SQUEEZED
                   for finger in self.arm.finger_links)

    def _weld_to_hand(self, object_id: str) -> None:
        p, c = self.p, self.client
        body = self.base.bodies[object_id]
        position, orientation = p.getBasePositionAndOrientation(body, physicsClientId=c)
        hand_position, hand_orientation = self.arm.hand_pose()
        inverse = p.invertTransform(hand_position.tolist(), hand_orientation.tolist())
        local = p.multiplyTransforms(inverse[0], inverse[1], position, orientation)
        self._weld_id = p.createConstraint(self.robot, self.arm.grasp_link, body, -1, p.JOINT_FIXED, [0, 0, 0],
                                           local[0], [0, 0, 0], local[1], [0, 0, 0, 1], physicsClientId=c)
        # as firm as the fingers squeeze (60 N): it gives where the thing meets its support on the way down
        # (at 500 N it pressed a cube 2 mm into a sink, which threw the cube off as the hand let go)
        p.changeConstraint(self._weld_id, maxForce=WELD_FORCE, physicsClientId=c)
        self.arm.hold_gap(self.arm.finger_gap())

    def _let_go_of_weld(self) -> None:
        if self._weld_id is not None:
            self.p.removeConstraint(self._weld_id, physicsClientId=self.client)
            self._weld_id = None
        self.arm.hold_gap(None)

    # -- what household/doors.py needs of the body ---------------------------------------------------
    footprint_radius = FOOTPRINT_RADIUS

    def door_points(self, target: str, tuck: bool = True) -> np.ndarray:
        """The points the camera sees of a container's door (its door link), with the head at each
        of LOOK_TILTS; with `tuck`, the arm tucked out of the view first."""
        if tuck:
            self._tuck()
        body, link = self.base.bodies[target], self._door_link(target)
        parts = []
        for tilt in LOOK_TILTS:
            self.camera.tilt(tilt)
            image = self.camera.capture()
            seen = (image.bodies == body) & (image.links == link) & np.isfinite(image.points).all(axis=-1)
            parts.append(image.points[seen])
        self.camera.tilt(0.0)
        points = np.concatenate(parts)
        if len(points) < 30:
            raise ManipulationError("NOT_SEEN", f"{target}'s door is not seen from here ({len(points)} points)")
        return points

    def closed_door_normal(self, target: str) -> np.ndarray:
        """The map's direction out of a container's front (the world was built with it)."""
        yaw = self._front_side(target)
        assert yaw is not None
        return np.array([math.cos(yaw), math.sin(yaw), 0.0])

    def free_for_base(self, x: float, y: float) -> bool:
        row, col = self.costmap.grid.cell_of(x, y)
        return bool(self.costmap.free(row, col))

    def drive_to(self, x: float, y: float, yaw: float) -> bool:
        """Tuck, lower the torso and drive to (x, y), turning to `yaw`; False where no path leads there."""
        pose = self.base.pose
        try:
            path = plan_path(self.costmap, (pose.x, pose.y), (x, y), goal_tolerance=0.1)
        except NavigationError:
            return False
        return self._drive(path, yaw).reached

    def _drive(self, path: PlannedPath, yaw: float) -> DriveResult:
        """Follow a planned path, arm tucked, torso down (the camera's view of the floor, a low centre
        of mass), carrying what the hand holds; then the arm's planners follow the base."""
        self._tuck()
        self._lift_torso(0.0)
        self._hold_carried()
        carried = [self.base.bodies[self.held.object_id]] if self.held is not None else []
        self.last_path = [(float(x), float(y)) for x, y in path.waypoints]
        result = self.base.drive(path, yaw, carried=carried, carry=self._carry)
        self._base_moved()
        return result

    def grip_door(self, target: str) -> bool:
        """The assisted grip on a door's handle once both fingers press the door (SQUEEZED): a point
        constraint at the hand of at most DOOR_GRIP_FORCE, about which the handle turns (doors.py)."""
        p, c = self.p, self.client
        body, link = self.base.bodies[target], self._door_link(target)
        if not self._squeezed(target, link):
            return False
        hand, _ = self.arm.hand_pose()
        centre, turn = p.getLinkState(body, link, physicsClientId=c)[:2]  # constraints act in the link's inertial frame
        inverse = p.invertTransform(centre, turn)
        local = p.multiplyTransforms(inverse[0], inverse[1], hand.tolist(), [0, 0, 0, 1])[0]
        self._door_grip = p.createConstraint(self.robot, self.arm.grasp_link, body, link, p.JOINT_POINT2POINT,
                                             [0, 0, 0], [0, 0, 0], local, physicsClientId=c)
        p.changeConstraint(self._door_grip, maxForce=DOOR_GRIP_FORCE, physicsClientId=c)
        return True

    def let_go_of_door(self) -> None:
        if self._door_grip is not None:
            self.p.removeConstraint(self._door_grip, physicsClientId=self.client)
            self._door_grip = None

    def _door_link(self, target: str) -> int:
        return link_index(self.p, self.base.bodies[target], self.client, "door")

    def _out_of_reach(self, call: SkillCall) -> str | None:
        """Why the arm cannot reach what the call acts on from where the base stands, if it cannot."""
        targets = call.args[1:] if call.skill == "place" else call.args[:1]
        shoulder = self.shoulder()
        for target in targets:
            seen = self.memory.get(target)
            if seen is None:
                return f"{target} is not seen from here"
            nearest = np.clip(shoulder, seen.lo, seen.hi)
            d = float(np.linalg.norm(nearest - shoulder))
            if d > self.skills.spec.arm.reach:
                return f"{target} is {d:.2f} m from the arm's shoulder, its reach is {self.skills.spec.arm.reach:.2f} m"
        return None

    def _carry(self) -> None:
        """What the hand holds, put where the hand is (the base moves kinematically, not by physics)."""
        if self.held is None or self.in_hand is None:
            return
        body = self.base.bodies[self.held.object_id]
        if self._carry_offset[0] != body:
            return
        _, local_position, local_orientation = self._carry_offset
        hand_position, hand_orientation = self.arm.hand_pose()
        world_position, world_orientation = self.p.multiplyTransforms(
            hand_position.tolist(), hand_orientation.tolist(), local_position, local_orientation)
        self.p.resetBasePositionAndOrientation(body, world_position, world_orientation, physicsClientId=self.client)

    def _hold_carried(self) -> None:
        """Take the held thing's pose in the hand frame, for _carry."""
        if self.held is None:
            self._carry_offset = (-1, (0, 0, 0), (0, 0, 0, 1))
            return
        body = self.base.bodies[self.held.object_id]
        p, c = self.p, self.client
        position, orientation = p.getBasePositionAndOrientation(body, physicsClientId=c)
        hand_position, hand_orientation = self.arm.hand_pose()
        inverse = p.invertTransform(hand_position.tolist(), hand_orientation.tolist())
        local = p.multiplyTransforms(inverse[0], inverse[1], position, orientation)
        self._carry_offset = (body, local[0], local[1])

    def _navigate(self, call: SkillCall) -> SkillOutcome:
        target = call.args[0]
        start = (self.base.pose.x, self.base.pose.y)
        try:
            if target in self.scene.rooms:
                room = self.scene.rooms[target]
                cell = nearest_free(self.costmap, room.centre[0], room.centre[1], ROOM_STOP_TOLERANCE)
                if cell is None:
                    raise NavigationError("NO_PATH", f"no free spot for the base near the middle of {target}")
                goal_xy = self.costmap.grid.centre_of(*cell)
                goal_yaw = math.atan2(goal_xy[1] - start[1], goal_xy[0] - start[0])
            else:
                seen = self.memory.get(target)
                if seen is None:
                    return SkillOutcome(call, False, f"{call} failed: {target} has not been seen; the robot does not "
                                                     "know where it is", "precondition")
                size = tuple(float(v) for v in seen.hi - seen.lo)
                side = self._front_side(target)
                # before a front, as far out as the arm pulls it from: nearer, the camera sees only its top
                approach = approach_goal(self.costmap, self.home.plan.walls, (float(seen.centre[0]), float(seen.centre[1])),
                                         size, start, reach=self.spec_at_origin.arm.reach,  # type: ignore[arg-type]
                                         side=side, standoff=FRONT_STANDOFF if side is not None else APPROACH_STANDOFF)
                goal_xy, goal_yaw = (approach.pose.x, approach.pose.y), approach.pose.yaw
            path = plan_path(self.costmap, start, goal_xy)
        except NavigationError as e:
            return SkillOutcome(call, False, f"{call} failed: {e.code}: {e.detail}", "physical", e.code)
        if self.held is not None and self._weld_id is None:  # a place that failed let go of the weld
            self._weld()
        result = self._drive(path, goal_yaw)
        self.look_around()
        if not result.reached:
            return SkillOutcome(call, False, f"{call} failed: {result.code}: {result.message}", "physical", result.code)
        far = self._out_of_reach(SkillCall("pick", (target,))) if target in self.scene.objects else None
        if far is not None:  # as near as the map lets the base stand (furniture in front), and still too far
            return SkillOutcome(call, False, f"{call} failed: OUT_OF_REACH: the base stands as near as the map "
                                             f"allows after {result.travelled:.1f} m, and {far}", "physical",
                                "OUT_OF_REACH")
        return SkillOutcome(call, True, f"{call}: arrived after {result.travelled:.1f} m in {result.seconds:.0f} s")

    def _front_side(self, target: str) -> float | None:
        """The heading a door or drawer opens toward (the map's: the world was built with it), so
        that the base stands where the arm pulls it open; from the side, the front is seen edge-on
        and its handle not at all. None for what does not open."""
        if self.kinds.get(target) not in ("door", "drawer"):
            return None
        return front_yaw(self.home.boxes[target], self.scene, self.scene.objects[target])

    def _symbolic(self, call: SkillCall, why: str = "this body has no physical model of it") -> SkillOutcome:
        """A skill with no physical model: its declared effects, once its preconditions hold on
        what the robot perceives."""
        state = self.symbolic_state()
        verdict = self.laws.verify(call, state)
        if verdict.invalid_call:
            return SkillOutcome(call, False, verdict.invalid_call, "invalid")
        if not verdict.feasible:
            reasons = "; ".join(u.reason for u in verdict.unsatisfied)
            return SkillOutcome(call, False, f"{call} failed: {reasons}", "precondition")
        after = self.effects.apply(call, state)
        for atom in after.atoms - state.atoms:
            if len(atom) == 2 and atom[1] in self.flags and atom[0] not in ("near", "in", "holding"):
                self.flags[atom[1]][atom[0]] = True
        for atom in state.atoms - after.atoms:
            if len(atom) == 2 and atom[1] in self.flags and atom[0] not in ("near", "in", "holding"):
                self.flags[atom[1]][atom[0]] = False
        if call.skill == "search":
            self.searched.add(call.args[0])
        return SkillOutcome(call, True, f"{call} succeeded (its effects applied; {why})")
