"""What the household body's hand holds and how firmly: the carrying grip from sustained contact
of both fingers until the hand opens or the contact is lost (_weld), the held thing carried along
as the base moves kinematically (and what it touches on the way), its points in the hand's frame,
and the assisted grip on a door's handle. PyBullet's friction contacts creep under a mobile
manipulator's motions where a real hand's 60 N grip does not; each grip says which it stands in for."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.spatial.transform import Rotation

from conceptagent_ros.bodies.household.item_clouds import from_frame
from conceptagent_ros.bodies.household.mobile_arm import Attached, MobileArm, link_index, mm_orientation
from conceptagent_ros.manipulation.arm_skills import Held

WELD_FORCE = 60.0  # newtons: the carrying grip (weld)
DOOR_GRIP_FORCE = 15.0  # newtons: the assisted grip on a door's handle (grip_door); a door swings at 3 N
SQUEEZED = 1.0  # newtons each finger presses a thing with, at least, for the grip (grip_if_squeezed)
SUSTAINED_STEPS = 24  # both fingers still on the squeezed thing this many simulation steps (0.1 s) later: the grip sets
HANDLE_BETWEEN = 0.008  # metres: closed fingers this far apart or more have something between them (grip_door)
LOST_AFTER = 2  # checks in a row (MobileArm.WATCH_EVERY apart) without both fingers on it: the grip ends
NO_CARRY: tuple[int, tuple[float, ...], tuple[float, ...]] = (-1, (0, 0, 0), (0, 0, 0, 1))


class Grip:
    """The hand's hold on things. `held` says what the arm's skills hold (manipulation/arm_skills)."""

    def __init__(self, p: Any, client: int, robot: int, arm: MobileArm, bodies: dict[str, int],
                 held: Callable[[], Held | None]):
        self.p, self.client, self.robot, self.arm, self.bodies = p, client, robot, arm, bodies
        self._held = held
        self.picking: str | None = None  # what a pick in progress is after
        self.in_hand: np.ndarray | None = None  # the held thing's points in the hand frame, from the grasp
        # the held thing's body and its pose in the hand frame, while the base carries it
        self._carry_offset = NO_CARRY
        self.weld_id: int | None = None
        self._door_grip: int | None = None
        self._welded: str | None = None  # what the carrying grip holds
        self._misses = 0  # checks in a row that found the fingers off it
        self.lost: str | None = None  # what the grip let go of when the fingers lost it
        arm.on_open = self.let_go_of_weld  # the grip set for carrying ends where the hand opens
        arm.on_closed = self.grip_if_squeezed
        arm.on_watch = self.watch  # ... or where the fingers lose it
        self._attachment: Attached | None = None  # the gripped thing in the grasp link's frame
        arm.clearance.attached = lambda: self._attachment if self.weld_id is not None else None

    @property
    def held(self) -> Held | None:
        return self._held()

    # -- the held thing's points --------------------------------------------------------------------
    def hand_frame(self) -> tuple[np.ndarray, np.ndarray]:
        position, quaternion = self.arm.hand_pose()
        return position, Rotation.from_quat(quaternion).as_matrix()

    def held_points(self) -> tuple[str, np.ndarray] | None:
        """The held thing and its points where the hand is now (as the grasp took it)."""
        held = self.held
        if held is None or self.in_hand is None:
            return None
        return held.object_id, from_frame(self.in_hand, *self.hand_frame())

    def held_as_gripped(self) -> np.ndarray | None:
        """The held thing's points where the hand is now, turned as the hand gripped it (how a
        place carries it); None with nothing in hand."""
        held = self.held
        if held is None or self.in_hand is None:
            return None
        gripped = Rotation.from_quat(mm_orientation(held.grasp.rotation)).as_matrix()
        return from_frame(self.in_hand, self.arm.hand_pose()[0], gripped)

    # -- the carrying grip ------------------------------------------------------------------------
    def weld(self) -> None:
        """Hold what the hand grasped rigidly from the lift until the hand opens to let it go: a
        grip set for carrying, while the arm tucks, the base drives and the arm swings the thing
        over the place and lowers it (PyBullet's friction contacts creep under such motions, which a
        real hand's 60 N grip does not: a cup swung from hanging below the hand to held level slid
        out of it; a 9 cm cube turned in the fingers on its way down onto a sink and fell to the
        floor). It is set when the fingers squeeze the thing (grip_if_squeezed), else after the
        pick if both fingers still touch it; never on a thing the fingers do not touch. The release
        is friction alone; what the thing meets on its way down stops the hand (the place reports
        COLLISION)."""
        if self.held is not None and self.touching(self.held.object_id):
            self._weld_to_hand(self.held.object_id)

    def grip_if_squeezed(self) -> None:
        """The grip of weld once the closed fingers squeeze the thing being picked from both sides
        (each finger pressing it with SQUEEZED newtons or more) and are still on it SUSTAINED_STEPS later,
        as simulators' assisted grasping does (iGibson's and BEHAVIOR's). PyBullet's box-on-box
        contacts give a finger one or two contact points, and a phone squeezed by 58 N on each side
        stayed on the table as the hand rose. A hand that closed on nothing, on one side of the
        thing, on its support, or on a thing squeezed out from between the fingers gets no grip:
        the pick's own checks (the gap, the lift, the fingers' feel) then fail as before."""
        if self.picking is None or self.weld_id is not None or not self.squeezed(self.picking):
            return
        self.arm.step(SUSTAINED_STEPS)
        if self.touching(self.picking):
            self._weld_to_hand(self.picking)

    def touching(self, object_id: str) -> bool:
        """Both fingers are on the thing (MobileArm.fingers_on: within FEEL_RANGE, as a fingertip's
        contact sensor has it)."""
        body = self.bodies.get(object_id)
        return body is not None and self.arm.fingers_on(body)

    def watch(self) -> None:
        """The carrying grip ends where the fingers have not both been on what it holds for
        LOST_AFTER checks in a row: the thing was pushed out of the hand (a collision, a swing), and a real
        hand would have lost it too."""
        if self.weld_id is None or self._welded is None:
            return
        self._misses = 0 if self.touching(self._welded) else self._misses + 1
        if self._misses >= LOST_AFTER:
            self.lost = self._welded
            self.let_go_of_weld()

    def squeezed(self, object_id: str, link: int | None = None) -> bool:
        """Both fingers press the thing (its `link` only, where given) with SQUEEZED newtons or more."""
        body = self.bodies.get(object_id)
        return body is not None and all(force is not None and force >= SQUEEZED
                                        for force in self._finger_forces(body, link))

    def _finger_forces(self, body: int, link: int | None = None) -> list[float | None]:
        """Per finger, the newtons it presses `body` (its `link` only, where given) with; None for a
        finger with no contact point on it."""
        p, c = self.p, self.client
        only = {} if link is None else {"linkIndexB": link}
        forces: list[float | None] = []
        for finger in self.arm.finger_links:
            contacts = p.getContactPoints(bodyA=self.robot, bodyB=body, linkIndexA=finger, physicsClientId=c, **only)
            forces.append(sum(cp[9] for cp in contacts) if contacts else None)
        return forces

    def _weld_to_hand(self, object_id: str) -> None:
        p, c = self.p, self.client
        body = self.bodies[object_id]
        position, orientation = p.getBasePositionAndOrientation(body, physicsClientId=c)
        hand_position, hand_orientation = self.arm.true_hand_pose()
        inverse = p.invertTransform(hand_position.tolist(), hand_orientation.tolist())
        local = p.multiplyTransforms(inverse[0], inverse[1], position, orientation)
        self.weld_id = p.createConstraint(self.robot, self.arm.grasp_link, body, -1, p.JOINT_FIXED, [0, 0, 0],
                                          local[0], [0, 0, 0], local[1], [0, 0, 0, 1], physicsClientId=c)
        self._attachment = (body, tuple(local[0]), tuple(local[1]))  # the arm's paths keep it clear too
        # as firm as the fingers squeeze (60 N): it gives where the thing meets its support on the way down
        # (at 500 N it pressed a cube 2 mm into a sink, which threw the cube off as the hand let go)
        p.changeConstraint(self.weld_id, maxForce=WELD_FORCE, physicsClientId=c)
        self.arm.hold_fingers_where_they_are(True)
        self._welded, self._misses, self.lost = object_id, 0, None

    def let_go_of_weld(self) -> None:
        if self.weld_id is not None:
            self.p.removeConstraint(self.weld_id, physicsClientId=self.client)
            self.weld_id = None
        self._welded = None
        self.arm.hold_fingers_where_they_are(False)

    # -- carried while the base moves -------------------------------------------------------------
    def carry(self) -> None:
        """What the grip holds, put where the hand is (the base moves kinematically, not by physics);
        a thing the grip does not hold is left to physics."""
        if self.held is None or self.in_hand is None or self.weld_id is None:
            return
        body = self.bodies[self.held.object_id]
        if self._carry_offset[0] != body:
            return
        _, local_position, local_orientation = self._carry_offset
        hand_position, hand_orientation = self.arm.true_hand_pose()
        world_position, world_orientation = self.p.multiplyTransforms(
            hand_position.tolist(), hand_orientation.tolist(), local_position, local_orientation)
        self.p.resetBasePositionAndOrientation(body, world_position, world_orientation, physicsClientId=self.client)

    def hold_carried(self) -> None:
        """Take the held thing's pose in the hand frame, for carry."""
        if self.held is None:
            self._carry_offset = NO_CARRY
            return
        body = self.bodies[self.held.object_id]
        p, c = self.p, self.client
        position, orientation = p.getBasePositionAndOrientation(body, physicsClientId=c)
        hand_position, hand_orientation = self.arm.true_hand_pose()
        inverse = p.invertTransform(hand_position.tolist(), hand_orientation.tolist())
        local = p.multiplyTransforms(inverse[0], inverse[1], position, orientation)
        self._carry_offset = (body, local[0], local[1])

    def carried_bodies(self) -> list[int]:
        return [self.bodies[self.held.object_id]] if self.held is not None and self.weld_id is not None else []

    # -- a door's handle ----------------------------------------------------------------------------
    def door_link(self, target: str) -> int:
        """The link that moves: a hinged door, or a chest's top drawer."""
        body = self.bodies[target]
        names = {self.p.getJointInfo(body, j, physicsClientId=self.client)[12].decode()
                 for j in range(self.p.getNumJoints(body, physicsClientId=self.client))}
        return link_index(self.p, body, self.client, "drawer" if "drawer" in names else "door")

    def grip_door(self, target: str) -> bool:
        """The assisted grip on a door's or a drawer's handle once both fingers press it (SQUEEZED): a
        point constraint at the hand of at most DOOR_GRIP_FORCE, about which a door's handle turns
        (doors.py). Friction alone let a chest's drawer, with a fork and a spoon in it, slip out of
        the fingers after a centimetre."""
        p, c = self.p, self.client
        body, link = self.bodies[target], self.door_link(target)
        if not (self.squeezed(target, link) or self._between_fingers(body, link)):
            return False
        hand, _ = self.arm.true_hand_pose()
        centre, turn = p.getLinkState(body, link, physicsClientId=c)[:2]  # constraints act in the link's inertial frame
        inverse = p.invertTransform(centre, turn)
        local = p.multiplyTransforms(inverse[0], inverse[1], hand.tolist(), [0, 0, 0, 1])[0]
        self._door_grip = p.createConstraint(self.robot, self.arm.grasp_link, body, link, p.JOINT_POINT2POINT,
                                             [0, 0, 0], [0, 0, 0], local, physicsClientId=c)
        p.changeConstraint(self._door_grip, maxForce=DOOR_GRIP_FORCE, physicsClientId=c)
        return True

    def _between_fingers(self, body: int, link: int) -> bool:
        """Both fingers touch the door's `link` from the sides of something that keeps them
        HANDLE_BETWEEN apart, and still do SUSTAINED_STEPS later: its handle is between them. A bar
        closed on a little off the hand's middle was pressed at 0.8 and 2.6 newtons, under SQUEEZED,
        though the fingers stood on it 2 cm apart, its width."""
        def both_touch() -> bool:
            return all(force is not None for force in self._finger_forces(body, link))

        if self.arm.finger_gap() < HANDLE_BETWEEN or not both_touch():
            return False
        self.arm.step(SUSTAINED_STEPS)
        return both_touch() and self.arm.finger_gap() >= HANDLE_BETWEEN

    def let_go_of_door(self) -> None:
        if self._door_grip is not None:
            self.p.removeConstraint(self._door_grip, physicsClientId=self.client)
            self._door_grip = None
