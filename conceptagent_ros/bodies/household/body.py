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
  its executors on the arm (bodies/household/mobile_arm.py), through manipulation/arm_skills as on every
  body; a thing is picked or placed only within the arm's reach, else the skill is refused; one
  that could not reach or grasp its thing is tried once more from another side of it;
- open, close: drawers through the same skills (arm_skills.move_drawer), the base first standing
  square before the drawer's front (navigate_to goes to the side a door or drawer opens to); a
  hinged door (fridge, microwave, oven) is opened by bodies/household/doors.py (the handle pulled on its
  arc from beside the swing, then the door pushed on from inside to 90 degrees) and its close is
  refused as unavailable (doors.py says why); a box that opens is exported lidless, so its open
  and close change its flag alone; a pick from or a place into a container with a door (a
  fridge's shelf) is done standing INSIDE_STANDOFF before its front;
- every other skill (switch on, slice, heat, ...) has no physical model: once its preconditions hold
  on what the robot perceives (in reach, the hand's state), its declared PDDL effects are applied to
  the body's symbolic flags (SYMBOLIC_SKILLS).

The base is kinematic (mass 0): it goes where it is driven and stays put while the arm works, as a
braked base does. The goal is judged by bodies/household/judge.py on PyBullet's own state.

This class assembles the body's roles: what it sees and remembers (sight.py), where and how it
stands (stance.py), what its hand holds (grip.py), the arm's skills (manipulation/arm_skills) and
hinged doors (doors.py, which reads the body through its DoorBody protocol).
"""
from __future__ import annotations

import functools
import math
import sys
import tempfile
from collections.abc import Callable, Collection
from dataclasses import replace
from pathlib import Path
from typing import TextIO

import numpy as np

from conceptagent_ros.bodies.household.door_body import HouseholdDoorBody
from conceptagent_ros.bodies.household.doors import HingedDoors
from conceptagent_ros.bodies.household.grip import Grip
from conceptagent_ros.bodies.household.item_clouds import to_frame
from conceptagent_ros.bodies.household.judge import PHYSICAL_PREDICATES, physical_household_state, symbolic_effects
from conceptagent_ros.bodies.household.mobile_arm import ArmKinematics, MobileArm
from conceptagent_ros.bodies.household.sight import LOOK_TILTS, Placed, Sight
from conceptagent_ros.bodies.household.stance import FRONT_STANDOFF, Stance
from conceptagent_ros.bodies.sensing import DEFAULT_SENSING, Sensing, sensing_named
from conceptagent_ros.manipulation.arm_skills import SEEN_OPEN, ArmSkills, Clouds, SkilledBody, SkillWatch
from conceptagent_ros.manipulation.pick_executor import Arm, PickConfig
from conceptagent_ros.manipulation.robot_spec import RobotSpec, load_robot_spec
from conceptagent_ros.navigation.pybullet_base import TUCKED, Localizer, PyBulletBase
from conceptagent_ros.perception.frames import Frame
from conceptagent_ros.planning.pddl.domain import cached_domain
from conceptagent_ros.planning.pddl.effects import EffectModel
from conceptagent_ros.planning.verifier import PreconditionVerifier
from conceptagent_ros.scene.geometry import Pose2D
from conceptagent_ros.scene.graph import derive_symbolic_state
from conceptagent_ros.scene.loader import domain_types
from conceptagent_ros.scene.model import RobotState, Scene, SceneObject
from conceptagent_ros.scene.observation import Observation
from conceptagent_ros.scene.symbolic import SymbolicState, load_predicates
from conceptagent_ros.skills.contract import SkillCall, SkillOutcome, load_skill_library
from conceptagent_ros.world.export import export_world
from conceptagent_ros.world.house import House, house
from conceptagent_ros.world.robot_description import FOOTPRINT_RADIUS, robot_urdf
from conceptagent_ros.world.sdf_world import SLIDING, model_kind
from conceptagent_ros.world.spawn import start_pose

PHYSICAL_SKILLS = ("navigate_to", "pick", "place", "open", "close")
# what a pick or a place that failed from one stance may not fail from another (_another_stance_for):
# the arm did not reach, or no grasp fitted what the camera saw from there. A skill that touched
# its thing (it slipped, it fell) is not tried again: the thing is not where it was planned; and a
# thing out of the arm's reach is refused before any motion: the planner is told to go to it first
ANOTHER_STANCE_FOR = ("UNREACHABLE", "NO_GRASP_FOUND")

# A chest's top drawer is pulled this far: the front half of its floor, where things lie
# (scene/house_geometry.layout), comes out from under the chest's top for the camera and the hand
CHEST_DRAWER_PULL = 0.30
# metres from a closed drawer's front to the base's middle, to pull it open: the first, then the
# next where the drawer came out less than DRAWER_OUT_ENOUGH. From FRONT_STANDOFF a 30 cm pull brought
# the hand against the robot's own mast. On the development houses' chests (seeds 1-17, realistic
# sensing) neither distance alone pulls most of them out 15 cm (0.77 m: 3 of 8, 0.87 m: 3 of 8, as
# the arm's straight steps give out or the hand misses the handle); the two in turn opened 9 of 10
# (seeds 1-19), 8 of them 20-31 cm
OPEN_DRAWER_STANDOFFS = (0.87, 0.77)
DRAWER_OUT_ENOUGH = 0.15  # metres: a drawer out this far shows what lies in its front half
INTO_DRAWER_STANDOFF = 0.40  # metres from an open drawer's front to the base's middle, to put in or take out
SHUT_STANCE_SLACK = 0.5  # metres past the arm's reach a hinged door may be for a close, which drives to its own stances


class HouseholdBody(SkilledBody):
    """RobotInterface on conceptagent_mm in a household scene's exported world. `close()` when done."""

    # what it does: every skill of the library (those without a physical model by their effects)
    SKILLS = tuple(s.name for s in load_skill_library() if s.name != "done")

    def __init__(self, scene: Scene, seed: int = 0, gui: bool = False, log: TextIO | None = None,
                 home: House | None = None, look_first: bool = True, sensing: Sensing | str = DEFAULT_SENSING):
        """`look_first`: look around once built (False: the caller does, once a frame_sink is set, so
        that the first look goes to a perception node, and is the only one: a run repeats exactly);
        `sensing`: realistic (the default) or ideal (bodies/sensing.py)."""
        import pybullet as p

        self.scene = scene
        self.sensing = sensing_named(sensing)
        self.home = home or house(scene)
        self.log = log if log is not None else sys.stderr
        self._dir = tempfile.TemporaryDirectory(prefix="conceptagent_household_")
        exported = export_world(self.home, Path(self._dir.name))
        x, y, yaw = start_pose(self.home)
        self.base = PyBulletBase(exported.sdf, Pose2D(x, y, yaw), gui=gui)
        if self.sensing.localization:  # it drives and turns by where Monte Carlo localization puts it
            self.base.localizer = Localizer.start(self.home.grid, Pose2D(x, y, yaw), seed)
        self.p, self.client, self.robot = p, self.base.client, self.base.robot
        p.setGravity(0, 0, -9.81, physicsClientId=self.client)
        p.changeDynamics(self.robot, -1, mass=0.0, physicsClientId=self.client)  # a braked base: it stays put
        copy = Path(self._dir.name) / "conceptagent_mm_arm.urdf"  # the arm's kinematic copy: no torso joint
        copy.write_text(robot_urdf(gazebo=False, torso_fixed=True))
        self.arm = MobileArm(p, self.client, self.robot, ArmKinematics(str(copy)))
        self.arm.set_arm(TUCKED)
        self.kinds = {oid: model_kind(o).kind for oid, o in scene.objects.items()}
        self.spec_at_origin = load_robot_spec("conceptagent_mm")
        self.grip = Grip(p, self.client, self.robot, self.arm, self.base.bodies, held=lambda: self.skills.held)
        self.sight = Sight(p, self.client, self.robot, scene, self.home, self.base.bodies, self.kinds, self.grip,
                           self.sensing, seed)
        # what the robot sees and where its arm reaches are in the frame it believes in (localization's)
        self.arm.believed_from_true = self.base.believed_from_true
        self.sight.camera.believed_from_true = self.base.believed_from_true
        self.stance = Stance(self.base, self.arm, scene, self.home, self.kinds, self.sight, self.grip,
                             shoulder=self.shoulder, moved=self._base_moved, reach=self.spec_at_origin.arm.reach,
                             seed=seed)
        # what swinging a door needs of the body (bodies/household/doors.py), not the body itself
        self.for_doors = HouseholdDoorBody(self.arm, self.base, self.sight, self.stance, self.grip, self.kinds,
                                           self.shoulder)
        self.skills = ArmSkills(self, self._spec_here(), drawers=self._drawers, floor_z=0.0,
                                near_hand=lambda receptacle: self.kinds.get(receptacle) != "item", mobile=True,
                                pick_config=PickConfig(unseen_after_lift_is_held=True), doors=HingedDoors(self.for_doors),
                                drawer_pull=CHEST_DRAWER_PULL)
        self.flags: dict[str, dict[str, bool]] = {oid: dict(o.state) for oid, o in scene.objects.items()}
        self.searched: set[str] = set()
        self._view: Clouds | None = None  # the view with the arm tucked, for the next skill's first look
        skills = load_skill_library()
        domain = cached_domain(load_predicates(), skills, domain_types(scene))
        self.laws = PreconditionVerifier(domain, skills)
        self.effects = EffectModel(domain)
        self.arm.step(60)  # things dropped into the world come to rest
        if look_first:
            self.look_around()

    # -- what a node reads of the body -------------------------------------------------------------
    @property
    def frame_sink(self) -> Callable[[Frame], None] | None:
        """Where every image the camera takes goes too, as a frame (a ROS node's camera topics); None: nowhere."""
        return self.sight.frame_sink

    @frame_sink.setter
    def frame_sink(self, sink: Callable[[Frame], None] | None) -> None:
        self.sight.frame_sink = sink

    @property
    def instance_names(self) -> tuple[str, ...]:
        return self.sight.instance_names

    @property
    def last_path(self) -> list[tuple[float, float]]:
        """The base's last planned path (x, y), for rviz."""
        return self.stance.last_path

    def positions(self) -> dict[str, Placed]:
        return self.sight.positions()

    def look_around(self) -> None:
        self.stance.look_around()

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
        from conceptagent_ros.bodies.household.top_view import draw_top_view

        movable = {oid for oid, kind in self.kinds.items() if kind == "item"}
        pose = self.base.pose
        return draw_top_view(self.p, self.client, self.base.bodies, movable, self.home.plan.walls, self.base.trail,
                             (pose.x, pose.y), FOOTPRINT_RADIUS, path, title, goal_objects)

    def judged_state(self) -> SymbolicState:
        """The atoms that hold in PyBullet now, by bodies/household/judge.py (not by what the camera
        saw), and beside them the symbolic effects in the body's flags (symbolic_predicates)."""
        physical = physical_household_state(self.p, self.client, self.base.bodies, self.robot, self.scene)
        return SymbolicState(physical.atoms | symbolic_effects(self.flags), physical.types)

    @functools.cached_property
    def symbolic_predicates(self) -> frozenset[str]:
        """The predicates its judge does not read from PyBullet: their atoms are the body's flags."""
        return frozenset(spec.name for spec in self.laws.domain.predicates if not spec.static) \
            - PHYSICAL_PREDICATES - {"near"}

    def close(self) -> None:
        self.arm.kinematics.close()
        self.base.close()
        self._dir.cleanup()

    # -- where the arm is ------------------------------------------------------------------------
    def _spec_here(self) -> RobotSpec:
        """The robot's spec with its shoulder where the base stands now, as it believes (the planners
        work in the world)."""
        x, y, z = (float(v) for v in self.shoulder_at(self.base.believed))
        return replace(self.spec_at_origin, arm=replace(self.spec_at_origin.arm, base=(x, y, z)))

    def shoulder_at(self, pose: Pose2D) -> np.ndarray:
        """Where the arm's shoulder is with the base at `pose`, the torso as it is now."""
        bx, by, bz = self.spec_at_origin.arm.base
        c, s = math.cos(pose.yaw), math.sin(pose.yaw)
        return np.array([pose.x + c * bx - s * by, pose.y + s * bx + c * by, bz + self.arm.torso_height()])

    def shoulder(self) -> np.ndarray:
        return np.asarray(self.skills.spec.arm.base)

    def _base_moved(self) -> None:
        """The arm's planners and its kinematic copy follow the base to where it stands now."""
        self.skills.spec = self._spec_here()
        self.arm.sync_kinematics()

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
            view = self.sight.clouds()
        held, points = self.held, self.grip.held_as_gripped()
        if held is not None and points is not None:
            view[held.object_id] = points
        return view

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


    def grip_handle(self, target: str) -> bool:
        """A drawer's handle held as a door's is (ArmSkills.move_drawer)."""
        return self.grip.grip_door(target)

    def let_go_of_handle(self) -> None:
        self.grip.let_go_of_door()

    def base_pose(self) -> Pose2D:
        """Where the robot believes its base stands (localization's estimate, with it on)."""
        return self.base.believed

    # -- what the planner is told ------------------------------------------------------------------
    def _robot_state(self) -> RobotState:
        pose = self.base.believed
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
        for sid, seen in self.sight.memory.items():
            spec = self.scene.objects[sid]
            nearest = np.clip(shoulder[:2], seen.lo[:2], seen.hi[:2])
            centre = seen.centre
            state = dict(self.flags[sid])
            if sid in openings:
                state["open"] = openings[sid] >= SEEN_OPEN
            room = self.scene.room_at(float(centre[0]), float(centre[1])) or spec.room
            objects.append(SceneObject(sid, spec.category, room, (float(nearest[0]), float(nearest[1]), float(seen.hi[2])),
                                       spec.affordances, state, None if sid == held else self.sight.holder(sid),
                                       attributes=dict(spec.attributes)))
        if held is not None and held not in self.sight.memory:
            spec = self.scene.objects[held]
            objects.append(SceneObject(held, spec.category, self._robot_state().room, tuple(self.shoulder()),  # type: ignore[arg-type]
                                       spec.affordances, dict(self.flags[held]), None, attributes=dict(spec.attributes)))
        return objects

    def observe(self) -> Observation:
        clouds = self.sight.clouds()
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
            self.sight.clouds()
        return outcome

    def _execute(self, call: SkillCall, watch: SkillWatch | None) -> SkillOutcome:
        unknown = [a for a in call.args if a not in self.scene.objects and a not in self.scene.rooms]
        if unknown:
            return SkillOutcome(call, False, f"{call}: unknown object {unknown[0]}", "invalid")
        if call.skill == "done":
            return SkillOutcome(call, True, "the robot declared the task done")
        if call.skill == "navigate_to":
            return self.stance.navigate(call, self._out_of_reach)
        if call.skill not in PHYSICAL_SKILLS:
            return self._symbolic(call)
        if call.skill in ("open", "close") and self.kinds.get(call.args[0]) == "item":
            # a box that opens is exported lidless (world/sdf_world): it stands open, and open or
            # close changes only its flag, once in reach with the hand's state right
            return self._symbolic(call, "the exported box has no lid")
        outcome = self._act(call, watch)
        if outcome.success or outcome.code not in ANOTHER_STANCE_FOR or call.skill not in ("pick", "place"):
            return outcome
        why_not = self._another_stance_for(call)
        if why_not is not None:
            self.log.write(f"[body] {call}: {outcome.kind}, and no other stance to try it from: {why_not}\n")
            return outcome
        self.log.write(f"[body] {call}: {outcome.kind} from the first stance; trying once more from another\n")
        again = self._act(call, watch)
        return replace(again, message=f"{again.message} (from another stance; from the first: {outcome.message})")

    def _another_stance_for(self, call: SkillCall) -> str | None:
        """Drive round to another side of what a pick or a place that could not reach or grasp it
        works on (stance.another_stance): None where the base stands there now, else why not (a
        door or a drawer is worked from before its front)."""
        if self.held is not None and call.skill == "pick":
            return "the hand holds something"
        target = call.args[1] if call.skill == "place" else call.args[0]
        if self.kinds.get(target) in ("door", "drawer") or self._worked_in(call) in self.for_doors.door_ids():
            return f"{target} is worked from before a front"
        return self.stance.another_stance(target)

    def _act(self, call: SkillCall, watch: SkillWatch | None) -> SkillOutcome:
        """A pick, a place, an open or a close on the arm (a hinged door's stance is its own: doors.py)."""
        target = call.args[0]
        if call.skill == "close" and target in self._drawers():
            self.stance.stand_before_front(target, FRONT_STANDOFF - self.skills.drawer_pull / 2)
        if call.skill != "open" or target not in self._drawers():
            return self._act_here(call, watch)
        # a drawer's pull: from the first standoff, then nearer where it came out short
        outcome = None
        for standoff in OPEN_DRAWER_STANDOFFS:
            self.stance.stand_before_front(target, standoff)
            outcome = self._act_here(call, watch)
            if outcome.failure not in (None, "physical"):  # refused, canceled: not for another try
                return outcome
            if self.skills.drawer_openings(self.sight.clouds()).get(target, 0.0) >= DRAWER_OUT_ENOUGH:
                break
        assert outcome is not None
        return outcome

    def _act_here(self, call: SkillCall, watch: SkillWatch | None) -> SkillOutcome:
        """A pick, a place, an open or a close on the arm, from where the base stands (or stands close
        before a container it works in)."""
        container = self._worked_in(call)
        if container is not None and self.kinds.get(container) == "door":  # into or out of a fridge
            self.stance.step_up_to(container)
        elif container is not None and container in self._drawers():
            # close before an open drawer, the camera looks down past its front onto its floor: from
            # FRONT_STANDOFF the front hid all but 6 cm of what a 30 cm pull brings out
            self.stance.stand_before_front(container, INTO_DRAWER_STANDOFF)
        self.stance.face(call.args[1] if call.skill == "place" else call.args[0])
        far = self._out_of_reach(call)
        if far is not None:
            return SkillOutcome(call, False, f"{call} was refused: {far}", "precondition")
        self.stance.tuck_as_a_skill_starts()  # to see unhidden by the arm what the skill will plan on (look())
        self.stance.lift_torso(self.stance.torso_for(call))
        self._view = self.sight.clouds(LOOK_TILTS)
        if call.skill == "place" and self.kinds.get(call.args[1]) == "door" and call.args[1] in self._view:
            self._view[call.args[1]] = self.sight.inside_of(self._view[call.args[1]])
        before = self._view.get(call.args[0]) if call.skill == "pick" else None
        self.stance.ready()
        if call.skill == "place" and self.held is not None:
            self.held.hand_position = self.arm.hand_pose()[0]  # the hand is where the drive left it
        self.grip.picking = call.args[0] if call.skill == "pick" else None
        try:
            outcome = self.skills.execute(call, watch, self.log)
        finally:
            self._view, self.grip.picking = None, None
        if call.skill in ("open", "close") and outcome.success:
            # what the planner's state says between looks (a look measures the front again)
            self.flags[call.args[0]]["open"] = call.skill == "open"
        if call.skill == "pick" and outcome.success and self.held is not None and before is not None:
            # the thing as seen before the grasp, moved as the hand moved since: a rigid grasp keeps
            # it there in the hand's frame (the camera sees little of it in the hand)
            self.sight.memory.pop(self.held.object_id, None)
            hand, rotation = self.grip.hand_frame()
            self.grip.in_hand = to_frame(before + (hand - self.held.grasp.position), hand, rotation)
            if self.grip.weld_id is None:
                self.grip.weld()
        if self.held is None:
            self.grip.in_hand = None
        if not outcome.success and outcome.failure == "physical":  # something may have fallen: look for it
            self.look_around()
        else:  # the arm out of the camera's way, to see what the skill left (the hand hides what it put down)
            self.stance.tuck()
            self.sight.clouds(LOOK_TILTS)
        return outcome

    def _worked_in(self, call: SkillCall) -> str | None:
        """What a place puts the thing into or onto, or what a pick takes it from (as last seen)."""
        if call.skill == "place":
            return call.args[1]
        if call.skill == "pick" and call.args[0] in self.sight.memory:
            return self.sight.holder(call.args[0])
        return None

    def _out_of_reach(self, call: SkillCall) -> str | None:
        """Why the arm cannot reach what the call acts on from where the base stands, if it cannot."""
        targets = call.args[1:] if call.skill == "place" else call.args[:1]
        shoulder = self.shoulder()
        reach, slack = self.skills.spec.arm.reach, stance_slack(call, self.kinds)
        for target in targets:
            seen = self.sight.memory.get(target)
            if seen is None:
                return f"{target} is not seen from here"
            nearest = np.clip(shoulder, seen.lo, seen.hi)
            d = float(np.linalg.norm(nearest - shoulder))
            if d > reach + slack:
                return f"{target} is {d:.2f} m from the arm's shoulder, its reach is {reach:.2f} m"
        return None

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


def stance_slack(call: SkillCall, kinds: dict[str, str]) -> float:
    """Metres past the arm's reach the target of `call` may be from the shoulder: a hinged door's
    close drives to the stances its sweep needs (doors.py), and the open left the base at the
    push's spot, a little further off than the arm reaches."""
    return SHUT_STANCE_SLACK if call.skill == "close" and kinds.get(call.args[0]) == "door" else 0.0
