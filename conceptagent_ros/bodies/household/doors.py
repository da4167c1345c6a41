"""Hinged doors (a fridge's, an oven's, a microwave's) swung by the household body's one arm, as a
person with one free hand does it: stand off to the handle's side, pull the handle on its arc
until its face turns away (about 35 degrees), let go, and push the door on from inside to 90
degrees: round its free edge where the door is tall (a fridge's), over its top edge where it is low
(a base cabinet's). A low door is shut as a person shuts one with the side of a hand: the closed
hand comes down over its top edge beside its outer face and sweeps back along the door's arc to shut,
in legs, each from a spot clear of the door wherever that leg moves it (often on the hinge's side,
pushing the door away). Shutting a tall door (a fridge's, a microwave's) is not built: move_door
says why, before any motion.

Everything is planned from what the mast camera sees of the door (articulation_planner: the front,
its handle, the hinge opposite it) and checked the same way afterwards (door_opening): the
simulator's joint is never read. How far a pull turned the door is also read from where the hand let
go of the handle (turned_by), which a noisy look half-way open does not always agree with. Where
the base stands is chosen from the door as seen and the costmap: beside the swept quarter circle,
out of the door's way.

The fingers close round the handle's bar and the body's assisted grip holds it at the grasp point
(a point constraint of at most GRIP_FORCE, as the fingers hooked round a real bar: the bar turns in
the hand as the door swings). Without it PyBullet's two box-on-box finger contacts let the bar slide
out of the fingers within 8 degrees.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Collection
from dataclasses import replace
from typing import TYPE_CHECKING, Literal, Protocol

import numpy as np

from conceptagent_ros.bodies.household.door_geometry import (
    PUSH_STANCE,
    STANCE,
    door_stance,
    door_turn_seen,
    frame_of_open_door,
    shut_stances,
)
from conceptagent_ros.manipulation.arm_skills import SkillUnavailable
from conceptagent_ros.manipulation.articulation_executor import follow_until_missed
from conceptagent_ros.manipulation.articulation_planner import (
    OVER_THE_TOP,
    ArticulationPlan,
    DoorFrame,
    closes_up_and_down,
    door_frame,
    door_opening,
    front_geometry,
    plan_door,
    plan_door_push,
    plan_door_push_over,
    rolled_over,
)
from conceptagent_ros.manipulation.failures import ManipulationError

if TYPE_CHECKING:
    from conceptagent_ros.manipulation.arm_skills import ArmSkills
    from conceptagent_ros.manipulation.watched_arm import WatchedArm
    from conceptagent_ros.scene.geometry import Pose2D

PULL_TO = math.radians(35.0)  # the handle is pulled this far: past it, its face turns away from the robot
PUSH_FROM_BEHIND = math.radians(4.0)  # the push starts this far behind where the pull left the door
OPEN_TO = math.radians(90.0)
PUSH_RADIUS = 0.45  # metres from the hinge the hand pushes the door at
SEEN_DOOR_OPEN = math.radians(60.0)  # a door seen turned this far is open (the arm reaches past it)
SEEN_DOOR_AJAR = math.radians(8.0)  # a door seen turned further than this and less than open is ajar
# how far the door seen after a pull may be from where the hand let go of its handle and still be
# believed (the hand's is the surer measure: it held the handle)
SEEN_AND_HELD_AGREE = math.radians(10.0)
PUSH_EDGE_SHARE = 0.85  # of a wide door's width: along it the second push's spot stands
# a door whose top edge is this far below the shoulder or more (a base cabinet's) is pushed on from
# above: the hand comes down over its top into the gap, this share of the way out along it (nearer
# the free edge the gap is wider, and out of the arm's reach from a base clear of the swing), from a
# base standing at PUSH_OVER_BEARING from the hinge, just clear of the swing
LOW_DOOR = 0.08
PUSH_OVER_SHARE = 0.75
PUSH_OVER_BEARING = math.radians(50.0)
LOW_PUSH_BELOW_TOP = 0.2  # metres below a low door's top edge the hand pushes it on from inside
WITHDRAW = 0.10  # metres the hand backs off after letting go
ROUND_EDGE = 0.12  # metres past the door's free edge the hand goes round it
REPULLS = 3  # pulls more by the handle of a low door the hand cannot get over
REPULL_GAIN = math.radians(3.0)  # a pull that turned the door less than this is the last
GRASP_TRIES = 3  # closings of the fingers on a handle, each after a fresh look
ENTRY = 0.12  # metres beside the door's inside the hand comes in from before a push
# metres before the middle of a closed front the base stands to see the whole door where navigate_to
# left it beside the piece or facing past it (its edge then clear of a fridge door's swing)
SEE_STANDOFF = 1.0
# a shut is pushed in legs, each from a spot beside the part of the arc it sweeps: the hand's quarter
# circle is wider than the arm reaches from one spot. A leg turns the door back by the first of these
# that some free spot reaches; within SHUT_FINISH of shut it goes on to shut. It ends there, the hand
# a clearance before the door: pressed past shut, the door shoves what it hangs on
SHUT_LEGS = (math.radians(40.0), math.radians(25.0), math.radians(15.0))
SHUT_FINISH = math.radians(12.0)
SHUT_PUSHES = 5  # legs at most
SHUT_GAIN = math.radians(3.0)  # a leg that turned the door back less than this is the last
# metres from the base's middle to the hand, nearest and furthest, over the whole of a shutting sweep
# pointing down over a low door's top (the arm reaches 0.70 m that way at 0.5-0.9 m up)
SHUT_REACH = (0.28, 0.68)
SHUT_STANCES_TRIED = 3  # spots driven to for one leg, at least SHUT_STANCES_APART metres apart
SHUT_LOW_SHARE = 0.6  # a low door is pushed shut from above this share of the way out from the hinge
# metres: the highest top edge the hand comes down over to push a door shut (a base unit's is 0.8-0.9 m,
# a microwave's on a counter 1.2, a fridge's 1.8)
SHUT_OVER_TOP_MOST = 1.0


class DoorBody(Protocol):
    """What swinging a door needs of the body: where its base and hand are, seeing the door, standing
    and driving, and the assisted grip on the handle (bodies/household/body.py)."""

    footprint_radius: float

    def door_ids(self) -> Collection[str]: ...

    def base_pose(self) -> Pose2D: ...

    def hand_position(self) -> np.ndarray: ...

    def shoulder(self) -> np.ndarray: ...

    def door_points(self, target: str, tuck: bool = True) -> np.ndarray: ...

    def closed_front(self, target: str) -> tuple[np.ndarray, np.ndarray]: ...

    def stand_before(self, target: str, standoff: float) -> bool: ...

    def free_for_base(self, x: float, y: float) -> bool: ...

    def drive_to(self, x: float, y: float, yaw: float) -> bool: ...

    def sense_obstacles(self) -> None: ...

    def grip_door(self, target: str) -> bool: ...

    def let_go_of_door(self) -> None: ...

    def rest(self) -> None: ...

    def settle(self) -> None: ...


class HingedDoors:
    """The household body's DoorMover (manipulation/arm_skills): the hinged doors of the scene."""

    def __init__(self, body: DoorBody):
        self.body = body
        self.frames: dict[str, DoorFrame] = {}  # each door as last seen closed, from where its arm worked

    def doors(self) -> Collection[str]:
        return self.body.door_ids()

    def move_door(self, target: str, action: Literal["open", "close"], skills: ArmSkills) -> str:
        body = self.body
        skills.phase(f"looking at {target}'s door", 0.05)
        points = self._see(target, skills)
        closed = body.closed_front(target)[1]
        before = door_opening(points, closed)
        if action == "close":
            return self._close(target, points, before, skills)
        if before >= SEEN_DOOR_OPEN:
            return f"it stands open already ({math.degrees(before):.0f} degrees, measured from its door)"
        if before > SEEN_DOOR_AJAR and target in self.frames:  # ajar (an open that stopped short): push it on
            self._push_on(self.frames[target], target, before, skills, door_top(points), ajar=True)
        else:
            self._open(target, points, skills)
        after = self._measure(target, skills, lambda seen: door_opening(seen, closed))
        if after < SEEN_DOOR_OPEN:
            raise ManipulationError("NOT_MOVED", f"the door stands {math.degrees(after):.0f} degrees open after the "
                                                 f"open (it stood {math.degrees(before):.0f} degrees open before)")
        return f"opened: its door stands {math.degrees(after):.0f} degrees open (measured from the door as seen)"

    def _measure(self, target: str, skills: ArmSkills, measure: Callable[[np.ndarray], float]) -> float:
        """How far (radians, by `measure` of its points) the door stands open once the arm is out of
        the way, as the camera sees it."""
        self.body.rest()
        self.body.settle()
        skills.phase(f"measuring how far {target}'s door stands open", 0.95)
        return measure(self._see(target, skills))

    def _see(self, target: str, skills: ArmSkills) -> np.ndarray:
        """The door as seen from where the base stands; where it is not seen there (navigate_to left
        the base beside the piece, where its front is seen edge-on, or the turn to it stopped short),
        from SEE_STANDOFF before the middle of its front (the map's), facing it."""
        try:
            return self.body.door_points(target)
        except ManipulationError as e:
            if e.code != "NOT_SEEN":
                raise
            skills.phase(f"{target}'s door is not seen from here: standing before it", 0.07)
            if not self.body.stand_before(target, SEE_STANDOFF):
                raise ManipulationError("NOT_SEEN", f"{e.detail}, and no free path leads before its front") from e
            return self.body.door_points(target)

    # -- opening ---------------------------------------------------------------------------------
    def _open(self, target: str, points: np.ndarray, skills: ArmSkills) -> None:
        door, reached = self._pull(target, points, skills)
        self._push_on(door, target, reached, skills, door_top(points))

    def _pull(self, target: str, points: np.ndarray, skills: ArmSkills, again: bool = False) -> tuple[DoorFrame, float]:
        """Pull the door by its handle as far as the arm follows its arc, from beside its swing; the
        door's frame as it stood shut, and how far it stands open now. `again`: the door stands
        ajar from an earlier pull, whose frame is kept."""
        body = self.body
        pose = body.base_pose()
        door = door_frame(front_geometry(points, (pose.x, pose.y)), gripper=skills.spec.gripper)
        self._stand(door, target, skills)
        points = body.door_points(target)  # seen again from where the arm works
        pose = body.base_pose()
        plan = plan_door(points, (pose.x, pose.y), skills.spec.gripper, "open", PULL_TO)
        door = door_frame(front_geometry(points, (pose.x, pose.y)), gripper=skills.spec.gripper)
        if not again:
            self.frames[target] = door
        door = self.frames[target]
        skills.phase(f"pulling {target}'s door by its handle", 0.2)
        hand = skills.watched_hand()
        for attempt in range(1, GRASP_TRIES + 1):
            plan = self._take_handle(target, hand, plan, points, skills)
            if body.grip_door(target):
                break
            # the fingers closed beside the bar (a handle seen a centimetre off through depth noise, a
            # hand that rose past its goal as it settled): back off along the way in and look again
            hand.open_hand()
            hand.move_hand(plan.grasp_position - plan.grasp_rotation[:, 2] * (0.08 + 0.03 * attempt), plan.grasp_rotation)
            if attempt == GRASP_TRIES:
                raise ManipulationError("NOT_HELD", f"the fingers closed beside {target}'s handle, not on it "
                                                    f"({GRASP_TRIES} tries)")
            skills.phase(f"the fingers missed {target}'s handle: looking again", 0.2)
            points = body.door_points(target)
            plan = plan_door(points, (pose.x, pose.y), skills.spec.gripper, "open", PULL_TO)
        try:  # as far as the arm pulls it holding on: the push takes it on from there
            _, last = follow_until_missed(hand.move_hand_straight, plan, 0.3)  # the hand's turn where it stopped
            held_at = turned_by(door, plan.grasp_position, self._hand_now())
        finally:
            body.let_go_of_door()
        hand.open_hand()
        # back off as the hand points: turned as the pull's end would have it, it swung into the door
        hand.move_hand(self._hand_now() - last[:, 2] * WITHDRAW, last)
        skills.phase(f"pushing {target}'s door open from inside", 0.55)
        seen = door_opening(body.door_points(target, tuck=False), door.out)
        # the hand held the handle to the end of the pull, so where it let go says how far the door
        # turned; the door as seen half open is a few planes (its face, its edge, the handle) and a
        # noisy look took the wrong one for the door (54 degrees for 35): the push then came in
        # behind where the door stood and shut it
        return door, seen if abs(seen - held_at) <= SEEN_AND_HELD_AGREE else held_at

    def _take_handle(self, target: str, hand: WatchedArm, plan: ArticulationPlan, points: np.ndarray,
                     skills: ArmSkills) -> ArticulationPlan:
        """The open hand to the handle as `plan` has it, closed there: rolled half a turn where IK
        reaches one and not the other from the stance, then the other way round the bar (a bar
        judged the wrong way met a fingertip). The plan the hand followed in."""
        hand.open_hand()
        if not (self._reach_handle(hand, plan) or self._reach_handle(hand, plan := rolled_over(plan))):
            pose = self.body.base_pose()
            plan = plan_door(points, (pose.x, pose.y), skills.spec.gripper, "open", PULL_TO,
                             upright=closes_up_and_down(plan.grasp_rotation))
            if not self._reach_handle(hand, plan):
                raise ManipulationError("UNREACHABLE", f"the arm did not reach {target}'s handle")
        hand.close_hand()
        return plan

    def _reach_handle(self, hand: WatchedArm, plan: ArticulationPlan) -> bool:
        """The open hand to the handle as `plan` turns it, from 8 cm back along its approach; where it
        stops short, back there again (False)."""
        approach = plan.grasp_rotation[:, 2]
        if not hand.move_hand(plan.grasp_position - approach * 0.08, plan.grasp_rotation):
            return False
        if hand.move_hand(plan.grasp_position, plan.grasp_rotation, speed=0.4):
            return True
        hand.move_hand(plan.grasp_position - approach * 0.08, plan.grasp_rotation)
        return False

    def _push_on(self, door: DoorFrame, target: str, reached: float, skills: ArmSkills, top: float,
                 ajar: bool = False) -> None:
        """Push the door on to OPEN_TO from where it stands (`reached`): over its top edge where it
        is low, else round its free edge from before the opening (the free edge now stands near
        the base, which backs off for it). A low door the hand cannot get over, or that the pull
        left with no gap to come down into, is pulled on by its handle again (REPULLS) first."""
        if top <= self.body.shoulder()[2] - LOW_DOOR:
            if reached >= SEEN_DOOR_AJAR:  # a gap for the hand to come down into
                start = reached - PUSH_FROM_BEHIND  # coming down from above, the hand needs no room to get round
                radius = PUSH_OVER_SHARE * door.width
                clear = door.width + self.body.footprint_radius + 0.08
                at = (clear * math.cos(PUSH_OVER_BEARING), clear * math.sin(PUSH_OVER_BEARING))
                self._stand(door, target, skills, at, aim=door.at((start + OPEN_TO) / 2, radius))
                try:
                    self._push_over(door, top, start, OPEN_TO, radius, skills)
                    return
                except ManipulationError as e:
                    if e.code != "UNREACHABLE":
                        raise
            # no gap to come down into, or no way in over it (a worktop over a base unit's door):
            # pulled on by its handle again, as far as the arm follows each time (the first pull of
            # a low handle turned the wrist out of reach 2-20 degrees on; one more, from the door
            # as it stood then, took it to 45)
            for _ in range(REPULLS):
                skills.phase(f"pulling {target}'s door on by its handle: the arm did not get over it", 0.6)
                try:
                    _, now = self._pull(target, self.body.door_points(target), skills, again=True)
                except ManipulationError:  # turned far enough for its handle to face away: the push takes it on
                    break
                gained, reached = now - reached, max(now, reached)
                if reached >= SEEN_DOOR_OPEN:
                    return
                if gained < REPULL_GAIN:
                    break
            if reached < SEEN_DOOR_AJAR:
                raise ManipulationError("NOT_MOVED", f"the door stands {math.degrees(reached):.0f} degrees open after "
                                                     "the pulls: no gap for the hand to push it on from")
            ajar = True
        if top <= self.body.shoulder()[2] - LOW_DOOR:
            # a low door is pushed from inside LOW_PUSH_BELOW_TOP below its top edge, not at its
            # handle's height: a level hand 43 cm up, under a worktop, was out of the arm's reach
            door = replace(door, hinge=np.array([*door.hinge[:2], max(float(door.hinge[2]), top - LOW_PUSH_BELOW_TOP)]))
        # a wide door (a base unit's, 90 cm) is pushed a second time from a spot nearer its free edge
        # where the push from the first did not get in behind it or left it short of open: from
        # PUSH_STANCE the hand met its edge with the forearm as often as not
        stances = [PUSH_STANCE]
        if PUSH_EDGE_SHARE * door.width > PUSH_STANCE[0] + 0.1:
            stances.append((PUSH_EDGE_SHARE * door.width, PUSH_STANCE[1]))
        for tried, at in enumerate(stances, start=1):
            start = (reached if ajar else max(reached, PULL_TO / 2)) - PUSH_FROM_BEHIND
            try:
                self._stand(door, target, skills, at)
            except ManipulationError as e:
                if e.code != "UNREACHABLE":
                    raise
                # from where the base stands: the pulls left it beside the free edge (a base unit's door
                # pulled to 45 degrees shut the way to the push's spot, and from here the push took it to 90)
            # the door as it stands now, seen from the push's spot: let go, it swings back a little (a
            # base unit's door pulled to 43 degrees stood at 37 when the hand came round its edge, and the
            # hand, coming in where the door no longer was, shut it); a look that sees it further open
            # than the pull left it is not believed
            try:
                now = door_opening(self.body.door_points(target), door.out)
            except ManipulationError:
                now = reached
            if SEEN_DOOR_AJAR <= now < reached:
                start = min(start, now - PUSH_FROM_BEHIND)
            try:
                self._push(door, start, OPEN_TO, PUSH_RADIUS, skills, at=None if ajar else min(reached, now))
            except ManipulationError as e:
                if e.code != "UNREACHABLE" or tried == len(stances):
                    raise
                continue
            if tried == len(stances):
                return
            try:
                now = door_opening(self.body.door_points(target), door.out)
            except ManipulationError:
                return  # the last look, once the arm is out of the way, says
            if now >= SEEN_DOOR_OPEN or now < SEEN_DOOR_AJAR:  # open, or no gap left to push it on from
                return
            reached, ajar = now, True

    def _push_over(self, door: DoorFrame, top: float, start: float, end: float, radius: float,
                   skills: ArmSkills, face: Literal["inner", "outer"] = "inner") -> None:
        """Sweep the closed hand, pointing down, along the door's `face` from `start` to `end`, come
        in over the door's top edge: into the gap behind it (inner, opening), before it (outer, shutting)."""
        plan = plan_door_push_over(door, top, skills.spec.gripper, start, end, radius, face=face)
        hand = skills.watched_hand()
        hand.close_hand()
        above = plan.grasp_position + np.array([0.0, 0.0, OVER_THE_TOP + ROUND_EDGE])
        if not (hand.move_hand(above, plan.grasp_rotation) and hand.move_hand(plan.grasp_position, plan.grasp_rotation,
                                                                                speed=0.3)):
            where = "into the gap behind it" if face == "inner" else "beside its outer face"
            raise ManipulationError("UNREACHABLE", f"the arm did not reach over the door {where}")
        # as far as the arm reaches: the look afterwards says how far the door went
        _, last = follow_until_missed(hand.move_hand, plan, 0.3)
        # up and out over the top as the hand stands: turned as the sweep's end would have it, it swung into the door
        hand.move_hand(self._hand_now() + np.array([0.0, 0.0, OVER_THE_TOP + ROUND_EDGE]), last)

    def _push(self, door: DoorFrame, start: float, end: float, radius: float, skills: ArmSkills,
              at: float | None = None) -> None:
        """Sweep the closed hand along the door's inside from `start` to `end`, coming in from the
        open side of the gap between the door and the front: from outside the door (standing `at`
        that angle) past its free edge, round the edge and in."""
        plan = plan_door_push(door, self.body.shoulder(), skills.spec.gripper, start, end, radius)
        hand = skills.watched_hand()
        hand.close_hand()
        past_edge = door.width + ROUND_EDGE
        # in short straight steps, out to the free edge too: a joint-space move from outside the door
        # to its inside swung the arm through the door's face and shut it again, and so did one from
        # the arm at rest to outside the edge (the elbow swept through the fridge's door, 35 degrees open)
        standing = start if at is None else at
        outside = door.at(standing, past_edge, WITHDRAW)
        # first straight out from the door's outer face: a hand left beside the free edge by the
        # pulls struck the edge on its way round and swung the door 6 degrees back
        here = self._hand_now()
        away = here + door.outer(standing) * WITHDRAW
        glide(hand, here, [away, outside, door.at(start, past_edge), plan.grasp_position + door.along * ENTRY],
              plan.grasp_rotation)
        if not hand.move_hand(plan.grasp_position, plan.grasp_rotation, speed=0.3):
            raise ManipulationError("UNREACHABLE", "the arm did not reach inside the door to push it")
        _, last = follow_until_missed(hand.move_hand, plan, 0.3)  # as far as the arm reaches: the look says how far
        # back off as the hand points where the sweep stopped: turned as the plan's end would have it,
        # a sweep cut short swings the hand into the door (as after the pull and the sweep from above)
        hand.move_hand(self._hand_now() - last[:, 2] * WITHDRAW, last)

    def _hand_now(self) -> np.ndarray:
        return self.body.hand_position()

    # -- shutting --------------------------------------------------------------------------------
    def _close(self, target: str, points: np.ndarray, before: float, skills: ArmSkills) -> str:
        """Push the door shut by its outer face, in legs (SHUT_LEGS), each from a stance beside the
        part of the arc it sweeps and from where the door was seen to stand after the last."""
        if before <= SEEN_DOOR_AJAR:
            return f"it stands shut already ({math.degrees(before):.0f} degrees open, measured from its door)"
        body = self.body
        top = door_top(points)
        if top > SHUT_OVER_TOP_MOST:
            # Tried on 2026-12-07: pushed level by its outer face, a microwave's door went shut but
            # the push shoved the microwave 8 cm along the counter and turned it 23 degrees; a
            # fridge's outer face, 90 degrees open, stands a hand's width from the wall its hinge
            # is at (in the three houses), and the arm got no further than 72 degrees
            raise SkillUnavailable(f"this arm shuts low hinged doors (over their top edge); {target}'s door "
                                   f"stands {top:.2f} m high, and shutting a tall one is not built")
        door = frame_of_open_door(points, *body.closed_front(target))
        radius = SHUT_LOW_SHARE * door.width
        now = door_turn_seen(points, door)
        for _ in range(SHUT_PUSHES):
            if now <= SEEN_DOOR_AJAR:
                break
            start = now + PUSH_FROM_BEHIND  # beside the outer face, on the side it shuts from
            body.sense_obstacles()  # the door where it stands now: the costmap's ways go round it
            if not self._shut_leg(door, target, now, start, radius, top, before, skills):
                raise ManipulationError("UNREACHABLE", f"no spot the base reaches from which the arm sweeps "
                                                       f"{target}'s door on toward shut, clear of its swing "
                                                       f"({math.degrees(now):.0f} degrees open)")
            body.rest()
            was, now = now, door_turn_seen(self._see(target, skills), door)
            if was - now < SHUT_GAIN:
                break
        after = self._measure(target, skills, lambda seen: door_turn_seen(seen, door))
        if after > SEEN_DOOR_AJAR and body.stand_before(target, SEE_STANDOFF):
            # seen from beside the sweep's end the door is nearly edge-on: before the close is called
            # failed it is looked at again from before its front
            after = door_turn_seen(body.door_points(target), door)
        if after > SEEN_DOOR_AJAR:
            raise ManipulationError("NOT_MOVED", f"the door stands {math.degrees(after):.0f} degrees open after the "
                                                 f"close (it stood {math.degrees(before):.0f} degrees open before)")
        return f"closed: its door stands {math.degrees(after):.0f} degrees open (measured from the door as seen)"

    def _shut_leg(self, door: DoorFrame, target: str, now: float, start: float, radius: float, top: float,
                  before: float, skills: ArmSkills) -> bool:
        """One leg of a shut: the longest sweep (SHUT_LEGS) that some free spot reaches, from the first
        of its spots (SHUT_STANCES_TRIED) the base drives to and the hand gets in over the door from;
        False where none does."""
        body = self.body
        for leg in SHUT_LEGS:
            end = 0.0 if now - leg <= SHUT_FINISH else now - leg
            stances = shut_stances(door, start, end, radius, SHUT_REACH, body.free_for_base, body.footprint_radius)
            for stance in stances[:SHUT_STANCES_TRIED]:
                skills.phase(f"standing beside {target}'s door to push it shut", 0.1 + 0.8 * (before - now) / before)
                # the way there may be shut by what the lidar does not see (the door's low edge)
                if not body.drive_to(*stance):
                    # stopped against the door's edge, which the lidar had seen from behind the door only
                    # edge-on: seen again from here, the next spot's way goes round it
                    body.sense_obstacles()
                    continue
                skills.phase(f"pushing {target}'s door shut", 0.15 + 0.8 * (before - now) / before)
                try:
                    self._push_over(door, top, start, end, radius, skills, face="outer")
                    return True
                except ManipulationError as e:  # the hand did not get in over the door from this spot
                    if e.code != "UNREACHABLE":
                        raise
                body.rest()
                # coming down, the hand may have struck the door's top and swung it further open
                # (a generated house's base unit, from 89 to 96 degrees): the next spot's sweep starts
                # beside the door where it stands now
                start = max(start, door_turn_seen(self._see(target, skills), door) + PUSH_FROM_BEHIND)
        return False

    # -- where the base stands -------------------------------------------------------------------
    def _stand(self, door: DoorFrame, target: str, skills: ArmSkills, at: tuple[float, float] = STANCE,
               aim: np.ndarray | None = None) -> None:
        """Drive to stand beside the door's swing on its handle's side, facing the handle's arc (or `aim`)."""
        body = self.body
        stance = door_stance(door, body.free_for_base, body.footprint_radius, at, aim)
        if stance is None:
            raise ManipulationError("UNREACHABLE", f"no free spot for the base beside {target}'s door, clear of "
                                                   "its swing")
        skills.phase(f"standing beside {target}'s door", 0.1)
        if not body.drive_to(*stance):
            raise ManipulationError("UNREACHABLE", f"the base found no way to the spot beside {target}'s door")


def turned_by(door: DoorFrame, grasped: np.ndarray, hand: np.ndarray) -> float:
    """How far (radians) the door has turned, from where the hand holding its handle is now and
    where it took hold with the door shut: the hand goes round the hinge with the handle."""
    def bearing(point: np.ndarray) -> float:
        v = np.asarray(point, dtype=float) - door.hinge
        return math.atan2(float(v[:2] @ door.out[:2]), float(v[:2] @ door.along[:2]))

    return max(0.0, bearing(hand) - bearing(grasped))


def door_top(points: np.ndarray) -> float:
    """The height of a door's top edge, from its points as seen (robust to a few stray ones)."""
    return float(np.percentile(np.asarray(points, dtype=float)[:, 2], 99))


GLIDE_STEP = 0.06  # metres: the longest straight step of a glide


def glide(hand: object, start: np.ndarray, way: list[np.ndarray], rotation: np.ndarray) -> None:
    """Move the hand, turned as `rotation`, through `way` from `start` in straight steps of at
    most GLIDE_STEP: where the arm misses one, the next is a short move, not one across the way."""
    points = [np.asarray(start, dtype=float)] + [np.asarray(p, dtype=float) for p in way]
    lengths = np.array([np.linalg.norm(b - a) for a, b in zip(points, points[1:])])
    total = float(lengths.sum())
    steps = max(len(way), int(math.ceil(total / GLIDE_STEP)))
    along = np.concatenate([[0.0], np.cumsum(lengths)])
    for k in range(1, steps + 1):
        s = total * k / steps
        leg = min(int(np.searchsorted(along, s, side="right")) - 1, len(lengths) - 1)
        share = (s - along[leg]) / lengths[leg] if lengths[leg] > 0 else 1.0
        hand.move_hand(points[leg] + (points[leg + 1] - points[leg]) * share, rotation)  # type: ignore[attr-defined]
