"""Where and how the household body stands: the base's drives (the embedded navigator's approach
pose and path on the house's costmap, the held thing carried along), standing square before a
drawer's front or close before a fridge's, turning to face what a skill acts on, looking around on
arrival, and the arm's posture for it (tucked for driving and looking, the torso's height for a
pick or a place). The base is kinematic: it goes where it is driven."""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

import numpy as np
from scipy.spatial.transform import Rotation

from conceptagent_ros.bodies.household.grip import Grip
from conceptagent_ros.bodies.household.mobile_arm import MobileArm
from conceptagent_ros.bodies.household.posture import at_tucked, free_hand
from conceptagent_ros.bodies.household.sight import LOOK_TILTS, Seen, Sight
from conceptagent_ros.manipulation.clouds import fit_plane
from conceptagent_ros.manipulation.hand_frame import hand_frame
from conceptagent_ros.manipulation.place_planner import PlaceConfig
from conceptagent_ros.navigation.approach import Approach, approach_goal
from conceptagent_ros.navigation.errors import NavigationError
from conceptagent_ros.navigation.obstacle_layer import ObstacleLayer
from conceptagent_ros.navigation.path_planner import PlannedPath, costmap, nearest_free, plan_path
from conceptagent_ros.navigation.pybullet_base import ARRIVED, TUCKED, DriveResult, PyBulletBase
from conceptagent_ros.scene.model import Scene
from conceptagent_ros.skills.contract import SkillCall, SkillOutcome
from conceptagent_ros.world.house import House
from conceptagent_ros.world.robot_description import FOOTPRINT_RADIUS, TORSO_TRAVEL
from conceptagent_ros.world.sdf_world import front_yaw

LOOK_YAWS = 6  # views of a look around (the camera is 60 degrees across)
# metres from the side of what navigate_to goes to, to the base's middle: its near edge 43 cm in
# front of the shoulder, where the arm works best (at 35 cm the hand reached over the near edge of a
# coffee table only bent back on itself)
APPROACH_STANDOFF = 0.5
INSIDE_STANDOFF = 0.40  # metres from a fridge's front to the base's middle, to reach in (step_up_to)
FRONT_STANDOFF = 0.62  # metres from a drawer's front to the base's middle: the handle half a metre from the shoulder
FACING_TOLERANCE = math.radians(20.0)  # a skill's target further off the heading than this: turn to it first
# the tucked hand's turns about its axis tried for carrying (carry_within_footprint), the tuck's own first
CARRY_ROLLS = (0.0, math.pi / 2, -math.pi / 2)
TURN_STEP = math.radians(10.0)  # a turn on the spot is checked for collisions at least this often
ARRIVED_WITHIN = 0.15  # metres from a drive's goal a base stopped by its last turn counts as there
CLEARANCE_MARGIN = 0.05  # metres the base's paths keep clear of everything, beyond its radius
ROOM_STOP_TOLERANCE = 1.5  # metres from a room's middle within which a free stop for the base is sought
# another stance (after a skill could not reach or grasp from the first) is at least this far round
# the thing from the first, as seen from its middle: nearer, the arm meets the same table edge or
# shelf side, and the camera sees the same face of the thing
ANOTHER_STANCE_APART = math.radians(45.0)
# the torso's heights tried for a pick or a place, lowest first (torso_for): the lowest from which
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


class Stance:
    """The base and the arm's posture. `moved` is called whenever the shoulder has moved (the arm's
    planners follow it); `shoulder` says where it is; `reach` is the arm's."""

    def __init__(self, base: PyBulletBase, arm: MobileArm, scene: Scene, home: House, kinds: dict[str, str],
                 sight: Sight, grip: Grip, shoulder: Callable[[], np.ndarray], moved: Callable[[], None],
                 reach: float, seed: int = 0):
        self.base, self.arm, self.scene, self.home, self.kinds = base, arm, scene, home, kinds
        self.sight, self.grip, self.shoulder, self.moved, self.reach = sight, grip, shoulder, moved, reach
        # the same margin with localization on: 4 cm more for its error left 5 of 30 easy tasks
        # without a path, and the error stays below 4 cm
        self.costmap = costmap(home.grid, FOOTPRINT_RADIUS + CLEARANCE_MARGIN)
        self.obstacles = ObstacleLayer(home.grid)  # what the lidar saw that the map lacks (an open door)
        self.lidar_noise = np.random.default_rng([seed, 23])
        self.tucked = True
        self.last_path: list[tuple[float, float]] = []  # the base's last planned path (x, y), for rviz
        self.last_drive: DriveResult | None = None  # how the last drive went (the navigation bench reads it)

    # -- the arm's posture --------------------------------------------------------------------------
    def tuck(self) -> None:
        if not self.tucked:
            free_hand(self.arm, self.base.believed, set(self.grip.carried_bodies()))
            self.arm.tuck(TUCKED)
            self.tucked = True
            if self.grip.held is not None:
                self.carry_within_footprint()

    def tuck_as_a_skill_starts(self) -> None:
        self.notice_posture()
        self.tuck()

    def notice_posture(self) -> None:
        """The tucked flag from the arm's joints, as a skill starts (posture.py: a door's push left
        the arm out with the flag set); within a door's skill the flag stands as its steps set it."""
        self.tucked = self.tucked and at_tucked(self.arm)

    def carry_within_footprint(self) -> None:
        """Turn the tucked hand about its own axis (CARRY_ROLLS) to where the held thing stands out
        least beyond the base's middle, as a person turns a long thing to carry it through a door:
        the paths keep the base's radius clear, not what the hand holds, and a pillow held across
        the base struck the side of a doorway the base passed."""
        best: tuple[float, float] | None = None  # (reach out, roll)
        roll = CARRY_ROLLS[0]
        for roll in CARRY_ROLLS:
            if roll != CARRY_ROLLS[0]:
                self.arm.tuck({**TUCKED, "wrist_3_joint": roll})
            out = self.held_reach_out()
            if out is None:
                return
            if best is None or out < best[0] - 1e-3:
                best = (out, roll)
            if out <= FOOTPRINT_RADIUS:
                break
        if best is not None and best[1] != roll:  # the hand stands at the last roll tried
            self.arm.tuck({**TUCKED, "wrist_3_joint": best[1]})

    def held_reach_out(self) -> float | None:
        """How far from the base's middle (across the floor) the held thing reaches; None with
        nothing in hand."""
        held = self.grip.held_points()
        if held is None or not len(held[1]):
            return None
        points, pose = held[1], self.base.believed
        return float(np.max(np.hypot(points[:, 0] - pose.x, points[:, 1] - pose.y)))

    def ready(self) -> None:
        if self.tucked:
            self.arm.rest()
            self.tucked = False

    def lift_torso(self, height: float) -> None:
        """The torso to `height` with the arm tucked over the base (nothing in the way as it rises
        or falls), and the arm's planners told where the shoulder is now."""
        if abs(height - self.arm.torso_height()) > 0.005:
            self.tuck()
            self.arm.lift_torso(height)
            self.moved()

    def torso_for(self, call: SkillCall) -> float:
        """How high to lift the torso for a pick or a place: the lowest of the heights tried
        (TORSO_STEP apart) from which the hand reaches, pointing down, over the thing's top (a
        pick's pre-grasp) or over the receptacle's near part with the held thing (a place), one step
        higher for room; 0 for other skills."""
        if call.skill not in ("pick", "place"):
            return 0.0
        seen = self.sight.memory.get(call.args[1] if call.skill == "place" else call.args[0])
        if seen is None:
            return self.arm.torso_height()
        shoulder = self.shoulder() - np.array([0.0, 0.0, self.arm.torso_height()])
        top = None
        if call.skill == "pick":
            spot = np.append(seen.centre[:2], seen.hi[2] + PICK_HAND_ABOVE)
        else:
            lo, hi = seen.lo[:2] + PLACE_INWARD, seen.hi[:2] - PLACE_INWARD
            xy = np.clip(shoulder[:2], np.minimum(lo, seen.centre[:2]), np.maximum(hi, seen.centre[:2]))
            points = self.grip.held_as_gripped()
            held = float(np.ptp(points[:, 2])) if points is not None and len(points) else 0.0
            top = self.shelf_inside(call.args[1]) if self.kinds.get(call.args[1]) == "door" else None
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

    def shelf_inside(self, container: str) -> float | None:
        """The height of the level surface inside a container with a door, as seen below the eye
        and its top panel (Sight.inside_of), or None where none is seen (the door shut)."""
        points = self.sight.clouds(LOOK_TILTS).get(container)
        if points is None:
            return None
        cfg = PlaceConfig()  # the level surface the place planner will find
        plane = fit_plane(self.sight.inside_of(points), cfg.plane_threshold, cfg.min_support_points, cfg.max_tilt_deg,
                          tries=cfg.plane_tries)
        return float(np.median(plane.inliers[:, 2])) if plane is not None else None

    # -- looking around -----------------------------------------------------------------------------
    def look_around(self) -> None:
        """Turn on the spot, the arm tucked, looking at every heading it can turn to; back to the
        heading it had. A heading the turn would strike something on the way to is not looked from."""
        self.tuck()
        self.grip.hold_carried()
        start = self.base.believed
        for k in range(LOOK_YAWS):
            if not self.turn_to(start.yaw + 2 * math.pi * k / LOOK_YAWS):
                self.sight.clouds(LOOK_TILTS)
        self.turn_to(start.yaw)

    def turn_to(self, yaw: float) -> set[str]:
        """Turn the base on the spot to `yaw` (where it believes it heads), the shorter way and, where
        that strikes something, the longer way round; in steps of at most TURN_STEP, checking at
        each that neither the robot nor what its hand carries touches anything it did not touch
        before the turn. Where both ways strike something the base stays at the last free heading
        of the shorter way, and what was struck is returned (nothing: it got there)."""
        carried = self.grip.carried_bodies()
        touched_before = set().union(*self.base.collisions(carried))
        short = math.remainder(yaw - self.base.believed.yaw, 2 * math.pi)
        struck, short_turned = self._turn_by(short, carried, touched_before)
        if not struck:
            return struck
        # the turns below retrace headings already found free
        self._turn_by(-short_turned, carried, touched_before)  # back the way it came
        missed, long_turned = self._turn_by(short - math.copysign(2 * math.pi, short), carried, touched_before)
        if not missed:
            return set()
        self._turn_by(-long_turned, carried, touched_before)
        self._turn_by(short_turned, carried, touched_before)
        return struck

    def _turn_by(self, turn: float, carried: list[int], touched_before: set[str]) -> tuple[set[str], float]:
        """Turn by `turn` radians in checked steps; what was struck (the last step undone) and how
        far it turned."""
        steps = max(1, math.ceil(abs(turn) / TURN_STEP))
        each, turned = turn / steps, 0.0
        for _ in range(steps):
            self.base.turn(each)
            self.grip.carry()
            struck = set().union(*self.base.collisions(carried)) - touched_before
            if struck:
                self.base.turn(-each)
                self.grip.carry()
                return struck, turned
            turned += each
        return set(), turned

    # -- standing before something ------------------------------------------------------------------
    def face(self, target: str) -> None:
        """Turn the base on the spot toward what a skill acts on, where the camera looks too far
        from it: the arm works in front of the mast and the camera sees 60 degrees across, so a
        thing beside or behind the robot (it began there, or a look around found it there) is
        neither seen nor reached by the skill. A round base turns where it stands, but the tucked arm
        and what the hand carries sweep round with it: the turn stops short of what they would strike."""
        seen = self.sight.memory.get(target)
        if seen is None:
            return
        pose = self.base.believed
        bearing = math.atan2(float(seen.centre[1]) - pose.y, float(seen.centre[0]) - pose.x)
        if abs(math.remainder(bearing - pose.yaw, 2 * math.pi)) <= FACING_TOLERANCE:
            return
        self.tuck()
        self.grip.hold_carried()
        self.turn_to(bearing)  # where the turn would strike something, the base stays short of it
        self.moved()

    def stand_before_front(self, target: str, standoff: float = FRONT_STANDOFF) -> None:
        """Drive to stand square in front of a drawer, `standoff` out on its front's normal,
        facing it, across from its handle: a pull runs along the normal, and from an approach
        pose off to one side (navigate_to stands wherever the arm reaches some of the cabinet) the
        handle is seen edge-on and pulled across the arm. The front is measured from what the
        camera sees (articulation_planner.front_geometry); where it is not seen, or no free path
        leads there, the base stays and the skill tries from where it stands."""
        from conceptagent_ros.manipulation.articulation_planner import DRAWER_FRONTS, front_geometry
        from conceptagent_ros.manipulation.failures import ManipulationError

        self.tuck()
        points = self.sight.clouds().get(target)
        if points is None:
            return
        pose = self.base.pose
        try:
            front = front_geometry(points, (pose.x, pose.y), DRAWER_FRONTS)
        except ManipulationError:
            return
        middle = front.handle if front.handle is not None else front.centre
        across = front.centre + front.width_axis * float((middle - front.centre) @ front.width_axis)
        yaw = math.atan2(-front.normal[1], -front.normal[0])
        goal = (float(across[0] + front.normal[0] * standoff), float(across[1] + front.normal[1] * standoff))
        if math.dist(goal, (pose.x, pose.y)) < 0.03 and abs(math.remainder(yaw - pose.yaw, 2 * math.pi)) < 0.05:
            return
        try:
            path = plan_path(self.costmap, (pose.x, pose.y), goal, goal_tolerance=0.1)
        except NavigationError:
            return
        self.drive(path, yaw)  # carrying what the hand holds, to put it into the drawer

    def step_up_to(self, target: str) -> None:
        """For a pick or a place inside a container with a door, stand INSIDE_STANDOFF before the
        middle of its front (the map's), facing it: from where navigate_to stands (as far out as a
        door is opened from) the arm pointing down does not reach 13 cm in past a fridge's front.
        Where no path leads there, the base stays."""
        if target in self.scene.objects and self.front_side(target) is not None:
            self.stand_before(target, INSIDE_STANDOFF)

    def stand_before(self, target: str, standoff: float) -> bool:
        """Stand `standoff` out before the middle of a door's or a drawer's front (the map's), facing
        it; False where no path leads there."""
        middle, normal = self.closed_front(target)
        goal = middle[:2] + normal[:2] * standoff
        yaw = math.atan2(-normal[1], -normal[0])
        pose = self.base.believed
        if math.dist((pose.x, pose.y), goal) < 0.05:
            self.face(target)
            return True
        return self.drive_to(float(goal[0]), float(goal[1]), yaw)

    def front_side(self, target: str) -> float | None:
        """The heading a door or drawer opens toward (the map's: the world was built with it), so
        that the base stands where the arm pulls it open; from the side, the front is seen edge-on
        and its handle not at all. None for what does not open."""
        if self.kinds.get(target) not in ("door", "drawer"):
            return None
        return front_yaw(self.home.boxes[target], self.scene, self.scene.objects[target])

    def closed_door_normal(self, target: str) -> np.ndarray:
        """The map's direction out of a container's front (the world was built with it)."""
        yaw = self.front_side(target)
        assert yaw is not None
        return np.array([math.cos(yaw), math.sin(yaw), 0.0])

    def closed_front(self, target: str) -> tuple[np.ndarray, np.ndarray]:
        """The middle of a container's front, shut, and the direction out of it (the map's)."""
        box, normal = self.home.boxes[target], self.closed_door_normal(target)
        depth = abs(float(normal[0])) * box.size[0] + abs(float(normal[1])) * box.size[1]
        middle = np.array([box.center[0], box.center[1], 0.0]) + normal * depth / 2
        return middle, normal

    # -- driving ------------------------------------------------------------------------------------
    def free_for_base(self, x: float, y: float) -> bool:
        row, col = self.costmap.grid.cell_of(x, y)
        return bool(self.costmap.free(row, col))

    def drive_to(self, x: float, y: float, yaw: float) -> bool:
        """Tuck, lower the torso and drive to (x, y), turning to `yaw`; False where no path leads there,
        or where the base, there, cannot turn to `yaw` either way round."""
        pose = self.base.believed
        try:
            path = plan_path(self.costmap, (pose.x, pose.y), (x, y), goal_tolerance=0.1)
        except NavigationError:
            return False
        result = self.drive(path, yaw)
        if result.reached:
            return True
        # The drive's last turn goes the shorter way and stops where it would strike something (a door
        # standing half open beside the spot): the base arrived facing the way it drove, and turns
        # the other way round instead
        there = self.base.believed
        if result.code != "BLOCKED" or math.dist((there.x, there.y), (x, y)) > ARRIVED_WITHIN:
            return False
        struck = self.turn_to(yaw)
        self.moved()
        return not struck

    def drive(self, path: PlannedPath, yaw: float) -> DriveResult:
        """Follow a planned path, arm tucked, torso down (the camera's view of the floor, a low centre
        of mass), carrying what the hand holds; then the arm's planners follow the base."""
        self.tuck()
        self.lift_torso(0.0)
        if self.grip.held is not None and self.grip.weld_id is None:  # a place that failed let go of the weld
            self.grip.weld()
        self.grip.hold_carried()
        self.last_path = [(float(x), float(y)) for x, y in path.waypoints]
        result = self.base.drive(path, yaw, carried=self.grip.carried_bodies(), carry=self.grip.carry)
        self.last_drive = result
        self.moved()
        return result

    def navigate(self, call: SkillCall, out_of_reach: Callable[[SkillCall], str | None]) -> SkillOutcome:
        """navigate_to: to a free spot near a room's middle, or to where the base should stand for a
        thing as the robot saw it (before a front: as far out as the arm pulls it from); then a look
        around. OUT_OF_REACH where it arrived as near as the map allows and the arm still does not
        reach the thing (`out_of_reach` says why), from the first stance and from another
        (another_stance) where the thing has no front to stand before."""
        target = call.args[0]
        start = (self.base.believed.x, self.base.believed.y)
        self.notice_posture()
        self.sense_obstacles()
        try:
            if target in self.scene.rooms:
                room = self.scene.rooms[target]
                cell = nearest_free(self.costmap, room.centre[0], room.centre[1], ROOM_STOP_TOLERANCE)
                if cell is None:
                    raise NavigationError("NO_PATH", f"no free spot for the base near the middle of {target}")
                goal_xy = self.costmap.grid.centre_of(*cell)
                goal_yaw = math.atan2(goal_xy[1] - start[1], goal_xy[0] - start[0])
            else:
                if target not in self.sight.memory:
                    return SkillOutcome(call, False, f"{call} failed: {target} has not been seen; the robot does not "
                                                     "know where it is", "precondition")
                approach = self.approach(target)
                goal_xy, goal_yaw = (approach.pose.x, approach.pose.y), approach.pose.yaw
            path = plan_path(self.costmap, start, goal_xy)
        except NavigationError as e:
            return SkillOutcome(call, False, f"{call} failed: {e.code}: {e.detail}", "physical", e.code)
        result = stopped_short(self, self.drive(path, goal_yaw), goal_xy, goal_yaw)
        self.look_around()
        if not result.reached:
            return SkillOutcome(call, False, f"{call} failed: {result.code}: {result.message}", "physical", result.code)
        far = out_of_reach(SkillCall("pick", (target,))) if target in self.scene.objects else None
        if far is not None and self.another_stance(target) is None:
            far = out_of_reach(SkillCall("pick", (target,)))
            if far is None:
                return SkillOutcome(call, True, f"{call}: arrived after {result.travelled:.1f} m in {result.seconds:.0f} s, "
                                                "then went round to another side: the first was out of reach")
        if far is not None:  # as near as the map lets the base stand (furniture in front), and still too far
            return SkillOutcome(call, False, f"{call} failed: OUT_OF_REACH: the base stands as near as the map "
                                             f"allows after {result.travelled:.1f} m, and {far}", "physical",
                                "OUT_OF_REACH")
        stopped = f", {result.message}" if result.message != ARRIVED else ""
        return SkillOutcome(call, True, f"{call}: arrived after {result.travelled:.1f} m in {result.seconds:.0f} s{stopped}")

    def sense_obstacles(self) -> None:
        """A lidar sweep from where the base stands into the obstacle layer, and the costmap the
        drives plan on made again from the map and the layer: what stands out into the room since
        the map was made (a door left open) is driven round, not into."""
        origin, ends, hit = self.base.scan_on_map(self.lidar_noise)
        self.obstacles.update(origin, ends, hit)
        self.costmap = costmap(self.obstacles.occupancy(), FOOTPRINT_RADIUS + CLEARANCE_MARGIN)

    def approach(self, target: str, away_from: tuple[float, float] | None = None) -> Approach:
        """Where the base should stand for a thing as the robot last saw it (navigation/approach):
        before a front, as far out as the arm pulls it from (nearer, the camera sees only its top);
        `away_from` as approach_goal has it. NavigationError where there is no such spot."""
        seen = self.sight.memory[target]
        pose = self.base.believed
        size = tuple(float(v) for v in seen.hi - seen.lo)
        side = self.front_side(target)
        return approach_goal(self.costmap, self.home.plan.walls, (float(seen.centre[0]), float(seen.centre[1])),
                             size, (pose.x, pose.y), reach=self.reach,  # type: ignore[arg-type]
                             side=side, standoff=FRONT_STANDOFF if side is not None else APPROACH_STANDOFF,
                             away_from=away_from)

    def another_stance(self, target: str) -> str | None:
        """Drive round to another side of a thing, ANOTHER_STANCE_APART at least from where the base
        stands now as seen from the thing's middle, for a skill that could not reach or grasp it
        from here (the arm came at it over a table's edge, or the camera saw the face no grasp
        fits); then a look around. None where the base stands there now; else why not (a door
        or a drawer is worked from before its front, which is where the base stands already)."""
        seen = self.sight.memory.get(target)
        if seen is None:
            return f"{target} has not been seen"
        if self.front_side(target) is not None:
            return f"{target} is worked from before its front"
        pose = self.base.believed
        failed = math.atan2(pose.y - float(seen.centre[1]), pose.x - float(seen.centre[0]))
        self.sense_obstacles()
        try:
            approach = self.approach(target, away_from=(failed, ANOTHER_STANCE_APART))
            if not approach.within_reach:
                return f"no other side of {target} within the arm's reach is free for the base"
            path = plan_path(self.costmap, (pose.x, pose.y), (approach.pose.x, approach.pose.y))
        except NavigationError as e:
            return f"{e.code}: {e.detail}"
        result = self.drive(path, approach.pose.yaw)
        self.look_around()
        return None if result.reached else f"{result.code}: {result.message}"


def stopped_short(stance: Stance, result: DriveResult, goal: tuple[float, float], yaw: float) -> DriveResult:
    """A drive that touched something within ARRIVED_WITHIN of its goal has arrived once the
    base turns to the goal's heading (either way round): localization's few centimetres of
    error can put a counter that much nearer than the map has it."""
    there = stance.base.believed
    short = math.dist((there.x, there.y), goal)
    if result.code != "BLOCKED" or short > ARRIVED_WITHIN or stance.turn_to(yaw):
        return result
    stance.moved()
    return replace(result, reached=True, code="", pose=stance.base.believed,
                   message=f"stopped {100 * short:.0f} cm short, against what it touched ({result.message})")
